"""`agent-memory inspect` and `GET /v1/sources/{id}`: an item's text cut for the view says so (its whole
length, `text_truncated`), `--full` / `full=true` give the whole text, and a source that is not there
leaves stdout empty; a records file's ID (or path) shows the file: its manifest and the sources it holds;
each chunk's `start`/`end` give its words in the file, whitespace-heavy text too."""

from __future__ import annotations

import json

import httpx
import pytest

from agent_memory.api import create_app
from agent_memory.api.testing import serve_in_thread
from agent_memory.cli import main
from agent_memory.core.config import load_settings
from agent_memory.ingest.upkeep import INSPECT_TEXT_CHARS
from tests.helpers import embedded_cli_env, run_cli

# One paragraph, one chunk, longer than the cut.
LONG = " ".join(f"Pump P-{n} in Hall Nordwerk moves {n * 10} litres a minute." for n in range(1, 13))


# A records file: each record a source of its own, none under the file's ID.
RECORDS = [{"text": "Valve V-7 in Hall Nordwerk was replaced in March."},
           {"id": "valve-v9", "text": "Valve V-9 in Hall Sudwerk leaks at high pressure."}]

# Text laid out with wide indents (a centred list, as a PDF-to-text tool writes it): each run of spaces is one
# token, so a chunk's overlap with the one before reaches back further than 12 characters a token.
CENTRED = "".join(" " * 80 + f"pump {n}\n" for n in range(60))


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    root = tmp_path_factory.mktemp("inspect-cli")
    (root / "corpus").mkdir()
    (root / "corpus" / "pumps.txt").write_text(LONG + "\n")
    (root / "corpus" / "mixed.json").write_text(json.dumps(RECORDS))
    (root / "corpus" / "centred.txt").write_text(CENTRED)
    with pytest.MonkeyPatch.context() as mp:
        embedded_cli_env(mp, root / "data")
        assert main(["ingest", str(root / "corpus"), "--json"]) == 0
        yield root


def test_a_cut_text_says_so_and_full_gives_it_whole(stored, capsys):
    assert len(LONG) > INSPECT_TEXT_CHARS
    code, out, _ = run_cli(capsys, ["inspect", "corpus/pumps.txt"])
    [chunk] = [i for i in json.loads(out)["items"] if i["kind"] == "chunk"]
    assert code == 0 and chunk["text_truncated"] is True
    assert len(chunk["text"]) == INSPECT_TEXT_CHARS and LONG.startswith(chunk["text"])
    assert chunk["chars"] == len(LONG)

    code, out, _ = run_cli(capsys, ["inspect", "--full", "corpus/pumps.txt"])
    [whole] = [i for i in json.loads(out)["items"] if i["kind"] == "chunk"]
    assert code == 0 and whole["text"] == LONG and whole["text_truncated"] is False
    assert whole["chars"] == len(LONG)
    source = (stored / "corpus" / "pumps.txt").read_text()
    assert source[whole["start"]:whole["end"]] == whole["text"]  # the offsets match the whole text


def test_each_chunk_s_offsets_give_its_words_in_whitespace_heavy_text(stored, capsys):
    """The chunk after an overlap longer than the search allowed was given offsets where its words are not."""
    code, out, _ = run_cli(capsys, ["inspect", "--full", "corpus/centred.txt"])
    chunks = [i for i in json.loads(out)["items"] if i["kind"] == "chunk"]
    assert code == 0 and len(chunks) >= 2
    for chunk in chunks:
        assert CENTRED[chunk["start"]:chunk["end"]] == chunk["text"]
    assert [c["start"] for c in chunks] == sorted({c["start"] for c in chunks})


def test_a_missing_source_leaves_stdout_empty(stored, capsys):
    code, out, err = run_cli(capsys, ["inspect", "corpus/nothing.txt"])
    assert code == 1 and out == ""
    assert "nothing stored under 'corpus/nothing.txt'" in err


