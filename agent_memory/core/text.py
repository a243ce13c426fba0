"""Language-aware text helpers shared by splitting, keyword search and compression."""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Callable, Sequence

import regex
import snowballstemmer

from agent_memory.core.chinese_words import TIME_WORD_FORMS, cjk_words, keyword_cjk_words, weekday_spellings

# A word is a letter, digit or "_" (what ``\w`` matches) followed by more of them and by combining marks
# (Unicode Mn, Mc): Thai vowels and tone marks, Devanagari vowel signs and viramas, Arabic harakat belong
# to the letter before them, and ``\w+`` cut a word at each ("पिछले" came out as "प", "छल"). A mark never
# starts a word, and variation selectors (an emoji's U+FE0F after a digit: "1️⃣") are none of one.
# Changing this rule changes the stored keyword terms: bump SPARSE_FORMAT (agent_memory/core/sparse.py).
_WORD = regex.compile(r"[\p{L}\p{N}_][[\p{L}\p{N}_\p{Mn}\p{Mc}]--\p{Variation_Selector}]*", regex.V1)
_ASCII_WORD = re.compile(r"\w+")  # the same words in ASCII text (no marks there), with the standard module's speed


def _words_of(lowered: str) -> list[str]:
    """``_WORD``'s matches: most stored text is ASCII, where the standard module finds the same words about twice as fast."""
    return _ASCII_WORD.findall(lowered) if lowered.isascii() else _WORD.findall(lowered)
CJK_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs, as a character-class body
_CJK = re.compile(f"[{CJK_RANGES}]")
# Kana (hiragana; katakana, its phonetic extensions and half-width forms) and the scripts written without
# spaces between words that no segmenter here knows (Thai, Lao, Myanmar, Khmer): a word holding any of
# them is cut further (``_pieces``).
_HIRAGANA = "\u3041-\u309f"
_KATAKANA = "\u30a1-\u30fa\u30fd-\u30ff\u31f0-\u31ff\uff66-\uff6f\uff71-\uff9f"
_PROLONGED = "\u30fc\uff70"  # ー after a kana of either kind lengthens it: すごーい, コーヒー
UNSPACED_RANGES = "\u0e00-\u0eff\u1000-\u109f\ua9e0-\ua9ff\uaa60-\uaa7f\u1780-\u17ff\u19e0-\u19ff"
# Korean writes spaces, but a word carries its particles and endings (서울에서, 서울로, 서울은): read as an unspaced
# run is, in syllable pairs (서울 · 울에 · 에서), the question's 서울 meets every form, as CJK search engines read
# Hangul. Hangul syllables and the compatibility jamo.
HANGUL_RANGES = "\uac00-\ud7a3\u3131-\u318e"
UNSPACED_RANGES += HANGUL_RANGES
_KANA_OR_UNSPACED = re.compile(f"[{_HIRAGANA}{_KATAKANA}{_PROLONGED}{UNSPACED_RANGES}]")
_SEGMENTED = re.compile(f"[{CJK_RANGES}{_HIRAGANA}{_KATAKANA}{_PROLONGED}{UNSPACED_RANGES}]")
_PIECE = re.compile(f"(?P<katakana>[{_KATAKANA}{_PROLONGED}]+)"
                    f"|(?P<unspaced>[{_HIRAGANA}][{_HIRAGANA}{_PROLONGED}]*|[{UNSPACED_RANGES}]+)")
# Sentence ends besides . ! ? and Chinese 。！？: Arabic ؟, the Urdu full stop ۔, Devanagari danda । and
# double danda ॥, Myanmar ။, Ethiopic ።, Armenian ։ and Khmer ។, each followed by a space as "." is; the
# Arabic semicolon ؛ ends a clause as ";" does. Every place that decides where a sentence ends reads these:
# split_sentences, compression (retrieval/compress.py) and the document splitter (ingest/splitting.py).
SENTENCE_ENDS = "؟۔।॥။።։។"
CLAUSE_ENDS = "؛"
# Thai and Lao have no sentence mark: a space between two of their letters ends a sentence or a phrase (words
# run together, so within a sentence there is none). Without this a Thai message is one sentence, never
# compressed: placed whole or dropped.
SPACE_ENDED_SCRIPTS = "\u0e00-\u0eff"
_SENTENCE_END = re.compile(f"(?<=[.!?。！？；;{SENTENCE_ENDS}{CLAUSE_ENDS}])[\"'”’)\\]]*\\s+|(?<=[。！？；])|\\n\\s*\\n"
                           f"|(?<=[{SPACE_ENDED_SCRIPTS}])[^\\S\\n]+(?=[{SPACE_ENDED_SCRIPTS}])")


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


