"""Entity pages in retrieval, on real stores: the page of an entity that the question or a top
passage names joins the candidates and outranks look-alikes (the multi-hop "bridge")."""

from __future__ import annotations

import pytest

from agent_memory.core.records import Document
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.retrieval.pipeline import RetrievalPipeline
from tests.helpers import titled_pages_services

QUESTION = "2014 S/S is the debut album of a South Korean boy group that was formed by who?"
PAGES = {
    "2014 S/S": "2014 S/S is the debut album of South Korean group WINNER. It was released on August 12, 2014 "
                "by the group's record label. The members wrote most of the songs.",
    "Winner (band)": "Winner is a South Korean boy group formed in 2013 by YG Entertainment. It currently "
                     "consists of four members: Kang Seung-yoon, Kim Jin-woo, Lee Seung-hoon and Song Min-ho.",
    # Look-alikes: they share the question's words, not its entities.
    "Boyfriend (band)": "Boyfriend is a South Korean boy group formed by Starship Entertainment. Their debut "
                        "album was a success and the group was formed to sing and dance.",
    "Teen Top": "Teen Top is a South Korean boy group formed by TOP Media. The group's debut album came out "
                "in 2010, and the boy group was formed with six members.",
    "U-KISS": "U-KISS is a South Korean boy group formed by NH Media. Their debut album was released, and "
              "the South Korean group was formed in 2008.",
    "MBLAQ": "MBLAQ is a South Korean boy group formed by J. Tune Camp. The debut album of the boy group "
             "was formed around five singers.",
}


@pytest.fixture(scope="module")
def services(tmp_path_factory):
    with titled_pages_services(tmp_path_factory.mktemp("pages") / "data", PAGES) as svc:
        yield svc


def _position(result, source_id: str) -> int:
    order = [row["source_id"] for row in result.fused]
    return order.index(source_id) if source_id in order else len(order)


def test_the_page_the_question_names_tops_the_graph_route(services):
    with RetrievalPipeline.from_services(services, preset="documents") as pipe:
        result = pipe.run(QUESTION, tenant="default", budget=400, debug=True)
    top = result.routes["graph"][0]
    assert top["source_id"] == "2014 S/S" and top["score"] == 1.0


def test_the_page_a_top_passage_names_is_pulled_up_and_cited(services):
    # The second hop off in both: it reaches the page too (by the name), and this measures the links.
    with RetrievalPipeline.from_services(services, preset="documents", overrides={"second_hop": False}) as linked, \
            RetrievalPipeline.from_services(services, preset="documents-no-graph",
                                            overrides={"second_hop": False}) as plain:
        with_links = linked.run(QUESTION, tenant="default", budget=400, debug=True)
        without = plain.run(QUESTION, tenant="default", budget=400, debug=True)
    winner = next(row for row in with_links.fused if row["source_id"] == "Winner (band)")
    assert winner["note"] == "page of 'WINNER', named in 2014 S/S"
    assert _position(with_links, "Winner (band)") < _position(without, "Winner (band)")
    assert _position(with_links, "Winner (band)") <= 1
    assert "[S:Winner (band)]" in with_links.prompt
    assert with_links.total_tokens <= 400


def test_a_source_filter_keeps_linked_pages_out(services):
    with RetrievalPipeline.from_services(services, preset="documents") as pipe:
        result = pipe.run(QUESTION, tenant="default", budget=400, debug=True,
                          source_ids=["2014 S/S", "Teen Top"])
    assert {row["source_id"] for row in result.fused} <= {"2014 S/S", "Teen Top"}
    assert "[S:Winner (band)]" not in result.prompt


def test_pages_are_per_tenant(services):
    with RetrievalPipeline.from_services(services, preset="documents") as pipe:
        result = pipe.run(QUESTION, tenant="elsewhere", budget=400, debug=True)
    assert result.fused == [] and "[S:" not in result.prompt.replace("[S:id]", "")


