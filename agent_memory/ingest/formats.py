"""File formats beyond plain text: PDF and DOCX (the ``documents`` extra; the other office formats, e-mail
and notebooks are in ``office_formats.py`` and ``mail_and_notebooks.py``), Markdown front matter,
HTML without its boilerplate, and source code (named by extension; split by ``agent_memory/ingest/splitting.py``).

Each reader returns text and what the file says about itself (title, metadata), or raises
``FormatError`` with a reason the job report shows as a skip (``Skipped``).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePath

import yaml
from bs4 import BeautifulSoup, CData, NavigableString, PageElement, Tag

# The optional extra that brings the PDF, DOCX, PPTX, XLSX and RTF parsers (pyproject.toml).
DOCUMENTS_EXTRA = "agent-memory[documents]"
# What the extra's parsers read; EPUB, ODT, e-mail and notebooks need only the standard library.
EXTRA_EXTENSIONS = (".pdf", ".docx", ".pptx", ".xlsx", ".rtf")
MARKDOWN_EXTENSIONS = {".md", ".markdown"}
# Source code, by extension: the language of langchain-text-splitters' splitter (agent_memory/ingest/splitting.py).
CODE_EXTENSIONS = {
    ".py": "python", ".pyi": "python",
    ".js": "js", ".mjs": "js", ".cjs": "js", ".jsx": "js",
    ".ts": "ts", ".tsx": "ts", ".mts": "ts", ".cts": "ts",
    ".go": "go", ".java": "java", ".rs": "rust",
    ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp",
    ".cs": "csharp", ".kt": "kotlin", ".kts": "kotlin", ".scala": "scala", ".swift": "swift",
    ".php": "php", ".rb": "ruby", ".lua": "lua", ".r": "r", ".hs": "haskell", ".ex": "elixir",
    ".exs": "elixir", ".ps1": "powershell", ".psm1": "powershell", ".proto": "proto", ".sol": "sol",
    ".tex": "latex",
}
# Plain text by another name: the configuration, data, scripts and markup a folder of notes or a
# repository holds. Read as prose. Secrets' usual homes (.env, .pem, .key) are left out on purpose:
# what is stored is recalled into prompts.
PLAIN_TEXT_EXTENSIONS = {
    ".tsv", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf", ".properties", ".xml", ".org", ".adoc",
    ".asciidoc", ".textile", ".sh", ".bash", ".zsh", ".fish", ".bat", ".sql", ".css", ".scss", ".less",
    ".gradle", ".cmake", ".srt", ".vtt",
}
# Files whose name alone says they are text (a repository's README, its Makefile), matched without
# regard to case; anything else without an extension is skipped as unsupported.
TEXT_FILE_NAMES = {
    "readme", "license", "licence", "copying", "notice", "authors", "contributors", "contributing",
    "changelog", "changes", "news", "history", "todo", "install", "makefile", "gnumakefile",
    "dockerfile", "containerfile", "procfile", "jenkinsfile", "vagrantfile", "gemfile", "rakefile",
    "brewfile", "justfile",
}
# Files whose text is code or configuration: every extension above but Markdown's, and the build and
# container files. In none is a line's "#" a Markdown heading (it is a comment, a directive, a CSS
# selector, an Org keyword, a Textile list item), so the prompt escapes such marks instead of dropping
# them (``core/prompt_data.py``). README, CHANGELOG and the other names above are often Markdown: prose.
CODE_FILE_NAMES = {"makefile", "gnumakefile", "dockerfile", "containerfile", "procfile", "jenkinsfile",
                   "vagrantfile", "gemfile", "rakefile", "brewfile", "justfile"}
CODE_LANGUAGES = set(CODE_EXTENSIONS.values())
# HTML that is navigation or page furniture, never the page's content.
BOILERPLATE_TAGS = ["script", "style", "noscript", "template", "nav", "aside", "form", "button", "iframe", "svg",
                    "select", "dialog"]
# Elements that start a line of their own (the rest flow inline, as a browser lays them out).
BLOCK_TAGS = {"p", "div", "li", "ul", "ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote",
              "table", "tr", "section", "article", "main", "header", "footer", "figure", "figcaption", "hr",
              "address", "details", "summary", "caption", "body"}
_SPACES = re.compile(r"\s+")
_SPACES_IN_LINE = re.compile(r"[ \t\f\v]+")
BOILERPLATE_ROLES = {"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar"}
# A PDF, an office file, an e-book, an e-mail or a notebook is parsed whole: above this size it is skipped
# with its size named.
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
# YAML front matter: '---' on the first line, closed by '---' or '...' on a line of its own.
# Blanked in the text (offsets stay offsets into the file), its values in title and metadata; the metadata key
# below keeps the width of each blanked line, so an export rebuilds the text exactly as stored (text_verified).
FRONT_MATTER_LINES = "front_matter_lines"
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?\r?\n)?(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)


# A PDF's header may follow some junk, within its first kilobyte (the PDF spec's allowance, which pypdf keeps).
PDF_MAGIC = b"%PDF-"
PDF_HEADER_WINDOW = 1024


# Where secrets usually live: private keys, certificates, keystores, environment files, credentials.
# Never read, even when named: what is stored is recalled into prompts (and, through a server, sent).
SECRET_EXTENSIONS = {".env", ".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx", ".gpg", ".asc",
                     ".ppk", ".tfvars", ".htpasswd"}
SECRET_FILE_NAMES = {".env", ".netrc", ".pgpass", ".npmrc", ".pypirc", ".git-credentials", ".htpasswd", "id_rsa",
                     "id_dsa", "id_ecdsa", "id_ed25519", "credentials", "kubeconfig"}
# Names whose stem says so whatever the format: secrets.yaml, credentials.json, service-account-prod.json,
# id_rsa.pub's private twin copied as id_rsa.txt, key.pem.txt.
_SECRET_NAME = re.compile(r"^(?:secrets?|credentials|service[-_]account.*|kubeconfig.*|id_(?:rsa|dsa|ecdsa|ed25519))"
                          r"(?:\.[a-z0-9]+)?$|\.(?:pem|key|p12|pfx|ppk)\.[a-z0-9]+$")
# Templates that hold no secret by convention, and public keys: read.
_SECRET_TEMPLATES = (".example", ".sample", ".template", ".dist", ".pub")


def secret_file(path: Path) -> str | None:
    """The skip reason of a file whose name says it usually holds secrets, else None. A link is judged by
    the file it points to as well: ``notes.txt -> ~/.ssh/id_rsa`` is the key."""
    for candidate in dict.fromkeys((path, path.resolve())):
        name, ext = candidate.name.lower(), candidate.suffix.lower()
        if name.endswith(_SECRET_TEMPLATES):
            continue
        if (name in SECRET_FILE_NAMES or ext in SECRET_EXTENSIONS or name.startswith(".env.")
                or _SECRET_NAME.search(name)):
            which = repr(path.name) if candidate == path else f"{path.name!r} (a link to {candidate.name!r})"
            return (f"not read: {which} is where secrets usually live (keys, certificates, passwords), and what "
                    "is stored is recalled into prompts; to store its text on purpose, copy it into a .txt file")
    return None


def file_extension(path: Path) -> str:
    """The extension a file is read by: its own, lower-cased, or ``.txt`` for a name in
    ``TEXT_FILE_NAMES`` (``README``, ``Makefile``)."""
    ext = path.suffix.lower()
    if not ext and path.name.lower() in TEXT_FILE_NAMES:
        return ".txt"
    return ext


def is_code_file(name: str) -> bool:
    """Whether the file ``name`` (a path, or a source id that is one) holds code or configuration."""
    path = PurePath(name.replace("\\", "/"))
    ext = path.suffix.lower()
    return ext in CODE_EXTENSIONS or ext in PLAIN_TEXT_EXTENSIONS or (not ext and path.name.lower() in CODE_FILE_NAMES)


class FormatError(Exception):
    """The file cannot be read in its format (the reason becomes the file's skip)."""


@dataclass
class Read:
    text: str
    title: str = ""
    metadata: dict = field(default_factory=dict)


@dataclass
class Skipped:
    """A file (or one record of it) not read, and why: a line of the job report, never an exception."""

    path: str
    reason: str


def _missing_extra(kind: str, module: str) -> FormatError:
    return FormatError(f"{kind} files need the optional parsers: pip install '{DOCUMENTS_EXTRA}' "
                       f"(module {module!r} is not installed)")


def read_pdf(path: Path) -> Read:
    """The text layer of every page (pypdf), pages apart by a blank line; the title from the PDF's info."""
    try:
        from pypdf import PdfReader
    except ImportError:
        raise _missing_extra("PDF", "pypdf") from None
    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted and not reader.decrypt(""):
            raise FormatError("encrypted PDF (a password is needed to read it)")
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
        info = reader.metadata
        title = str(info.title or "").strip() if info is not None else ""
    except FormatError:
        raise
    except Exception as exc:  # noqa: BLE001 - pypdf raises many types on a damaged file
        raise FormatError(f"unreadable PDF: {type(exc).__name__}: {exc}") from None
    text = "\n\n".join(p for p in pages if p)
    if not text.strip():
        raise FormatError("PDF without a text layer (scanned pages need OCR first)")
    return Read(text, title, {"pages": len(pages)})


def read_docx(path: Path) -> Read:
    """Paragraphs and tables in document order (python-docx); headings as Markdown headings, so the
    splitter keeps each with its section; the title from the document's properties."""
    try:
        import docx
        from docx.table import Table
        from docx.text.paragraph import Paragraph
    except ImportError:
        raise _missing_extra("DOCX", "python-docx") from None
    try:
        document = docx.Document(str(path))
        blocks: list[str] = []
        for block in document.iter_inner_content():
            if isinstance(block, Paragraph):
                text = block.text.strip()
                style = (block.style.name if block.style is not None else "") or ""
                level = style.removeprefix("Heading ").strip()
                if text and style.startswith("Heading ") and level.isdigit():
                    text = "#" * min(int(level), 6) + " " + text
                elif text and style == "Title":
                    text = "# " + text
            elif isinstance(block, Table):
                text = "\n".join(" | ".join(cell.text.strip() for cell in row.cells) for row in block.rows)
            else:
                continue
            if text:
                blocks.append(text)
        title = (document.core_properties.title or "").strip()
    except Exception as exc:  # noqa: BLE001 - a damaged zip or XML raises many types
        raise FormatError(f"unreadable DOCX: {type(exc).__name__}: {exc}") from None
    text = "\n\n".join(blocks)
    if not text.strip():
        raise FormatError("DOCX without text")
    return Read(text, title)


def as_text_if_infinite(value, spelling: dict[str, str]):
    """``value``, or, for a float no store keeps (Infinity, NaN: no JSON number, and the vector engine's
    payload refuses them), its text in the file's own syntax (``spelling``: YAML_SPELLING, JSON_SPELLING).
    Kept as text rather than dropped: the file is still ingested, its author's value stays visible in the
    stored metadata and an equality filter on that text finds it; nothing of the file is silently lost."""
    if isinstance(value, float) and not math.isfinite(value):
        return spelling["nan" if math.isnan(value) else "inf" if value > 0 else "-inf"]
    return value


YAML_SPELLING = {"nan": ".nan", "inf": ".inf", "-inf": "-.inf"}
JSON_SPELLING = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def _scalar(value):
    """A front matter value as stored metadata: scalars as they are (``.inf`` and ``.nan`` as that text),
    dates as ISO text (the date filters read them), lists of scalars as lists; anything else is left out."""
    if isinstance(value, bool | int | float | str):
        return as_text_if_infinite(value, YAML_SPELLING)
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, list) and all(isinstance(v, bool | int | float | str) for v in value):
        return [as_text_if_infinite(v, YAML_SPELLING) for v in value]
    return None


