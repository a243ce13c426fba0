"""Filters on items' own metadata keys: equality, membership, numeric ranges, in every route."""

from __future__ import annotations

import pytest

from agent_memory import metafilter
from agent_memory.records import Document
from ingest.pipeline import IngestionPipeline
from retrieval.pipeline import RetrievalPipeline

DOCS = [("manual/v1", "Manual version one: the Quovadis pump P-7 runs at 40 litres.", 1, "ops"),
        ("manual/v2", "Manual version two: the Quovadis pump P-7 runs at 45 litres.", 2, "ops"),
        ("manual/v3", "Manual version three: the Quovadis pump P-7 runs at 50 litres.", 3, "lab")]


def sources(result) -> set[str]:
    found = {row["source_id"] for rows in result.routes.values() for row in rows if "source_id" in row}
    return found | {p.source_id for p in result.passages}


def test_metadata_filters_apply_to_every_route(services):
    IngestionPipeline(services, summaries=False).ingest_documents([
        Document(source_id=sid, text=text, metadata={"version": version, "team": team})
        for sid, text, version, team in DOCS])
    with RetrievalPipeline.from_services(services) as pipeline:
        def run(spec):
            return sources(pipeline.run("How fast does the Quovadis pump P-7 run?", tenant="default", budget=900,
                                        debug=True, metadata=spec))

        assert run(None) == {"manual/v1", "manual/v2", "manual/v3"}
        assert run({"version": {"gte": 2}}) == {"manual/v2", "manual/v3"}
        assert run({"version": {"gte": 1, "lte": 2}, "team": "ops"}) == {"manual/v1", "manual/v2"}
        assert run({"team": ["lab", "nobody"]}) == {"manual/v3"}
        assert run({"team": "nobody"}) == set()
        with pytest.raises(ValueError, match="'x y'"):
            run({"x y": 1})


def test_metadata_spec_checks_and_python_matching():
    assert metafilter.matches({"version": 2.5, "team": "ops"}, {"version": {"gte": 2}, "team": ["ops"]})
    assert not metafilter.matches({"version": "2"}, {"version": {"gte": 2}})  # text is not a number
    assert not metafilter.matches({}, {"team": "ops"})
    for bad in ({"v": {"gt": 1}}, {"v": {"gte": "2024"}}, {"v": []}, {"v": None}, {"v": [1.5]}):
        with pytest.raises(ValueError):
            metafilter.conditions(bad)
