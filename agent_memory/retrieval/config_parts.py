"""The parts of the retrieval config that are models of their own: a route's switch, weight and limit; the
reranker's signal weights; the budget's section shares; the recent view's gate; the live summaries' ranking;
the compression weights; the cross-encoder stage. ``config.py`` holds ``RetrievalConfig``, which nests them,
and its presets."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agent_memory.retrieval.strict_model import StrictModel


class RouteConfig(StrictModel):
    enabled: bool = Field(default=True, description="whether the route runs")
    weight: float = Field(default=1.0, ge=0, description="its weight in reciprocal rank fusion")
    limit: int = Field(default=50, ge=1, description="how many hits it returns")


class SignalWeights(StrictModel):
    """Weights of the standardized (z-scored over the candidates) similarity signals."""

    dense: float = Field(default=1.0, ge=0, description="question-passage embedding similarity")
    turn_context: float = Field(default=0.0, ge=0,
                                description="similarity of a turn read after the turn it answers (turns only)")
    keyword: float = Field(default=0.3, ge=0, description="the keyword route's BM25 score")
    terms: float = Field(default=0.3, ge=0, description="IDF-weighted share of the question's words present")
    fused: float = Field(default=0.0, ge=0, description="the RRF score of the routes")


class SectionShares(StrictModel):
    """Upper shares of the budget per section; what a section leaves unused flows to the passages."""

    facts: float = Field(default=0.05, ge=0, le=1, description="graph facts")
    summaries: float = Field(default=0.10, ge=0, le=1, description="the live session's summaries")
    recent: float = Field(
        default=0.20, ge=0, le=1,
        description="with a session_id: the share of the one budget for the session's working-memory view (its "
                    "last turns, placed first); the rest is recall from the whole tenant, where an archived turn "
                    "already in the view is not placed again (agent_memory/retrieval/assemble.py)")


class RecentView(StrictModel):
    """Which of the session's last turns the prompt's recent section holds (agent_memory/retrieval/recent.py)."""

    always: int = Field(
        default=0, ge=0,
        description="the session's newest turns placed whatever the question; older ones are placed only when "
                    "the question reaches them. 0: none (in an agent loop the newest message is usually the "
                    "question itself, and the rewrite already reads the thread); LoCoMo dev, 760 questions "
                    "inside the last session: 0.911 / 0.862 with 0 (= no session), 0.906 / 0.857 with 1, "
                    "0.889 / 0.841 with 8")
    rank_tokens: int = Field(
        default=0, ge=0,
        description="0: an older turn of the view that recall found stays among the passages, placed there only "
                    "if it ranks within what fits (its copy in the view is not placed). Above 0: such a turn is "
                    "shown in the view, in thread order, when it ranks among the best budget / rank_tokens "
                    "passages (60 at 1,800 tokens: 30); LoCoMo dev, first 250 questions inside the last session: "
                    "0.9024 with 0, 0.9004 with 60, the view's section headings taking the room")
    min_terms: float = Field(
        default=0.5, ge=0, le=1,
        description="else, for an older turn recall did not see at all (not archived yet: archival runs off "
                    "the request path), the share of the question's keyword terms (stemmed content words) it must "
                    "hold to be placed")


class LiveSummaries(StrictModel):
    """How the live session's compaction summaries are ranked for a question and shown
    (agent_memory/retrieval/live_summaries.py); the score is dense x similarity + terms x share + newest x recency."""

    by_question: bool = Field(default=True, description="rank them by the question; off: newest first, each scored 1")
    dense: float = Field(default=0.0, ge=0, description=(
        "weight of the calibrated similarity of the summary's line nearest the question. On the working-memory "
        "benchmark (benchmarks/bench_working_memory.py, 36 facts) dense alone, terms alone and both put the same 9 "
        "facts in the summaries section (1 newest first). Above 0 in the served settings, the archive pass embeds a "
        "summary's lines after compaction writes it and stores them with it (conversation/summary_vectors.py), so "
        "a question reads them; a summary without them (written before, or this set per call) has its lines "
        "embedded at the question (20-260 ms a summary on 2 shared cores); 0 (default): ranked by terms alone, "
        "nothing embedded"))
    terms: float = Field(default=2.0, ge=0, description=(
        "weight of the share of the question's keyword terms (stemmed content words) the summary holds"))
    newest: float = Field(default=0.0, ge=0, description=(
        "prior of the newest summary, falling linearly to 0 for the oldest. 0: equal scores alone keep the newest "
        "first; 0.1 and 1 placed the same facts on the working-memory benchmark"))
    lines: bool = Field(default=True, description=(
        "a summary longer than the room left in the summaries' share is shown as its lines that carry the "
        "question's terms (agent_memory/retrieval/compress.py) rather than dropped"))


class CompressionWeights(StrictModel):
    """How query-focused compression scores a passage's sentences (agent_memory/retrieval/compress.py,
    with the scorer of agent_memory/core/sentence_scoring.py)."""

    question_term: float = Field(default=1.0, description="per keyword term of the question the sentence holds")
    question_entity: float = Field(default=1.5, description="per entity of the question the sentence names")
    number: float = Field(default=0.5, description="a sentence holding a number, when the question holds none")
    number_asked: float = Field(default=1.0, description="a sentence holding a number, when the question holds one")
    content: float = Field(default=0.005, ge=0, description=(
        "tie-break per keyword term of the sentence, up to content_words: a sentence with content beats \"Wow!\""))
    content_words: int = Field(default=8, ge=0, description="the most keyword terms the content tie-break counts")
    order: float = Field(default=0.01, ge=0, description=(
        "tie-break subtracted per position in the passage: the earlier sentence usually sets the context"))


class CrossEncoderConfig(StrictModel):
    """How the cross-encoder re-orders the reranker's first candidates
    (agent_memory/retrieval/rerank/cross_encoder.py), where a model is configured (the deployment setting ``cross_encoder_model``; unset: the stage is off)."""

    weight: float = Field(default=0.5, ge=0, description=(
        "weight of the standardized logit beside the standardized reranker rank: z(-rank) + weight * z(logit). "
        "0.5: best of 0.25-1.5 on held-out LoCoMo conversations replayed with models trained here on the others "
        "(benchmarks/train_cross_encoder.py; 760 questions 0.917 / 0.871 -> 0.919 / 0.875, one fold better, one "
        "worse: docs/journal/2026-12-06-a-cross-encoder-trained-here.md). 0: the stage is off even with a model "
        "set (nothing is scored)"))
    top: int = Field(default=100, ge=2, description=(
        "how many of the reranker's first candidates are scored and re-ordered (the rest keep their order): LoCoMo's "
        "multi-hop evidence ranked 36-80 where a 1,800-token prompt holds about 32 passages. Each one scored costs "
        "question time (one model call per batch)"))
    max_tokens: int = Field(default=192, ge=8, description=(
        "tokens of one question-passage pair the model reads, only the passage cut: what the model was trained "
        "with (benchmarks/train_cross_encoder.py MAX_TOKENS); longer costs time, shorter loses a long turn's end"))
    batch: int = Field(default=64, ge=1, description=(
        "pairs per model call; pairs of similar length share one, so little is padding"))
    questions: Literal["default_space", "all"] = Field(default="default_space", description=(
        "which questions the model reads: 'default_space', those the default (English) embedding model reads "
        "(where a multilingual model is set, a question mostly in other scripts is left in the reranker's "
        "order: a model trained from all-MiniLM-L6-v2 reads Chinese as unknown pieces); 'all', for a "
        "multilingual cross-encoder"))


# Standing statements in general words: what a user tells of what they are like (can't eat, health, favourites,
# avoidances, hours, money, someone at home, fears), naming no dish, condition or other value a user would tell.
STANDING_EXAMPLES = (
    "I can't eat that, it doesn't agree with me.", "My health limits what I can do these days.",
    "That's my favourite kind of thing, I never get tired of it.", "I avoid that completely now, I won't do it again.",
    "My routine and working hours are fixed these days.", "I have to keep my spending low at the moment.",
    "I have someone at home who depends on me.", "It scares me and makes me uncomfortable.",
    "那个我不能吃，吃了身体受不了。", "我的身体状况限制了我现在能做的事。", "那是我最喜欢的，怎么都不腻。",
    "那个我现在完全不碰了，再也不会了。", "我现在的作息和上班时间是固定的。", "我最近得控制开销。", "家里有个离不开我的。",
    "那让我害怕，浑身不自在。")


class RetoldConfig(StrictModel):
    """How a user's statement among the best candidates is followed forward in time
    (agent_memory/retrieval/retold.py)."""

    anchors: int = Field(default=3, ge=0, description=(
        "the best this many turns of a person that tell of nobody else are each followed to the same speaker's nearest "
        "turn, when told on a later day; 0: off. 3: held out on the preference kinds' seeds 13 and 14, seed 12 read "
        "(docs/journal/2026-12-08-told-again.md)"))
    neighbours: int = Field(default=5, ge=1, description=(
        "how many of the speaker's turns nearest to an anchor are read to find the nearest past verbatim repeats and "
        "turns that tell of others"))
    questions: Literal["advice", "all"] = Field(default="advice", description=(
        "which questions follow: 'advice' (a request for advice, agent_memory/retrieval/advice.py), or 'all'"))


class AdviceConfig(StrictModel):
    """How a request for advice ranks the user's standing statements (agent_memory/retrieval/advice.py)."""

    signal: float = Field(default=3.0, ge=0, description=(
        "rerank weight, for an advice request, of a turn's z-scored greatest similarity to one of the examples; "
        "0: off. 3 chosen on en_users_preferences and zh_users_preferences seed 12 (300 and 500 tokens, summed: "
        "0 0.70, 1 1.14, 3 1.40 best, 4 1.39, 6 1.37); seeds 13 and 14 held out: "
        "docs/journal/2026-12-07-advice-and-standing-statements.md"))
    examples: list[str] = Field(default=list(STANDING_EXAMPLES), min_length=1, description=(
        "statements that read as a user telling what they are like, in general words; a deployment adds its own"))
