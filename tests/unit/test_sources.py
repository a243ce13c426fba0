"""Readers, transcript recognition and splitting with offsets."""

from __future__ import annotations

import json

from agent_memory.core.records import Document
from agent_memory.core.tokens import TiktokenCounter
from agent_memory.ingest.json_records import load_json_text
from agent_memory.ingest.sources import Skipped, Transcript, load_path
from agent_memory.ingest.splitting import Splitter


def test_html_text_is_extracted_without_scripts(tmp_path):
    path = tmp_path / "page.html"
    path.write_text("<html><head><script>var x = 1;</script></head><body><h1>Title</h1><p>Body text.</p></body>")
    [doc] = load_path(path, tenant="t")
    assert isinstance(doc, Document)
    assert "Title" in doc.text and "Body text." in doc.text and "var x" not in doc.text


def test_jsonl_records_with_a_text_field_become_documents():
    raw = "\n".join(json.dumps({"id": f"r{i}", "title": "T", "text": f"row {i}"}) for i in range(3))
    docs = load_json_text(raw, tenant="t", source_id="f.jsonl", jsonl=True)
    assert [d.source_id for d in docs] == ["r0", "r1", "r2"] and docs[0].title == "T"


def test_two_paragraphs_of_one_title_in_one_file_are_two_sources():
    """MuSiQue-style records: a page's paragraphs share its title. The second, different text is its
    own source ("Publix #2"), not a change that replaces the first; the same text again is the same
    source; reading the file again gives the same IDs."""
    first = {"title": "Publix", "paragraph_text": "Publix is an employee-owned supermarket chain in Lakeland."}
    second = {"title": "Publix", "paragraph_text": "Publix employs about 193,000 people at 1,231 locations."}
    other = {"title": "Lakeland", "paragraph_text": "Lakeland is a city in Polk County, Florida."}
    raw = "\n".join(json.dumps({"contexts": c}) for c in ([first, other], [second, first], [second]))

    def named() -> list[tuple[str, str]]:
        return [(d.source_id, d.text) for d in load_json_text(raw, tenant="t", source_id="m.jsonl", jsonl=True)]

    docs = named()
    assert docs == [("Publix", first["paragraph_text"]), ("Lakeland", other["paragraph_text"]),
                    ("Publix #2", second["paragraph_text"]), ("Publix", first["paragraph_text"]),
                    ("Publix #2", second["paragraph_text"])]
    assert named() == docs


def test_squad_paragraphs_without_ids_are_told_apart_by_order():
    data = {"data": [{"title": "游戏", "paragraphs": [{"context": "第一段。"}, {"context": "第二段。"}]}]}
    docs = load_json_text(json.dumps(data, ensure_ascii=False), tenant="t", source_id="c.json")
    assert [(d.source_id, d.text) for d in docs] == [("游戏", "第一段。"), ("游戏 #2", "第二段。")]


def test_json_without_a_text_field_is_read_as_its_own_text():
    """A config file or a list of data rows holds no record with a text field: it is one document of the
    file's text as written (found as a YAML file's is), not skipped; empty JSON is skipped as such."""
    raw = '{"service": "heron", "port": 8080, "owners": ["Orla Vance"]}'
    [doc] = load_json_text(raw, tenant="t", source_id="config.json", path="/p/config.json")
    assert isinstance(doc, Document) and (doc.source_id, doc.text, doc.path) == ("config.json", raw, "/p/config.json")
    rows = '[{"id": "T1", "site": "Brest", "capacity_mw": 3.2}, {"id": "T2", "site": "Lorient"}]'
    [doc] = load_json_text(rows, tenant="t", source_id="turbines.json")
    assert doc.source_id == "turbines.json" and "Lorient" in doc.text
    lines = '{"event": "deploy", "at": "2026-01-02"}\n{"event": "rollback"}\n'
    [doc] = load_json_text(lines, tenant="t", source_id="events.jsonl", jsonl=True)
    assert doc.text == lines
    for empty in ("[]", "{}", '{"a": null, "b": []}', '""'):
        [skip] = load_json_text(empty, tenant="t", source_id="e.json")
        assert isinstance(skip, Skipped) and "without content" in skip.reason, empty


def test_a_record_without_text_among_records_with_text_is_read_as_its_json_text():
    """What a record without a text field says is found: a document of its JSON text under <file ID>#<index>;
    a record with a blank text field, or with nothing in it, is still skipped alone."""
    raw = json.dumps([{"event": "deploy", "body": "ok"}, {"event": "rollback", "reason": "db migration 17 failed"},
                      {"id": "c", "text": "  "}, {}, None, {"id": "d", "text": "Migration 18 went through."}])
    first, second, blank, empty, null, last = load_json_text(raw, tenant="t", source_id="r.json", path="/p/r.json")
    assert isinstance(first, Document) and (first.source_id, first.text) == ("r.json#0", "ok")
    assert isinstance(second, Document) and second.source_id == "r.json#1" and second.path == "/p/r.json"
    assert json.loads(second.text) == {"event": "rollback", "reason": "db migration 17 failed"}
    assert isinstance(last, Document) and last.source_id == "d"
    for index, skip in ((2, blank), (3, empty), (4, null)):
        assert isinstance(skip, Skipped) and skip.path == f"/p/r.json#{index}" and "no text field" in skip.reason
    lines = '{"id": "a", "text": "Le tram passe toutes les dix minutes."}\n{"ligne": "T2", "arrêt": "Gare"}\n'
    doc, row = load_json_text(lines, tenant="t", source_id="r.jsonl", jsonl=True)
    assert doc.source_id == "a" and (row.source_id, row.text) == ("r.jsonl#1", '{"ligne": "T2", "arrêt": "Gare"}')


