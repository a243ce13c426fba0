"""Which turns are read alone (agent_memory/retrieval/rerank/signals.py ``read_alone``) and what that takes from them
in ``conversation_context``: the neighbour's share, never the session's."""

from __future__ import annotations

import numpy as np
import pytest

from agent_memory.core.records import MemoryItem
from agent_memory.retrieval.rerank.signals import conversation_context, read_alone
from agent_memory.retrieval.types import Candidate


def turn(seq: int, speaker: str | None, kind: str = "turn", text: str = "x", session: str = "s") -> Candidate:
    metadata = {"session_id": session, "seq": seq, **({"speaker": speaker} if speaker else {})}
    item = MemoryItem(id=f"{session}/t{seq}", tenant="t", source_id=f"{session}/t{seq}", kind=kind, text=text,
                      metadata=metadata)
    return Candidate(item=item)


def test_an_assistants_turn_under_any_of_its_labels_is_read_alone_and_no_one_elses():
    candidates = [turn(0, "user"), turn(1, "assistant"), turn(2, "助手"), turn(3, "Assistant"), turn(4, "Caroline"),
                  turn(5, None), turn(6, "assistant", kind="chunk")]
    assert read_alone(candidates, ["assistant"]).tolist() == [False, True, True, True, False, False, False]
    assert not read_alone(candidates, []).any()


def test_a_turn_read_alone_keeps_its_sessions_share_and_takes_none_of_its_neighbours():
    candidates = [turn(0, "user"), turn(1, "assistant"), turn(2, "user")]
    score = np.array([4.0, 0.0, 1.0])
    shared = conversation_context(candidates, score, 0.5, 0.25, 3)
    alone = conversation_context(candidates, score, 0.5, 0.25, 3, read_alone(candidates, ["assistant"]))
    session = 0.25 * np.mean([4.0, 1.0, 0.0])
    assert shared.tolist() == pytest.approx([4.0 + 0.0 + session, 0.0 + 0.5 * 4.0 + session, 1.0 + 0.0 + session])
    # The acknowledgement loses the user's 4.0; the user's turns keep what their neighbours give them.
    assert alone.tolist() == pytest.approx([4.0 + session, session, 1.0 + session])


def test_the_config_reads_the_assistant_alone_by_default_and_refuses_an_empty_label_naming_it():
    from agent_memory.core.errors import ConfigError
    from agent_memory.retrieval.config import load_preset

    assert load_preset("default").context_read_alone == ["assistant"]
    # An empty label would name every turn whose speaker is unknown.
    with pytest.raises(ConfigError, match="context_read_alone"):
        load_preset("default", context_read_alone=[""])


def test_an_answer_is_read_with_the_question_before_it_and_an_acknowledgement_alone():
    candidates = [turn(0, "user", text="下周要飞乌鲁木齐，五个多小时，推荐本小说路上看？"),
                  turn(1, "assistant", text="飞乌鲁木齐那五个多小时，带本《白鹿原》吧。"),
                  turn(2, "user", text="Finished reading Pachinko last night."),
                  turn(3, "assistant", text="Okay, noted."),
                  turn(4, "assistant", text="Try Belcanto.", session="other"),  # its session's turn 3 is not the ask
                  turn(6, "user", text="Any ideas for a gift?"),
                  turn(8, "assistant", text="A walnut cutting board.")]  # turn 7 came between: not an answer to 6
    assert read_alone(candidates, ["assistant"], answer_with_ask=True).tolist() == [
        False, False, False, True, True, False, True]
    assert read_alone(candidates, ["assistant"]).tolist() == [False, True, False, True, True, False, True]


def test_an_answer_takes_its_questions_share_as_every_turn_did_before_turns_were_read_alone():
    candidates = [turn(0, "user", text="A novel for the flight?"), turn(1, "assistant", text="Take Circe.")]
    score = np.array([4.0, 0.0])
    alone = read_alone(candidates, ["assistant"], answer_with_ask=True)
    assert conversation_context(candidates, score, 0.5, 0.0, 3, alone).tolist() == pytest.approx([4.0, 2.0])


@pytest.mark.parametrize("question, of_assistant", [
    ("Which restaurant did you suggest for our anniversary?", True),
    ("Can you remind me of the app you mentioned?", True),
    ("你让我带什么书去新疆？", True),
    ("您推荐的是哪一部？", True),
    ("Which books have I read?", False),
    ("Did the youth team win?", False),
    ("我读过哪些书？", False),
])
def test_a_question_in_the_second_person_asks_what_the_assistant_said(question, of_assistant):
    from agent_memory.index.triples.speaker import asks_of_assistant

    assert asks_of_assistant(question) is of_assistant
