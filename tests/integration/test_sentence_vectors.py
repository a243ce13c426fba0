"""A fact said in passing inside a long turn is found by its sentence (agent_memory/index/sentences.py), on real
stores and the packaged MiniLM: which turns store sentence vectors, how the dense route and the
reranker score them, and how `reindex` stores them for a data dir written before."""

from __future__ import annotations

import json

import numpy as np

from agent_memory.cli import main as cli_main
from agent_memory.core.config import load_settings
from agent_memory.core.records import MemoryItem, SearchFilter
from agent_memory.index.sentences import sentence_texts
from agent_memory.retrieval.pipeline import RetrievalPipeline
from agent_memory.services import build_services, read_index_format, write_index_format
from tests.helpers import ingest_dialogue

REQUEST = ("I need help planning a two week trip to Japan next spring with my partner. We want to see Kyoto, "
           "Osaka and Tokyo, take the bullet train, and find a few quiet onsen towns between the big cities. "
           "By the way, my younger sister Clara just adopted a three-legged greyhound named Pickle. "
           "Could you suggest a day-by-day itinerary with rough costs for hotels and rail passes?")
REPLY = ("Here is a day-by-day plan: start in Tokyo for four days, take the Shinkansen to Hakone for an onsen "
         "night, continue to Kyoto for four days and Osaka for three, with a seven-day JR pass. Budget about "
         "150 dollars a night for mid-range hotels. By the way, greyhounds make calm apartment dogs.")
LINES = [("user", REQUEST), ("assistant", REPLY),
         ("user", "Thanks! Can you also list three onsen towns that are easy to reach from Kyoto by train?"),
         ("assistant", "Kinosaki, Arima and Yunoyama are each within about two hours of Kyoto by train.")]
QUESTION = "What is the name of the dog my sister adopted?"


def _point(services, source_id: str) -> MemoryItem:
    entry = services.catalog.get_many("default", [source_id])[source_id]
    return services.vectors.get(entry.item_ids)[0]


def _sentences(services, item_id: str):
    found = services.vectors.stored_vectors([item_id], ["sentences"])
    return found[item_id][1].get("sentences") if item_id in found else None


def test_only_long_turns_of_the_listed_speakers_split_into_sentences(settings):
    def turn(speaker, text):
        return MemoryItem(id="x", tenant="default", source_id="chat/t0", kind="turn", text=text,
                          metadata={"speaker": speaker})

    found = sentence_texts(turn("User", REQUEST), settings)
    assert len(found) == 4 and all(s.startswith("User: ") for s in found)  # the speaker as the turn embeds it
    assert found[2] == "User: By the way, my younger sister Clara just adopted a three-legged greyhound named Pickle."
    assert sentence_texts(turn("assistant", REPLY), settings) == []  # not a listed speaker
    assert sentence_texts(turn("user", LINES[2][1]), settings) == []  # too short
    chunk = MemoryItem(id="x", tenant="default", source_id="doc", kind="chunk", text=REQUEST)
    assert sentence_texts(chunk, settings) == []
    chinese = "我们计划明年春天去日本旅行两周。" * 3 + "顺便说一下，我妹妹刚领养了一只叫皮克的灰狗。请帮我安排每天的行程和预算。"
    assert len(sentence_texts(turn("user", chinese), settings)) == 5
    assert len(sentence_texts(turn("用户", chinese), settings)) == 5  # the user under its Chinese label
    assert sentence_texts(turn("助手", chinese), settings) == []
    off = settings.model_copy(update={"sentence_vector_speakers": []})
    assert sentence_texts(turn("user", REQUEST), off) == []


def test_a_fact_said_in_passing_ranks_its_turn_first_by_its_sentence(services):
    ingest_dialogue(services, LINES)
    request = _point(services, "chat/t0")
    stored = _sentences(services, request.id)
    assert stored is not None and stored.shape == (4, services.embedder.dimension)
    assert _sentences(services, _point(services, "chat/t1").id) is None  # the assistant's long reply
    assert _sentences(services, _point(services, "chat/t2").id) is None  # a short request

    query = services.embedder.embed_query(QUESTION)
    own = float(services.embedder.embed_documents([f"user: {REQUEST}"])[0] @ query[services.embedder.default])
    [hit] = services.vectors.search_dense(query, SearchFilter(tenant="default"), 1)
    assert hit.item.id == request.id
    assert hit.score > own + 0.1  # by the sentence about the dog, not the trip

    with RetrievalPipeline.from_services(services) as pipeline:
        result = pipeline.run(QUESTION, tenant="default", budget=300)
    assert result.passages[0].source_id == "chat/t0"
    assert "Pickle" in result.prompt


def test_reindex_stores_the_sentence_vectors_of_a_data_dir_from_before(tmp_path, capsys, monkeypatch):
    before = load_settings(data_dir=tmp_path, triple_extractor="none", sentence_vector_speakers=[])
    with build_services(before) as services:
        ingest_dialogue(services, LINES)
        request_id = _point(services, "chat/t0").id
        assert _sentences(services, request_id) is None
    marker = read_index_format(tmp_path)
    del marker["sentence_vectors"]  # as a data dir written before sentence vectors existed records it
    write_index_format(tmp_path, marker)

    assert cli_main(["--data-dir", str(tmp_path), "reindex"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["items"] >= len(LINES)
    assert read_index_format(tmp_path)["sentence_vectors"] == 1
    with build_services(load_settings(data_dir=tmp_path, triple_extractor="none")) as services:
        stored = _sentences(services, request_id)
        assert stored is not None and stored.shape[0] == 4
        assert np.allclose(np.linalg.norm(stored, axis=1), 1.0, atol=1e-4)

    # Settings the data dir does not record: `reindex` alone has nothing to do, `--all` rewrites.
    monkeypatch.setenv("AGENT_MEMORY_SENTENCE_VECTOR_SPEAKERS", "[]")
    assert cli_main(["--data-dir", str(tmp_path), "reindex"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["items"] == 0
    assert cli_main(["--data-dir", str(tmp_path), "reindex", "--all"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["items"] >= len(LINES)
    with build_services(load_settings(data_dir=tmp_path, triple_extractor="none")) as services:
        assert _sentences(services, request_id) is None


def test_a_huge_user_turn_stores_its_sentences_piece_by_piece(services):
    story = " ".join(f"On day {i} we walked along the river." for i in range(300))
    ingest_dialogue(services, [("user", story)])
    entry = services.catalog.get_many("default", ["chat/t0"])["chat/t0"]
    assert len(entry.item_ids) > 5  # stored in pieces of chunk_tokens tokens
    rows = [_sentences(services, i) for i in entry.item_ids]
    assert all(r is not None for r in rows)
    assert sum(r.shape[0] for r in rows) >= 290  # every sentence, split where its piece ends at the worst
    assert max(r.shape[0] for r in rows) <= services.settings.chunk_tokens // 4
