"""The ingestion job against the real embedded stores and the real packaged embedding model."""

from __future__ import annotations

import json
import shutil

import pytest

from agent_memory.core.records import Document, SearchFilter, TurnRecord
from agent_memory.ingest import sources
from agent_memory.ingest.file_ingestion import ingest_paths
from agent_memory.ingest.ownership import FILE_KEY
from agent_memory.ingest.pipeline import IngestionPipeline
from tests.helpers import SAMPLES


@pytest.fixture
def pipeline(services):
    return IngestionPipeline(services)


@pytest.fixture
def corpus(tmp_path):
    target = tmp_path / "corpus"
    shutil.copytree(SAMPLES, target)
    return target


def _items(services, source_id, tenant="default"):
    return list(services.vectors.scroll(SearchFilter(tenant=tenant, source_ids=[source_id])))


def test_sample_corpus_is_ingested_into_every_store(pipeline, services, corpus):
    report = ingest_paths(pipeline, [corpus], recursive=True)
    assert report.ok and report.files_ingested == 5 and not report.files_skipped
    assert report.chunks >= 6 and report.turns == 4 and report.summaries >= 1 and report.triples > 0
    assert services.vectors.count(SearchFilter(tenant="default")) == report.items_written
    assert services.graph.stats("default")["relations"] > 0
    # Every stored item carries its provenance.
    for item in services.vectors.scroll(SearchFilter(tenant="default")):
        assert item.source_id and item.content_hash and item.kind in ("chunk", "summary", "turn")
        assert 0 <= item.start <= item.end


def test_second_run_writes_and_embeds_nothing(pipeline, services, corpus):
    first = ingest_paths(pipeline, [corpus], recursive=True)
    before = services.vectors.count(SearchFilter(tenant="default"))
    second = ingest_paths(pipeline, [corpus], recursive=True)
    assert second.files_unchanged == first.files_ingested and second.files_ingested == 0
    assert second.items_written == 0 and second.embeddings_computed == 0 and second.triples == 0
    assert services.vectors.count(SearchFilter(tenant="default")) == before


def test_same_documents_through_the_api_are_idempotent(pipeline, services):
    docs = [Document(source_id=f"d{i}", text=f"Document {i} talks about topic {i}. " * 5) for i in range(3)]
    pipeline.ingest_documents(docs)
    graph_before = services.graph.stats("default")
    vec_before = services.vectors.count(SearchFilter(tenant="default"))
    computed_before = services.embedder.computed
    pipeline.ingest_documents(docs)
    assert services.vectors.count(SearchFilter(tenant="default")) == vec_before
    assert services.graph.stats("default") == graph_before
    assert services.embedder.computed == computed_before


def test_changed_document_replaces_its_chunks_and_triples(pipeline, services, tmp_path):
    path = tmp_path / "note.md"
    path.write_text("Marie Dubois founded Acme Corporation in Lyon. Acme makes the X-200 sensor.")
    ingest_paths(pipeline, [path])
    from agent_memory.ingest.pipeline import file_source_id

    sid = file_source_id(path)
    old = {i.id: i.text for i in _items(services, sid)}
    assert any("X-200" in t for t in old.values())
    old_facts = services.graph.neighbourhood("default", ["Acme Corporation"], hops=1)
    assert old_facts

    path.write_text("Jean Martin founded Borealis Labs in Oslo. Borealis builds the Z-9 drone.")
    report = ingest_paths(pipeline, [path])
    assert report.files_ingested == 1 and report.items_deleted >= 1
    new = {i.id: i.text for i in _items(services, sid)}
    assert not set(old) & set(new)
    assert all("X-200" not in t for t in new.values()) and any("Z-9" in t for t in new.values())
    assert not [t for t in services.graph.neighbourhood("default", ["Acme Corporation"], hops=1)
                if t.source_id == sid]
    assert services.graph.neighbourhood("default", ["Borealis Labs"], hops=1)


