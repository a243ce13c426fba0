"""What the graph reads of an archived tool turn: its prose, not its payloads (index/triples/prose.py);
a turn without tool parts is read but for its code (ingest/graph_writes.py; tests/unit/test_plain_turn_code_triples.py)."""

from __future__ import annotations

import pytest

from agent_memory.conversation import messages as msgs
from agent_memory.conversation.tool_turns import late_result_text
from agent_memory.core.records import MemoryItem, Triple
from agent_memory.index.items import is_tool_turn
from agent_memory.index.triples.prose import json_string_values, kept, prose_of, reads_as_prose
from agent_memory.ingest.graph_writes import extract_triples
from agent_memory.ingest.items import SourceItems


@pytest.mark.parametrize("line", [
    "match: the retry loop is implemented in src/net/backoff_loop_48.py at line 237.",
    "FATAL checksum mismatch in segment store, error code 0x1C2320 (see logs).",
    "benchmark finished: p95 latency 226.4 ms over 10000 requests.",
    "ValueError: invalid literal for int() with base 10: 'abc'",
    "匹配：重试循环实现在src/net/backoff_timer_89.py第306行。",
    "第2.7行：模块26处理了296条记录，耗时28毫秒。",
])
def test_lines_of_words_read_as_prose(line):
    assert reads_as_prose(line)


@pytest.mark.parametrize("line", [
    "0.1: def handler_9(req): return process(req, limit=750)",
    "    return self._cache.get(key, default)",
    "for item in items:",
    "x = compute(a, b)",
    'File "/app/pay/refund.py", line 12, in handle',
    "at com.acme.pay.Refund.run(Refund.java:12)",
    "drwxr-xr-x  2 root root 4096 Jan  1 00:00 src",
    "README.md setup.py",
    "src/pay/mod_3.py:42:    retry = RetryPolicy(max=3)",
    "ok",
    "",
])
def test_code_listings_and_frames_are_not_prose(line):
    assert not reads_as_prose(line)


def test_a_json_line_gives_its_string_values_never_its_keys():
    line = '{"path": "src/a.py", "retry_policy": {"max_attempts": 5}, "note": "Maria moved \\"it\\" to Redis"}'
    assert json_string_values(line) == ["src/a.py", 'Maria moved "it" to Redis']
    assert json_string_values("the retry loop is implemented here") is None


def test_of_a_tool_turn_the_calls_words_and_the_prose_of_arguments_and_results_are_read():
    text = ("[assistant] Maria Lopez leads the billing team at Stripe. I will grep for the retry policy.\n"
            "x = compute(a, b)\n"  # code in the call's own words
            '[tool_use:grep] {"pattern": "retry_policy", "reason": "the refund job retries too often"}\n'
            "[tool_result:grep] src/pay/retry.py:12: retry_policy = RetryPolicy(max_attempts=5)\n"
            '  "retry_policy": "exponential",\n'
            "match: the retry loop is implemented in src/net/backoff_loop_48.py at line 237.")
    assert prose_of(text) == ("Maria Lopez leads the billing team at Stripe. I will grep for the retry policy.\n"
                              "the refund job retries too often\n"
                              "match: the retry loop is implemented in src/net/backoff_loop_48.py at line 237.")


def test_a_piece_of_a_longer_turn_is_read_as_a_results_lines():
    piece = "3.10: def handler_18(req): return process(req, limit=267)\nThe payment gateway declined the card."
    assert prose_of(piece) == "The payment gateway declined the card."
    assert msgs.readable_parts("[INFO] server up\n[user] hi") == [("tool_result", "[INFO] server up"), ("words", "hi")]


def fact(subject: str, obj: str) -> Triple:
    return Triple(subject=subject, relation="related_to", object=obj)


