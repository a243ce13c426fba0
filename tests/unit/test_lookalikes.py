"""The character classes the prompt's guards read as invisible or as ASCII (core/lookalikes.py) hold
every character Unicode says they should: a format character (category Cf); each character whose
NFKC form is ``[``, ``S``, ``s``, ``:``, ``#``, ``=`` or ``-``; and the look-alikes Unicode's
confusables.txt (UTS #39, 17.0.0) maps to one of them."""

from __future__ import annotations

import re
import sys
import unicodedata

from agent_memory.core.lookalikes import (
    COLON,
    EQUALS,
    HASH,
    HYPHEN,
    INVISIBLE,
    LESS_THAN,
    LETTER_S,
    OPEN_BRACKET,
    SLASH,
    TAG_CHARACTERS,
)

EVERY_CHARACTER = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]  # no surrogates

# Each line of confusables.txt 17.0.0 whose target is one of the marks, the NFKC forms left out
# (the test finds those in unicodedata); "[" and "#" have none. Two are letters the
# underline leaves out: a line of one Coptic ⲻ is a word, not an underline.
CONFUSABLES = {
    "S": "0405 054F 13D5 13DA A4E2 10296 10420 16F3A 1CCE8",
    "s": "01BD 0455 0D1F A731 ABAA 10448 118C1",
    ":": "02D0 02F8 0589 05C3 0703 0704 0903 0A83 16EC 1803 1809 205A 2236 A4FD A789 FE30 11DD9",
    "=": "1400 2E40 30A0 A4FF",
    "-": "02D7 06D4 2010 2011 2012 2013 2043 2212 2796 FE58",
}
UNDERLINE_LETTERS = "\u2cba\u2cbb"  # Ⲻ ⲻ: confusables.txt maps them to "-"


def _members(body: str) -> set[str]:
    return set(re.findall(f"[{body}]", "".join(EVERY_CHARACTER)))


def _confusables(*targets: str) -> set[str]:
    return {chr(int(code, 16)) for target in targets for code in CONFUSABLES.get(target, "").split()}


def test_every_format_character_is_invisible_to_the_guards_and_nothing_visible_is():
    members = _members(INVISIBLE)
    format_chars = {ch for ch in EVERY_CHARACTER if unicodedata.category(ch) == "Cf"}
    assert not sorted(f"U+{ord(ch):04X}" for ch in format_chars - members)
    # Beyond those, only code points this Python's Unicode has not assigned (Unicode 15's additions).
    assert not sorted(f"U+{ord(ch):04X}" for ch in members - format_chars if unicodedata.category(ch) != "Cn")


def test_tag_characters_are_the_tags_block():
    assert _members(TAG_CHARACTERS) == {chr(c) for c in range(0xE0000, 0xE0080)}


def test_every_compatibility_form_and_look_alike_of_a_guarded_mark_is_read_as_its_ascii():
    folded = {ch: unicodedata.normalize("NFKC", ch) for ch in EVERY_CHARACTER}
    for targets, body in (({"["}, OPEN_BRACKET), ({"S", "s"}, LETTER_S), ({":"}, COLON), ({"#"}, HASH),
                          ({"="}, EQUALS), ({"-"}, HYPHEN)):
        forms = {ch for ch, form in folded.items() if form in targets}
        assert targets < forms  # the ASCII itself, and at least one other form
        look_alikes = _confusables(*targets)
        assert not forms & look_alikes  # the table above holds only what NFKC does not map
        assert _members(body) == forms | look_alikes, (targets, sorted(_members(body) ^ (forms | look_alikes)))
    assert not _members(HYPHEN) & set(UNDERLINE_LETTERS)


def test_the_data_fence_marks_are_their_ascii_and_its_compatibility_forms():
    # core/prompt_data.py: no look-alikes beyond NFKC here; a forged fence lacks its block's ID anyway.
    for target, body in (("<", LESS_THAN), ("/", SLASH)):
        forms = {ch for ch in EVERY_CHARACTER if unicodedata.normalize("NFKC", ch) == target}
        assert _members(body) == forms and len(forms) > 1, (target, sorted(forms))