def _three_part_manual(services, tenant: str, source: str, name: str, code: str) -> None:
    """About 900 tokens in three parts (several chunks); the middle part holds the door code."""
    parts = [f"Part {n} of the {name} manual. " + " ".join(f"Filler sentence {n}.{k} about {name.lower()} doors."
                                                             for k in range(30)) for n in range(3)]
    parts[1] += f" The {name.lower()} door code is {code}."
    IngestionPipeline(services).ingest_documents([Document(source_id=source, text="\n\n".join(parts),
                                                           tenant=tenant)])


def test_chunks_next_to_the_best_chunk_join_it_in_document_order(services):
    from agent_memory.retrieval.config import load_preset

    _three_part_manual(services, "chunks", "manual", "Hangar", "4471")
    entry = services.catalog.get("chunks", "manual")
    assert len(entry.item_ids) >= 3  # several chunks (plus the summary)
    # Every document, the best chunk only (the served bound places neighbours for short documents only).
    config = load_preset("documents", dense={"limit": 1}, keyword={"limit": 1}, chunk_neighbours=1,
                         chunk_neighbour_top=1, chunk_neighbour_source_tokens=0)
    with RetrievalPipeline(services, config) as pipe:
        result = pipe.run("What is the hangar door code?", tenant="chunks", budget=2000, debug=True)
    added = [d for d in result.decisions if d.stage == "neighbours"]
    assert added and all(d.target == "manual" and "next to strong chunk manual" in d.reason for d in added)
    # The anchor and its neighbours are one document: they render in document order, joined.
    section = result.prompt.split("## Retrieved passages\n")[1].split("\n\n")[0]
    assert section.count("[S:manual]") == 1 and len(result.passages) >= 2
    assert "4471" in result.prompt and result.total_tokens <= 2000


def _two_halves_and_notes(services, tenant: str, name: str, code: str, fillers: int) -> None:
    """A manual in two halves, ingested as one document, beside six look-alike notes. The second half
    answers nothing the question asks by its words; the notes do, so they rank between the halves."""
    parts = [f"Part one of the {name} manual. The {name.lower()} code is {code}. "
             + " ".join(f"Filler sentence 1.{k} about the housing." for k in range(fillers)),
             "Part two. Enter it twice; after three wrong entries the panel locks for an hour. "
             + " ".join(f"Filler sentence 2.{k} about the panel." for k in range(fillers))]
    notes = [Document(source_id=f"{tenant}-note{n}", text=f"Note {n}: the {name.lower()} was serviced in spring"
                      f" {2000 + n}.", tenant=tenant) for n in range(6)]
    IngestionPipeline(services).ingest_documents([Document(source_id=tenant, text="\n\n".join(parts),
                                                           tenant=tenant), *notes])


def test_a_chunk_neighbour_already_among_the_candidates_moves_up_to_its_anchor(services):
    from agent_memory.retrieval.config import load_preset

    # A paragraph is read whole only if both halves reach the prompt together.
    _two_halves_and_notes(services, "pump", "Quarry pump", "7731", fillers=30)
    question = "What is the quarry pump code?"
    base = load_preset("documents", chunk_neighbours=0)
    with RetrievalPipeline(services, base) as pipe:
        before = pipe.run(question, tenant="pump", budget=4000, debug=True)
    chunk_rows = [n for n, row in enumerate(before.fused) if row["source_id"] == "pump"]
    assert len(chunk_rows) >= 2 and chunk_rows[1] > chunk_rows[0] + 1  # a note ranks between the halves
    with RetrievalPipeline(services, base.model_copy(update={"chunk_neighbours": 1,
                                                             "chunk_neighbour_source_tokens": 0})) as pipe:
        after = pipe.run(question, tenant="pump", budget=4000, debug=True)
    moved = [d for d in after.decisions if d.stage == "neighbours" and d.action == "moved"]
    assert moved and all(d.target == "pump" for d in moved)
    placed_before = [p.source_id for p in before.passages]
    assert placed_before[placed_before.index("pump") + 1] != "pump"
    placed = [p.source_id for p in after.passages]
    assert placed[placed.index("pump") + 1] == "pump"  # the second half right after the first