@pytest.mark.parametrize("subject, obj, keep", [
    ("retry loop", "src/net/backoff_loop_48.py", True),  # a whole path is a name
    ("模块", "条记录", True),  # beside digits in Chinese (模块26): words, not pieces of an identifier
    ("src", "net", False),  # pieces of src/net/backoff_timer_89.py
    ("list", "run", False),  # of list_dir
    ("return process(req", "limit=923", False),  # code
    ('"retry_policy"', "Redis", False),
])
def test_a_triple_of_a_tool_turn_is_kept_unless_a_side_is_code_or_a_piece_of_an_identifier(subject, obj, keep):
    text = ("匹配：重试循环实现在src/net/backoff_timer_89.py第306行。第2.7行：模块26处理了296条记录。"
            "我将对src/pay/mod_47.py运行list_dir。the retry loop is in src/net/backoff_loop_48.py, run it")
    assert kept(fact(subject, obj), text) is keep


class Recording:
    """An extractor that returns, for every text, a triple of code pieces and one of words."""

    def __init__(self) -> None:
        self.read: list[str] = []

    def extract_many(self, texts, *, tenant, source_ids, item_ids):
        self.read += texts
        return [[Triple(subject="handler_9(req", relation="is_a", object="src", item_id=i, source_id=s),
                 Triple(subject="Maria Lopez", relation="lead at", object="Stripe", item_id=i, source_id=s)]
                for s, i in zip(source_ids, item_ids)]


def unit(text: str, **metadata) -> SourceItems:
    out = SourceItems("acme", "loop/m3", "turn", "h")
    out.items = [MemoryItem(id="i3", tenant="acme", source_id="loop/m3", kind="turn", text=text,
                            metadata={"speaker": "assistant", **metadata})]
    return out


PAYLOAD = ("[assistant] Maria Lopez leads the billing team at Stripe.\n"
           '[tool_use:read_file] {"path": "src/pay/mod_59.py"}\n'
           "[tool_result:read_file] 0.0: def handler_9(req): return process(req, limit=923)")


PLAIN = "[assistant] Maria Lopez leads the billing team at Stripe.\n[tool_use:read_file] the path is config.json"


@pytest.mark.parametrize("speakers", [None, {"residence": ["live in"]}])
def test_a_turn_without_tool_parts_or_code_is_read_as_stored_and_keeps_every_triple(speakers):
    extractor = Recording()
    triples, counts, _ = extract_triples(extractor, [unit(PLAIN)], speaker_relations=speakers)
    assert extractor.read == [PLAIN]  # its text as stored, even one that looks like a tool turn's
    assert [(t.subject, t.object) for t in triples] == [("handler_9(req", "src"), ("Maria Lopez", "Stripe")]
    assert counts == {"loop/m3": 2}


def test_a_turn_without_tool_parts_is_read_but_for_its_code_and_keeps_no_code_triple():
    extractor = Recording()
    triples, counts, _ = extract_triples(extractor, [unit(PAYLOAD)])
    assert extractor.read == [PAYLOAD[:PAYLOAD.index("[tool_result")]]  # its line of code left out
    assert [(t.subject, t.object) for t in triples] == [("Maria Lopez", "Stripe")]
    assert counts == {"loop/m3": 1}


def test_a_tool_turn_is_read_for_its_prose_and_keeps_no_code_triple():
    extractor = Recording()
    triples, counts, _ = extract_triples(extractor, [unit(PAYLOAD, tools=["read_file"])])
    assert extractor.read == ["Maria Lopez leads the billing team at Stripe."]
    assert [(t.subject, t.object) for t in triples] == [("Maria Lopez", "Stripe")]
    assert counts == {"loop/m3": 1}


def test_a_late_result_whose_call_is_not_found_is_a_tool_turn_still():
    row = {"message": {"role": "tool", "tool_call_id": "gone", "content": "def f(x): return x"}}
    text, tools = late_result_text(row, [])
    assert text == "[tool_result:tool] def f(x): return x" and tools == ["tool"]
    item = MemoryItem(id="i", tenant="acme", source_id="s", kind="turn", text=text, metadata={"tools": tools})
    assert is_tool_turn(item) and prose_of(text) == ""
