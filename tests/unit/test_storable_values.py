"""Values no store can hold (NUL, lone surrogates, Infinity and NaN, control characters in IDs) are refused
where they enter, naming the field; those a file holds are kept as text so the file is still ingested."""

from __future__ import annotations

import json
import math

import pytest

from agent_memory.conversation.message_validation import check_session_id, validate
from agent_memory.core.storable import check_storable, control_character, text_problem
from agent_memory.ingest.discovery import check_source_id
from agent_memory.ingest.formats import FRONT_MATTER_LINES, split_front_matter
from agent_memory.ingest.json_records import load_json_text
from agent_memory.memory.arguments import check_document, check_metadata


@pytest.mark.parametrize("value, where", [
    ({"v": float("inf")}, "metadata['v'] is inf"),
    ({"v": float("-inf")}, "metadata['v'] is -inf"),
    ({"v": float("nan")}, "metadata['v'] is nan"),
    ({"tags": ["a", 1.5, float("nan")]}, "metadata['tags'][2] is nan"),
    ({"a": {"b": [{"c": math.inf}]}}, "metadata['a']['b'][0]['c'] is inf"),
    ({"k": "v\x00"}, "metadata['k'] holds a NUL character"),
    ({"k\x00": "v"}, "metadata: the key 'k\\x00' holds a NUL character"),
    ({"a": [{"b": "x\x00y"}]}, "metadata['a'][0]['b'] holds a NUL character (\\x00) at character 1"),
    ({"s": "a\ud800"}, "metadata['s'] holds a lone surrogate"),
])
def test_metadata_no_store_can_hold_is_refused_naming_the_key(value, where):
    with pytest.raises(ValueError) as caught:
        check_metadata(value)
    assert str(caught.value).startswith(where)


def test_the_first_bad_value_in_reading_order_is_named():
    with pytest.raises(ValueError, match=r"^metadata\['a'\]"):
        check_storable({"a": math.nan, "b": math.inf}, "metadata")


def test_ordinary_metadata_passes_unchanged():
    value = {"team": "ops", "n": 3, "x": 1.5, "big": 10**30, "ok": True, "none": None,
             "nested": {"l": [1, "two", {"three": 3.0}]}, "tab\tkey": "line\nbreak"}
    assert check_metadata(value) == value
    assert check_metadata(None) == {}


def test_document_text_and_title_refuse_nul_naming_the_field():
    with pytest.raises(ValueError, match=r"^text holds a NUL character \(\\x00\) at character 4"):
        check_document("abc \x00", "")
    with pytest.raises(ValueError, match="^title holds a NUL character"):
        check_document("fine", "T\x00itle")
    with pytest.raises(TypeError, match="title must be a str"):
        check_document("fine", None)
    check_document("tabs\tand\nnewlines\x0cstay", "Title")


@pytest.mark.parametrize("text, bad", [("a\x00b", "\x00"), ("a\nb", "\n"), ("a\x7fb", "\x7f"),
                                       ("a\x85b", "\x85"), ("a\x9fb", "\x9f"), ("plain é ü 中", None)])
def test_control_characters_are_c0_del_and_c1(text, bad):
    assert control_character(text) == bad


@pytest.mark.parametrize("source_id", ["h/n\x00ul.txt", "notes/line\nbreak", "tab\there", "nel\x85x", "del\x7f"])
def test_a_source_id_with_a_control_character_is_refused_naming_it(source_id):
    with pytest.raises(ValueError, match="cannot contain control characters") as caught:
        check_source_id(source_id)
    assert repr(source_id) in str(caught.value)


def test_a_source_id_with_a_lone_surrogate_is_refused():
    with pytest.raises(ValueError, match="source_id holds a lone surrogate"):
        check_source_id("notes/\udc80.md")


def test_ordinary_source_ids_still_pass():
    for source_id in ("notes/greenhouse.md", "a b/c-d_e.txt", "中文/笔记.md", "x#3"):
        assert check_source_id(source_id) == source_id


def test_a_session_id_with_a_c1_control_character_is_refused_as_source_ids_are():
    with pytest.raises(ValueError, match=r"got 'next\\x85line' \(holds a control character \('\\x85'\)\)"):
        check_session_id("tenant/next\x85line")


@pytest.mark.parametrize("message, words", [
    ({"role": "user", "content": "The safe combo is 12\x00-34"}, r"message\['content'\] holds a NUL"),
    ({"role": "user", "content": [{"type": "text", "text": "a\x00"}]}, r"\['content'\]\[0\]\['text'\] holds a NUL"),
    ({"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "n", "input": {"x": math.nan}}]},
     r"\['input'\]\['x'\] is nan"),
    ({"role": "user", "content": "x", "name": "a\x00"}, r"message\['name'\] holds a NUL"),
])
def test_a_message_holding_nul_or_nan_is_refused_naming_the_field(message, words):
    with pytest.raises(ValueError, match=words):
        validate(message)


@pytest.mark.parametrize("front, key, stored", [
    ("version: .inf", "version", ".inf"), ("v: -.inf", "v", "-.inf"), ("n: .nan", "n", ".nan"),
    ("tags: [1, .inf, x]", "tags", [1, ".inf", "x"]),
])
def test_front_matter_infinity_and_nan_are_kept_as_their_yaml_text(front, key, stored):
    read = split_front_matter(f"---\n{front}\n---\nBody.")
    assert read.metadata == {key: stored, FRONT_MATTER_LINES: [3, len(front), 3]}
    check_storable(read.metadata, "metadata")  # what the stores are given holds no float they refuse


def test_json_record_infinity_and_nan_are_kept_as_their_json_text():
    raw = '{"text": "A record about pumps.", "score": NaN, "hi": Infinity, "lo": -Infinity, "n": 2.5}'
    (doc,) = load_json_text(raw, tenant="t", source_id="r.json")
    assert doc.metadata == {"score": "NaN", "hi": "Infinity", "lo": "-Infinity", "n": 2.5}
    assert json.loads(json.dumps(doc.metadata, allow_nan=False)) == doc.metadata


def test_text_problem_is_none_for_plain_text():
    assert text_problem("café ☕ 中文 \t\n") is None
