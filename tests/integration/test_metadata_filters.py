"""Filters on items' own metadata keys: equality, membership, numeric ranges, in every route."""

from __future__ import annotations

import pytest

from agent_memory.core import metafilter
from agent_memory.core.records import Document
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.retrieval.pipeline import RetrievalPipeline

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


NOTES = [("notes/feb", "Falkenrath pump audit: the P-7 seal was replaced.", "2024-02-29T23:30:00-01:00"),  # Mar 1st 00:30 UTC
         ("notes/apr", "Falkenrath pump audit: the P-7 filter was cleaned.", "2024-04-01"),
         ("notes/jun", "Falkenrath pump audit: the P-7 valve was tightened.", "2024-06-30T15:00:00"),
         ("notes/jul", "Falkenrath pump audit: the P-7 motor was checked.", "2024-07-01T00:00:00Z"),
         ("notes/undated", "Falkenrath pump audit: the P-7 housing was painted.", "soon")]


def test_date_ranges_apply_to_every_route(services):
    """ISO dates or datetimes as bounds: Qdrant's DatetimeRange in the store-backed routes (the Edge shard
    here; qdrant-client's local mode in the vector-store contract), metafilter.matches for the rest."""
    IngestionPipeline(services, summaries=False).ingest_documents([
        Document(source_id=sid, text=text, metadata={"published": when}) for sid, text, when in NOTES])
    with RetrievalPipeline.from_services(services) as pipeline:
        def run(spec):
            return sources(pipeline.run("What did the Falkenrath pump audit do to the P-7?", tenant="default",
                                        budget=900, debug=True, metadata=spec))

        assert run(None) == {sid for sid, _, _ in NOTES}
        # A day as the upper bound holds the whole day: June 30th at 15:00 is inside.
        assert run({"published": {"gte": "2024-03-01", "lte": "2024-06-30"}}) == {"notes/feb", "notes/apr",
                                                                                  "notes/jun"}
        assert run({"published": {"gte": "2024-03-01T01:00:00Z"}}) == {"notes/apr", "notes/jun", "notes/jul"}
        assert run({"published": {"lte": "2024-04-01T00:00:00+00:00"}}) == {"notes/feb", "notes/apr"}
        with pytest.raises(ValueError, match="'2024-13-01'"):
            run({"published": {"gte": "2024-13-01"}})


def test_date_ranges_in_python_matching():
    spec = {"published": {"gte": "2024-03-01", "lte": "2024-06-30"}}
    inside = ["2024-03-01", "2024-06-30T23:59:59", "2024-02-29T23:30:00-01:00", "2024-04-01 10:00"]
    outside = ["2024-02-29", "2024-07-01", "2024-07-01T01:00:00+00:30", "soon", 20240401, None, ""]
    assert all(metafilter.matches({"published": v}, spec) for v in inside)
    assert not any(metafilter.matches({"published": v}, spec) for v in outside)
    assert metafilter.conditions(spec) == [("dates", "metadata.published", "2024-03-01T00:00:00.000000Z",
                                            "2024-06-30T23:59:59.999999Z")]
    # Errors name the value: a date that does not exist, free text, a number mixed with a date.
    for bad, named in (({"gte": "2024-13-01"}, "'2024-13-01'"), ({"lte": "last week"}, "'last week'"),
                       ({"gte": 3, "lte": "2024-01-01"}, "'2024-01-01'")):
        with pytest.raises(ValueError, match=named):
            metafilter.conditions({"published": bad})
