"""The one sentence scorer: marks weigh what a sentence holds, position and length weigh where it stands."""

from __future__ import annotations

import pytest

from agent_memory.conversation.light import KEY_SENTENCE_WEIGHTS
from agent_memory.core.sentence_scoring import Mark, SentenceWeights, score_sentence, score_sentences
from agent_memory.ingest.summarize import SUMMARY_SENTENCE_WEIGHTS


def test_marks_count_per_unit_and_unweighted_features_add_nothing():
    digits = Mark(2.0, lambda s: sum(c.isdigit() for c in s))
    asks = Mark(1.5, lambda s: s.endswith("?"))
    assert score_sentences(["a 1 b 22", "why?", "plain"], SentenceWeights(marks=(digits, asks))) == [6.0, 1.5, 0.0]
    assert score_sentence("anything at all", 3, 9, SentenceWeights()) == 0.0


def test_position_and_length_weights():
    weights = SentenceWeights(first=2.0, last=0.5, early=1.0, later=-0.1, short=-1.0, short_chars=5, long=-0.5,
                              long_chars=20)
    first, middle, last = score_sentences(["A long enough one.", "Middle one here.", "End."], weights)
    assert first == pytest.approx(2.0 + 1.0)
    assert middle == pytest.approx(1.0 - 1 / 3 - 0.1)
    assert last == pytest.approx(0.5 + 1.0 - 2 / 3 - 0.2 - 1.0)  # "End." is short
    assert score_sentence("x" * 30, 1, 3, weights) == pytest.approx(1.0 - 1 / 3 - 0.1 - 0.5)


def test_the_callers_weigh_what_they_keep():
    # The light level: a decision with a number and a date beats small talk, wherever it stands.
    chat, decision = score_sentences(["Nice weather today.", "We decided to order 40 units on 2024-03-01."],
                                     KEY_SENTENCE_WEIGHTS)
    assert decision > chat
    # Summaries: the lead sentence and a conclusion beat a middle sentence of the same length.
    lead, middle, conclusion = score_sentences(
        ["The survey covered twelve towns.", "Most of them are by the sea now.", "Therefore the plan was kept."],
        SUMMARY_SENTENCE_WEIGHTS)
    assert lead > middle and conclusion > middle