def test_an_emptied_file_takes_its_old_text_away_and_an_unreadable_one_keeps_it(pipeline, services, tmp_path):
    from agent_memory.ingest.pipeline import file_source_id

    emptied, garbled = tmp_path / "b.md", tmp_path / "c.md"
    emptied.write_text("Dave works at Initech.")
    garbled.write_text("Erin works at Globex.")
    ingest_paths(pipeline, [emptied, garbled])
    emptied.write_text("")
    garbled.write_bytes(b"Erin works at \xff\xfe Globex.")  # invalid UTF-8: a bad save, not new content
    report = ingest_paths(pipeline, [emptied, garbled])
    assert report.ok and report.files_ingested == 1 and report.items_deleted >= 1
    assert not _items(services, file_source_id(emptied))
    assert services.catalog.get("default", FILE_KEY + file_source_id(emptied)) is None
    assert any("empty now" in w for w in report.warnings)
    [(path, reason)] = report.files_skipped
    assert path == str(garbled) and "invalid UTF-8" in reason and "stored before is kept" in reason
    assert any("Globex" in item.text for item in _items(services, file_source_id(garbled)))
    again = ingest_paths(pipeline, [emptied])  # nothing stored for it now: a plain skip
    assert again.files_skipped == [(str(emptied), "empty file")]