_CHINESE_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
                   "九": 9}


def chinese_number(word: str) -> int:
    """A number written in digits or in Chinese up to 99 (三, 十二, 二十三); 0 for anything else."""
    if word.isdigit():
        return int(word)
    if "十" in word:
        tens, _, ones = word.partition("十")
        return _CHINESE_DIGITS.get(tens, 1) * 10 + _CHINESE_DIGITS.get(ones, 0)
    return _CHINESE_DIGITS.get(word, 0)


_ALL_CJK = re.compile(_CJK.pattern + "+")


def all_cjk(text: str) -> bool:
    """Every character is CJK: ``words`` reads the text as one run, jieba's pieces of it."""
    return bool(_ALL_CJK.fullmatch(text))


def estimated_words(text: str, cjk_chars_per_word: float) -> int:
    """Words of a text without segmenting it: its CJK characters count one word per
    ``cjk_chars_per_word``, the rest is split on whitespace."""
    cjk = len(_CJK.findall(text))
    return round(cjk / cjk_chars_per_word) + len(_CJK.sub(" ", text).split())


@functools.lru_cache(maxsize=50_000)
def cjk_ratio(text: str) -> float:
    """Share of CJK characters; cached, since every candidate's space is decided by it at question time."""
    if not text:
        return 0.0
    return len(_CJK.findall(text)) / max(1, len(text))


def words(text: str) -> list[str]:
    """Lower-cased word tokens: letters with their marks (``_WORD``) for alphabetic scripts, jieba for Chinese
    runs, a katakana or hiragana run whole, a Thai (Lao, Myanmar, Khmer) run whole."""
    return _tokens(text, cjk_words, _whole)


def _whole(run: str) -> list[str]:
    return [run]


def letter_bigrams(run: str) -> list[str]:
    """Each two neighbouring letters of a run written without spaces, a letter with its marks (Thai มี is one
    letter): the keyword terms of a Thai, Lao, Myanmar, Khmer or hiragana run. No segmenter for these scripts is a
    dependency here, and a whole run is a phrase or a sentence that no question repeats; two letters
    shared by the question and a passage are what CJK search engines match where they have no dictionary.
    A run of one letter is its own term."""
    letters: list[str] = []
    for char in run:
        if letters and _is_mark(char):
            letters[-1] += char
        else:
            letters.append(char)
    if len(letters) < 2:
        return letters
    return [first + second for first, second in zip(letters, letters[1:])]


def _is_mark(char: str) -> bool:
    return unicodedata.category(char) in ("Mn", "Mc")


def _lower(text: str) -> str:
    """``text.lower()``, with the dot that lower-casing puts on Turkish İ taken off: "İzmir".lower() is "i̇zmir",
    an i and a combining dot, which a word now keeps; the word is "izmir", as a question typed "Izmir" has it."""
    lowered = text.lower()
    return lowered.replace("i\u0307", "i") if "\u0307" in lowered else lowered


def _tokens(text: str, segment: Callable[[str], list[str]], unspaced: Callable[[str], list[str]]) -> list[str]:
    """``words``' tokens, each Chinese run cut by ``segment`` and each hiragana or Thai (Lao, Myanmar, Khmer)
    run by ``unspaced``; a katakana run is one token."""
    lowered = _lower(text)
    if not _SEGMENTED.search(lowered):  # the common case, in one C call
        return _words_of(lowered)
    out: list[str] = []
    for match in _WORD.finditer(lowered):
        token = match.group(0)
        if _SEGMENTED.search(token):
            out.extend(_pieces(token, segment, unspaced))
        else:
            out.append(token)
    return out


