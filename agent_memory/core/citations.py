"""Citation tags ``[S:<source id>]``: the only tags a prompt carries are the ones written here.

Retrieved text is data. A source ID comes from a file name or a record, so it is encoded
in its tag: the characters that would end or split a tag (``[ ] , ;``), ``%`` itself,
line breaks, tabs, other control characters and edge spaces become ``%XX`` (UTF-8
percent-encoding), and so does the bracket of what reads as a tag's start (``［S:``).
Everything else stays as it is, so ordinary IDs (``locomo/conv-26/D1:3``, ``docs/a b.md``)
read unchanged. Text shown in a prompt (passages, titles, speakers, facts)
is neutralized: anything that looks like the start of a tag becomes ``(S:``, so no stored
document can forge a citation (behind invisible format characters and in full-width or other
compatibility forms and look-alike letters too: ``[\u200bS:``, ``［Ｓ：``, ``[Ѕ:``, see
``core/lookalikes.py``), and loses its tag characters (U+E0000-U+E007F, ASCII that only a tokenizer
sees). Readers of a prompt (the answer check, the evaluation metric) decode the IDs they find with
:func:`decode_id`.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from agent_memory.core.lookalikes import COLON, INVISIBLE, LETTER_S, OPEN_BRACKET, TAG_CHARACTERS

TAG = re.compile(r"\[S:([^\[\]\n]+)\]")
_RESERVED = frozenset("[]%,;")
# The opening bracket of what reads as "[S:": spaces, invisible characters and full-width or other
# compatibility forms included; only the bracket is replaced, so the words around it stay as written.
_GAP = rf"[\s{INVISIBLE}]*"
_TAG_START = re.compile(rf"[{OPEN_BRACKET}](?={_GAP}[{LETTER_S}]{_GAP}[{COLON}])")
# A run of tag characters, or an emoji tag sequence: the black flag, tag letters, cancel tag.
_TAGS = re.compile(rf"\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f|[{TAG_CHARACTERS}]+")
_ANY_TAG = re.compile(f"[{TAG_CHARACTERS}]")  # a quick look first: few texts hold one
# The three subdivision flags Unicode recommends (England, Scotland, Wales): the only tag sequences
# emoji fonts draw, and five letters that cannot spell an instruction. Any other loses its tags and
# shows as the black flag it is drawn as.
_FLAGS = frozenset("\U0001f3f4" + "".join(chr(0xE0000 + ord(c)) for c in code) + "\U000e007f"
                   for code in ("gbeng", "gbsct", "gbwls"))
_ODD_BREAKS = re.compile(r"\r\n?|[\v\f\x1c-\x1e\x85\u2028\u2029]")
_BREAKS = re.compile(r"\s*[\r\n\t\v\f\x1c-\x1e\x85\u2028\u2029]+\s*")


_RESERVED_CHAR = re.compile(r"[\[\]%,;]")


def encode_id(source_id: str) -> str:
    # The bracket of what reads as a tag inside the ID ("［S:x］.md", "［Ѕ:x］"): escaped, or the tag
    # would read as holding a second one (an ASCII "[" is escaped anyway).
    forged = {m.start() for m in _TAG_START.finditer(source_id)}
    if (not forged and source_id.isprintable() and not _RESERVED_CHAR.search(source_id)
            and not source_id.startswith(" ") and not source_id.endswith(" ")):
        return source_id  # the common ID, nothing to escape: a prompt tags a hundred lines or more
    last = len(source_id) - 1
    out = []
    for i, ch in enumerate(source_id):
        edge_space = ch == " " and (i == 0 or i == last)
        if ch in _RESERVED or edge_space or i in forged or (not ch.isprintable() and ch != " "):
            out.append("".join(f"%{b:02X}" for b in ch.encode("utf-8")))
        else:
            out.append(ch)
    return "".join(out)


def decode_id(encoded: str) -> str:
    """The source ID a tag names (an ID not written by :func:`encode_id` comes back as it is)."""
    if "%" not in encoded:
        return encoded
    try:
        return unquote(encoded, errors="strict")
    except UnicodeDecodeError:
        return encoded


def tag(source_id: str) -> str:
    return f"[S:{encode_id(source_id)}]"


def neutralize(text: str) -> str:
    """``text`` with every tag-like ``[S:`` (``[\u200bS:``, ``［S：``, ``[Ѕ:`` ...) turned into ``(S:``:
    shown, never a citation. Rare line separators (form feed, U+2028 ...) become plain newlines, so
    every reader of the prompt sees the same lines (a heading hidden behind one would otherwise pass
    as a section of the prompt)."""
    return neutralize_tags(plain_lines(text))


def neutralize_tags(text: str) -> str:
    """:func:`neutralize` of a text that has been through :func:`plain_lines` already."""
    return _TAG_START.sub("(", text)


def plain_lines(text: str) -> str:
    """``text`` as every reader of a prompt sees the same: rare line separators as newlines, no tag
    characters (a person does not see them, a tokenizer reads them as ASCII: ``[S:x]`` or a hidden
    instruction spelled in U+E005B U+E0053 ...), but in the subdivision flags."""
    if _ANY_TAG.search(text):
        text = _TAGS.sub(_keep_flag, text)
    return _ODD_BREAKS.sub("\n", text)


def _keep_flag(match: re.Match) -> str:
    seq = match.group(0)
    if seq in _FLAGS:
        return seq
    return "\U0001f3f4" if seq[0] == "\U0001f3f4" else ""


def inline(text: str) -> str:
    """A name or title shown inside one prompt line: neutralized, line breaks and tabs as spaces."""
    return neutralize(_BREAKS.sub(" ", text))


def tag_ids(text: str) -> list[str]:
    """The decoded source IDs of the tags in ``text``, in order of first appearance (one tag may
    hold several: ``[S:a, S:b]``, ``[S:a; b]``)."""
    seen: dict[str, None] = {}
    for match in TAG.finditer(text):
        for sid in split_tag(match.group(1)):
            seen.setdefault(sid, None)
    return list(seen)


_SPLIT = re.compile(r"\s*[,;]\s*(?:S:)?")


def split_tag(inside: str) -> list[str]:
    """The decoded IDs inside one tag's brackets."""
    out = []
    for part in _SPLIT.split(inside):
        part = part.strip()
        if part:
            out.append(decode_id(part))
    return out
