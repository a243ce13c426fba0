"""Characters that read as others, for the guards that keep stored text from forging the prompt's
structure: its citation tags (``core/citations.py``) and its section headings
(``retrieval/render.py``). Each constant is a regex character-class body.

A reader of the prompt (a person, a model's tokenizer) does not see an invisible format character,
and reads a compatibility form (full-width ``［Ｓ：``, mathematical ``𝐒``) as the ASCII it stands
for, so ``[\\u200bS:x]`` and ``［S：x］`` read as a tag and ``\\u200b## Question`` as a heading. The
guards treat format characters as absent and these forms as their ASCII: they match the forgeries
and neutralize them as they do the plain ones. Text that forms no forgery is left as it is: a
zero-width joiner in an emoji, a zero-width non-joiner in Persian, full-width punctuation in Chinese.
"""

from __future__ import annotations

# Unicode category Cf (format): soft hyphen, Arabic number signs, zero-width space and joiners, the
# bidirectional controls, word joiner and invisible operators, BOM, interlinear annotation marks,
# Egyptian hieroglyph format controls, shorthand format controls, musical format marks, tag
# characters. Complete for Unicode 15 (tests/unit/test_lookalikes.py checks it against unicodedata).
INVISIBLE = ("\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
             "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
             "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f")

# Every character whose NFKC form is the one named: what reads as it (tests check these too).
OPEN_BRACKET = r"\[\ufe47\uff3b"  # [ ﹇ ［
COLON = r":\ufe13\ufe55\uff1a"  # : ︓ ﹕ ：
HASH = r"#\ufe5f\uff03"  # # ﹟ ＃
# S and s: Ⓢ ⓢ Ｓ ｓ, ſ ˢ ₛ, the mathematical alphanumerics (bold, italic, script ...) and 🅂.
LETTER_S = ("Ss\u017f\u02e2\u209b\u24c8\u24e2\uff33\uff53"
            "\U0001d412\U0001d42c\U0001d446\U0001d460\U0001d47a\U0001d494\U0001d4ae\U0001d4c8\U0001d4e2"
            "\U0001d4fc\U0001d516\U0001d530\U0001d54a\U0001d564\U0001d57e\U0001d598\U0001d5b2\U0001d5cc"
            "\U0001d5e6\U0001d600\U0001d61a\U0001d634\U0001d64e\U0001d668\U0001d682\U0001d69c\U0001f142")