def _pieces(token: str, segment: Callable[[str], list[str]], unspaced: Callable[[str], list[str]]) -> list[str]:
    """The words of a token that holds Chinese, kana or an unspaced script. Japanese mixes kanji, hiragana
    and katakana in one run: jieba's dictionary is Chinese and cut every kana into a character of its own
    (スターバックス as ス / タ / ー ...), and a run of kana alone was one token however long. Here a katakana
    run is one word (a loanword or a name), a hiragana run (particles and inflections written together: の
    ねこの) is cut by ``unspaced`` as a Thai run is, the kanji between them are jieba's, and a token without
    kana or an unspaced script is jieba's whole, as it always was."""
    if not _KANA_OR_UNSPACED.search(token):
        return segment(token)
    out: list[str] = []
    start = 0
    for match in _PIECE.finditer(token):
        if match.start() > start:
            out.extend(_rest(token[start:match.start()], segment))
        out.extend([match.group("katakana")] if match.group("katakana") else unspaced(match.group("unspaced")))
        start = match.end()
    if start < len(token):
        out.extend(_rest(token[start:], segment))
    return out


def _rest(piece: str, segment: Callable[[str], list[str]]) -> list[str]:
    """A piece of a token between its kana and unspaced runs: jieba's words when it holds Chinese, else one word."""
    return segment(piece) if _CJK.search(piece) else [piece]


def split_sentences(text: str) -> list[str]:
    """Sentences, keeping their punctuation; works for English and Chinese."""
    parts = [p.strip() for p in _SENTENCE_END.split(text)]
    return [p for p in parts if p]


STOPWORDS = frozenset(
    """a an the and or but if of to in on at by for with from as is are was were be been being am do does did
    have has had i you he she it we they me him her us them my your his its our their this that these those
    what which who whom whose when where why how there here not no so than too very can could will would shall
    should may might must just about into over after before up down out off again further then once all any
    both each few more most other some such only own same s t don now also
    的 了 是 在 和 与 或 也 都 而 及 就 被 把 这 那 之 为 其 于 以 中 上 下 吗 呢 吧 啊 什么 哪 哪个 哪些 多少 几 谁 怎么 如何 为什么
    """.split()
)


def content_words(text: str) -> list[str]:
    return [w for w in words(text) if w not in STOPWORDS]


# Every spelling of a term that TIME_WORD_FORMS or the weekday rule gives one form (the form itself first).
_SPELLINGS: dict[str, tuple[str, ...]] = {
    form: (form, *sorted(w for w, f in TIME_WORD_FORMS.items() if f == form)) for form in set(TIME_WORD_FORMS.values())}
_SPELLINGS.update(weekday_spellings())


# The Snowball stemmer of the language a script names, by the first letter of a word: Russian for Cyrillic
# (Ukrainian, Serbian, Bulgarian words are cut by its rules too, alike in the question and the passage),
# Greek, Armenian, Arabic (Persian and Urdu likewise), Devanagari as Hindi, Tamil. A Russian noun has six cases
# (Москва, в Москве, из Москвы) and an Arabic word its article and clitics (المكتبة, بالمكتبة): unstemmed, the
# question's form met the passage's only when the two happened to agree. Latin letters beyond ASCII name no
# language (German, French, Turkish ...): those words stay as written.
_SCRIPT_STEMMERS = tuple((re.compile(f"[{ranges}]"), language) for ranges, language in (
    ("\u0400-\u04ff", "russian"), ("\u0370-\u03ff\u1f00-\u1fff", "greek"), ("\u0530-\u058f", "armenian"),
    ("\u0600-\u06ff\u0750-\u077f", "arabic"), ("\u0900-\u097f", "hindi"), ("\u0b80-\u0bff", "tamil")))


@functools.lru_cache(maxsize=None)
def _snowball(language: str):
    # With PyStemmer installed (a dependency) this is the C build of the same Snowball algorithm.
    return snowballstemmer.stemmer(language)