def test_chunk_neighbours_can_be_limited_to_short_documents(services):
    from agent_memory.retrieval.config import load_preset

    # With a bound below the manual's size no neighbour is placed; above it they come as before.
    _three_part_manual(services, "silo", "silo", "Silo", "5582")
    config = load_preset("documents", dense={"limit": 1}, keyword={"limit": 1}, chunk_neighbours=1,
                         chunk_neighbour_top=1)
    for bound, expect_neighbours in ((300, False), (5000, True)):
        with RetrievalPipeline(services, config.model_copy(update={"chunk_neighbour_source_tokens": bound})) as pipe:
            result = pipe.run("What is the silo door code?", tenant="silo", budget=2000, debug=True)
        placed = [d for d in result.decisions if d.stage == "neighbours"]
        assert bool(placed) is expect_neighbours, (bound, placed)
        assert "5582" in result.prompt


def test_the_served_default_places_a_short_split_document_whole(services):
    from agent_memory.retrieval.config import RetrievalConfig

    # About 380 tokens: two chunks at the default chunk size, under the served bound of 512.
    _two_halves_and_notes(services, "kiln", "Kiln relay", "6610", fillers=18)
    chunks = [i for i in services.vectors.get(services.catalog.get("kiln", "kiln").item_ids) if i.kind == "chunk"]
    assert len(chunks) == 2
    served = RetrievalConfig()
    assert served.chunk_neighbour_source_tokens >= sum(services.counter.count(c.text) for c in chunks)
    placed = {}
    for name, config in (("off", served.model_copy(update={"chunk_neighbours": 0})), ("served", served)):
        with RetrievalPipeline(services, config) as pipe:
            result = pipe.run("What is the kiln relay code?", tenant="kiln", budget=4000, debug=True)
        order = [p.source_id for p in result.passages]
        placed[name] = order[order.index("kiln") + 1] if order.index("kiln") + 1 < len(order) else None
    assert placed["off"] != "kiln"  # a note between the halves
    assert placed["served"] == "kiln"  # the second half right after the first


def test_a_long_document_is_not_read_whole_to_learn_its_size(services):
    from agent_memory.core.records import SearchFilter
    from agent_memory.retrieval.config import RetrievalConfig
    from agent_memory.retrieval.neighbours import add_neighbours, most_items
    from agent_memory.retrieval.types import Candidate

    # Forty sections: far more catalog items than a 512-token document lists. The neighbours step
    # skips it on its item count alone, without fetching its items; a short document beside it is read.
    sections = [f"Section {n} of the Boiler handbook. " + " ".join(f"Line {n}.{k} on valves." for k in range(30))
                for n in range(40)]
    short = ["Part one of the Drum note. " + " ".join(f"Filler 1.{k} on the drum." for k in range(18)),
             "Part two of the Drum note. " + " ".join(f"Filler 2.{k} on the fans." for k in range(18))]
    IngestionPipeline(services).ingest_documents([
        Document(source_id="boiler", text="\n\n".join(sections), tenant="boiler"),
        Document(source_id="drum", text="\n\n".join(short), tenant="boiler")])
    config = RetrievalConfig()
    long_ids = set(services.catalog.get("boiler", "boiler").item_ids)
    assert len(long_ids) > most_items(config.chunk_neighbour_source_tokens)
    first = {}
    for source in ("boiler", "drum"):
        items = services.vectors.get(services.catalog.get("boiler", source).item_ids)
        first[source] = min((i for i in items if i.kind == "chunk"), key=lambda i: i.chunk_index)
    ranked = [Candidate(item=first["boiler"], final=2.0), Candidate(item=first["drum"], final=1.0)]
    requested: list[str] = []
    real_get = services.vectors.get

    def recording_get(ids):
        requested.extend(ids)
        return real_get(ids)

    services.vectors.get = recording_get
    try:
        decisions = []
        out = add_neighbours(services, config, services.counter, ranked, SearchFilter(tenant="boiler"), decisions)
    finally:
        del services.vectors.get
    assert not long_ids.intersection(requested)  # the long document's items were never fetched
    assert [c.item.source_id for c in out] == ["boiler", "drum", "drum"]  # the short one reads whole
    assert all(d.target == "drum" for d in decisions if d.stage == "neighbours")
