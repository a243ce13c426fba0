"""SparseEncoder: stable term hashing, BM25 TF saturation, query weights."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_memory.core.sparse import SparseEncoder, term_index, terms

REPO = Path(__file__).resolve().parents[2]


def _weights(vec) -> dict[int, float]:
    return dict(zip(vec.indices, vec.values))


def test_term_index_is_blake2b_32bit_and_stable_across_processes():
    expected = int.from_bytes(hashlib.blake2b("memory".encode(), digest_size=4).digest(), "big")
    assert term_index("memory") == expected
    assert 0 <= term_index("记忆") < 2**32
    # A fresh interpreter has another hash() salt: the index must not change.
    code = "from agent_memory.core.sparse import term_index; print(term_index('memory'), term_index('记忆'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=_child_env())
    assert out.stdout.split() == [str(term_index("memory")), str(term_index("记忆"))]


def _child_env() -> dict[str, str]:
    # Another salt for hash(); the repo on the path whether or not the package is installed.
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONHASHSEED": "123", "PYTHONPATH": path}


def test_stopwords_are_dropped_and_text_is_lowercased():
    assert terms("The Cat and THE hat") == ["cat", "hat"]
    vec = SparseEncoder().encode_query("the and of")
    assert len(vec) == 0


def test_query_weights_are_one_per_unique_term():
    vec = SparseEncoder().encode_query("zebra zebra lion")
    assert sorted(vec.indices) == sorted({term_index("zebra"), term_index("lion")})
    assert vec.values == [1.0, 1.0]


def test_document_weights_follow_bm25_tf_saturation():
    enc = SparseEncoder(k1=1.2, b=0.75, avg_doc_len=4)
    vec = enc.encode_document("zebra zebra lion tiger")  # 4 tokens == avg length -> norm = k1
    w = _weights(vec)
    assert w[term_index("zebra")] == pytest.approx(2 * 2.2 / (2 + 1.2))
    assert w[term_index("lion")] == pytest.approx(1 * 2.2 / (1 + 1.2))
    # Saturation: more occurrences weigh more, but never above k1 + 1.
    many = _weights(enc.encode_document(" ".join(["zebra"] * 200)))[term_index("zebra")]
    assert w[term_index("zebra")] < many < 2.2


def test_longer_documents_weigh_a_term_less():
    enc = SparseEncoder(avg_doc_len=8)
    short = _weights(enc.encode_document("zebra lion"))[term_index("zebra")]
    long = _weights(enc.encode_document("zebra " + " ".join(f"w{i}" for i in range(40))))[term_index("zebra")]
    assert long < short


def test_b_zero_ignores_length():
    enc = SparseEncoder(b=0.0)
    short = _weights(enc.encode_document("zebra lion"))[term_index("zebra")]
    long = _weights(enc.encode_document("zebra " + " ".join(f"w{i}" for i in range(40))))[term_index("zebra")]
    assert short == pytest.approx(long)


def test_chinese_text_is_segmented_into_terms():
    toks = terms("我喜欢机器学习和自然语言处理")
    assert "我" not in toks or len(toks) > 1
    assert any(len(t) >= 2 for t in toks)
    vec = SparseEncoder().encode_document("我喜欢机器学习和自然语言处理")
    assert len(vec) == len(set(toks))


def test_vectors_have_sorted_unique_indices_and_positive_values():
    vecs = SparseEncoder().encode_documents(["alpha beta gamma alpha", "", "delta"])
    assert len(vecs) == 3 and len(vecs[1]) == 0
    for vec in vecs:
        assert vec.indices == sorted(set(vec.indices))
        assert all(v > 0 for v in vec.values)


@pytest.mark.parametrize("kwargs", [{"k1": -1}, {"b": 1.5}, {"avg_doc_len": 0}])
def test_bad_parameters_are_rejected_with_their_value(kwargs):
    with pytest.raises(ValueError) as err:
        SparseEncoder(**kwargs)
    assert str(list(kwargs.values())[0]) in str(err.value)


@pytest.mark.parametrize("question, asked", [
    ("Which handset do I have these days?", ["handset"]),
    ("What book is Jon currently reading?", ["book", "jon", "read"]),
    ("Where do I live right now?", ["live"]),
    ("我现在住在哪里？", ["住", "哪里"]),
    ("目前学校有几个校区？", ["学校", "有", "校区"]),
])
def test_a_questions_words_for_the_time_it_is_asked_are_no_query_terms(question, asked):
    # As "now" is a stopword: "these days", "currently", 现在, 目前 name no time a passage is about.
    assert SparseEncoder().encode_query(question).indices == sorted({term_index(t) for t in asked})


def test_a_stored_text_keeps_those_words_and_term_coverage_reads_the_question_without_them():
    from agent_memory.retrieval.rerank.signals import term_coverage

    stored = SparseEncoder().encode_document("These days I spend my evenings on yoga.")
    assert term_index("day") in stored.indices  # no stored vector changes
    chatter, answer = "These days I spend my evenings on yoga.", "My new handset arrived today."
    said_of_nothing, said_of_it = term_coverage("Which handset do I have these days?", [chatter, answer])
    assert said_of_nothing == 0.0 < said_of_it


@pytest.mark.parametrize("question, asked", [
    ("我尝试了哪些新运动？", ["尝试", "新", "运动"]),
    ("我们上个月去哪里了？", ["上个月", "去", "哪里"]),
    ("你推荐了哪本书？", ["推荐", "本书"]),
    ("他们住在哪个城市？", ["住", "城市"]),
])
def test_a_chinese_questions_personal_pronouns_are_no_query_terms_as_englishs_are_stopwords(question, asked):
    assert SparseEncoder().encode_query(question).indices == sorted({term_index(t) for t in asked})


@pytest.mark.parametrize("question, asked", [
    ("我一共尝试过几种新运动？", ["尝试", "新", "运动"]),
    ("我一共去过几场演唱会？", ["去", "演唱会"]),
    ("我做过哪些菜？", ["做", "菜"]),
    ("我最近下厨都做了些什么？", ["最近", "下厨", "做"]),
    ("我去过多少次上海？", ["去", "上海"]),
    ("你难过吗？", ["难过"]),  # a word whose 过 is no aspect marker stays whole
    ("我错过了哪些课？", ["错过", "课"]),
    ("How many concerts have I been to?", ["concert"]),  # English's "how many" likewise
    ("How much did the trip cost?", ["trip", "cost"]),
])
def test_how_a_question_asks_for_a_count_or_a_kind_gives_no_query_terms(question, asked):
    # As "how many", "which" and "ever" are: 几场 / 多少次, 一共, 些 and the experiential 过 name nothing that answers it.
    assert SparseEncoder().encode_query(question).indices == sorted({term_index(t) for t in asked})


def test_a_stored_chinese_text_keeps_its_count_words_and_the_verb_of_a_question_meets_the_statements():
    from agent_memory.retrieval.rerank.signals import term_coverage

    stored = SparseEncoder().encode_document("这种花经过几种演变，我一共去过三次。")
    assert {term_index("几种"), term_index("一共")} <= set(stored.indices)  # no stored vector changes
    lecture, statement = "这种花经过几种演变才成了今天的样子。", "昨晚去看了李健的现场，太精彩了。"
    said_of_nothing, said_of_it = term_coverage("我一共去过几场演唱会？", [lecture, statement])
    assert said_of_nothing == 0.0 < said_of_it


def test_a_stored_chinese_text_keeps_its_pronouns_and_a_turn_that_shares_only_one_covers_nothing():
    from agent_memory.retrieval.rerank.signals import term_coverage

    assert term_index("我") in SparseEncoder().encode_document("给我讲讲蓝帐汗国吧。").indices
    assert term_coverage("我一共尝试过几种新运动？", ["给我讲讲蓝帐汗国吧。"]) == [0.0]  # 我 alone: nothing
    assert term_coverage("我一共尝试过几种新运动？", ["我报了羽毛球课，这是第一次尝试这项运动。"])[0] > 0
