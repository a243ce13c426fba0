"""A tenant's export and its import into another data dir (a user's data request, a move between
deployments): documents and sessions come back whole, prompts cite the same sources, importing twice changes
nothing, a bad line is a skip with its number, another format version is refused, and nothing of another
tenant is ever exported."""

from __future__ import annotations

import json
import re

import pytest

from agent_memory import IngestError, Memory
from agent_memory.core.records import Document, SearchFilter, TurnRecord
from agent_memory.memory.export_lines import EXPORT_VERSION
from tests.helpers import embedded_cli_env, run_cli

NOTES = {
    "notes/kestrel.md": ("Kestrel", "# Kestrel\n\nOrla Vance leads the Kestrel platform team in Lyon.\n\n"
                         "The Kestrel budget for 2026 is 40,000 euros, approved in March.\n"),
    "notes/heron.md": ("", "The Heron archive lives on the Tromso server. Backups run nightly at 02:00.\n"),
    "notes/long.md": ("Osprey", "\n\n".join(f"Paragraph {n}: the Osprey pipeline step {n} reads batch {n * 7} "
                                           "from the staging bucket and writes a report." for n in range(60))),
}
QUESTION = "Who leads the Kestrel platform team?"
MESSAGES = [
    {"role": "user", "content": "My locker combination at the Oslo office is 7741.", "timestamp": 1767603600.0},
    {"role": "assistant", "content": "Noted: locker 7741 in Oslo.", "name": "helper", "timestamp": 1767603660.5},
    {"role": "assistant", "content": None, "timestamp": 1767603700.0,
     "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\": \"x\"}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "found x", "timestamp": 1767603701.0},
    {"role": "user", "content": "I moved to the Bergen office in May.", "timestamp": 1767607200.0},
]


def fill(memory: Memory, tenant: str = "acme") -> None:
    memory.add_documents([Document(source_id=sid, title=title, text=text, tenant=tenant, metadata={"team": "ops"})
                          for sid, (title, text) in NOTES.items()])
    memory.add_turns([TurnRecord(session_id="call-7", turn_id=str(n), speaker=who, text=text, tenant=tenant,
                                 timestamp="2025-05-08")
                      for n, (who, text) in enumerate([("Ana", "The Pelican release ships on Friday."),
                                                       ("Bo", "Then I book the Lisbon venue.")])])
    memory.add_messages("chat-1", MESSAGES, retention=["strict", None, None, "fuzzy", "strict"], tenant=tenant)
    memory.session("chat-1", tenant=tenant).configure(window_tokens=50_000)


def exported(memory: Memory, tenant: str = "acme") -> list[str]:
    return [json.dumps(line, ensure_ascii=False) for line in memory.export(tenant=tenant)]


@pytest.fixture()
def source(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_MEMORY_TRIPLE_EXTRACTOR", "rules")
    with Memory(data_dir=tmp_path / "a", tenant="acme") as memory:
        fill(memory)
        memory.add("Globex keeps its payroll on the Falcon server.", source_id="notes/globex-secret.md",
                   tenant="globex")
        memory.add_message("globex-chat", {"role": "user", "content": "Globex only: the vault code is 9981."},
                           tenant="globex")
        lines = exported(memory)
        before = memory.prompt(QUESTION, budget=600)
    return tmp_path, lines, [p.source_id for p in before.passages]


def test_documents_and_sessions_come_back_whole_with_the_same_citations(source):
    tmp_path, lines, cited = source
    records = [json.loads(line) for line in lines]
    assert records[0]["type"] == "header" and records[0]["version"] == EXPORT_VERSION and records[0]["tenant"] == "acme"
    assert records[-1] == {"type": "end", "sources": 5, "files": 0, "sessions": 1, "messages": 5}
    by_id = {r["source_id"]: r for r in records if r["type"] == "source"}
    # Each document's text put back together from its chunks, checked against the hash ingestion recorded.
    for sid, (title, text) in NOTES.items():
        assert by_id[sid]["text"] == text and by_id[sid]["text_verified"], sid
        assert by_id[sid]["title"] == title and by_id[sid]["metadata"] == {"team": "ops"}
    assert by_id["call-7/1"]["kind"] == "turn" and by_id["call-7/1"]["speaker"] == "Bo"
    assert by_id["call-7/1"]["text"] == "Then I book the Lisbon venue." and by_id["call-7/1"]["text_verified"]
    # A live session's archived turns are rebuilt from its messages, not exported twice.
    assert not [sid for sid in by_id if sid.startswith("chat-1/")]
    [session] = [r for r in records if r["type"] == "session"]
    assert session["config"] == {"window_tokens": 50_000} and session["messages"] == 5
    sent = [r for r in records if r["type"] == "message"]
    assert [m["message"] for m in sent] == MESSAGES and [m["retention"] for m in sent] == ["strict", None, None,
                                                                                          "fuzzy", "strict"]
    # Never another tenant's data.
    # The other tenant's message by its words: "9981" alone also turns up inside a float timestamp.
    assert "globex" not in "\n".join(lines).lower() and "vault code" not in "\n".join(lines)

    with Memory(data_dir=tmp_path / "b") as target:
        report = target.import_export(lines)
        assert report.ok and report.tenant == "acme", report.to_dict()
        # The export's 5 source lines; call-7's summary, made again from its turns, is no source of the export.
        assert report.sources_written == 5 and report.sessions_imported == 1 and report.messages_appended == 5
        after = target.prompt(QUESTION, budget=600, tenant="acme")
        assert [p.source_id for p in after.passages] == cited and "notes/kestrel.md" in cited
        assert [m["message"] for m in target.messages("chat-1", tenant="acme")] == \
            [{k: v for k, v in m.items() if k != "timestamp"} for m in MESSAGES]
        assert [m["timestamp"] for m in target.messages("chat-1", tenant="acme")] == [m["timestamp"] for m in MESSAGES]
        assert target.session("chat-1", tenant="acme").config.window_tokens == 50_000
        assert "7741" in " ".join(p.text for p in target.prompt("What is my locker combination?", budget=600,
                                                                      tenant="acme").passages)
        assert target.tenants() == ["acme"]
        # Twice: nothing changes.
        again = target.import_export(lines)
        assert again.ok and again.sources_written == 0 and again.sources_unchanged == 5
        assert again.sessions_unchanged == 1 and again.messages_appended == 0
        assert len(target.messages("chat-1", tenant="acme")) == 5
        assert exported(target)[1:-1] != [] and _sans_times(exported(target)) == _sans_times(lines)


def _sans_times(lines: list[str]) -> list[dict]:
    """The export's lines without the times the import sets anew (when it was exported, stored, updated)."""
    out = []
    for line in lines[1:]:
        record = json.loads(line)
        for key in ("exported_at", "updated_at"):
            record.pop(key, None)
        out.append(record)
    return out


def test_a_text_of_crlf_line_ends_comes_back_whole(tmp_path, monkeypatch):
    """The blank lines between its chunks were put back as LF: the text came back other than it was stored
    (`text_verified` false), and an import stored that other text."""
    monkeypatch.setenv("AGENT_MEMORY_TRIPLE_EXTRACTOR", "rules")
    # Paragraphs longer than a chunk: each is split on its own, so blank lines lie between chunks.
    text = "\r\n\r\n".join("".join(f"The Wren pump at station {n}.{i} was serviced in week {i * 3}.\r\n"
                                     for i in range(30)).rstrip() for n in range(3)) + "\r\n"
    with Memory(data_dir=tmp_path / "a", tenant="acme") as memory:
        memory.add(text, source_id="notes/wren.txt")
        [line] = [r for r in memory.export() if r.get("source_id") == "notes/wren.txt"]
        chunks = [i for i in memory.services.vectors.scroll(SearchFilter(tenant="acme", source_ids=["notes/wren.txt"]))
                  if i.kind == "chunk"]
    assert len(chunks) > 1 and any(c.start > prev.end for prev, c in zip(sorted(chunks, key=lambda c: c.start),
                                                                        sorted(chunks, key=lambda c: c.start)[1:]))
    assert line["text"] == text and line["text_verified"] is True


FRONT_MATTER = "---\ntitle: Osprey notes\ntags: [ops, lyon]\nowner: Orla Vance\n---\n\n"


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_markdown_file_with_front_matter_comes_back_whole(tmp_path, monkeypatch, capsys, newline):
    """Its text starts with the front matter blanked, whose line widths were not stored: the export dropped the
    blanks (`text_verified` false) and an import stored the text at other offsets, so its items had other IDs."""
    body = "\n\n".join(f"Paragraph {n}: the Osprey pipeline step {n} reads batch {n * 7} from the staging bucket."
                       for n in range(40)) + "\n"
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "osprey.md").write_bytes((FRONT_MATTER + body).replace("\n", newline).encode())
    embedded_cli_env(monkeypatch, tmp_path / "a")
    assert run_cli(capsys, ["ingest", str(tmp_path / "notes"), "--base", str(tmp_path)])[0] == 0
    out = tmp_path / "export.jsonl"
    assert run_cli(capsys, ["export", "--out", str(out)])[0] == 0
    [line] = [r for r in map(json.loads, out.read_text().splitlines()) if r["type"] == "source"]
    assert line["text_verified"] is True and line["title"] == "Osprey notes"
    assert line["text"] == (re.sub(r"[^\n]", " ", FRONT_MATTER) + body).replace("\n", newline)
    code, stdout, _ = run_cli(capsys, ["--data-dir", str(tmp_path / "b"), "import", str(out)])
    assert code == 0 and "sources written    1" in stdout, stdout
    stored = [json.loads(run_cli(capsys, ["--data-dir", str(tmp_path / d), "inspect", "notes/osprey.md", "--full"])[1])
              for d in ("a", "b")]
    assert len(stored[0]["items"]) > 2 and stored[0]["items"][0]["start"] == len(FRONT_MATTER.replace("\n", newline))
    for each in stored:  # an export keeps a source's first time, not each item's
        for item in each["items"]:
            del item["created_at"]
    assert stored[1] == stored[0]  # the same text, offsets and item IDs


def test_front_matter_stored_before_its_widths_were_kept_exports_as_a_guess(tmp_path, monkeypatch):
    """A data dir written before: the blanked text without its line widths exports unverified, with no error."""
    monkeypatch.setenv("AGENT_MEMORY_TRIPLE_EXTRACTOR", "none")
    blanked = re.sub(r"[^\n]", " ", FRONT_MATTER) + "The Osprey pipeline reads the staging bucket.\n"
    with Memory(data_dir=tmp_path / "a", tenant="acme") as memory:
        memory.add_documents([Document(source_id="notes/osprey.md", text=blanked, title="Osprey notes",
                                       tenant="acme")])
        [line] = [r for r in memory.export() if r.get("source_id") == "notes/osprey.md"]
    assert line["text_verified"] is False and line["text"].strip() == blanked.strip()


def test_bad_lines_are_skipped_by_number_and_the_rest_is_imported(source):
    tmp_path, lines, _ = source
    broken = list(lines)
    broken.insert(2, "{not json")
    broken.insert(3, json.dumps({"type": "source", "source_id": "x/empty", "kind": "document", "text": ""}))
    broken.insert(4, json.dumps({"type": "recipe"}))
    broken.insert(5, "[1, 2]")
    # Values no store holds are refused as a caller's are (Memory.add): the file is input like any other.
    broken.insert(6, json.dumps({"type": "source", "source_id": "x/nul", "kind": "document", "text": "a\u0000b"}))
    broken.insert(7, json.dumps({"type": "source", "source_id": "x/meta", "kind": "document", "text": "fine",
                                 "metadata": ["not", "a", "mapping"]}))
    broken.insert(8, json.dumps({"type": "source", "source_id": "../x", "kind": "document", "text": "fine"}))
    message_at = next(n for n, line in enumerate(broken) if '"type": "message"' in line)
    bad = json.loads(broken[message_at + 1])
    bad["message"] = {"role": "wizard", "content": "abracadabra"}
    broken[message_at + 1] = json.dumps(bad)
    with Memory(data_dir=tmp_path / "b") as target:
        report = target.import_export(broken)
        skipped = dict(report.skipped)
        assert sorted(skipped) == [3, 4, 5, 6, 7, 8, 9, message_at + 2], report.to_dict()
        assert skipped[3].startswith("not JSON") and "x/empty" in skipped[4] and "'recipe'" in skipped[5]
        assert "NUL" in skipped[7] and "metadata" in skipped[8] and "source_id '../x'" in skipped[9]
        assert "role" in skipped[message_at + 2] and not report.ok and report.complete
        assert report.sources_written == 5 and report.messages_appended == 4


def test_one_memorys_export_imports_into_another_as_it_is(tmp_path, monkeypatch):
    """README: ``export(tenant=...)`` yields the export and ``import_export(lines)`` reads one back; export()'s dicts
    raised AttributeError ('dict' object has no attribute 'strip') where a round trip was the obvious use."""
    monkeypatch.setenv("AGENT_MEMORY_TRIPLE_EXTRACTOR", "rules")
    with Memory(data_dir=tmp_path / "a", tenant="acme") as memory, Memory(data_dir=tmp_path / "b") as target:
        fill(memory)
        report = target.import_export(memory.export(tenant="acme"))
        assert report.ok and report.tenant == "acme", report.to_dict()
        assert report.sources_written == 5 and report.sessions_imported == 1 and report.messages_appended == 5
        assert _sans_times(exported(target)) == _sans_times(exported(memory))
        with pytest.raises(TypeError, match="line 2 of the export is of type int"):
            target.import_export([json.dumps(json.loads(exported(memory)[0])), 7])
        with pytest.raises(TypeError, match="got one str"):  # a whole file's text is not its lines
            target.import_export("\n".join(exported(memory)))


def test_another_format_version_or_no_header_is_refused_before_anything_is_stored(source):
    tmp_path, lines, _ = source
    header = json.loads(lines[0])
    with Memory(data_dir=tmp_path / "b") as target:
        with pytest.raises(IngestError, match=r"export format version 99 is not the version this agent-memory reads \(1\)"):
            target.import_export([json.dumps({**header, "version": 99}), *lines[1:]])
        with pytest.raises(IngestError, match="not an agent-memory export"):
            target.import_export(lines[1:])
        with pytest.raises(IngestError, match="the export is empty"):
            target.import_export(["", "  "])
        assert target.tenants() == [] and target.sessions(tenant="acme") == []
        # Cut short: what it holds is imported, and the report says the end is missing.
        report = target.import_export(lines[:4])  # two turns of call-7 (and its summary, not counted), one note
        assert report.complete is False and not report.ok and report.sources_written == 3
        assert "cut short" in report.warnings[-1]


def test_a_session_holding_other_messages_is_refused_one_holding_the_first_gets_the_rest(source):
    tmp_path, lines, _ = source
    with Memory(data_dir=tmp_path / "b", tenant="acme") as target:
        target.add_messages("chat-1", MESSAGES[:2], retention=["strict", None])  # an import stopped midway
        report = target.import_export(lines)
        assert report.ok and report.sessions_imported == 1 and report.messages_appended == 3
        assert len(target.messages("chat-1")) == 5
        target.delete_session("chat-1")
        target.add_message("chat-1", {"role": "user", "content": "Something else entirely."})
        refused = target.import_export(lines)
        [(number, why)] = refused.skipped
        assert refused.sessions_refused == 1 and json.loads(lines[number - 1])["type"] == "session"
        assert "session 'chat-1' holds other messages here" in why and "delete it first" in why
        assert [m["message"]["content"] for m in target.messages("chat-1")] == ["Something else entirely."]
        # Into another tenant it goes whole.
        other = target.import_export(lines, tenant="acme-copy")
        assert other.ok and other.tenant == "acme-copy" and len(target.messages("chat-1", tenant="acme-copy")) == 5


def test_a_turn_forgotten_before_the_export_stays_forgotten_after_the_import(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_MEMORY_TRIPLE_EXTRACTOR", "rules")
    with Memory(data_dir=tmp_path / "a", tenant="acme") as memory:
        memory.add_messages("chat-1", MESSAGES)
        assert memory.forget("chat-1/m0")["sources"] == 1  # the locker combination, forgotten
        lines = exported(memory)
    [session] = [json.loads(line) for line in lines if '"type": "session"' in line]
    assert 0 in session["forgotten_turns"]
    with Memory(data_dir=tmp_path / "b", tenant="acme") as target:
        report = target.import_export(lines)
        assert report.ok and report.turns_forgotten == 1
        recalled = target.prompt("What is my locker combination at the Oslo office?", budget=600)
        assert "chat-1/m0" not in [p.source_id for p in recalled.passages if p.section != "recent"]
        assert target.matching_sources("chat-1/m0") == [] and target.matching_sources("chat-1/m4") == ["chat-1/m4"]


def test_export_and_import_on_the_command_line(source, monkeypatch, capsys):
    tmp_path, lines, _ = source
    embedded_cli_env(monkeypatch, tmp_path / "a")
    out = tmp_path / "acme.jsonl"
    code, stdout, err = run_cli(capsys, ["export", "--tenant", "acme", "--out", str(out)])
    assert code == 0 and stdout == "" and "exported tenant 'acme' to" in err and "5 sources, 1 sessions" in err
    assert _sans_times(out.read_text().splitlines()) == _sans_times(lines)
    assert not (tmp_path / "acme.jsonl.partial").exists()
    code, stdout, _ = run_cli(capsys, ["export", "--tenant", "globex"])
    assert code == 0 and "9981" in stdout and "Kestrel" not in stdout
    code, stdout, _ = run_cli(capsys, ["--data-dir", str(tmp_path / "c"), "import", str(out), "--json"])
    report = json.loads(stdout)
    # The report counts the export's source lines (its end line says 5), not call-7's summary made again from its
    # turns: it said 'sources written 6' of an export of 5 sources.
    assert json.loads(lines[-1])["sources"] == 5
    assert code == 0 and report["tenant"] == "acme" and report["sources_written"] == 5 and report["complete"]
    code, stdout, _ = run_cli(capsys, ["--data-dir", str(tmp_path / "c"), "import", str(out)])
    assert code == 0 and "sources written    0" in stdout and "sources unchanged  5" in stdout, stdout
    assert "sessions unchanged 1" in stdout
    out.write_text(out.read_text() + "{broken\n")
    code, stdout, _ = run_cli(capsys, ["--data-dir", str(tmp_path / "c"), "import", str(out)])
    assert code == 1 and f"skipped line {len(lines) + 1}: not JSON" in stdout
    code, _, err = run_cli(capsys, ["--data-dir", str(tmp_path / "c"), "import", str(tmp_path / "none.jsonl")])
    assert code == 2 and "no export file at" in err
    # A binary file is refused as no export, as through a server (it once failed with a UnicodeDecodeError, exit
    # 1); a line that is not UTF-8 in an export is a skip by number, the rest imported.
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(bytes(range(256)) * 64)
    code, _, err = run_cli(capsys, ["--data-dir", str(tmp_path / "d"), "import", str(garbage)])
    assert code == 2 and "not an agent-memory export" in err and "UnicodeDecodeError" not in err, err
    out.write_bytes(out.read_bytes() + b"\xff\xfe\n")
    code, stdout, _ = run_cli(capsys, ["--data-dir", str(tmp_path / "c"), "import", str(out)])
    assert code == 1 and f"skipped line {len(lines) + 2}: not UTF-8 text" in stdout, stdout


def test_a_session_with_settings_and_no_message_yet_comes_back_configured(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_MEMORY_TRIPLE_EXTRACTOR", "none")
    with Memory(data_dir=tmp_path / "a", tenant="acme") as memory:
        memory.session("planned").configure(window_tokens=9000)
        lines = exported(memory)
    assert json.loads(lines[-1]) == {"type": "end", "sources": 0, "files": 0, "sessions": 1, "messages": 0}
    with Memory(data_dir=tmp_path / "b", tenant="acme") as target:
        report = target.import_export(lines)
        assert report.ok and report.sessions_imported == 1 and report.messages_appended == 0
        assert target.session_configured("planned") and target.session("planned").config.window_tokens == 9000
        assert target.import_export(lines).sessions_unchanged == 1
