"""Each turn read after the turn it answers: context texts, their vectors, and the reranker signal,
on real stores and embeddings."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from agent_memory.index.context import context_text, context_texts_for, previous_turns
from agent_memory.index.items import embedding_text
from agent_memory.retrieval.config import load_preset
from agent_memory.retrieval.pipeline import RetrievalPipeline
from tests.helpers import ingest_dialogue

LINES = [
    ("Nate", "Hey Joanna! Long week at work, how are you?"),
    ("Joanna", "Busy too. Could you lend me your camping tent for the lake trip?"),
    ("Nate", "Sure thing, I'll drop it off tomorrow morning!"),
    ("Joanna", "I baked a lemon cake for my sister's birthday."),
    ("Nate", "My turtles love the new tank I bought them."),
    ("Joanna", "I finished the second draft of my screenplay."),
]


@pytest.fixture
def ingested(services):
    ingest_dialogue(services, LINES)
    return services


def _items(services, *source_ids):
    entries = services.catalog.get_many("default", list(source_ids))
    return services.vectors.get([entries[s].item_ids[0] for s in source_ids])


def test_the_previous_turn_comes_from_the_store_when_it_is_not_a_candidate(ingested):
    [reply] = _items(ingested, "chat/t2")
    found = previous_turns(ingested, "default", [reply])
    assert found[reply.id].source_id == "chat/t1"
    assert context_text(reply, found[reply.id], ingested.settings.turn_context_previous_max_words).startswith(
        "Joanna: Busy too.")
    [first] = _items(ingested, "chat/t0")
    assert previous_turns(ingested, "default", [first]) == {}


def test_ingestion_embeds_the_context_texts_so_a_question_finds_them_cached(ingested):
    items = _items(ingested, "chat/t1", "chat/t2", "chat/t5")
    before = ingested.embedder.computed
    vectors = ingested.embedder.embed_documents(context_texts_for(ingested, "default", items))
    assert ingested.embedder.computed == before
    expected = ingested.embedder.embedders[ingested.embedder.default].inner.embed_documents(
        ["Nate: Hey Joanna! Long week at work, how are you?\n" + embedding_text(items[0])])
    assert np.allclose(vectors[0], expected[0], atol=1e-5)


def test_a_bare_reply_ranks_by_the_question_it_answers(ingested):
    # Neighbour and session terms off: only the similarity signals differ between the two runs.
    question = "Who will lend the camping tent, and when?"
    alone = {"context_neighbour": 0.0, "context_session": 0.0}
    assert load_preset().turn_weights.turn_context > 0
    with RetrievalPipeline(ingested, load_preset("default", **alone)) as with_context, \
            RetrievalPipeline(ingested, load_preset("default", turn_weights={"dense": 1.0, "turn_context": 0.0},
                                                    **alone)) as plain:
        ranked = [f["source_id"] for f in with_context.run(question, tenant="default", budget=400, debug=True).fused]
        before = [f["source_id"] for f in plain.run(question, tenant="default", budget=400, debug=True).fused]
    assert ranked.index("chat/t2") < before.index("chat/t2")


def test_a_long_previous_turn_is_read_from_its_last_piece_as_ingestion_read_it(services):
    story = " ".join(f"Day {i} of the trip we hiked another ridge and camped by a cold lake." for i in range(120))
    ingest_dialogue(services, [("Nate", story + " Could you lend me your tent?"), ("Joanna", "Sure, tomorrow!")])
    pieces = services.vectors.get(services.catalog.get_many("default", ["chat/t0"])["chat/t0"].item_ids)
    assert len(pieces) > 1
    [reply] = _items(services, "chat/t1")
    first = min(pieces, key=lambda i: i.chunk_index)
    found = previous_turns(services, "default", [first, reply])  # the first piece is a candidate too
    assert found[reply.id].chunk_index == max(i.chunk_index for i in pieces)
    before = services.embedder.computed
    services.embedder.embed_documents(context_texts_for(services, "default", [reply]))
    assert services.embedder.computed == before


# -- stored with the turn: a question needs no embedding cache ------------------------------------


def _bare(services, texts):
    return services.embedder.embedders[services.embedder.default].inner.embed_documents(texts)


def _stored(services, source_id):
    [item] = _items(services, source_id)
    return item, services.vectors.stored_vectors([item.id])[item.id][1]


def test_ingestion_stores_each_turns_context_vector_with_it(ingested):
    reply, vectors = _stored(ingested, "chat/t2")
    expected = _bare(ingested, ["Joanna: Busy too. Could you lend me your camping tent for the lake trip?\n"
                                + embedding_text(reply)])[0]
    assert np.allclose(vectors["context"], expected, atol=1e-5)
    first, vectors = _stored(ingested, "chat/t0")  # a session's first turn: its context is itself
    assert np.allclose(vectors["context"], vectors["dense"], atol=1e-6)


def _ranking(services, question: str):
    before = services.embedder.computed  # counts documents only: the questions are not in it
    with RetrievalPipeline.from_services(services) as pipeline:
        pipeline.run("warm up", tenant="default", budget=400)
        fused = pipeline.run(question, tenant="default", budget=400, debug=True).fused
    return [(f["id"], f["rerank"]) for f in fused], services.embedder.computed - before


def test_a_fresh_process_with_an_empty_cache_ranks_turns_the_same(settings):
    from agent_memory.services import build_services

    question = "Who will lend the camping tent, and when?"
    with build_services(settings) as services:
        ingest_dialogue(services, LINES)
        ranked, _ = _ranking(services, question)
    (settings.data_dir / "embedding-cache.sqlite").unlink()
    with build_services(settings) as services:
        again, computed = _ranking(services, question)
    assert computed == 0  # every candidate's dense and turn-context vector came from the store
    assert [i for i, _ in again] == [i for i, _ in ranked]
    assert np.allclose([s for _, s in again], [s for _, s in ranked], atol=1e-4)


def test_a_rewritten_turn_refreshes_the_stored_context_of_the_turn_after_it(services):
    ingest_dialogue(services, LINES)
    changed = list(LINES)
    changed[1] = ("Joanna", "Busy too. Could you lend me your kayak for the river trip?")
    ingest_dialogue(services, changed)
    reply, vectors = _stored(services, "chat/t2")  # unchanged itself: only its context vector is replaced
    expected = _bare(services, ["Joanna: Busy too. Could you lend me your kayak for the river trip?\n"
                                + embedding_text(reply)])[0]
    assert np.allclose(vectors["context"], expected, atol=1e-5)


def test_a_turn_appended_later_is_read_after_the_stored_one_before_it(services):
    from agent_memory.core.records import TurnRecord
    from agent_memory.ingest.pipeline import IngestionPipeline

    ingest_dialogue(services, LINES[:2])
    IngestionPipeline(services).ingest_turns([TurnRecord(session_id="chat", turn_id="t2", speaker="Nate", seq=2,
                                                         text=LINES[2][1], timestamp="1:56 pm on 8 May, 2023")])
    reply, vectors = _stored(services, "chat/t2")
    expected = _bare(services, ["Joanna: Busy too. Could you lend me your camping tent for the lake trip?\n"
                                + embedding_text(reply)])[0]
    assert np.allclose(vectors["context"], expected, atol=1e-5)


def test_a_store_without_context_vectors_is_served_then_reindexed(settings, monkeypatch):
    import agent_memory.ingest.pipeline
    from agent_memory.cli import main as cli_main
    from agent_memory.services import build_services, read_index_format, write_index_format

    question = "Who will lend the camping tent, and when?"
    with build_services(settings) as services:
        ingest_dialogue(services, LINES)
        expected, _ = _ranking(services, question)
    # The same memory as ingested before turn-context vectors were stored.
    with build_services(settings) as services:
        with monkeypatch.context() as patch:
            served_vectors = agent_memory.ingest.pipeline.point_vectors
            patch.setattr(agent_memory.ingest.pipeline, "point_vectors",
                          lambda *a: dataclasses.replace(served_vectors(*a), context=[None] * len(a[1])))
            ingest_dialogue(services, LINES, session_id="old")
        [old_reply] = services.vectors.get(services.catalog.get_many("default", ["old/t2"])["old/t2"].item_ids)
        assert "context" not in services.vectors.stored_vectors([old_reply.id])[old_reply.id][1]
    marker = read_index_format(settings.data_dir)
    write_index_format(settings.data_dir, {k: v for k, v in marker.items() if k != "turn_context"})
    (settings.data_dir / "embedding-cache.sqlite").unlink()
    with build_services(settings) as services:
        served, computed = _ranking(services, question)  # still served: its contexts embedded on demand
        assert computed > 0 and {i for i, _ in expected} <= {i for i, _ in served}
    assert cli_main(["--data-dir", str(settings.data_dir), "reindex"]) == 0
    assert read_index_format(settings.data_dir)["turn_context"] == 1
    with build_services(settings) as services:
        assert "context" in services.vectors.stored_vectors([old_reply.id])[old_reply.id][1]
        again, computed = _ranking(services, question)
    assert computed == 0 and {i for i, _ in again} == {i for i, _ in served}
    # The same scores (the two sessions say the same things, so ties may swap places).
    assert np.allclose(sorted(s for _, s in again), sorted(s for _, s in served), atol=1e-4)


def test_a_batch_s_own_texts_and_context_texts_go_to_the_model_in_one_call(services, monkeypatch):
    # One call lets the model sort every text of the batch by length (agent_memory/ingest/vectors.py).
    model = services.embedder.embedders[services.embedder.default].inner
    calls: list[list[str]] = []
    encode = model.embed_documents
    monkeypatch.setattr(model, "embed_documents", lambda texts: calls.append(list(texts)) or encode(texts))
    ingest_dialogue(services, LINES)
    contexts = [t for t in calls[0] if "\n" in t]
    assert len(calls) == 1 and len(contexts) == len(LINES) - 1  # every turn but the first has one
    _, vectors = _stored(services, "chat/t2")
    assert np.allclose(vectors["context"], _bare(services, [contexts[1]])[0], atol=1e-5)
