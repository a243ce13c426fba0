"""Each turn read after the turn it answers: context texts, their vectors, and the reranker signal,
on real stores and embeddings."""

from __future__ import annotations

import numpy as np
import pytest

from ingest.context import context_text, context_texts_for, previous_turns
from ingest.items import embedding_text
from retrieval.config import load_preset
from retrieval.pipeline import RetrievalPipeline
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
    assert context_text(reply, found[reply.id]).startswith("Joanna: Busy too.")
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
