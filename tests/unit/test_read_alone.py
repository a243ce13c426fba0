"""Which turns are read alone (agent_memory/retrieval/rerank/signals.py ``read_alone``) and what that takes from them
in ``conversation_context``: the neighbour's share, never the session's."""

from __future__ import annotations

import numpy as np
import pytest

from agent_memory.core.records import MemoryItem
from agent_memory.retrieval.rerank.signals import conversation_context, read_alone
from agent_memory.retrieval.types import Candidate


def turn(seq: int, speaker: str | None, kind: str = "turn") -> Candidate:
    metadata = {"session_id": "s", "seq": seq, **({"speaker": speaker} if speaker else {})}
    item = MemoryItem(id=f"s/t{seq}", tenant="t", source_id=f"s/t{seq}", kind=kind, text="x", metadata=metadata)
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
