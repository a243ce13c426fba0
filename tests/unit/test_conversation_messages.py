"""Message helpers for both tool formats: ids, serialization, readable spans, micro-compaction."""

from __future__ import annotations

import pytest

from agent_memory.conversation import messages as msgs
from agent_memory.conversation.message_validation import message_time, validate
from agent_memory.conversation.significance import RuleDetector, entities, numbers

OPENAI = [
    {"role": "user", "content": "Weather in Oslo?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Oslo"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "Oslo: 4 C, wind 12 km/h"},
]
ANTHROPIC = [
    {"role": "assistant", "content": [{"type": "text", "text": "Looking it up."},
                                      {"type": "tool_use", "id": "tu1", "name": "stock", "input": {"s": "ACME"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu1",
                                  "content": [{"type": "text", "text": "ACME 131.5 USD"}]}]},
]


def test_ids_in_both_formats():
    assert msgs.call_ids(OPENAI[1]) == ["c1"] and msgs.result_ids(OPENAI[2]) == ["c1"]
    assert msgs.call_ids(ANTHROPIC[0]) == ["tu1"] and msgs.result_ids(ANTHROPIC[1]) == ["tu1"]
    assert not msgs.is_user_turn(ANTHROPIC[1])  # only tool results: not a user turn
    assert msgs.is_user_turn(OPENAI[0])


def test_readable_span():
    text = msgs.readable(OPENAI + ANTHROPIC)
    assert text.splitlines() == [
        "[user] Weather in Oslo?",
        '[tool_use:weather] {"city": "Oslo"}',
        "[tool_result:weather] Oslo: 4 C, wind 12 km/h",
        "[assistant] Looking it up.",
        '[tool_use:stock] {"s": "ACME"}',
        "[tool_result:stock] ACME 131.5 USD",
    ]


def test_serialize_counts_tool_calls():
    serialized = msgs.serialize(OPENAI[1])
    assert "weather" in serialized and "Oslo" in serialized and serialized.startswith("assistant")


def test_micro_compaction_markers_in_both_formats():
    history = OPENAI + ANTHROPIC + [{"role": "user", "content": "thanks"}]
    # Results longer than their markers (a shorter one stays: test_view_tool_steps.py).
    history[2] = {**history[2], "content": "Oslo: 4 C, wind 12 km/h, " * 2}
    history[4] = {**history[4], "content": [{**history[4]["content"][0], "content": "ACME 131.5 USD. " * 3}]}
    out = msgs.micro_compact(history, keep=0)
    assert out[2]["content"] == "[truncated: weather result, 50 chars]"
    assert out[4]["content"][0]["content"] == "[truncated: stock result, 48 chars]"
    assert out[4]["content"][0]["tool_use_id"] == "tu1"
    assert out[0] == history[0] and out[-1] == history[-1]
    assert msgs.micro_compact(out, keep=0) == out
    assert msgs.micro_compact(history, keep=2) == history  # only two results: both recent


def test_validate_rejects_bad_messages():
    with pytest.raises(ValueError, match="tool_call_id"):
        validate({"role": "tool", "content": "x"})
    with pytest.raises(ValueError, match="dict"):
        validate("hello")


def test_extractors_and_rules():
    assert {"X-200", "Berlin", "Alice"} <= entities("Alice shipped the X-200 to Berlin on Monday.")
    assert numbers("Version 3.5 shipped 2024-05-01, 12% off") == {"3.5", "2024-05-01", "12%"}
    assert "北京" in entities("我下周去北京出差")
    detector = RuleDetector()
    assert detector.judge("user", "I prefer window seats.").reasons == ["preference"]
    assert "decision" in detector.judge("assistant", "We decided to use Postgres.").reasons
    assert not detector.judge("assistant", "Sure, happy to help!").significant
    assert not detector.judge("tool", "I prefer nothing").significant


@pytest.mark.parametrize("stamp, expected", [
    ("2023-05-08T13:56:00Z", 1_683_554_160.0), ("2023-05-08T15:56:00+02:00", 1_683_554_160.0),
    ("2023-05-08T13:56:00", 1_683_554_160.0), ("2023-05-08", 1_683_504_000.0),
    (1_683_554_160, 1_683_554_160.0), (1_683_554_160.5, 1_683_554_160.5), ("1683554160", 1_683_554_160.0),
])
def test_a_message_time_is_iso_8601_or_unix_seconds(stamp, expected):
    message = {"role": "user", "content": "hi", "timestamp": stamp}
    assert message_time(validate(message)) == expected
    assert message_time({"role": "user", "content": "hi"}) is None


@pytest.mark.parametrize("stamp", ["next tuesday", "", True, -5, 1_683_554_160_000, float("nan"), [2023], {"t": 1}])
def test_a_bad_message_time_is_refused_naming_it(stamp):
    with pytest.raises(ValueError, match=r"message\W+timestamp") as caught:
        validate({"role": "user", "content": "hi", "timestamp": stamp})
    assert repr(stamp)[:20] in str(caught.value)