@functools.lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    if word.isascii():
        return _snowball("english").stemWord(word) if word.isalpha() else word
    form = TIME_WORD_FORMS.get(word)
    if form is not None:
        return form
    for script, language in _SCRIPT_STEMMERS:
        if script.match(word):
            return _snowball(language).stemWord(word) or word
    return word


# One hiragana alone is a particle (は, の, を, に) or the inflection after a kanji (飲み): no keyword term.
_KEYWORD_STOPWORDS = STOPWORDS | frozenset(chr(code) for code in range(0x3041, 0x30a0))


def keyword_terms(text: str) -> list[str]:
    """Content words with English words stemmed ("researching" → "research") and Chinese time words in one
    form (TIME_WORD_FORMS: "上月" → "上个月"; weekdays: "上个星期五" → "上周五"): keyword matching units.
    A Thai (Lao, Myanmar, Khmer) or hiragana run gives its letter bigrams (``letter_bigrams``), a katakana run
    is one term, a hiragana alone none (a particle)."""
    return [_stem(w) for w in _tokens(text, keyword_cjk_words, letter_bigrams) if w not in _KEYWORD_STOPWORDS]


# A question's words for the time it is asked, as "now" (a stopword) is: "these days", "currently", 现在. They name
# no time a passage is about, and a passage that happens to hold them ("These days I spend my evenings on yoga",
# a film called "End of Days") is no likelier to answer "Which handset do I have these days?". Left out of a
# question's keyword terms only (``question_terms``); stored texts keep them.
ASKED_NOW = re.compile(r"\b(?:these days|nowadays|at the moment|at present|right now|currently|at this point)\b"
                        r"|现在|目前|如今|眼下|这阵子|这些天", re.IGNORECASE)


# Chinese personal pronouns, as English's ("i", "me", "you", "they" ...) are stopwords: "我一共尝试过几种新运动？"
# matched every short turn of the user's that says 我 ("给我讲讲蓝帐汗国吧。"), and BM25 favours short ones. Left
# out of a question's keyword terms only (``question_terms``), as ``ASKED_NOW`` is: stored texts keep them (no
# keyword format change), and a question never asks for them.
QUESTION_PRONOUNS = frozenset("我 我们 咱 咱们 你 你们 您 他 她 它 他们 她们 它们".split())


# How a Chinese question asks for a count or a kind, as English's "how", "which" and "ever" are stopwords: 几 or
# 多少 with its measure word (几场演唱会, 多少次, 几种新运动), 一共 / 总共 (altogether), 些 (哪些, 做了些什么) and the
# experiential 过 (去过, 做过, 尝试过). None names what answers the question, and the statements that answer it
# rarely say them: "我一共去过几场演唱会？" is answered by "昨晚去看了李健的现场", while 过 and 几种 matched the
# off-topic lectures ("…经过几种演变"). English's "how many" / "how much" likewise ("many" matched any "many people
# came"). Question side only (``question_terms``), as ``ASKED_NOW`` is.
_COUNT_ASKED = re.compile(r"(?:几|多少)[个道场种门本次位件家部首篇趟回项座所张条只辆台双杯碗顿份样类节堂届]"
                          r"|\bhow (?:many|much)\b", re.IGNORECASE)
_QUESTION_FRAME = frozenset("过 些 一共 总共".split())
# Words whose 过 is no aspect marker: the word itself is the term.
_WORDS_WITH_GUO = frozenset("难过 错过 经过 通过 超过 不过 越过 度过 路过 穿过 跨过 放过 改过 胜过 闯过 熬过 透过 罪过 太过 "
                            "过过 反过 记过 悔过 功过 大过 小过 少过 多过".split())


def _unframed(term: str) -> str:
    """A Chinese question's term without the experiential 过 jieba left on its verb (去过 → 去)."""
    if len(term) == 2 and term.endswith("过") and has_cjk(term[0]) and term not in _WORDS_WITH_GUO:
        return term[0]
    return term


