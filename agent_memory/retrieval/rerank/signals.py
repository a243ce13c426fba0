"""The reranker's signals, one function each: what it rewards, and what set its weight.

Every weight lives in ``agent_memory/retrieval/config.py`` (``RetrievalConfig``) with a description; the
measurements are in ``docs/journal/evaluation-diary.md`` and can be replayed with ``benchmarks/tune_reranker.py``.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Sequence

import numpy as np

from agent_memory.core.entities import without_disambiguation
from agent_memory.core.roles import is_role, speaker_role
from agent_memory.core.text import CJK_RANGES, estimated_words, has_cjk, question_terms, terms_in
from agent_memory.index.told_of import TOLD_OF
from agent_memory.index.triples.speaker import asks_about_asker
from agent_memory.retrieval.types import Candidate


def standardize(values: np.ndarray) -> np.ndarray:
    """z-scores over the candidates, so that weights of unlike signals are comparable."""
    spread = values.std()
    return (values - values.mean()) / spread if spread > 0 else np.zeros_like(values)


def term_coverage(query: str, texts: Sequence[str], known: Sequence[str | None] | None = None) -> list[float]:
    """``terms``: the share of the question's content words (IDF-weighted within the candidates)
    a text contains. Rewards passages that name what the question names, which embeddings blur
    (numbers, rare names). Weight 0.3 for every kind (LoCoMo and HotpotQA sweeps, 2026-11-28).
    ``known``: each text's stored keyword set, where the item carries one (``MemoryItem.terms``)."""
    q_terms = list(dict.fromkeys(question_terms(query)))
    if not q_terms:
        return [0.0] * len(texts)
    wanted = frozenset(q_terms)
    docs = terms_in(texts, wanted, known)
    n = len(docs)
    idf = {w: math.log(1 + n / (1 + sum(1 for d in docs if w in d))) for w in q_terms}
    total = sum(idf.values()) or 1.0
    return [sum(idf[w] for w in q_terms if w in d) / total for d in docs]


def speaker_named(query: str, candidates: Sequence[Candidate]) -> np.ndarray:
    """1 for turns whose speaker the question names ("What did Caroline research?"), else 0.
    When a question names a participant, the fact is nearly always in that participant's own
    turns: weight 3.0, chosen by every held-out LoCoMo conversation (``speaker_named``). Named as
    ``named_in`` says, the rule that also takes the names out of the dense query: as written, so a
    speaker called Will is not named by "what will ...", and never a role ("the assistant")."""
    speakers = {str(s) for c in candidates if c.item.kind == "turn" and (s := c.item.metadata.get("speaker"))}
    named = named_in(query, sorted(speakers))
    return np.array([1.0 if c.item.kind == "turn" and str(c.item.metadata.get("speaker")) in named else 0.0
                     for c in candidates])


def speaker_prior(candidates: Sequence[Candidate], prior: dict[str, float]) -> np.ndarray:
    """A fixed offset per speaker of a turn: an assistant's turns mostly restate what it was asked,
    the user's turns hold the user's facts (LongMemEval: -1.0 for the assistant). A role is found
    under any of its labels (agent_memory/core/roles.py: "助手" is the assistant)."""
    by_role = {speaker_role(k): v for k, v in prior.items()}
    return np.array([by_role.get(speaker_role(c.item.metadata.get("speaker")), 0.0) if c.item.kind == "turn"
                     else 0.0 for c in candidates])