def split_front_matter(raw: str) -> Read:
    """Markdown with YAML front matter: the title and metadata it gives, and the text with the front
    matter blanked (spaces, newlines kept), so chunk offsets stay offsets into the file and nothing
    of it reaches a chunk or a triple. YAML that does not parse, or is not a mapping, is left as text."""
    match = _FRONT_MATTER.match(raw)
    if not match:
        return Read(raw)
    try:
        data = yaml.safe_load(match.group(1) or "")
    except yaml.YAMLError:
        return Read(raw)
    if not isinstance(data, dict):
        return Read(raw)
    metadata = {}
    for key, value in data.items():
        kept = _scalar(value)
        if isinstance(key, str) and kept is not None and key != "title":
            metadata[key] = kept
    title = data.get("title")
    blank = re.sub(r"[^\r\n]", " ", match.group(0))
    if (widths := _line_widths(blank)) is not None and FRONT_MATTER_LINES not in metadata:
        metadata[FRONT_MATTER_LINES] = widths
    return Read(blank + raw[match.end():], str(title).strip() if title is not None else "", metadata)


def _line_widths(blank: str) -> list[int] | None:
    """The width of each line of blanked front matter, line ends left out, where its lines end alike (all LF or
    all CRLF, the last one too); else None (a lone CR, mixed line ends: not rebuilt, its export a guess)."""
    lines = blank.split("\n")
    crlf = blank.count("\r\n")
    if lines[-1] or "\r" in blank.replace("\r\n", "") or crlf not in (0, len(lines) - 1):
        return None
    return [len(line) - (1 if crlf else 0) for line in lines[:-1]]


