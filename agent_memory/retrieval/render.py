"""How a prompt is written: the sections' titles, a passage's line (its tag, speaker or title), the
session headings, documents' consecutive chunks joined, and the frame every prompt shares. The
Assembler (``retrieval/assemble.py``) decides what goes in; this module decides how it reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_memory.core.citations import inline, neutralize_tags
from agent_memory.core.citations import tag as citation_tag
from agent_memory.core.prompt_data import display_text
from agent_memory.core.records import MemoryItem
from agent_memory.core.text import has_cjk
from agent_memory.ingest.formats import CODE_LANGUAGES, is_code_file
from agent_memory.retrieval.headings import DOCUMENTS_HEADING, session_label, shown_heading
from agent_memory.retrieval.types import Passage
from agent_memory.retrieval.when import parse_stamp


@dataclass
class Entry:
    """One line (or block) of a section, with the rank that decides what is trimmed first."""

    text: str
    rank: float
    passage: Passage | None = None
    group: str | None = None  # session header (or document) this entry sits under
    group_title: str = ""  # the header line; documents have none
    order: tuple[int, int] = (0, 0)  # position inside its group: (turn seq, chunk index)
    group_year: str = ""  # the year that ends the header line: written only where it changes
    code: bool = False  # its text is code or configuration (shown_text): chunks joined are shown alike


@dataclass
class Sections:
    instructions: str = ""
    facts: list[Entry] = field(default_factory=list)
    summaries: list[Entry] = field(default_factory=list)
    passages: list[Entry] = field(default_factory=list)
    recent: list[Entry] = field(default_factory=list)
    question: str = ""


TITLES = {"facts": "## Known facts", "summaries": "## Summaries", "passages": "## Retrieved passages",
          "recent": "## Recent conversation"}


def tag(source_id: str) -> str:
    # Encoded: no file name can end or split its tag (agent_memory/core/citations.py).
    return citation_tag(source_id)


def is_code(item: MemoryItem) -> bool:
    """Whether ``item`` is code or configuration, whose "#" lines the prompt keeps (escaped). A file
    read as code carries its language; a script or a config file read as plain text (deploy.sh,
    settings.yaml, a Makefile) is known by its name, the source id unless the caller named it
    otherwise. What is said in a conversation is prose, whatever its session is called."""
    if item.kind == "turn":
        return False
    return item.metadata.get("language") in CODE_LANGUAGES or is_code_file(item.source_id)


def shown_text(item: MemoryItem) -> str:
    """``item``'s text as a passage shows it (core/prompt_data.py): prose or code by its source."""
    return display_text(item.text, code=is_code(item))


def item_line(item: MemoryItem, text: str) -> str:
    return f"{tag(item.source_id)} {neutralize_tags(_labelled(item, text))}"


def _labelled(item: MemoryItem, text: str) -> str:
    """The line after its tag: the speaker or title, then the text. Neutralized whole by the caller, not only part by
    part: a speaker named "[S" and the colon written after it read as a tag's start, which the text's "]" closes."""
    speaker = inline(str(item.metadata.get("speaker") or ""))
    if item.kind == "turn" and speaker:
        return f"{speaker}: {text}"
    title = inline(str(item.metadata.get("title") or ""))
    if title and item.kind == "chunk" and title != item.source_id and title.lower() not in text[:120].lower():
        return f"({title}) {text}"
    return text


def session_group(item: MemoryItem) -> tuple[str | None, str]:
    """The session a turn (or a session's summary) sits under, and its heading: the session named
    (two sessions of one day stay apart) with the turn's own day. A session that spans days has one
    heading per day (the key of a heading is the pair), so no turn reads as said on another's day."""
    session = item.metadata.get("session_id")
    if not session or (item.kind != "turn" and item.metadata.get("scope") != "session"):
        return None, ""
    stamp = compact_date(item.metadata.get("timestamp") or "")
    name = inline(session_label(str(session), item.source_id))
    return session, f"### {name}, {inline(stamp)}" if stamp else f"### {name}"


def compact_date(stamp: str) -> str:
    """"1:56 pm on 8 May, 2023" → "8 May 2023": the day in few tokens (turn order gives the sequence
    within a session); a stamp that does not parse stays as it is."""
    if not stamp:
        return ""
    when = parse_stamp(stamp)
    return f"{when.day} {when:%b %Y}" if when else stamp


def question_text(question: str, question_date: str | None) -> str:
    """The question as the prompt states it, with the day it is asked on when known."""
    return question + (f"\n(asked on {question_date})" if question_date else "")


