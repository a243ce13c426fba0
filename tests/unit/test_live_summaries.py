"""The live session's compaction summaries ranked by the question (agent_memory/retrieval/live_summaries.py)
and cut to the lines that carry it (agent_memory/retrieval/compress.compress_lines)."""

from __future__ import annotations

import re
import zlib

import numpy as np

from agent_memory.conversation.summary_vectors import decode, embed_lines, encode
from agent_memory.core.embedding_spaces import QueryVectors
from agent_memory.core.records import MemoryItem
from agent_memory.core.tokens import TiktokenCounter
from agent_memory.retrieval.compress import GAP, compress_lines
from agent_memory.retrieval.config_parts import LiveSummaries
from agent_memory.retrieval.live_summaries import LiveSummaryRanker, summary_lines

COUNTER = TiktokenCounter("cl100k_base")


class WordsEmbedder:
    """Bag-of-words vectors: the similarity of two texts is the share of their words they share."""

    dimension = 512

    def __init__(self):
        self.embedded: list[str] = []

    def spaces_for(self, texts):
        return ["words"] * len(texts)

    def lang_of(self, text):
        return "en"

    def embed_documents(self, texts, spaces=None):
        self.embedded += texts
        return np.vstack([self.vector(t) for t in texts])

    def vector(self, text):
        out = np.zeros(self.dimension, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            out[zlib.crc32(word.encode()) % self.dimension] = 1.0
        return out / (np.linalg.norm(out) or 1.0)

    def similarities(self, vectors, spaces, langs, query):
        return vectors @ query["words"]

    def question(self, text):
        return QueryVectors({"words": self.vector(text)}, "en")


def summary(n: int, text: str) -> MemoryItem:
    return MemoryItem(id=f"wms:t/s/{n}", tenant="t", source_id="s#compacted", kind="summary", text=text,
                      metadata={"session_id": "s", "scope": "working-memory"})


# Newest first, as working memory gives them.
SUMMARIES = [
    summary(2, "User goals:\n- Ship the release on Friday.\nTool results:\n- run_tests: 212 passed"),
    summary(1, "Confirmed facts:\n- (user) The staging database listens on port 6543.\n- (assistant) Noted."),
    summary(0, "Tool results:\n- grep: config/app.yaml line 12\nDecisions:\n- Keep the retry limit at 5."),
]


def ranked_ids(question: str, config: LiveSummaries | None = None) -> list[str]:
    embedder = WordsEmbedder()
    ranker = LiveSummaryRanker(embedder, config or LiveSummaries())
    return [r.item.id for r in ranker.rank(question, embedder.question(question), SUMMARIES)]


def test_the_summary_holding_the_question_comes_first_whatever_its_age():
    for config in (LiveSummaries(), LiveSummaries(dense=1.0)):  # terms alone (the default), and with meaning too
        assert ranked_ids("Which port does the staging database listen on?", config)[0] == "wms:t/s/1"
        assert ranked_ids("What retry limit did we decide on?", config)[0] == "wms:t/s/0"


def test_by_meaning_alone_and_by_terms_alone_each_find_it():
    question = "Which port does the staging database listen on?"
    assert ranked_ids(question, LiveSummaries(dense=1.0, terms=0.0, newest=0.0))[0] == "wms:t/s/1"
    assert ranked_ids(question, LiveSummaries(dense=0.0, newest=0.0))[0] == "wms:t/s/1"


def test_a_question_that_tells_no_summary_apart_keeps_the_newest_first():
    assert ranked_ids("Hmm?", LiveSummaries(dense=0.0)) == ["wms:t/s/2", "wms:t/s/1", "wms:t/s/0"]


def test_each_ranked_summary_says_why():
    embedder = WordsEmbedder()
    question = "Which port does the staging database listen on?"
    best = LiveSummaryRanker(embedder, LiveSummaries()).rank(question, embedder.question(question), SUMMARIES)[0]
    assert "question terms 4/4" in best.why and "2 of 3 newest first" in best.why


def test_a_summarys_lines_are_embedded_once_for_every_later_question():
    embedder = WordsEmbedder()
    ranker = LiveSummaryRanker(embedder, LiveSummaries(dense=1.0))
    ranker.rank("Which port?", embedder.question("Which port?"), SUMMARIES[1:])
    assert embedder.embedded == ["- (user) The staging database listens on port 6543.", "- (assistant) Noted.",
                                 "- grep: config/app.yaml line 12", "- Keep the retry limit at 5."]
    embedder.embedded.clear()
    ranked = ranker.rank("What retry limit?", embedder.question("What retry limit?"), SUMMARIES)
    assert embedder.embedded == ["- Ship the release on Friday.", "- run_tests: 212 passed"]  # only the new one
    assert ranked[0].item.id == "wms:t/s/0"


def test_ranked_by_terms_alone_the_default_no_line_is_embedded():
    embedder = WordsEmbedder()
    question = "Which port does the staging database listen on?"
    ranked = LiveSummaryRanker(embedder, LiveSummaries()).rank(question, embedder.question(question),
                                                                         SUMMARIES)
    assert ranked[0].item.id == "wms:t/s/1" and embedder.embedded == []


def test_a_summary_line_is_one_that_says_something():
    assert summary_lines(SUMMARIES[0].text) == ["- Ship the release on Friday.", "- run_tests: 212 passed"]


LONG = "\n".join(["User goals:", "- Migrate the billing service.", "Tool results:",
                  *(f"- step {i}: copied table t{i} without errors" for i in range(30)),
                  "Confirmed facts:", "- (user) The staging database listens on port 6543.",
                  "- (user) The invoices table is partitioned by month."])


def test_compress_lines_keeps_the_lines_with_the_question_terms_and_marks_the_gaps():
    out = compress_lines(LONG, "Which port does the staging database listen on?", 40, COUNTER)
    assert out.splitlines() == [GAP.strip(), "- (user) The staging database listens on port 6543.", GAP.strip()]
    assert COUNTER.count(out) <= 40


def test_compress_lines_gives_nothing_when_no_line_carries_the_question():
    assert compress_lines(LONG, "What colour is the office sofa?", 40, COUNTER) == ""
    assert compress_lines(LONG, "Which port does the staging database listen on?", 3, COUNTER) == ""


def test_compress_lines_cuts_a_summary_written_as_prose_to_its_sentences():
    prose = ("The user is migrating the billing service. Every table copied without errors. The staging database "
             "listens on port 6543. The invoices table is partitioned by month.")
    out = compress_lines(prose, "Which port does the staging database listen on?", 20, COUNTER)
    assert out == "… The staging database listens on port 6543. …"
    assert compress_lines(prose, "What colour is the office sofa?", 40, COUNTER) == ""


def test_lines_stored_with_their_summary_rank_as_embedded_ones_and_nothing_is_embedded_at_the_question():
    question = "Which port does the staging database listen on?"
    config = LiveSummaries(dense=1.0)
    writer = WordsEmbedder()  # the archive pass's, when compaction wrote the summaries
    stored = {s.text: lines for s, lines in zip(SUMMARIES, embed_lines(writer, [s.text for s in SUMMARIES]))}
    asked: list[tuple[str, str]] = []

    def lookup(tenant, session):
        asked.append((tenant, session))
        return stored

    reader = WordsEmbedder()
    from_store = LiveSummaryRanker(reader, config, lookup).rank(question, reader.question(question), SUMMARIES)
    embedded = LiveSummaryRanker(WordsEmbedder(), config).rank(question, reader.question(question), SUMMARIES)
    assert [(r.item.id, r.score) for r in from_store] == [(r.item.id, r.score) for r in embedded]
    assert reader.embedded == [] and asked == [("t", "s")]


def test_a_summary_without_stored_lines_has_them_embedded_at_the_question():
    embedder = WordsEmbedder()
    stored = dict(zip([SUMMARIES[0].text], embed_lines(WordsEmbedder(), [SUMMARIES[0].text])))
    ranker = LiveSummaryRanker(embedder, LiveSummaries(dense=1.0), lambda tenant, session: stored)
    ranker.rank("Which port?", embedder.question("Which port?"), SUMMARIES)
    assert embedder.embedded == ["- (user) The staging database listens on port 6543.", "- (assistant) Noted.",
                                 "- grep: config/app.yaml line 12", "- Keep the retry limit at 5."]


def test_stored_line_vectors_read_back_whole_and_another_models_as_absent():
    lines = embed_lines(WordsEmbedder(), [SUMMARIES[1].text])[0]
    again = decode(encode(lines, "words-512"), "words-512")
    assert again is not None and (again.vectors == lines.vectors).all()
    assert again.spaces == lines.spaces == ["words", "words"] and again.langs == ["en", "en"]
    assert decode(encode(lines, "words-512"), "another-model") is None
    assert decode(None, "words-512") is None and decode("{not json", "words-512") is None
