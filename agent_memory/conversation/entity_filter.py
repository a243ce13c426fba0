"""Which candidate names are names: the rules that keep filler and units out of a session's key entities.

The extractors (``significance.entities``) propose capitalized words, all-caps codes and words jieba tags
as proper nouns; each rule here says where that evidence proves nothing:

* A capital at the start of a sentence is the sentence's, not the word's ("Understood.", "Budget is
  900 USD."). There the word counts when spaCy's English model, reading the sentence, agrees: a word
  its lexicon lists as an ordinary English word must be tagged a proper noun *and* recognized as part
  of a name ("Lisbon will be warm." stays, "Receipt sent to Maria." loses "Receipt"); a word the lexicon
  does not know must be tagged a noun ("Kubernetes restarted the pod." stays, "Traceback (most recent
  call last):" goes). A word also capitalized mid-sentence in the same message needs no model.
* An all-caps code standing next to a number qualifies the number: a currency or unit ("900 USD",
  "USD 900", "50 MB") or the prefix of a numbered reference ("RFC 2616"). The number is what the
  conversation keeps (``significance.numbers``); the code alone names nothing. spaCy's unit symbols
  (MB, GB, ...) are units wherever they stand.
* A word jieba's dictionary tags as a person, place or other proper noun, standing in its clause with
  nothing but pronouns, adverbs, particles and interjections, is a reply (谢谢。明白了。拜拜): the
  dictionary tagged 谢谢 and 明白 as names, and nothing in the sentence says they are. Names jieba finds
  outside its dictionary (王芳, 张伟) are not subject to this.
"""

from __future__ import annotations

import functools

from agent_memory.core.english_nlp import is_english_word, load_nlp

# spaCy's entity labels that name something (not DATE, MONEY, QUANTITY, CARDINAL, ...).
NAME_LABELS = frozenset({"PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW",
                         "LANGUAGE"})
# Skipped when looking back for what starts a sentence: spaces, opening quotes and brackets, markdown.
_LEADING = frozenset(" \t\"'“‘([{*_`>#-•+")
_SENTENCE_END = frozenset(".!?:;…。！？；：")
# The words of a sentence the model reads for its first word: spaCy's small model looks a few tokens
# either side, so the rest of a long sentence would only cost time.
_SNIPPET_WORDS = 12
# Tokens that may share a clause with a reply word: pronouns, adverbs, modal particles, interjections,
# onomatopoeia, aspect and structural particles, and jieba's catch-all for punctuation and spaces.
_REPLY_COMPANIONS = frozenset({"r", "d", "y", "e", "o", "zg", "ul", "uz", "ug", "uv", "ud", "uj", "x"})
_PROPER = frozenset({"nr", "ns", "nt", "nz"})
_CLAUSE_BREAKS = frozenset("，,。.！!？?；;：:、\n~～…")


@functools.lru_cache(maxsize=1)
def _unit_symbols() -> frozenset[str]:
    from spacy.lang.char_classes import UNITS

    return frozenset(UNITS.split("|")) | frozenset(UNITS.split())


def is_unit(token: str) -> bool:
    """An all-caps unit symbol of spaCy's list (MB, GB, KB, TB)."""
    return token in _unit_symbols()


def starts_sentence(text: str, start: int) -> bool:
    """Whether the word at ``start`` opens a sentence, a line or a list item of ``text``."""
    i = start
    while i > 0 and text[i - 1] in _LEADING:
        i -= 1
    if i and text[i - 1] == "]" and text.startswith("[") and text.find("]") == i - 1:
        return True  # after a line's tag: "[user] Understood." (``messages.readable``)
    return i == 0 or text[i - 1] in _SENTENCE_END or text[i - 1] == "\n"


def qualifies_number(text: str, start: int, end: int) -> bool:
    """Whether the all-caps code ``text[start:end]`` stands right next to a number (one space at most)."""
    token = text[start:end]
    if not (token.isalpha() and token.isupper()):
        return False
    if is_unit(token):
        return True
    before = text[max(0, start - 2):start]
    after = text[end:end + 2]
    return (before[-1:].isdigit() or (before[-1:] == " " and before[:1].isdigit())
            or after[:1].isdigit() or (after[:1] == " " and after[1:2].isdigit()))


def sentence_start(text: str, start: int) -> str:
    """The sentence of ``text`` from ``start`` on, at most ``_SNIPPET_WORDS`` words: what the model reads
    for the word at ``start``."""
    end = start
    words = 0
    while end < len(text) and words < _SNIPPET_WORDS:
        if text[end] in ".!?" and (end + 1 == len(text) or not text[end + 1].isalnum()):
            end += 1
            break
        words += text[end] == " "
        end += 1
    return text[start:end].strip()


def names_among_openers(snippets: list[str]) -> set[str]:
    """The sentence starts among ``snippets`` whose capitalized first word is a name (the module's rule),
    read by the model in one batch; each answer is kept (a log's lines repeat, and so do its spans)."""
    decided = {s: _DECIDED[s] for s in snippets if s in _DECIDED}
    todo = [s for s in dict.fromkeys(snippets) if s not in decided]
    if todo:
        docs = load_nlp().pipe(todo, disable=["parser"], batch_size=64)
        if len(_DECIDED) + len(todo) > _DECIDED_MAX:
            _DECIDED.clear()
        for snippet, doc in zip(todo, docs):
            decided[snippet] = _DECIDED[snippet] = _first_word_is_name(doc)
    return {s for s, name in decided.items() if name}


# What the model answered per sentence start, until this many are kept (then it starts again).
_DECIDED: dict[str, bool] = {}
_DECIDED_MAX = 50_000


def _first_word_is_name(doc) -> bool:
    if not len(doc):
        return False
    word = doc[0]
    if is_english_word(word.text) or is_english_word(word.lemma_):
        return word.pos_ == "PROPN" and word.ent_type_ in NAME_LABELS
    return word.pos_ in ("PROPN", "NOUN")


def reply_words(tagged: list[tuple[str, str]], in_dictionary) -> set[int]:
    """Indexes of the proper-noun tokens of ``tagged`` (jieba's (word, flag) pairs) that are replies:
    dictionary words alone in their clause but for pronouns, adverbs, particles and interjections.
    ``in_dictionary(word)``: whether jieba's dictionary holds the word (it, not the sentence, tagged it)."""
    out: set[int] = set()
    clause: list[int] = []
    for i, (word, _flag) in enumerate([*tagged, ("\n", "x")]):
        if word.strip() and word not in _CLAUSE_BREAKS:
            clause.append(i)
            continue
        # jieba tags a lone character now and then as a name (哈 in 拜拜哈): no name, a companion.
        names = [j for j in clause if tagged[j][1] in _PROPER and len(tagged[j][0]) > 1]
        if len(names) == 1 and in_dictionary(tagged[names[0]][0]) and all(
                j == names[0] or tagged[j][1] in _REPLY_COMPANIONS or tagged[j][1] in _PROPER for j in clause):
            out.add(names[0])
        clause = []
    return out
