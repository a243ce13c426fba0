"""A data dir of an older keyword format is brought up to date by whoever opens it (Memory, the CLI, serve):
no refusal, no manual `reindex`, the stored memory answers as before. Other embedding models stay a refusal
naming `agent-memory reindex`, and a question to such a server is 503 reindex_required, never a 400 that
blames the request (agent_memory/ingest/upgrade.py)."""

from __future__ import annotations

import logging

import httpx
import pytest

from agent_memory.api import create_app
from agent_memory.api.testing import serve_in_thread
from agent_memory.cli import main
from agent_memory.core.config import load_settings
from agent_memory.core.errors import IndexFormatError
from agent_memory.core.sparse import SPARSE_FORMAT
from agent_memory.memory import Memory
from agent_memory.remote import KEY_ENV
from agent_memory.services import read_index_format, write_index_format
from tests.helpers import embedded_cli_env

OLDER_FORMAT = "bm25-tf/stem-en/jieba/v5"  # before weekdays became one term (core/sparse.py)
NOTE = "The greenhouse pump P-7 was replaced by Ilse Varga last Friday; it now moves 40 litres a minute."
QUESTION = "Who replaced the greenhouse pump?"


def data_dir_with_note(data, monkeypatch):
    """``data`` made the CLI's and Memory's data dir, holding one note stored by this version."""
    embedded_cli_env(monkeypatch, data)
    monkeypatch.delenv(KEY_ENV, raising=False)
    with Memory(data_dir=data) as memory:
        memory.add(NOTE, source_id="pump.md")
    return data


@pytest.fixture()
def older_data_dir(tmp_path, monkeypatch):
    """A data dir holding one note, whose marker says its keyword terms were cut by an older version."""
    data = data_dir_with_note(tmp_path / "data", monkeypatch)
    write_index_format(data, {**read_index_format(data), "sparse": OLDER_FORMAT})
    return data


def test_memory_opens_an_older_data_dir_after_upgrading_it_in_place(older_data_dir, caplog):
    with caplog.at_level(logging.WARNING, logger="agent_memory.ingest.upgrade"):
        with Memory(data_dir=older_data_dir) as memory:
            result = memory.prompt(QUESTION, budget=400)
    assert "[S:pump.md]" in result.prompt and "Ilse Varga" in result.prompt
    assert read_index_format(older_data_dir)["sparse"] == SPARSE_FORMAT
    said = " ".join(r.getMessage() for r in caplog.records)
    assert f"keyword format {OLDER_FORMAT} -> {SPARSE_FORMAT}" in said and "items re-indexed, 0 embeddings computed" in said
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="agent_memory.ingest.upgrade"):
        with Memory(data_dir=older_data_dir) as memory:  # once: the next open finds it current
            assert "Ilse Varga" in memory.prompt(QUESTION, budget=400).prompt
    assert not caplog.records


def test_the_cli_list_and_prompt_work_on_an_older_data_dir(older_data_dir, capsys, caplog):
    with caplog.at_level(logging.WARNING, logger="agent_memory.ingest.upgrade"):
        assert main(["list"]) == 0
    assert "pump.md" in capsys.readouterr().out
    assert "upgrading data dir" in caplog.text  # on stderr outside pytest, which holds the log handlers
    assert main(["prompt", QUESTION, "--budget", "400"]) == 0
    assert "Ilse Varga" in capsys.readouterr().out


def test_serve_upgrades_before_it_answers(older_data_dir):
    app = create_app(load_settings(data_dir=older_data_dir, triple_extractor="rules"), warm=False)
    with serve_in_thread(app) as url:
        answer = httpx.post(f"{url}/v1/prompt", json={"question": QUESTION, "budget": 400}, timeout=60)
    assert answer.status_code == 200 and "Ilse Varga" in answer.json()["prompt"]
    assert read_index_format(older_data_dir)["sparse"] == SPARSE_FORMAT