def blanked_front_matter(widths: object, newline: str) -> str | None:
    """The blanks ``split_front_matter`` put where the front matter was, from its ``FRONT_MATTER_LINES``
    metadata, each line ended by ``newline``; None when ``widths`` is no list of line widths."""
    if not isinstance(widths, list) or not all(type(w) is int and w >= 0 for w in widths):
        return None
    return "".join(" " * width + newline for width in widths)


def _laid_out_text(root: Tag) -> str:
    """The text as a browser lays it out: inline tags (<b>, <a>, <span>) run on within their line and the
    source's line breaks inside a paragraph are spaces; a block element or <br> starts a line (a
    ``get_text("\\n")`` put every string on a line of its own: "The\\nKestrel\\npump"). One walk, the tree
    unchanged (inserting a line break beside each of a page's blocks costs the square of their number)."""
    out: list[str] = []
    stack: list[tuple[PageElement | str, bool]] = [(root, False)]
    while stack:
        node, in_pre = stack.pop()
        if isinstance(node, str) and not isinstance(node, NavigableString):
            out.append(node)  # a line break or a cell's space, pushed below
        elif isinstance(node, NavigableString):
            if type(node) in (NavigableString, CData):  # not comments, doctypes, processing instructions
                out.append(str(node) if in_pre else _SPACES.sub(" ", str(node)))
        elif isinstance(node, Tag):
            if node.name == "br":
                out.append("\n")
                continue
            if node.name in BLOCK_TAGS:
                out.append("\n")
                stack.append(("\n", in_pre))
            elif node.name in ("td", "th"):
                stack.append((" ", in_pre))
            inside = in_pre or node.name == "pre"
            stack.extend((child, inside) for child in reversed(node.contents))
    return "".join(out)


def html_to_text(raw: str) -> Read:
    """The page's text without its boilerplate: scripts, styles, navigation, forms, asides, and a
    header or footer that is the page's own (one inside an article or main is the content's).
    BeautifulSoup over lxml: the standard library's parser took time growing with the square of a page's ``<br>``
    tags (a 3 MB page of 40,000 paragraphs: over five minutes; lxml: seconds)."""
    soup = BeautifulSoup(raw, "lxml")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup(BOILERPLATE_TAGS):
        tag.decompose()
    for tag in soup.find_all(attrs={"role": True}):
        if not tag.decomposed and str(tag.get("role", "")).lower() in BOILERPLATE_ROLES:
            tag.decompose()
    for tag in soup(["header", "footer"]):
        if not tag.decomposed and tag.find_parent(["article", "main"]) is None:
            tag.decompose()
    if soup.title:
        soup.title.decompose()
    lines = (_SPACES_IN_LINE.sub(" ", line).strip() for line in _laid_out_text(soup).splitlines())
    return Read("\n".join(line for line in lines if line), title)
