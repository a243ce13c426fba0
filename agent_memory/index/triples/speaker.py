"""A turn's first person named: what its speaker says of themself becomes a fact about them.

"I moved to Paris" said by Maria holds the fact (Maria, moved to, Paris); read alone, its subject is "I",
which no extractor keeps as an entity, so a conversation's statements about its own speakers gave no
triples at all. Before extraction (never in the stored text), a turn whose speaker is a name (not a role:
``core/roles.py``) has its first-person words replaced by that name: I, me, myself → Maria, my / mine →
Maria's, I'm → Maria is; 我 → 王芳 (not 我们, "we"). What the turn says of others is left as it is.
"""

from __future__ import annotations

import re

from agent_memory.core.roles import is_role

# Longest first: "I'm" must be read before "I". Curly and straight apostrophes both.
_APOSTROPHE = "['\u2019]"
_ENGLISH = [
    (re.compile(rf"\bI{_APOSTROPHE}m\b|\bI am\b"), "{name} is"),
    (re.compile(rf"\bI{_APOSTROPHE}ve\b"), "{name} has"),
    (re.compile(rf"\bI{_APOSTROPHE}ll\b"), "{name} will"),
    (re.compile(rf"\bI{_APOSTROPHE}d\b"), "{name} would"),
    (re.compile(r"\bI\b"), "{name}"),
    (re.compile(r"\b(?:[Mm]yself|me)\b"), "{name}"),
    (re.compile(r"\b(?:[Mm]y|[Mm]ine)\b"), "{name}'s"),
]
# 我 but not 我们 / 我俩 / 我家 ("we", "the two of us", "our home" read as a place of its own).
_CHINESE = re.compile(r"我(?![们俩家])")
_NAME = re.compile(r"[^\W\d_][\w .'\-\u00b7]{0,63}", re.UNICODE)


def speaker_name(metadata: dict) -> str | None:
    """The turn's speaker when it is a person's name: not a role ("user", "助手"), not empty, not odd text."""
    speaker = str(metadata.get("speaker") or "").strip()
    if not speaker or is_role(speaker) or not _NAME.fullmatch(speaker):
        return None
    return speaker


def first_person_named(text: str, name: str) -> str:
    """``text`` with its speaker's first-person words replaced by ``name`` (see the module's note)."""
    for pattern, replacement in _ENGLISH:
        text = pattern.sub(replacement.format(name=name).replace("\\", "\\\\"), text)
    return _CHINESE.sub(name.replace("\\", "\\\\"), text)