def test_other_embedding_models_stay_a_refusal_and_a_question_is_503_not_400(older_data_dir):
    other = {"default_model": "some-other-model", "multilingual_model": None, "multilingual_share": 0.0}
    write_index_format(older_data_dir, {**read_index_format(older_data_dir), "embedding": other})
    marker = read_index_format(older_data_dir)
    with Memory(data_dir=older_data_dir) as memory, pytest.raises(IndexFormatError, match="agent-memory reindex"):
        memory.prompt(QUESTION, budget=400)
    assert read_index_format(older_data_dir) == marker  # nothing re-indexed behind the user's back
    app = create_app(load_settings(data_dir=older_data_dir, triple_extractor="rules"), warm=False)
    with serve_in_thread(app) as url:
        answer = httpx.post(f"{url}/v1/prompt", json={"question": QUESTION, "budget": 400}, timeout=60)
    assert answer.status_code == 503
    error = answer.json()["error"]
    assert error["code"] == "reindex_required" and "agent-memory reindex" in error["message"]


def test_a_marker_of_the_keyword_format_alone_is_upgraded_as_the_settings_models(older_data_dir):
    """The first markers recorded no models: refused with "reindex", then reindex refused with "nothing to
    re-index from" (a probe). Their models are taken to be the settings' (none other existed then)."""
    write_index_format(older_data_dir, {"sparse": OLDER_FORMAT})
    with Memory(data_dir=older_data_dir) as memory:
        assert "Ilse Varga" in memory.prompt(QUESTION, budget=400).prompt
    marker = read_index_format(older_data_dir)
    assert marker["sparse"] == SPARSE_FORMAT and marker["embedding"]["default_model"]


@pytest.mark.parametrize("sparse, said", [("bm25-tf/stem-en/jieba/v99", "a newer version of agent-memory wrote it"),
                                          ("%%garbage%%", "holds sparse vectors of format '%%garbage%%'")])
def test_a_newer_or_unknown_keyword_format_is_refused_not_upgraded_down(older_data_dir, sparse, said):
    write_index_format(older_data_dir, {**read_index_format(older_data_dir), "sparse": sparse})
    with Memory(data_dir=older_data_dir) as memory, pytest.raises(IndexFormatError) as refused:
        memory.prompt(QUESTION, budget=400)
    assert said in str(refused.value) and "stop an `agent-memory serve` that owns it first" in str(refused.value)
    assert str(refused.value).count("agent-memory reindex") == 1  # the advice once
    assert read_index_format(older_data_dir)["sparse"] == sparse  # left as it was


def test_a_marker_cut_short_is_named_and_reindex_writes_it_afresh(older_data_dir, capsys):
    (older_data_dir / "index-format.json").write_text('{"sparse": "bm25', encoding="utf-8")
    with Memory(data_dir=older_data_dir) as memory, pytest.raises(IndexFormatError, match="index-format.json does not read"):
        memory.prompt(QUESTION, budget=400)
    assert main(["reindex"]) == 0
    assert read_index_format(older_data_dir)["sparse"] == SPARSE_FORMAT
    with Memory(data_dir=older_data_dir) as memory:
        assert "Ilse Varga" in memory.prompt(QUESTION, budget=400).prompt


def test_other_models_are_named_before_an_older_keyword_format(older_data_dir):
    other = {"default_model": "some-other-model", "multilingual_model": None, "multilingual_share": 0.0}
    write_index_format(older_data_dir, {**read_index_format(older_data_dir), "embedding": other})
    with Memory(data_dir=older_data_dir) as memory, pytest.raises(IndexFormatError) as refused:
        memory.prompt(QUESTION, budget=400)
    assert "was embedded with" in str(refused.value) and "some-other-model" in str(refused.value)


