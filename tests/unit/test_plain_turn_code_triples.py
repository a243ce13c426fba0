"""Code and paths in plain turns and documents give no entities of their pieces: the Chinese tagger keeps an
ASCII path or identifier whole (index/triples/chinese.py), and the graph reads a plain text but its code
(index/triples/tool_turns.py ``plain_prose``; ingest/graph_writes.py)."""

from __future__ import annotations

import pytest

from agent_memory.index.triples.chinese import ChineseExtractor, tokenize

PIECES = {"src", "pay", "mod", "mod_47", "py", "read", "file", "vendor", "billing", "billing_42"}


@pytest.mark.parametrize("sentence, whole", [
    ("第12步：我将对src/pay/mod_47.py运行read_file，检查计划的下一部分。", ["src/pay/mod_47.py", "read_file"]),
    ("重要：永远不要修改目录vendor/billing_42/，它属于另一个团队。", ["vendor/billing_42/"]),
    ("匹配：重试循环实现在src/net/backoff_loop_48.py第306行。", ["src/net/backoff_loop_48.py"]),
    ("配置在/etc/pay/config.yaml里。", ["/etc/pay/config.yaml"]),
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
])
def test_dots_before_capitals_and_runs_inside_words_of_other_scripts_are_no_paths(text, kept):
    words = [tok.word for tok in tokenize(f"他说{text}。")]
    assert all(word in words for word in kept)
    assert not [tok for tok in tokenize(f"他说{text}。") if tok.flag == "path"]


def test_a_version_is_read_as_before():
    assert [(t.word, t.flag) for t in tokenize("GPT-3.5") if t.word.strip()] == [("GPT-3", "model"), (".", "x"),
                                                                               ("5", "num")]
