"""Hostile JSON and malformed messages are refused at the boundary with the field named."""

from __future__ import annotations

import json

import pytest

from agent_memory.conversation.message_validation import validate
from agent_memory.ingest.json_records import load_json_text
from agent_memory.ingest.shapes import MAX_JSON_DEPTH
from agent_memory.ingest.sources import Document, Skipped, Transcript


def _load(data, jsonl: bool = False):
    raw = data if isinstance(data, str) else json.dumps(data)
    return load_json_text(raw, tenant="t", source_id="f.json", path="f.json", jsonl=jsonl)


@pytest.mark.parametrize("raw, reason", [
    ("[" * 100_000 + "]" * 100_000, "nested deeper"),
    # Deep enough to pass the parser, past the limit: refused by the depth check, not a crash.
    ('{"text": "x", "a": ' + "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH + "}", "nested deeper"),
    ('{"text": "unterminated', "malformed JSON"),
])
def test_deep_or_broken_json_is_one_skip_with_a_reason(raw, reason):
    [skip] = _load(raw)
    assert isinstance(skip, Skipped) and reason in skip.reason


@pytest.mark.parametrize("data, field", [
    ({"data": [1, 2, "x"]}, "data.0"),
    ({"conversation": {"session_1": [1]}}, "conversation.session_1.0"),
    ({"conversation": {"session_1": "not a list"}}, "conversation.session_1"),
    ({"conversation": {"session_1": [{"speaker": "A", "text": {"nested": 1}}]}}, "text"),
    ({"haystack_sessions": [[{"role": "user", "content": 5}]]}, "content"),
    ({"haystack_sessions": "x"}, "haystack_sessions"),
    ({"turns": [{"speaker": "A", "text": "hi"}, 7]}, "turns.1"),
    ([{"role": "user", "content": "hi"}, {"role": ["x"], "content": "hi"}], "[1].role"),
    ({"contexts": [{"title": "T", "paragraph_text": "p"}, {"title": 3, "paragraph_text": "p"}]}, "contexts.1"),
])
def test_wrong_shape_is_skipped_naming_the_field(data, field):
    out = _load(data)
    assert all(isinstance(x, Skipped) for x in out), out
    assert field in out[0].reason, out[0].reason


def test_a_bad_record_among_good_ones_is_skipped_alone():
    raw = "\n".join([json.dumps({"id": "a", "text": "alpha"}), json.dumps({"id": {"x": 1}, "text": "bad id"}),
                     json.dumps({"id": "c", "text": "gamma"})])
    out = _load(raw, jsonl=True)
    assert [x.source_id for x in out if isinstance(x, Document)] == ["a", "c"]
    [skip] = [x for x in out if isinstance(x, Skipped)]
    assert skip.path == "f.json#1" and "record 1.id" in skip.reason


def test_valid_transcripts_still_parse():
    locomo = {"sample_id": "c1", "conversation": {"session_1": [{"speaker": "A", "text": "hi", "dia_id": "D1:1"}],
                                                  "session_1_date_time": "1 May 2023"}}
    [transcript] = _load(locomo)
    assert isinstance(transcript, Transcript) and transcript.turns[0].source_id == "c1/D1:1"


@pytest.mark.parametrize("message, field", [
    ({"role": "assistant", "content": None, "tool_calls": "zzz"}, "message.tool_calls"),
    ({"role": "assistant", "content": None, "tool_calls": [1, 2]}, "message.tool_calls[0]"),
    ({"role": "assistant", "tool_calls": [{"id": "c1", "function": "f"}]}, "message.tool_calls[0].function"),
    ({"role": "assistant", "tool_calls": [{"id": "", "function": {"name": "f"}}]}, "message.tool_calls[0].id"),
    ({"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": 3}}]},
     "function.arguments"),
    ({"role": "tool", "tool_call_id": 5, "content": "x"}, "message.tool_call_id"),
    ({"role": "user", "content": 42}, "message.content"),
    ({"role": "assistant", "content": [{"type": "tool_use", "name": "f", "input": {}}]}, "message.content[0].id"),
    ({"role": "assistant", "content": [{"type": "tool_use", "id": "u", "name": "f", "input": "x"}]},
     "message.content[0].input"),
    ({"role": "user", "content": [{"type": "tool_result", "content": "x"}]}, "message.content[0].tool_use_id"),
    ({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "u", "content": 3}]},
     "message.content[0].content"),
    ({"role": "user", "content": [7]}, "message.content[0]"),
])
def test_malformed_messages_are_refused_naming_the_field(message, field):
    with pytest.raises(ValueError) as caught:
        validate(message)
    assert field in str(caught.value)


@pytest.mark.parametrize("message", [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": None,
     "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "42"},
    {"role": "assistant", "content": [{"type": "text", "text": "ok"},
                                      {"type": "tool_use", "id": "u1", "name": "get", "input": {"q": 1}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "u1",
                                  "content": [{"type": "text", "text": "42"}]}]},
])
def test_well_formed_messages_in_both_formats_pass(message):
    assert validate(message) is message


def test_point_ids_are_taken_canonical_or_dropped():
    """IDs in Qdrant's own form pass as they are; other spellings of a UUID are normalized; a
    string that is no UUID names no point (it cannot have been stored)."""
    from agent_memory.stores.qdrant_inputs import valid_ids

    canonical = "0b5c3f2e-6a1d-4c8e-9f00-123456789abc"
    assert valid_ids([canonical, canonical.upper(), "{" + canonical + "}", "not-a-uuid", "", 'x"; DROP']) == [
        canonical, canonical, canonical]
