"""Token counting: exact cl100k offline, and the estimator as an upper bound on real texts."""

from __future__ import annotations

import json

from agent_memory.core.tokens import EstimatingCounter, TiktokenCounter, make_counter
from tests.helpers import eval_file


def _eval_texts() -> list[str]:
    texts: list[str] = []
    for line in eval_file("hotpotqa_dev250.jsonl").read_text().splitlines():
        record = json.loads(line)
        texts += [c["paragraph_text"] for c in record["contexts"]] + [record["question_text"]]
    for article in json.loads(eval_file("cmrc2018_trial.json").read_text())["data"]:
        for para in article["paragraphs"]:
            texts += [para["context"]] + [q["question"] for q in para["qas"]]
    for conv in json.loads(eval_file("locomo_dev.json").read_text()):
        texts += [t["text"] for v in conv["conversation"].values() if isinstance(v, list) for t in v]
    for question in json.loads(eval_file("longmemeval_s_dev30.json").read_text()):
        texts += [t["content"] for s in question["haystack_sessions"] for t in s]
    return texts


def test_cl100k_loads_offline_and_counts_exactly():
    counter = TiktokenCounter("cl100k_base")
    assert counter.count("hello world") == 2
    assert counter.count("") == 0
    assert counter.count("<|endoftext|>") > 1  # special tokens are plain text here, never an error


def test_estimator_never_counts_fewer_tokens_than_cl100k_on_the_eval_texts():
    exact, estimate = TiktokenCounter("cl100k_base"), EstimatingCounter()
    texts = _eval_texts()
    assert len(texts) > 20_000
    under = [(exact.count(t), estimate.count(t), t[:60]) for t in texts if estimate.count(t) < exact.count(t)]
    assert not under, f"{len(under)} texts undercounted, e.g. {under[:3]}"
    chinese = [t for t in texts if any("\u4e00" <= ch <= "\u9fff" for ch in t)]
    assert len(chinese) > 1000


def test_estimator_counts_structured_messages_recursively():
    estimate = EstimatingCounter()
    message = {"role": "assistant", "tool_calls": [{"function": {"name": "search", "arguments": '{"q": "x"}'}}]}
    flat = estimate.count("role") + estimate.count("assistant")
    assert estimate.count_structured(message) > flat
    assert estimate.count_structured(None) == 0


def test_make_counter_names():
    assert make_counter("estimate").name == "estimate"
    assert make_counter("cl100k_base").name == "cl100k_base"
