"""The character classes the prompt's guards read as invisible or as ASCII (core/lookalikes.py) hold
every character Unicode says they should: a format character (category Cf), and each character whose
NFKC form is ``[``, ``S``, ``s``, ``:`` or ``#``."""

from __future__ import annotations

import re
import sys
import unicodedata

from agent_memory.core.lookalikes import COLON, HASH, INVISIBLE, LETTER_S, OPEN_BRACKET

EVERY_CHARACTER = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]  # no surrogates


def _members(body: str) -> set[str]:
    return set(re.findall(f"[{body}]", "".join(EVERY_CHARACTER)))


def test_every_format_character_is_invisible_to_the_guards_and_nothing_visible_is():
    members = _members(INVISIBLE)
    format_chars = {ch for ch in EVERY_CHARACTER if unicodedata.category(ch) == "Cf"}
    assert not sorted(f"U+{ord(ch):04X}" for ch in format_chars - members)
    # Beyond those, only code points this Python's Unicode has not assigned (Unicode 15's additions).
    assert not sorted(f"U+{ord(ch):04X}" for ch in members - format_chars if unicodedata.category(ch) != "Cn")


def test_every_compatibility_form_of_a_tag_or_heading_mark_is_read_as_its_ascii():
    folded = {ch: unicodedata.normalize("NFKC", ch) for ch in EVERY_CHARACTER}
    for targets, body in (({"["}, OPEN_BRACKET), ({"S", "s"}, LETTER_S), ({":"}, COLON), ({"#"}, HASH)):
        forms = {ch for ch, form in folded.items() if form in targets}
        assert targets < forms  # the ASCII itself, and at least one other form
        assert _members(body) == forms, (targets, sorted(forms ^ _members(body)))
