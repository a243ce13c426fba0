"""English time words through the Python API: a dated memory answers "last Friday" with Friday's turn, and
"the day before yesterday" (which once raised KeyError) with that day's."""

from __future__ import annotations

import pytest

from agent_memory import Memory
from agent_memory.core.config import load_settings

# One outing an evening, told that evening; only the day tells them apart. Asked on Thursday 25 April 2024:
# last Friday is 19 April (its window runs to the Sunday: memory is written after the event), the day before
# yesterday 23 April. Other talk, weeks before, makes the outings' likeness to the question one level.
EVENINGS = {"thu-11": ("2024-04-11T20:00:00Z", "a pottery class"), "fri-12": ("2024-04-12T20:00:00Z", "a jazz concert"),
            "thu-18": ("2024-04-18T20:00:00Z", "a cooking course"), "fri-19": ("2024-04-19T20:00:00Z", "a bowling night"),
            "mon-22": ("2024-04-22T20:00:00Z", "a board game cafe"), "tue-23": ("2024-04-23T20:00:00Z", "a salsa lesson"),
            "wed-24": ("2024-04-24T20:00:00Z", "a quiz night")}
OTHER_TALK = ["My landlord finally fixed the heating in the flat.", "I need to renew my passport before the summer.",
              "The new laptop from work has a terrible keyboard.", "My sister is moving to Lisbon in the autumn.",
              "Remind me to water the tomato plants on the balcony.", "The dentist wants to see me again in six months."]
ASKED = "2024/04/25 (Thu) 10:00"


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    settings = load_settings(data_dir=tmp_path_factory.mktemp("evenings") / "data", triple_extractor="rules",
                             qdrant_url=None, neo4j_uri=None, postgres_url=None)
    with Memory(settings=settings) as memory:
        for n, text in enumerate(OTHER_TALK):
            memory.add_message(f"march-{n}", {"role": "user", "content": text, "timestamp": f"2024-03-0{n + 1}T09:00:00Z"})
        for session, (stamp, outing) in EVENINGS.items():
            memory.add_message(session, {"role": "user", "content": f"Tonight I went to {outing} with my friend Sam.",
                                         "timestamp": stamp})
        yield memory


@pytest.mark.parametrize("question, session, phrase", [
    ("What did I do last Friday?", "fri-19", "last Friday"),
    ("What did I do on Friday last week?", "fri-19", "Friday last week"),
    ("What did I do the day before yesterday?", "tue-23", "the day before yesterday"),
])
def test_a_dated_memory_answers_a_time_word_with_that_days_turn(memory, question, session, phrase):
    result = memory.prompt(question, budget=300, question_date=ASKED, debug=True)
    [window] = [d for d in result.decisions if d.stage == "time"]
    assert window.target == phrase
    assert result.passages[0].source_id.startswith(f"{session}/"), [p.source_id for p in result.passages]
    assert EVENINGS[session][1] in result.passages[0].text