def test_a_data_dir_holding_vectors_without_its_marker_is_refused_and_reindex_mends_it(older_data_dir, capsys):
    """A marker removed by hand (or a data dir copied without it) was taken for a new data dir: this version's
    format was recorded over vectors written in an unknown one. Its stores are not empty, so it is refused."""
    (older_data_dir / "index-format.json").unlink()
    with Memory(data_dir=older_data_dir) as memory, pytest.raises(IndexFormatError) as refused:
        memory.prompt(QUESTION, budget=400)
    said = str(refused.value)
    assert "holds 1 stored vectors but no index-format.json" in said and "agent-memory reindex" in said
    assert not (older_data_dir / "index-format.json").exists()  # nothing recorded over them
    assert main(["reindex"]) == 0
    assert read_index_format(older_data_dir)["sparse"] == SPARSE_FORMAT
    with Memory(data_dir=older_data_dir) as memory:
        assert "Ilse Varga" in memory.prompt(QUESTION, budget=400).prompt


def test_a_job_into_an_unmarked_full_data_dir_fails_before_reading_its_files(older_data_dir, tmp_path):
    (older_data_dir / "index-format.json").unlink()
    note = tmp_path / "note.md"
    note.write_text("The boiler was serviced on Monday.", encoding="utf-8")
    with Memory(data_dir=older_data_dir) as memory, pytest.raises(IndexFormatError, match="no index-format.json"):
        memory.add_file(note)


def test_a_new_data_dir_gets_its_marker_when_its_stores_open(tmp_path, monkeypatch):
    data = data_dir_with_note(tmp_path / "fresh", monkeypatch)
    assert read_index_format(data)["sparse"] == SPARSE_FORMAT
    with Memory(data_dir=data) as memory:
        assert "Ilse Varga" in memory.prompt(QUESTION, budget=400).prompt


def test_a_hindi_note_stored_by_v6_is_read_again_with_its_vowel_signs(tmp_path, monkeypatch):
    """Sparse format v7: a word keeps its combining marks. A v6 data dir stored "बिल्ली" (cat) as ब / ल / ल, so
    its Hindi question met nothing whole; opened by this version, its terms and vectors are v7's."""
    import re

    from agent_memory.core.records import SearchFilter
    from agent_memory.core.text import joined_terms, keyword_terms
    from agent_memory.services import build_services

    def v6_terms(text):  # \w+, as v6 cut every word
        return re.findall(r"\w+", text.lower())

    note = "करीम की बिल्ली का नाम मोची है और वह सफेद है।"
    embedded_cli_env(monkeypatch, tmp_path / "data")
    monkeypatch.delenv(KEY_ENV, raising=False)
    with monkeypatch.context() as patch:
        patch.setattr("agent_memory.core.sparse.terms", v6_terms)
        patch.setattr("agent_memory.ingest.pipeline.stamp_terms",
                      lambda items: [setattr(i, "terms", " ".join(sorted(set(v6_terms(i.text))))) for i in items])
        with Memory(data_dir=tmp_path / "data") as memory:
            memory.add(note, source_id="cat.md")
    data = tmp_path / "data"
    write_index_format(data, {**read_index_format(data), "sparse": "bm25-tf/stem-en/jieba/v6"})
    with Memory(data_dir=data) as memory:
        assert "मोची" in memory.prompt("करीम की बिल्ली का नाम क्या है?", budget=400).prompt
    assert read_index_format(data)["sparse"] == SPARSE_FORMAT
    with build_services(load_settings(data_dir=data)) as services:
        items = [i for i in services.vectors.scroll(SearchFilter(tenant="default")) if i.text == note]
        assert items and all(i.terms == joined_terms(note) and keyword_terms("बिल्ली")[0] in i.terms.split() for i in items)
        hits = services.vectors.search_sparse(services.sparse_encoder.encode_query("बिल्ली"),
                                              SearchFilter(tenant="default"), 5)
        assert {i.id for i in items} & {h.item.id for h in hits}