def question_terms(question: str) -> list[str]:
    """A question's keyword terms: ``keyword_terms`` of it without its words for the time it is asked
    (``ASKED_NOW``), without Chinese personal pronouns (``QUESTION_PRONOUNS``) and without the words a Chinese
    question asks for a count or a kind with (``_COUNT_ASKED``, ``_QUESTION_FRAME``). The keyword route's query
    and the reranker's term coverage read a question by these."""
    asked = _COUNT_ASKED.sub(" ", ASKED_NOW.sub(" ", question))
    return [_unframed(t) for t in keyword_terms(asked) if t not in QUESTION_PRONOUNS and t not in _QUESTION_FRAME]


@functools.lru_cache(maxsize=20000)
def keyword_set(text: str) -> frozenset[str]:
    """A passage's distinct keyword terms, kept: the same passages come back question after question."""
    return frozenset(keyword_terms(text))


_ASCII_LETTER = re.compile(r"[a-z]")


@functools.lru_cache(maxsize=100_000)
def _cjk_run_terms(run: str) -> frozenset[str]:
    """The keyword terms of one token that holds Chinese, kana or an unspaced script (``_pieces``)."""
    return frozenset(_stem(w) for w in _pieces(run, keyword_cjk_words, letter_bigrams) if w not in _KEYWORD_STOPWORDS)


@functools.lru_cache(maxsize=20000)
def _split_terms(text: str) -> tuple[frozenset[str], tuple[str, ...], str]:
    """A text's keyword terms outside Chinese runs, its Chinese runs with Latin letters, and its other
    Chinese runs joined by NULs (one substring test says whether any holds a piece): the runs are
    left unsegmented until a question needs them. A run holding kana or Thai (Lao, Myanmar, Khmer) is
    read so too: each of its terms (a katakana run, two letters) is a piece of it."""
    lowered = _lower(text)
    if not _SEGMENTED.search(lowered):  # the common case: distinct words, stemmed by C-level map
        return frozenset(map(_stem, set(_words_of(lowered)).difference(STOPWORDS))), (), ""
    plain: set[str] = set()
    latin: list[str] = []
    other: list[str] = []
    for token in _WORD.findall(lowered):
        if not _SEGMENTED.search(token):
            if token not in STOPWORDS:
                plain.add(_stem(token))
        else:
            (latin if _ASCII_LETTER.search(token) else other).append(token)
    return frozenset(plain), tuple(latin), "\x00".join(other)


def joined_terms(text: str) -> str:
    """A text's keyword set as stored with its item (``MemoryItem.terms``): sorted, space-joined."""
    return " ".join(sorted(keyword_set.__wrapped__(text)))


def terms_in(texts: Sequence[str], terms: frozenset[str], known: Sequence[str | None] | None = None,
             ) -> list[frozenset[str]]:
    """``terms & keyword_set(text)`` for each text. ``known``: per text, its keyword set when the
    caller has it, as ``joined_terms`` stores it with the item, else None (each of the question's
    few terms is looked up in that string: no set is built per passage). A text without one is read here,
    without segmenting the Chinese runs that cannot hold one of ``terms``: jieba's words of a run are
    pieces of it, so a run holds a term only if one of the term's spellings (_SPELLINGS: 上周五 is also
    上个星期五) is a piece of the run, and only a run with
    Latin letters yields a stemmed word. At 100k items most candidates come back cold, and
    segmenting every one cost the reranker up to 190 ms on a question."""
    # A Chinese term is looked for as each of its spellings: "上个月" is also the term of a run holding "上月".
    pieces = [_SPELLINGS.get(t, (t,)) for t in terms if not (t.isascii() and t.isalpha())]
    out = []
    for row, text in enumerate(texts):
        stored = known[row] if known is not None else None
        if stored is not None:
            padded = f" {stored} "
            out.append(frozenset(t for t in terms if f" {t} " in padded))
            continue
        plain, latin, other = _split_terms(text)
        found = terms & plain
        for run in latin:
            found |= terms & _cjk_run_terms(run)
        present = [ways for ways in pieces if any(w in other for w in ways)] if other else None
        for run in other.split("\x00") if present else ():
            if any(w in run for ways in present for w in ways):
                found |= terms & _cjk_run_terms(run)
        out.append(found)
    return out