def read_alone(candidates: Sequence[Candidate], roles: Sequence[str], answer_with_ask: bool = False) -> np.ndarray:
    """True for a turn by one of ``roles`` (under any of a role's labels, agent_memory/core/roles.py): such a turn is
    read alone, as a tool turn is (agent_memory/index/context.py): its ``turn_context`` signal is its own ``dense``
    one and it takes no share of a neighbouring turn's score (``conversation_context``). An assistant's "Okay,
    noted." says nothing of its own; read after the user's "Finished reading Pachinko last night." it took that
    turn's similarity to "Which books have I read?" and a place in the prompt beside it, or instead of it.
    ``answer_with_ask``: not so a turn whose turn before it, among ``candidates``, asks a question: an answer
    ("Take 《白鹿原》, the plot carries you.") says what it is about only with its question ("A novel for the five
    hours to Urumqi?"), which the question asked of the memory matches ("你让我带什么书去新疆？")."""
    wanted = {speaker_role(r) for r in roles}
    alone = np.array([c.item.kind == "turn" and speaker_role(c.item.metadata.get("speaker")) in wanted
                      for c in candidates], dtype=bool)
    if answer_with_ask and alone.any():
        asks = {(c.item.metadata.get("session_id"), _seq(c))
                for c in candidates if c.item.kind == "turn" and _ASKS.search(c.item.text)}
        for i, c in enumerate(candidates):
            if alone[i] and (c.item.metadata.get("session_id"), _seq(c) - 1) in asks:
                alone[i] = False
    return alone


_ASKS = re.compile(r"[?？]")


def _seq(candidate: Candidate) -> int:
    """A turn's place in its session (0 where none is recorded)."""
    return int(candidate.item.metadata.get("seq", 0) or 0)


def tells_of_others(query: str, candidates: Sequence[Candidate]) -> np.ndarray:
    """1 for a turn that tells of another person (``told_of``, agent_memory/index/told_of.py) when the question
    asks about its asker, in the first person ("Where do I live now?", 我现在住在哪里？), and names none of the
    people the turn tells of nor any name the turn writes; else 0. The user's "We've settled into our flat in
    Atlanta." and their "My friend Tom just moved to Dallas." are alike to the embedding and the words; only the
    first answers. A question that names Tom ("What did Tom tell me about his move?") asks about him, and a turn that
    writes a name the question writes keeps its place whoever else it tells of (LongMemEval's "what was Andy wearing
    in the script you wrote?": the user's brief tells of Andy's colleagues, and of Andy)."""
    if not asks_about_asker(query):
        return np.zeros(len(candidates))
    lowered = query.casefold()
    written = _names_written(query)
    # One pattern per question for the names it writes, not a search per name and candidate.
    writes = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, written)) + r")(?!\w)") if written else None
    out = []
    for cand in candidates:
        told = cand.item.metadata.get(TOLD_OF) if cand.item.kind == "turn" else None
        names = [str(n) for n in told] if isinstance(told, list) else []
        named = any(_named_in_question(n, lowered) for n in names) or (
            writes is not None and writes.search(cand.item.text) is not None)
        out.append(1.0 if names and not named else 0.0)
    return np.array(out)


def _names_written(question: str) -> list[str]:
    """The words a question writes as names: capitalized, not its first word, not "I" (English and other spaced
    scripts; a Chinese name has no capital, and is found through the people a turn tells of)."""
    words = re.findall(r"[^\W\d_][\w'’-]*", question)
    return [w for w in words[1:] if w[0].isupper() and w not in ("I", "I'm", "I've", "I'd", "I'll")]


def _named_in_question(name: str, lowered_question: str) -> bool:
    """Whether the question names the person: their whole name or any word of it of three letters or more
    ("Tom" names "Tom Riley"), any two characters of a Chinese name (杨笑 in 朋友杨笑)."""
    name = name.casefold().strip()
    if not name:
        return False
    if has_cjk(name):
        return any(name[i:i + 2] in lowered_question for i in range(max(1, len(name) - 1)))
    parts = [name, *(w for w in re.split(r"[\s.'’-]+", name) if len(w) >= 3)]
    return any(re.search(r"(?<!\w)" + re.escape(p) + r"(?!\w)", lowered_question) for p in parts)