def test_a_file_reached_twice_in_one_job_is_read_once(pipeline, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("Tina leads ops.")
    (folder / "b.md").write_text("Dave runs the night shift.")
    report = ingest_paths(pipeline, [folder, folder, folder / "a.md"])
    assert report.files_seen == 2 and report.files_ingested == 2 and not report.files_failed


def test_records_removed_from_a_changed_file_are_forgotten(pipeline, services, tmp_path):
    path = tmp_path / "records.jsonl"
    rows = [{"id": "r1", "text": "Alpha record about apples."}, {"id": "r2", "text": "Beta record about pears."}]
    path.write_text("\n".join(json.dumps(r) for r in rows))
    ingest_paths(pipeline, [path])
    assert _items(services, "r2")
    path.write_text(json.dumps(rows[0]))
    report = ingest_paths(pipeline, [path])
    assert report.sources_removed == 1
    assert _items(services, "r1") and not _items(services, "r2")
    assert services.catalog.get("default", "r2") is None


def test_forget_removes_a_source_everywhere(pipeline, services, corpus):
    ingest_paths(pipeline, [corpus], recursive=True)
    removed = pipeline.forget("default", "acme")
    assert removed["sources"] == 1 and removed["items"] >= 1 and removed["triples"] >= 1
    assert not _items(services, "acme")
    assert services.catalog.get("default", "acme") is None
    assert all(t.source_id != "acme" for t in services.graph.neighbourhood("default", ["Acme Corporation"], hops=2))


def test_forgetting_a_file_forgets_every_source_it_held(pipeline, services, corpus):
    from agent_memory.ingest.pipeline import file_source_id

    ingest_paths(pipeline, [corpus], recursive=True)
    removed = pipeline.forget("default", file_source_id(corpus / "docs" / "products.jsonl", corpus.parent))
    assert removed["sources"] == 3
    for sid in ("acme", "product-x200", "product-x300"):
        assert not _items(services, sid)


def test_turns_are_keyed_by_session_and_turn(pipeline, services):
    turns = [TurnRecord(session_id="s1", turn_id=str(i), speaker="user", text=f"I adopted a cat named Tom {i}")
             for i in range(3)]
    pipeline.ingest_turns(turns)
    items = _items(services, "s1/1")
    assert len(items) == 1 and items[0].kind == "turn"
    assert items[0].metadata["session_id"] == "s1" and items[0].metadata["turn_id"] == "1"
    assert services.catalog.get("default", "s1/2").seq == 2


def test_tenants_are_isolated(pipeline, services):
    pipeline.ingest_documents([Document(source_id="same", text="Tenant A owns the blue key.", tenant="a"),
                               Document(source_id="same", text="Tenant B owns the red key.", tenant="b")])
    texts_a = [i.text for i in services.vectors.scroll(SearchFilter(tenant="a"))]
    assert texts_a and all("blue" in t for t in texts_a)


def test_bad_inputs_are_skipped_with_reasons_and_never_abort_the_job(pipeline, services, tmp_path):
    (tmp_path / "good.txt").write_text("The harbour opened in 1892 and handles 4 million tonnes a year.")
    (tmp_path / "binary.txt").write_bytes(bytes(range(256)) * 10)
    (tmp_path / "empty.md").write_text("")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9 cr\xe8me".encode("latin-1"))
    (tmp_path / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (tmp_path / "broken.json").write_text('{"text": "unterminated')
    report = ingest_paths(pipeline, [tmp_path, tmp_path / "missing.txt"])
    reasons = dict(report.files_skipped)
    assert reasons[str(tmp_path / "binary.txt")] == "binary content"
    assert reasons[str(tmp_path / "empty.md")] == "empty file"
    assert reasons[str(tmp_path / "latin1.txt")].startswith("invalid UTF-8")
    assert reasons[str(tmp_path / "image.png")].startswith("unsupported extension")
    assert reasons[str(tmp_path / "broken.json")].startswith("malformed JSON")
    assert reasons[str(tmp_path / "missing.txt")] == "no such file or directory"
    # The job went on; a named path that is not there makes it unsuccessful (non-zero exit).
    assert report.files_ingested == 1 and report.paths_missing == [str(tmp_path / "missing.txt")]
    assert not report.ok


def test_exit_status_is_non_zero_only_when_nothing_could_be_ingested(tmp_path, monkeypatch):
    from agent_memory.cli import main

    monkeypatch.setenv("AGENT_MEMORY_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("AGENT_MEMORY_TRIPLE_EXTRACTOR", "rules")
    monkeypatch.setenv("AGENT_MEMORY_NO_PROGRESS", "1")
    (tmp_path / "only.bin").write_bytes(b"\x00\x01\x02")
    assert main(["ingest", str(tmp_path / "only.bin")]) == 1
    (tmp_path / "ok.txt").write_text("A sentence worth keeping.")
    assert main(["ingest", str(tmp_path / "only.bin"), str(tmp_path / "ok.txt"), "--json"]) == 0


def test_large_text_file_streams_in_segments(pipeline, services, tmp_path, monkeypatch):
    # The streaming path, end to end, on a file just over a lowered threshold.
    monkeypatch.setattr(sources, "STREAM_THRESHOLD_BYTES", 20_000)
    monkeypatch.setattr(sources, "SEGMENT_CHARS", 8_000)
    paragraph = "Station {n} recorded {n} millimetres of rain on day {n}. The crew logged it.\n\n"
    text = "".join(paragraph.format(n=n) for n in range(400))
    path = tmp_path / "big.txt"
    path.write_text(text)
    report = ingest_paths(pipeline, [path])
    assert report.files_ingested == 1 and report.chunks > 10
    from agent_memory.ingest.pipeline import file_source_id

    items = [i for i in _items(services, file_source_id(path)) if i.kind == "chunk"]
    assert len(items) == report.chunks
    for item in items:
        assert text[item.start:item.end] == item.text


def test_fifty_megabyte_file_is_read_in_bounded_memory(tmp_path):
    import tracemalloc

    path = tmp_path / "fifty.txt"
    line = ("Log line with an event number and some ordinary words to fill the row. " * 2 + "\n").encode()
    with path.open("wb") as handle:
        for _ in range(50 * 1024 * 1024 // len(line) + 1):
            handle.write(line)
    loaded = sources.load_path(path, tenant="t", source_id="fifty")
    assert isinstance(loaded[0], sources.TextStream)
    tracemalloc.start()
    total = 0
    for _, segment in loaded[0].segments():
        total += len(segment)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert total == path.stat().st_size
    assert peak < 12 * 1024 * 1024, f"peak {peak} bytes while streaming a 50 MB file"
