"""File formats read without stores: PDF, DOCX, Markdown front matter, HTML boilerplate, source code
split by language, and the skip reasons (the extra named, every supported extension listed)."""

from __future__ import annotations

import sys

import pytest

from agent_memory.core.records import Document
from agent_memory.core.tokens import make_counter
from agent_memory.ingest import sources
from agent_memory.ingest.decoding import fallback_now
from agent_memory.ingest.formats import DOCUMENTS_EXTRA, FRONT_MATTER_LINES, html_to_text, split_front_matter
from agent_memory.ingest.sources import SUPPORTED_EXTENSIONS, Skipped, load_path
from agent_memory.ingest.splitting import Splitter
from tests.documents import FRONT, write_docx, write_pdf


def _one(loaded) -> Document:
    [doc] = loaded
    assert isinstance(doc, Document), doc
    return doc


def test_pdf_pages_and_title(tmp_path):
    path = write_pdf(tmp_path / "manual.pdf", [["The Kestrel pump (P-7) moves 40 litres a minute."],
                                                ["Orla Vance services it every Tuesday."]], title="Pump manual")
    doc = _one(load_path(path, tenant="t", source_id="manual.pdf"))
    assert "moves 40 litres" in doc.text and "every Tuesday" in doc.text
    assert doc.title == "Pump manual" and doc.metadata["pages"] == 2


def test_docx_headings_paragraphs_and_tables(tmp_path):
    path = write_docx(tmp_path / "handbook.docx", "Ops handbook", "Night shift",
                      ["Orla Vance runs the night shift at Hall Nordwerk."], [["pump", "litres"], ["P-7", "40"]])
    doc = _one(load_path(path, tenant="t", source_id="handbook.docx"))
    assert doc.title == "Ops handbook"
    assert doc.text.startswith("# Night shift") and "Orla Vance runs the night shift" in doc.text
    assert "P-7 | 40" in doc.text


def test_a_damaged_pdf_is_a_skip_with_its_reason(tmp_path):
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.4\nnot really a pdf\n")
    [skip] = load_path(path, tenant="t")
    assert isinstance(skip, Skipped) and "PDF" in skip.reason


def test_without_the_extra_the_skip_names_it(tmp_path, monkeypatch):
    pdf = write_pdf(tmp_path / "a.pdf", [["text"]])
    docx_path = write_docx(tmp_path / "a.docx", "", "Heading", ["text"], [["a"]])
    monkeypatch.setitem(sys.modules, "pypdf", None)  # import pypdf now raises ImportError
    monkeypatch.setitem(sys.modules, "docx", None)
    for path in (pdf, docx_path):
        [skip] = load_path(path, tenant="t")
        assert isinstance(skip, Skipped) and DOCUMENTS_EXTRA in skip.reason


def test_an_unsupported_extension_lists_every_supported_one(tmp_path):
    path = tmp_path / "image.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n")
    [skip] = load_path(path, tenant="t")
    assert skip.reason.startswith("unsupported extension '.png'")
    assert all(ext in skip.reason for ext in SUPPORTED_EXTENSIONS) and DOCUMENTS_EXTRA in skip.reason
    assert {".pdf", ".docx", ".py", ".ts", ".go", ".java", ".rs", ".c", ".cpp", ".md"} <= SUPPORTED_EXTENSIONS