def test_one_object_whose_text_field_holds_little_of_its_text_is_a_config():
    raw = '{"name":"deploy-svc","context":"prod-cluster","replicas":12,"image":"registry/app:4.2"}'
    [doc] = load_json_text(raw, tenant="t", source_id="deploy.json", path="/p/deploy.json")
    assert isinstance(doc, Document) and (doc.source_id, doc.text, doc.metadata) == ("deploy.json", raw, {})
    # A record whose text field holds its text is read as a record, alone or in a list, as before.
    long = "The Heron service answers on port 8080 and is run by the platform team in Lyon."
    [doc] = load_json_text(json.dumps({"text": long}), tenant="t", source_id="one.json")
    assert (doc.source_id, doc.text) == ("one.json#0", long)
    [doc] = load_json_text(json.dumps({"id": "h1", "title": "Heron", "text": long, "port": 8080}), tenant="t",
                           source_id="one.json")
    assert (doc.source_id, doc.text, doc.title, doc.metadata) == ("h1", long, "Heron",
                                                                 {"id": "h1", "title": "Heron", "port": 8080})
    rows = json.dumps([{"id": f"r{i}", "title": "A long title for a short text", "text": f"row {i}"} for i in range(2)])
    assert [(d.source_id, d.text) for d in load_json_text(rows, tenant="t", source_id="rows.json")] == [
        ("r0", "row 0"), ("r1", "row 1")]
    [doc] = load_json_text('{"name": "deploy-svc", "context": "prod"}', tenant="t", source_id="x.jsonl", jsonl=True)
    assert doc.text == "prod"  # JSONL: records, never a config


def test_generic_transcript_is_recognized():
    raw = json.dumps({"session_id": "s9", "turns": [{"speaker": "user", "text": "hi", "timestamp": "2024-01-01"},
                                                   {"speaker": "bot", "text": "hello"}]})
    [transcript] = load_json_text(raw, tenant="t", source_id="chat.json")
    assert isinstance(transcript, Transcript)
    assert [t.source_id for t in transcript.turns] == ["s9/t0", "s9/t1"]
    assert transcript.turns[0].timestamp == "2024-01-01"


def test_locomo_and_longmemeval_shapes_are_recognized():
    locomo = [{"sample_id": "c1", "qa": [], "conversation": {
        "speaker_a": "A", "speaker_b": "B", "session_1_date_time": "1 May 2023",
        "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "Hi B"}]}}]
    [t1] = load_json_text(json.dumps(locomo), tenant="t", source_id="l.json")
    assert t1.turns[0].source_id == "c1/D1:1" and t1.turns[0].session_id == "c1:S1" and t1.turns[0].timestamp == "1 May 2023"
    lme = [{"question_id": "q", "haystack_session_ids": ["s1"], "haystack_dates": ["2023/05/01"],
            "haystack_sessions": [[{"role": "user", "content": "I moved to Paris", "has_answer": True}]]}]
    [t2] = load_json_text(json.dumps(lme), tenant="t", source_id="m.json")
    assert t2.turns[0].source_id == "s1/t0" and "has_answer" not in t2.turns[0].metadata  # gold labels stay out


def test_splitter_keeps_offsets_and_token_limits_in_english_and_chinese():
    counter = TiktokenCounter()
    splitter = Splitter(counter, chunk_tokens=40, overlap_tokens=8)
    english = "# Heading\n\n" + " ".join(f"Sentence number {i} says something short." for i in range(40))
    chinese = "。".join(f"这是第{i}个句子，它讲述了一件简单的事情" for i in range(40)) + "。"
    for text in (english, chinese):
        spans = splitter.split(text)
        assert len(spans) > 3
        for span in spans:
            assert text[span.start:span.end] == span.text
            assert counter.count(span.text) <= 40
        assert spans == sorted(spans, key=lambda s: s.start)
    # Chinese chunks end at sentence punctuation rather than mid-sentence.
    assert all(s.text.endswith("。") for s in splitter.split(chinese)[:-1])


def test_short_text_is_one_chunk():
    spans = Splitter(TiktokenCounter(), 64, 8).split("  Just one line.  ")
    assert len(spans) == 1 and spans[0].text == "Just one line." and spans[0].start == 2
