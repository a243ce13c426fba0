"""Headings of the prompt's passages: the documents' block, and each session named by what its turns'
tags do not already say, with its day (agent_memory/retrieval/render.py writes them)."""

from __future__ import annotations

import os

from agent_memory.core.records import MemoryItem
from agent_memory.retrieval.when import parse_stamp

# The heading of the documents' passages in a section that also holds conversation turns, so that no
# document chunk reads as part of the session above it (documents alone need none: nothing to confuse).
DOCUMENTS_HEADING = "### Documents"
_SEPARATORS = "/:#"


def session_label(session: str, source_id: str) -> str:
    """The session's name as its heading shows it: what the turn's tag does not already say. A
    LoCoMo turn ``conv-26/D3:12`` of session ``conv-26:S3`` is headed ``S3`` (the tag names the
    conversation; every heading token is a token less for passages). A session whose turns' tags
    begin with its whole name (an agent's appended messages: ``conv-26:S3/m12``) is headed by its
    last part, ``S3``, as the same conversation ingested as a transcript is: the tags under it say
    the rest, and a full name in every heading took the room of a passage (LoCoMo's agent path read
    0.906 / 0.858 against the transcript's 0.910 / 0.862). A session without a separator, or sharing
    nothing with its tags, is named in full."""
    shared = len(os.path.commonprefix([session, source_id]))
    # Cut after the last separator of the shared part (the session's next character included); a tag
    # that holds the whole name shares all of it, so the cut falls after the name's last separator.
    cut = max(session.rfind(sep, 0, shared + 1) for sep in _SEPARATORS) + 1
    return session[cut:] if cut > 0 and session[cut:] else session


def heading_year(item: MemoryItem) -> str:
    """The year a session heading ends with ("" when its stamp does not parse)."""
    when = parse_stamp(item.metadata.get("timestamp") or "")
    return str(when.year) if when else ""


def shown_heading(title: str, year: str, previous_year: str) -> str:
    """A session heading as written: the year only where it differs from the heading above, which
    pays for naming the session (three tokens) in a prompt where most sessions share a year."""
    suffix = " " + year
    return title[: -len(suffix)] if year and year == previous_year and title.endswith(suffix) else title