def test_configuration_scripts_and_named_files_without_extension_are_read_as_text(tmp_path):
    files = {"deploy.yaml": "replicas: 3\nregion: eu-west\n", "pyproject.toml": "[tool.x]\nname = 'kestrel'\n",
             "run.sh": "#!/bin/sh\necho heron\n", "schema.sql": "CREATE TABLE osprey (id int);\n",
             "README": "Project Falcon keeps notes.\n", "Makefile": "all:\n\techo build\n",
             "dockerfile": "FROM python:3.11\n", "LICENSE": "MIT License\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        doc = _one(load_path(tmp_path / name, tenant="t"))
        assert doc.text == text and doc.metadata == {}, name


def test_more_languages_are_marked_with_their_splitter(tmp_path):
    for name, language in {"App.kt": "kotlin", "main.swift": "swift", "Program.cs": "csharp", "tool.rb": "ruby",
                           "index.php": "php", "paper.tex": "latex", "analysis.R": "r"}.items():
        (tmp_path / name).write_text("x = 1\n")
        assert _one(load_path(tmp_path / name, tenant="t")).metadata == {"language": language}, name


def test_an_unknown_name_without_extension_is_skipped_naming_what_is_read(tmp_path):
    (tmp_path / "notes").write_text("Kestrel notes\n")
    [skip] = load_path(tmp_path / "notes", tenant="t")
    assert isinstance(skip, Skipped) and skip.reason.startswith("unsupported extension '(none)'")
    assert "readme" in skip.reason and "makefile" in skip.reason


def test_where_secrets_usually_live_is_never_read_even_when_named(tmp_path):
    for name in (".env", ".env.production", "prod.env", "server.pem", "id.key", "id_rsa", "store.p12", ".netrc"):
        (tmp_path / name).write_text("API_KEY=abc\n")
        [skip] = load_path(tmp_path / name, tenant="t")
        assert isinstance(skip, Skipped) and skip.reason.startswith(f"not read: {name!r} is where secrets"), name
    for name in ("secrets.yaml", "credentials.json", "service-account-prod.json", "key.pem.txt", "Id_Rsa.txt",
                 "terraform.tfvars", "kubeconfig"):
        (tmp_path / name).write_text("private_key: abc\n")
        [skip] = load_path(tmp_path / name, tenant="t")
        assert isinstance(skip, Skipped) and skip.reason.startswith(f"not read: {name!r}"), name
    # A link is judged by the file it points to too: a key behind an innocent name is still the key.
    (tmp_path / "notes.txt").symlink_to(tmp_path / "id_rsa")
    [skip] = load_path(tmp_path / "notes.txt", tenant="t")
    assert isinstance(skip, Skipped) and skip.reason.startswith("not read: 'notes.txt' (a link to 'id_rsa')")
    for name in ("keys.md", "environment.txt", "pemmican.txt", ".env.example", "id_rsa.pub", "secretary.md"):
        # the words alone are not a secret's home; templates and public keys hold none
        (tmp_path / name).write_text("Kestrel\n")
        [loaded] = load_path(tmp_path / name, tenant="t")  # read, or skipped for its extension alone
        assert isinstance(loaded, Document) or loaded.reason.startswith("unsupported extension"), name


def test_a_file_of_invisible_characters_only_is_empty(tmp_path):
    (tmp_path / "zw.txt").write_text("\u200b\u2060\n\ufeff ")
    [skip] = load_path(tmp_path / "zw.txt", tenant="t")
    assert isinstance(skip, Skipped) and skip.reason == sources.EMPTY_FILE


def test_a_file_that_is_not_utf8_is_read_in_the_first_encoding_named_that_reads_it(tmp_path):
    gbk, western = "我昨天去了北京，见到了老朋友张伟。\n", "Grüße aus München, crème brûlée.\n"
    (tmp_path / "日记.txt").write_bytes(gbk.encode("gbk"))
    (tmp_path / "notes.md").write_bytes(western.encode("cp1252"))
    (tmp_path / "plain.txt").write_text("Plain UTF-8 café.\n")
    # Unnamed, neither is guessed: a skip naming the byte and the setting.
    [skip] = load_path(tmp_path / "日记.txt", tenant="t")
    assert isinstance(skip, Skipped) and skip.reason.startswith("invalid UTF-8 at byte 0")
    assert "AGENT_MEMORY_TEXT_ENCODINGS" in skip.reason
    named = ["ascii", "gb18030"]  # ASCII reads neither whole; the next one named does
    doc = _one(load_path(tmp_path / "日记.txt", tenant="t", encodings=named))
    assert doc.text == gbk and doc.metadata == {sources.DECODED_FROM: "gb18030"}
    doc = _one(load_path(tmp_path / "notes.md", tenant="t", encodings=["cp1252"]))
    assert doc.text == western and doc.metadata == {sources.DECODED_FROM: "cp1252"}
    assert sources.DECODED_FROM not in _one(load_path(tmp_path / "plain.txt", tenant="t", encodings=named)).metadata


def test_encodings_that_read_none_of_it_and_a_byte_order_mark_keep_the_skip(tmp_path):
    (tmp_path / "x.txt").write_bytes("caf\xe9".encode("latin-1"))
    [skip] = load_path(tmp_path / "x.txt", tenant="t", encodings=["ascii"])
    assert isinstance(skip, Skipped) and "then ascii (text_encodings)" in skip.reason
    # A UTF-16 file's mark names its encoding: bytes that break it are not read in another.
    (tmp_path / "broken16.txt").write_bytes(b"\xff\xfe" + "ok".encode("utf-16-le") + b"\x00\xd8")
    [skip] = load_path(tmp_path / "broken16.txt", tenant="t", encodings=["cp1252"])
    assert isinstance(skip, Skipped) and skip.reason.startswith("invalid UTF-16")
    # ... nor suggested: the setting cannot read such a file.
    assert "cp1252" not in skip.reason and "AGENT_MEMORY_TEXT_ENCODINGS" not in skip.reason
    [skip] = load_path(tmp_path / "broken16.txt", tenant="t")
    assert "AGENT_MEMORY_TEXT_ENCODINGS" not in skip.reason


def test_the_fallback_a_file_is_read_in_now_is_the_one_reading_it_picks(tmp_path):
    """decoding.fallback_now, which decides whether a file stored read in a fallback is read again, agrees
    with read_path: its own encoding first, then the first of the setting that reads it whole."""
    files = {"gbk.txt": "我们在杭州开会。\n".encode("gbk"), "utf8.txt": "café\n".encode(),
             "utf16.txt": "\ufeffcafé\n".encode("utf-16"), "latin.txt": "caf\xe9\n".encode("latin-1")}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        for names in ([], ["ascii"], ["gb18030", "latin-1"], ["latin-1", "gb18030"]):
            _, read_as = sources.read_path(tmp_path / name, tenant="t", encodings=names)
            assert fallback_now(tmp_path / name, names) == read_as, (name, names)
    assert fallback_now(tmp_path / "gbk.txt", ["ascii", "gb18030"]) == "gb18030"
    assert fallback_now(tmp_path / "latin.txt", ["ascii"]) is None


def test_a_large_file_in_a_named_encoding_is_streamed_in_it(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "STREAM_THRESHOLD_BYTES", 64)
    text = "第一段：我们在杭州开会。\n" * 20
    (tmp_path / "big.txt").write_bytes(text.encode("gbk"))
    [stream] = load_path(tmp_path / "big.txt", tenant="t", encodings=["gb18030"])
    assert isinstance(stream, sources.TextStream) and stream.metadata[sources.DECODED_FROM] == "gb18030"
    assert "".join(segment for _, segment in stream.segments()) == text
    [skip] = load_path(tmp_path / "big.txt", tenant="t")
    assert isinstance(skip, Skipped) and skip.reason.startswith("invalid UTF-8")
    # Named encodings that read none of it are said as a small file's skip says them.
    [skip] = load_path(tmp_path / "big.txt", tenant="t", encodings=["ascii"])
    assert isinstance(skip, Skipped) and "then ascii (text_encodings); save the file as UTF-8" in skip.reason


def test_text_encodings_setting_takes_a_list_and_refuses_what_is_not_a_text_encoding(monkeypatch):
    from agent_memory.core.config import load_settings
    from agent_memory.core.errors import ConfigError
    monkeypatch.setenv("AGENT_MEMORY_TEXT_ENCODINGS", "gb18030, cp1252")
    assert load_settings().text_encodings == ["gb18030", "cp1252"]
    monkeypatch.setenv("AGENT_MEMORY_TEXT_ENCODINGS", '["shift_jis"]')
    assert load_settings().text_encodings == ["shift_jis"]
    for bad in ("klingon", "base64"):
        monkeypatch.setenv("AGENT_MEMORY_TEXT_ENCODINGS", bad)
        with pytest.raises(ConfigError, match=repr(bad)):
            load_settings()


def test_front_matter_becomes_title_and_metadata_and_leaves_the_text(tmp_path):
    path = tmp_path / "plan.md"
    path.write_text(FRONT)
    doc = _one(load_path(path, tenant="t", source_id="plan.md"))
    assert doc.title == "Orion launch plan"
    # With the width of each blanked line (its line end left out), which an export rebuilds the text from.
    assert doc.metadata == {"status": "draft", "version": 3, "published": "2025-05-01", "tags": ["launch", "orion"],
                            FRONT_MATTER_LINES: [len(line) for line in FRONT.split("\n")[:8]]}
    assert "status" not in doc.text and "---" not in doc.text and "2025-05" not in doc.text
    # Blanked, not cut: the body keeps its offsets in the file.
    assert len(doc.text) == len(FRONT) and doc.text.index("# Plan") == FRONT.index("# Plan")


def test_a_byte_order_mark_is_not_text(tmp_path):
    """Editors on Windows save UTF-8 with a BOM: front matter, JSON and plain text read as without one."""
    bom = b"\xef\xbb\xbf"
    (tmp_path / "plan.md").write_bytes(bom + FRONT.encode())
    (tmp_path / "note.txt").write_bytes(bom + b"Tina leads ops.\n")
    (tmp_path / "facts.json").write_bytes(bom + b'[{"text": "The P-7 pump moves 40 litres a minute."}]')
    doc = _one(load_path(tmp_path / "plan.md", tenant="t", source_id="plan.md"))
    assert doc.title == "Orion launch plan" and doc.metadata["status"] == "draft" and "---" not in doc.text
    assert _one(load_path(tmp_path / "note.txt", tenant="t", source_id="note.txt")).text == "Tina leads ops.\n"
    assert "40 litres" in _one(load_path(tmp_path / "facts.json", tenant="t", source_id="facts.json")).text


def test_front_matter_that_is_not_yaml_or_not_a_mapping_stays_text():
    assert split_front_matter("---\n: : [unclosed\n---\nbody").text.startswith("---")
    assert split_front_matter("---\n- a list\n---\nbody").metadata == {}
    assert split_front_matter("no front matter\n---\n").text == "no front matter\n---\n"


@pytest.mark.parametrize("raw, widths", [
    ("---\nk: v\n---\nBody.", [3, 4, 3]), ("---\r\nk: v\r\n---\r\nBody.", [3, 4, 3]),
    ("---\r\nk: v\n---\r\nBody.", None),  # mixed line ends: not kept, the export's text a guess as before
    ("---\nk: v\n---", None),  # no body, no line end after the closing line
])
def test_front_matter_keeps_the_widths_of_its_blanked_lines(raw, widths):
    read = split_front_matter(raw)
    assert read.metadata.get(FRONT_MATTER_LINES) == widths and read.metadata["k"] == "v"


def test_a_front_matter_key_of_the_layout_name_is_kept_as_written():
    read = split_front_matter(f"---\n{FRONT_MATTER_LINES}: mine\n---\nBody.")
    assert read.metadata == {FRONT_MATTER_LINES: "mine"}


def test_html_boilerplate_is_dropped_and_the_title_kept(tmp_path):
    path = tmp_path / "page.html"
    path.write_text("""<html><head><title>Pump P-7</title><style>p{}</style></head><body>
      <header><a href="/">Home</a> | <a href="/shop">Shop</a></header>
      <nav><ul><li>Products</li><li>Careers</li></ul></nav>
      <div role="navigation">Breadcrumbs &gt; Pumps</div>
      <main><article><header><h1>The P-7 pump</h1></header>
        <p>The P-7 pump moves 40 litres a minute.</p></article></main>
      <aside>Related: newsletter signup</aside>
      <form><input name="q"> Search the site</form>
      <footer>Copyright 2025 Acme. Privacy policy.</footer>
      <script>track()</script></body></html>""")
    doc = _one(load_path(path, tenant="t"))
    assert doc.title == "Pump P-7"
    assert "The P-7 pump" in doc.text and "moves 40 litres" in doc.text  # an article's own header stays
    for junk in ("Home", "Careers", "Breadcrumbs", "newsletter", "Search the site", "Copyright", "track()"):
        assert junk not in doc.text


def test_code_is_split_by_its_language_at_definitions_with_exact_offsets(tmp_path):
    # Each function has a blank line inside: prose separators cut there, the Python splitter at `def`.
    functions = [f"def handler_{n}(event):\n" + "".join(f"    value_{i} = event.get('k{i}') or {i}\n" + "\n" * (i == 2)
                                                          for i in range(6)) + "    return value_0\n"
                 for n in range(6)]
    code = "import os\n\n\n" + "\n\n".join(functions)
    path = tmp_path / "handlers.py"
    path.write_text(code)
    doc = _one(load_path(path, tenant="t"))
    assert doc.metadata == {"language": "python"}
    splitter = Splitter(make_counter("cl100k_base"), chunk_tokens=160, overlap_tokens=0)
    spans = splitter.split(doc.text, language="python")
    assert len(spans) >= 3
    for span in spans:
        assert code[span.start:span.end] == span.text  # offsets exact
    starts = [span.text for span in spans[1:]]
    assert all(text.startswith("def handler_") for text in starts)  # cut before a definition
    # Prose separators would have cut inside a function (at blank lines or lines).
    assert [s.text for s in splitter.split(code)] != [s.text for s in spans]


def test_every_listed_language_has_a_splitter():
    splitter = Splitter(make_counter("cl100k_base"), chunk_tokens=40, overlap_tokens=0)
    for language in set(sources.CODE_EXTENSIONS.values()):
        text = "function body here;\n" * 30
        assert splitter.split(text, language=language)


def test_html_inline_tags_run_on_within_their_line_and_blocks_start_lines():
    """Every string was put on a line of its own: "<p>The <b>Kestrel</b> pump</p>" read "The\\nKestrel\\npump"."""
    page = html_to_text("<h1>Pumps</h1><p>The <b>Kestrel</b> pump\n   moves <a href='#'>40 l</a>/min.<br>Next</p>"
                        "<ul><li>one</li><li>two</li></ul><table><tr><td>a</td><td>b</td></tr></table>")
    assert page.text == "Pumps\nThe Kestrel pump moves 40 l/min.\nNext\none\ntwo\na b"