def test_the_api_answers_the_same_and_the_cli_through_it_too(stored, capsys):
    app = create_app(load_settings(data_dir=stored / "data", triple_extractor="rules"), warm=False)
    with serve_in_thread(app) as url:
        cut = httpx.get(f"{url}/v1/sources/corpus/pumps.txt", timeout=120).json()
        whole = httpx.get(f"{url}/v1/sources/corpus/pumps.txt", params={"full": "true"}, timeout=120).json()
        [cut_chunk] = [i for i in cut["items"] if i["kind"] == "chunk"]
        [whole_chunk] = [i for i in whole["items"] if i["kind"] == "chunk"]
        assert cut_chunk["text_truncated"] is True and cut_chunk["chars"] == len(LONG)
        assert len(cut_chunk["text"]) == INSPECT_TEXT_CHARS
        assert whole_chunk["text"] == LONG and whole_chunk["text_truncated"] is False

        code, out, _ = run_cli(capsys, ["--server", url, "inspect", "corpus/pumps.txt", "--full"])
        assert code == 0 and LONG in [i["text"] for i in json.loads(out)["items"]]
        code, out, err = run_cli(capsys, ["--server", url, "inspect", "corpus/nothing.txt"])
        assert code == 1 and out == "" and "nothing stored under" in err


def _the_file(shown: dict, root) -> list[str]:
    """The file view's checks; the source IDs it holds."""
    assert shown["source_id"] == "corpus/mixed.json" and shown["items"] == []
    manifest = shown["catalog"]
    assert manifest["kind"] == "file" and manifest["path"] == str(root / "corpus" / "mixed.json")
    assert manifest["content_hash"]
    held = [row["source_id"] for row in shown["file_sources"]]
    assert len(held) == len(RECORDS) and "valve-v9" in held and manifest["item_ids"] == held
    assert all(row["items"] >= 1 for row in shown["file_sources"])
    return held


def test_a_records_file_s_id_or_path_shows_the_file_and_its_sources(stored, capsys, monkeypatch):
    code, out, err = run_cli(capsys, ["inspect", "corpus/mixed.json"])
    assert code == 0, err
    held = _the_file(json.loads(out), stored)
    monkeypatch.chdir(stored)
    for given in ("./corpus/mixed.json", str(stored / "corpus" / "mixed.json")):
        code, out, err = run_cli(capsys, ["inspect", given])
        assert code == 0 and _the_file(json.loads(out), stored) == held, err
    for sid in held:  # each source it holds is inspected as a source
        code, out, _ = run_cli(capsys, ["inspect", sid])
        shown = json.loads(out)
        assert code == 0 and shown["items"] and "file_sources" not in shown


def test_the_api_shows_a_records_file_and_the_cli_through_it_too(stored, capsys):
    app = create_app(load_settings(data_dir=stored / "data", triple_extractor="rules"), warm=False)
    with serve_in_thread(app) as url:
        held = _the_file(httpx.get(f"{url}/v1/sources/corpus/mixed.json", timeout=120).json(), stored)
        plain = httpx.get(f"{url}/v1/sources/corpus/pumps.txt", timeout=120).json()
        assert "file_sources" not in plain  # a source's view is as it was
        code, out, err = run_cli(capsys, ["--server", url, "inspect", str(stored / "corpus" / "mixed.json")])
        assert code == 0 and _the_file(json.loads(out), stored) == held, err


def test_a_streamed_file_s_summary_spans_the_whole_file(tmp_path, capsys, monkeypatch):
    """A file over the streaming threshold is read in segments: its document summary's end was the length of
    the segments' summaries joined, no offset into the file; a document read whole spans 0 to its length."""
    from agent_memory.ingest import sources

    monkeypatch.setattr(sources, "STREAM_THRESHOLD_BYTES", 20_000)
    # Seven segments: their summaries joined are long enough to be summarised (twice document_summary_tokens).
    monkeypatch.setattr(sources, "SEGMENT_CHARS", 3_000)
    # Characters of two and three bytes: the span counts characters, not bytes.
    text = "".join(f"Station Nordwerk-{n} recorded {n} mm of rain on day {n}, 北区 pump é{n} ran.\n\n"
                   for n in range(300))
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "rain.txt").write_text(text, encoding="utf-8")
    assert len(text.encode()) > 20_000 > len(text) / 2
    embedded_cli_env(monkeypatch, tmp_path / "data")
    assert run_cli(capsys, ["ingest", str(tmp_path / "corpus"), "--base", str(tmp_path)])[0] == 0
    code, out, _ = run_cli(capsys, ["inspect", "--full", "corpus/rain.txt"])
    items = json.loads(out)["items"]
    chunks = [i for i in items if i["kind"] == "chunk"]
    [summary] = [i for i in items if i["kind"] == "summary" and i["metadata"]["scope"] == "document"]
    assert code == 0 and max(c["end"] for c in chunks) > 3_000  # more than one segment
    assert (summary["start"], summary["end"]) == (0, len(text))
    assert summary["metadata"]["summary_of"] == "corpus/rain.txt"
    assert summary["metadata"]["path"] == chunks[0]["metadata"]["path"]  # as its chunks, as a document's summary