def length_excess(candidates: Sequence[Candidate], words: int, cjk_chars_per_word: float) -> np.ndarray:
    """log2 of how many times longer than ``words`` a turn is (0 when shorter). Under a hard budget
    a long turn must earn its room: an assistant's essay outweighs several of the user's facts
    (LongMemEval 0.839 → 0.889 at 3.0 per doubling). Chunks are bounded by the splitter."""
    return np.array([max(0.0, math.log2(turn_words(c.item.text, cjk_chars_per_word) / words))
                     if c.item.kind == "turn" and c.item.text.strip() else 0.0 for c in candidates])


@functools.lru_cache(maxsize=50_000)
def turn_words(text: str, cjk_chars_per_word: float) -> int:
    """Words of a turn: its whitespace-separated words (for a text without CJK, exactly the count
    the weight was tuned with), its CJK characters counting one word per ``cjk_chars_per_word``
    (``RetrievalConfig.cjk_chars_per_word``). A 430-character Chinese turn has no spaces: split()
    called it 3 words and let recited articles escape the penalty (development material zh_events:
    0.911 -> 0.939 at 500 tokens)."""
    return estimated_words(text, cjk_chars_per_word)


def conversation_context(candidates: Sequence[Candidate], score: np.ndarray, neighbour_weight: float,
                         session_weight: float, session_top: int, alone: np.ndarray | None = None) -> np.ndarray:
    """For turns: a share of the best neighbouring turn's score (a reply often holds the fact its
    neighbour asked about), none for a turn read ``alone`` (``read_alone``), and of its session's strength (facts
    cluster by session)."""
    sessions = [c.item.metadata.get("session_id") if c.item.kind == "turn" else None for c in candidates]
    if not any(sessions):
        return score
    position = {(s, _seq(c)): i
                for i, (s, c) in enumerate(zip(sessions, candidates)) if s}
    by_session: dict[str, list[float]] = {}
    for s, value in zip(sessions, score):
        if s:
            by_session.setdefault(s, []).append(float(value))
    strength = {s: float(np.mean(sorted(v, reverse=True)[:session_top])) for s, v in by_session.items()}
    out = score.copy()
    for i, (s, cand) in enumerate(zip(sessions, candidates)):
        if not s:
            continue
        seq = _seq(cand)
        near = [score[j] for j in (position.get((s, seq + d)) for d in (-1, 1)) if j is not None]
        if near and (alone is None or not alone[i]):
            out[i] += neighbour_weight * max(near)
        out[i] += session_weight * strength[s]
    return out


def route_bonus(candidates: Sequence[Candidate], route: str, kinds: set[str] | None = None) -> np.ndarray:
    """A route's raw score in [0, 1] (not standardized: most candidates have none): ``graph`` (a
    page the question names), ``links`` (a page a top passage names; see agent_memory/retrieval/pages.py),
    ``time`` (dated inside the window the question names; see agent_memory/retrieval/when.py). ``kinds``
    limits it to items of those kinds."""
    return np.array([c.route_scores.get(route, 0.0) if kinds is None or c.item.kind in kinds else 0.0
                     for c in candidates])


