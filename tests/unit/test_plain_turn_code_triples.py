"""Code and paths in plain turns and documents give no entities of their pieces: the Chinese tagger keeps an
ASCII path or identifier whole (index/triples/chinese.py), and the graph reads a plain text but its code
(index/triples/prose.py ``plain_prose``; ingest/graph_writes.py)."""

from __future__ import annotations

import pytest

from agent_memory.core.records import MemoryItem
from agent_memory.index.triples import RuleBasedExtractor
from agent_memory.index.triples.chinese import ChineseExtractor, tokenize
from agent_memory.index.triples.prose import plain_prose
from agent_memory.ingest.graph_writes import extract_triples
from agent_memory.ingest.items import SourceItems

PIECES = {"src", "pay", "mod", "mod_47", "py", "read", "file", "vendor", "billing", "billing_42"}


@pytest.mark.parametrize("sentence, whole", [
    ("第12步：我将对src/pay/mod_47.py运行read_file，检查计划的下一部分。", ["src/pay/mod_47.py", "read_file"]),
    ("重要：永远不要修改目录vendor/billing_42/，它属于另一个团队。", ["vendor/billing_42/"]),
    ("匹配：重试循环实现在src/net/backoff_loop_48.py第306行。", ["src/net/backoff_loop_48.py"]),
    ("配置在/etc/pay/config.yaml里。", ["/etc/pay/config.yaml"]),
    ("茨柏克沃斯基参与OS/2的开发。", ["OS/2"]),
])
def test_chinese_segmentation_keeps_a_path_or_identifier_whole(sentence, whole):
    words = [tok.word for tok in tokenize(sentence)]
    assert all(name in words for name in whole)
    assert not set(words) & PIECES


def test_a_chinese_sentence_with_a_path_gives_the_path_whole_or_not_at_all_never_its_pieces():
    text = "第12步：我将对src/pay/mod_47.py运行read_file，检查计划的下一部分。重要：永远不要修改目录vendor/billing_42/。"
    triples = ChineseExtractor().extract(text, tenant="t", source_id="s", item_id="i")
    sides = {name for t in triples for name in (t.subject, t.object)}
    assert ("src/pay/mod_47.py", "read_file") in {(t.subject, t.object) for t in triples}
    assert not sides & PIECES
    assert not [n for n in sides if "/" in n and n not in ("src/pay/mod_47.py", "vendor/billing_42/")]


@pytest.mark.parametrize("text, kept", [
    ("Army.Its", ["Army", "Its"]),  # a sentence's dot with its space left out: no path
    ("Dr.Virginia Apgar", ["Virginia", "Apgar"]),  # an abbreviation's
    ("Köк Орда/Kök Orda", ["Orda"]),  # beside a letter of another script: a piece of a word, not a path
    ("Yingkou/Yingkow", ["Yingkou", "Yingkow"]),  # a name's two spellings
])
def test_dots_before_capitals_spellings_and_runs_inside_words_of_other_scripts_are_no_paths(text, kept):
    words = [tok.word for tok in tokenize(f"他说{text}。")]
    assert all(word in words for word in kept)
    assert not [tok for tok in tokenize(f"他说{text}。") if tok.flag == "path"]


def test_a_version_is_read_as_before():
    assert [(t.word, t.flag) for t in tokenize("GPT-3.5") if t.word.strip()] == [("GPT-3", "model"), (".", "x"),
                                                                               ("5", "num")]


FENCED = ("Marie Curie was born in Warsaw.\n"
          "```python\n"
          "def handler_9(req):\n"
          "    return process(req, limit=923)\n"
          "```\n"
          "The refund job runs every night.")


@pytest.mark.parametrize("text, read", [
    (FENCED, "Marie Curie was born in Warsaw.\nThe refund job runs every night."),
    ("~~~\nx = compute(a, b)\n~~~\nThe refund job runs every night.", "The refund job runs every night."),
    # a line of prose holding code: the sentences of code go, the prose stays
    ("I understand, let me look at this. 3.0: def handler_3(req): return process(req, limit=123)\nThanks!",
     "I understand, let me look at this.\nThanks!"),
    ('  File "/app/pay/refund.py", line 12, in handle\nThe refund failed.', "The refund failed."),
    # a fence never closed may be a block's end, a chunk cut inside it: what follows it is read by its sentences
    ("    return process(req, limit=5)\n```\nMarie Curie was born in Warsaw.", "Marie Curie was born in Warsaw."),
])
def test_a_plain_text_is_read_but_for_its_code(text, read):
    assert plain_prose(text) == read


@pytest.mark.parametrize("text", [
    "J.K. Rowling is such an inspiring writer. She can definitely transport readers into another world.",
    "MrJims.Pizza is a U.S. chain of pizza restaurants based in Farmers Branch, Texas.",
    "Boxers range from light welterweight to 146+1/2 lb , i.e. the class below. Haha :)",
    "Here is what I found:\nthe move is on Monday; the movers come at 9.",
    "第12步：我将对src/pay/mod_47.py运行read_file，检查计划的下一部分。",
    "",
])
def test_a_text_without_code_is_read_as_written(text):
    assert plain_prose(text) == text


def turn(text: str) -> SourceItems:
    out = SourceItems("acme", "chat/m3", "turn", "h")
    out.items = [MemoryItem(id="i3", tenant="acme", source_id="chat/m3", kind="turn", text=text,
                            metadata={"speaker": "user"})]
    return out


def test_a_fenced_block_in_an_english_message_gives_no_triple_while_the_sentence_before_it_does():
    triples, _, _ = extract_triples(RuleBasedExtractor(), [turn(FENCED)])
    assert ("Marie Curie", "Warsaw") in {(t.subject, t.object) for t in triples}
    sides = " ".join(name for t in triples for name in (t.subject, t.object))
    assert not [word for word in ("handler", "process", "req", "limit", "def", "python") if word in sides]


def test_a_code_line_in_a_plain_message_gives_no_triple():
    text = ("I understand, Maria Lopez leads the billing team at Stripe. "
            "3.0: def handler_3(req): return process(req, limit=123) 3.1: def handler_17(req): return process(req)")
    triples, _, _ = extract_triples(RuleBasedExtractor(), [turn(text)])
    assert ("Maria Lopez", "Stripe") in {(t.subject, t.object) for t in triples}
    assert not [t for t in triples if "(" in t.subject + t.object or "handler" in t.subject + t.object]
