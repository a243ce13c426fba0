"""The cross-encoder stage re-orders the reranker's first candidates by z(-rank) + weight * z(logit), with a
scorer that stands in for the model (the model itself: tests/integration/test_onnx_cross_encoder.py)."""

from __future__ import annotations

import logging

import pytest

from agent_memory.retrieval.config_parts import CrossEncoderConfig
from agent_memory.retrieval.rerank.cross_encoder import cross_encode, passage_text
from agent_memory.retrieval.types import Candidate
from tests.retrieval_items import candidates, item


class FakeScorer:
    """Scores each passage by the logit ``logits`` gives its text (0 for the others); records each call."""

    def __init__(self, logits: dict[str, float] | None = None, fail: Exception | None = None) -> None:
        self.logits = logits or {}
        self.fail = fail
        self.calls: list[tuple[str, list[str], int, int]] = []

    def score(self, question, passages, *, max_tokens, batch):
        self.calls.append((question, list(passages), max_tokens, batch))
        if self.fail is not None:
            raise self.fail
        return [self.logits.get(p, 0.0) for p in passages]


def ranked(n: int) -> list[Candidate]:
    return candidates(*(item(f"i{k}", text=f"passage {k}") for k in range(n)))


def ids(cands: list[Candidate]) -> list[str]:
    return [c.item.id for c in cands]


def test_a_deep_candidate_the_model_finds_relevant_moves_up():
    before = ranked(10)
    finals = [c.final for c in before]
    decisions = []
    out = cross_encode("q?", before, FakeScorer({"passage 8": 10.0}), CrossEncoderConfig(weight=1.0), decisions)
    assert ids(out)[0] == "i8"  # z(-rank) -1.22 + z(logit) 3.00 beats the first's 1.57 - 0.33
    assert ids(out)[1:] == [f"i{k}" for k in (0, 1, 2, 3, 4, 5, 6, 7, 9)]
    assert [c.final for c in out] == finals  # the finals by position: still sorted for the stages after
    moved = {d.target: d.reason for d in decisions if d.stage == "cross_encoder" and d.action == "moved"}
    assert moved["i8"] == "rank 9 → 1, logit 10.000"
    assert moved["i0"] == "rank 1 → 2, logit 0.000"
    assert "i9" not in moved  # the last stays last


def test_candidates_beyond_top_keep_their_order_and_are_never_scored():
    before = ranked(8)
    scorer = FakeScorer({"passage 3": 10.0, "passage 6": 50.0})
    out = cross_encode("q?", before, scorer, CrossEncoderConfig(weight=1.0, top=5, max_tokens=64, batch=16), [])
    assert scorer.calls == [("q?", [f"passage {k}" for k in range(5)], 64, 16)]
    assert ids(out)[5:] == ["i5", "i6", "i7"]
    assert ids(out)[0] == "i3"
    finals = [c.final for c in out]
    assert finals == sorted(finals, reverse=True)


def test_equal_logits_keep_the_rerankers_order():
    before = ranked(6)
    decisions = []
    assert ids(cross_encode("q?", before, FakeScorer(), CrossEncoderConfig(), decisions)) == ids(ranked(6))
    assert decisions == []


def test_a_larger_weight_trusts_the_model_further():
    logits = {"passage 5": 2.0}
    light = cross_encode("q?", ranked(6), FakeScorer(logits), CrossEncoderConfig(weight=0.5), [])
    heavy = cross_encode("q?", ranked(6), FakeScorer(logits), CrossEncoderConfig(weight=4.0), [])
    assert ids(light).index("i5") > ids(heavy).index("i5") == 0


def test_weight_zero_scores_nothing():
    scorer = FakeScorer({"passage 4": 10.0})
    out = cross_encode("q?", ranked(5), scorer, CrossEncoderConfig(weight=0.0), [])
    assert ids(out) == ids(ranked(5)) and scorer.calls == []


@pytest.mark.parametrize("fail", [RuntimeError("onnx session died"), None], ids=["raises", "wrong count"])
def test_a_failing_scorer_keeps_the_rerankers_order_and_says_so(caplog, fail):
    scorer = FakeScorer(fail=fail)
    if fail is None:
        scorer.score = lambda question, passages, **_: [1.0]  # one score for five passages
    before = ranked(5)
    decisions = []
    with caplog.at_level(logging.WARNING, logger="agent_memory.retrieval.rerank.cross_encoder"):
        out = cross_encode("q?", before, scorer, CrossEncoderConfig(), decisions)
    assert ids(out) == ids(ranked(5)) and [c.final for c in out] == [c.final for c in ranked(5)]
    assert [(d.stage, d.target, d.action) for d in decisions] == [("cross_encoder", "5 candidates", "skipped")]
    assert "the reranker's order kept" in decisions[0].reason
    assert ("onnx session died" if fail else "1 scores for 5 passages") in decisions[0].reason
    assert any("cross-encoder failed" in r.getMessage() for r in caplog.records)


def test_the_passage_is_read_with_its_speaker_as_the_model_was_trained():
    said = item("t1", kind="turn", text="I went to a support group yesterday.")
    said.metadata["speaker"] = "Caroline"
    assert passage_text(said) == "Caroline: I went to a support group yesterday."
    named = item("t2", kind="turn", text="Caroline: thanks, Mel!")
    named.metadata["speaker"] = "Caroline"
    assert passage_text(named) == "Caroline: thanks, Mel!"
    assert passage_text(item("c1", text="A chunk of a document.")) == "A chunk of a document."
    scorer = FakeScorer()
    cross_encode("Who went?", candidates(said, named, item("c1", text="A chunk.")), scorer, CrossEncoderConfig(), [])
    assert scorer.calls[0][1] == ["Caroline: I went to a support group yesterday.", "Caroline: thanks, Mel!",
                                  "A chunk."]


def test_one_candidate_or_none_is_left_as_it_is():
    scorer = FakeScorer()
    assert cross_encode("q?", [], scorer, CrossEncoderConfig(), []) == []
    assert ids(cross_encode("q?", ranked(1), scorer, CrossEncoderConfig(), [])) == ["i0"]
    assert scorer.calls == []