def framed(instructions: str, question: str, passage_lines: list[str]) -> str:
    """Plain passage lines in the frame every prompt has (instructions, the passages' title, the
    question): the evaluation harness packs its baselines this way, so that they and the product
    spend one budget on the same frame."""
    return render(Sections(instructions=instructions, question=question), {"passages": "\n".join(passage_lines)}
                  if passage_lines else None)[0]


def render(sections: Sections, raw: dict[str, str] | None = None) -> tuple[str, dict[str, str]]:
    """The prompt and its parts; ``raw`` gives a section's body as text instead of entries."""
    parts: dict[str, str] = {}
    if sections.instructions:
        parts["instructions"] = "## Instructions\n" + sections.instructions
    for name in ("facts", "summaries", "passages", "recent"):
        entries = getattr(sections, name)
        if raw and name in raw:
            parts[name] = TITLES[name] + "\n" + raw[name]
        elif entries:
            parts[name] = TITLES[name] + "\n" + _render_entries(entries, grouped=name in ("passages", "recent"))
    parts["question"] = "## Question\n" + sections.question
    return "\n\n".join(parts.values()), parts


def _render_entries(entries: list[Entry], grouped: bool) -> str:
    if not grouped:
        return "\n".join(e.text for e in entries)
    # Turns of one session sit together, oldest first, under a heading naming the session and its
    # day (a new heading where the day changes): the date is written once per day, and temporal
    # questions read in order. Chunks of one document
    # sit together in document order; neighbours join up. Beside conversations, documents form one
    # block under their own heading, conversations another (the block whose best passage ranked higher comes first), so
    # that what came from where shows at a glance; inside a block, groups keep their rank order.
    order: list[object] = []
    groups: dict[object, list[Entry]] = {}
    for entry in entries:
        key = entry.group if entry.group is not None else id(entry)
        if key not in groups:
            order.append(key)
            groups[key] = []
        groups[key].append(entry)
    sessions = [key for key in order if groups[key][0].group_title]
    documents = [key for key in order if not groups[key][0].group_title]
    blocks = [documents, sessions] if documents and (not sessions or order.index(documents[0]) < order.index(
        sessions[0])) else [sessions, documents]
    lines: list[str] = []
    year = ""
    for block in blocks:
        if block is documents and documents and sessions:
            lines.append(DOCUMENTS_HEADING)
        for key in block:
            members = sorted(groups[key], key=lambda e: e.order)
            if members[0].group_title:
                for day in _by_heading(members):
                    lines.append(shown_heading(day[0].group_title, day[0].group_year, year))
                    year = day[0].group_year or year
                    lines.extend(e.text for e in day)
            else:
                lines.extend(_join_adjacent(members))
    return "\n".join(lines)


def _by_heading(members: list[Entry]) -> list[list[Entry]]:
    """A session's turns (in order) under their headings, one per day: each heading written once,
    as the packer pays for it, the days in the order of their first turn (a turn stamped out of
    order joins its own day rather than opening a second heading of that day)."""
    days: dict[str, list[Entry]] = {}
    for entry in members:
        days.setdefault(entry.group_title, []).append(entry)
    return list(days.values())


def _join_adjacent(members: list[Entry]) -> list[str]:
    """Consecutive whole chunks of one document become one passage: one tag instead of two,
    the splitter's overlap written once, and a sentence cut at a chunk border whole again."""
    lines: list[str] = []
    previous: Entry | None = None
    for entry in members:
        joinable = (previous is not None and previous.passage is not None and entry.passage is not None
                    and previous.passage.kind == entry.passage.kind == "chunk"
                    and not previous.passage.compressed and not entry.passage.compressed
                    and entry.order[1] == previous.order[1] + 1)
        if joinable:
            # Each chunk was shown on its own: a forgery split at their border ("[" ending one and
            # "S:x]" starting the next, a line of text and "===") is whole only in the joined line.
            # It is shown as the chunks were; the line's own tag, its first "[", stays as written.
            joined = _continue(lines[-1], entry.passage.text)
            lines[-1] = joined[0] + display_text(joined[1:], code=entry.code)
        else:
            lines.append(entry.text)
        previous = entry
    return lines


def _continue(line: str, text: str, min_overlap: int = 8) -> str:
    """``line`` followed by ``text`` minus the part ``line`` already ends with (chunk overlap)."""
    longest = min(len(line), len(text))
    for k in range(longest, min_overlap - 1, -1):
        if line.endswith(text[:k]):
            return line + text[k:]
    joiner = "" if line and text and has_cjk(line[-1]) and has_cjk(text[0]) else " "
    return line + joiner + text