def title_in_question(query: str, candidates: Sequence[Candidate]) -> np.ndarray:
    """1 for a document chunk whose title the question writes as a name, when it writes two or more
    such titles (a comparison), else 0: "Which author is an
    economist, Czesław Miłosz or Bhabananda Deka?" asks for the pages of both, and the pages that
    those pages link or lead to ("Economy of Assam", "The Captive Mind") must not outrank them. The
    title counts without a closing parenthesis ("Astro Boy (film)" is written "Astro Boy"), matched
    whole words regardless of case where the question writes it with a capital; a title written
    inside a longer title the question writes ("Winnie the Pooh" in "The Many Adventures of Winnie
    the Pooh") is not the one it names. Latin script only: a Chinese title has no capital to say it
    is a name (and an article's paragraphs share one), the graph route names its pages."""
    lowered = query.lower()
    spans: dict[int, tuple[int, int]] = {}
    for i, cand in enumerate(candidates):
        title = cand.item.metadata.get("title")
        if cand.item.kind != "chunk" or not title or has_cjk(str(title)):
            continue
        bare = without_disambiguation(str(title)).lower()
        if len(bare) < 3 or bare not in lowered:
            continue
        for m in re.finditer(r"(?<!\w)" + re.escape(bare) + r"(?!\w)", lowered):
            if query[m.start()].isupper() or query[m.start()].isdigit():
                spans[i] = (m.start(), m.end())
                break
    named = {i for i, (a, b) in spans.items()
             if not any((c <= a and b <= d) and (d - c) > (b - a) for c, d in spans.values())}
    if len({spans[i] for i in named}) < 2:
        # One page named: the question starts from it and asks about what it leads to ("Where is the
        # company that Dalit Albert's spouse works for based?"), which every route already ranks it
        # for; lifting it further only reorders the packing (chains -0.7, MuSiQue -1 point strict).
        return np.zeros(len(candidates))
    return np.array([1.0 if i in named else 0.0 for i in range(len(candidates))])


def importance(candidates: Sequence[Candidate], half_life_days: float, now: float) -> np.ndarray:
    """``importance``: the item's importance in [0, 1] (payload, set at ingestion; see agent_memory/index/importance.py),
    halved every ``half_life_days`` since it was stored. Raw, not standardized: items stored together
    with the default importance get the same bonus, so the ranking among them does not move."""
    out = []
    for cand in candidates:
        value = float(cand.item.metadata.get("importance", 0.5))
        age_days = max(0.0, (now - cand.item.created_at) / 86_400.0) if cand.item.created_at else 0.0
        out.append(value * 0.5 ** (age_days / half_life_days))
    return np.array(out)


# A name's edges: no letter or digit of a spaced script touches it ("Al" is not named by "Also"). Chinese
# runs without spaces ("小林昨天去了哪里？"), so a Chinese character beside a name is no part of it, and a
# name written in Chinese is found wherever it is written.
_NAME_START = rf"(?<![^\W{CJK_RANGES}])"
_NAME_END = rf"(?![^\W{CJK_RANGES}])"


def _names_pattern(names: Sequence[str]) -> re.Pattern | None:
    """The names as written, with their possessive ('s, 的); roles never, nor names too short to tell
    from a word: two letters or less, or one Chinese character."""
    # Roles, not names: "the user" in a question is a topic word, and LongMemEval's turns are all roles.
    names = [n for n in names if not is_role(n) and (len(n) > 2 if not has_cjk(n) else len(n) > 1)]
    if not names:
        return None
    alternatives = []
    spaced = [n for n in names if not has_cjk(n)]
    chinese = [n for n in names if has_cjk(n)]
    if spaced:
        alternatives.append(_NAME_START + "(?:" + "|".join(re.escape(n) for n in sorted(spaced, key=len, reverse=True))
                            + r")(?:'s|’s)?" + _NAME_END)
    if chinese:
        alternatives.append("(?:" + "|".join(re.escape(n) for n in sorted(chinese, key=len, reverse=True)) + ")的?")
    return re.compile("|".join(alternatives))


def named_in(question: str, names: Sequence[str]) -> set[str]:
    """Those of ``names`` that the question names (as ``without_names`` would remove them). A name is
    matched as written, so one the question does not contain is ruled out by a substring test before
    a pattern is compiled for it (a tenant may have thousands of speakers)."""
    return {n for n in names if n in question and (pattern := _names_pattern([n])) is not None
            and pattern.search(question)}


def without_names(question: str, names: Sequence[str]) -> str:
    """The question without the given names (as written, with their possessive 's), spaces tidied:
    the dense query of a question that names a speaker (every turn of the speaker carries the name,
    so it says nothing about the topic; LoCoMo 0.862 → 0.884)."""
    pattern = _names_pattern(names)
    if pattern is None:
        return question
    return re.sub(r"\s{2,}", " ", pattern.sub("", question)).strip()
