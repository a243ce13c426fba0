"""Which candidate names are names: the rules that keep filler and units out of the ``[Key entities]`` line
of a session's view.

The extractors (``significance.entities``, run on every appended message) propose capitalized words, all-caps
codes and words jieba tags as proper nouns, cheaply and without reading sentences. Those candidates are
judged here, only when the header is built, and only the few that would be shown, each against a
message that named it (a verdict is kept: views far outnumber new names). Each rule says where the
extractor's evidence proves nothing:

* A capital at the start of a sentence is the sentence's, not the word's ("Understood.", "Budget is
  900 USD."). There the word counts when spaCy's English model, reading the sentence, recognizes it as
  part of a name, and a word its lexicon lists as an ordinary English word must be tagged a proper noun
  too ("Lisbon will be warm." and "Kubernetes restarted the pod." stay, "Receipt sent to Maria." loses
  "Receipt"). Set off by a comma or an exclamation a word stands where interjections do ("Yep, we did.",
  "Congrats, Melanie!"): it never counts there. A word also capitalized mid-sentence in the message needs
  no model, and a word judged filler counts once a later message capitalizes it mid-sentence (the small
  model does not know "Redis" or a name said as "Caroline, ..."; the conversation soon does).
* An all-caps code standing next to a number qualifies the number: a currency or unit ("900 USD",
  "USD 900", "50 MB"). The number is what the conversation keeps; the code alone names nothing. spaCy's
  unit symbols (MB, GB, ...) are units wherever they stand.
* A word jieba's dictionary tags as a person, place or other proper noun, standing in its clause with
  nothing but pronouns, adverbs, particles and interjections, is a reply (谢谢。明白了。拜拜): the
  dictionary tagged 谢谢 and 明白 as names, and nothing in the sentence says they are. Names jieba finds
  outside its dictionary (王芳, 张伟) are not subject to this.

Judged here rather than at extraction because the model costs milliseconds per sentence, which every
append would pay (measured: appends p50 2.1 → 19.9 ms), while the header judges each name once. A compaction
digest keeps its own "Key entities" line unjudged: its validation counts the extractor's candidates kept, and
a digest without the filler read as a digest that lost entities (three times the summaries redone).
"""

from __future__ import annotations

import functools
import re
from typing import Callable, Iterable

from agent_memory.core.chinese_words import load_jieba, load_posseg
from agent_memory.core.english_nlp import is_english_word, load_nlp
from agent_memory.core.extras import import_lazily
from agent_memory.core.text import CJK_RANGES, has_cjk

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
# How many candidates per name shown are judged, best ranked first: a chat's filler ("Yeah", "Wow", "Hey")
# often outnumbers its names, and a header that runs out shows fewer names rather than unjudged words.
CANDIDATE_FACTOR = 5


@functools.lru_cache(maxsize=1)
def _unit_symbols() -> frozenset[str]:
    units = import_lazily("spacy.lang.char_classes").UNITS
    return frozenset(units.split("|")) | frozenset(units.split())


def is_unit(token: str) -> bool:
    """An all-caps unit symbol of spaCy's list (MB, GB, KB, TB)."""
    return token in _unit_symbols()


def _occurrences(name: str, text: str) -> list[int]:
    """Where ``name`` stands in ``text`` as a whole word (a Chinese character beside it is an edge too)."""
    edge = rf"[^\W{CJK_RANGES}]"
    return [m.start() for m in re.finditer(rf"(?<!{edge}){re.escape(name)}(?!{edge})", text)]


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


# What the model answered per sentence start, until this many are kept (then it starts again).
_OPENERS: dict[str, bool] = {}
_OPENERS_MAX = 50_000


def read_openers(snippets: list[str]) -> None:
    """Have the model read, in one batch, the sentence starts among ``snippets`` it has not read (a batch costs
    a quarter of reading them one by one); :func:`opener_is_name` then answers from what it kept."""
    todo = [snippet for snippet in dict.fromkeys(snippets) if snippet not in _OPENERS]
    if not todo:
        return
    if len(_OPENERS) + len(todo) > _OPENERS_MAX:
        _OPENERS.clear()
    for snippet, answer in zip(todo, model_reads(todo)):
        _OPENERS[snippet] = answer


def opener_is_name(snippet: str) -> bool:
    """Whether the capitalized first word of ``snippet`` (a sentence's start) is a name, as the model reads it."""
    if snippet not in _OPENERS:
        read_openers([snippet])
    return _OPENERS[snippet]


def model_reads(snippets: list[str]) -> list[bool]:
    """The model's answer for each sentence start: whether its first word is a name (the module's rule)."""
    return [_first_word_is_name(doc) for doc in load_nlp().pipe(snippets, disable=["parser"], batch_size=64)]


def _first_word_is_name(doc) -> bool:
    if not len(doc):
        return False
    word = doc[0]
    # Set off by a comma or an exclamation a word stands where interjections do ("Yep, we did", "Congrats,
    # Melanie!"), and the recognizer labels those too; a name said there is said elsewhere as well.
    if len(doc) > 1 and doc[1].text in (",", "!", "?"):
        return False
    named = word.ent_type_ in NAME_LABELS
    if is_english_word(word.text) or is_english_word(word.lemma_):
        return named and word.pos_ == "PROPN"
    return named and word.pos_ in ("PROPN", "NOUN")


def reply_words(tagged: list[tuple[str, str]], in_dictionary: Callable[[str], bool]) -> set[int]:
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


def _in_dictionary(word: str) -> bool:
    """Whether jieba's dictionary lists ``word`` (a word it found by its HMM, like most people's names, is not)."""
    return bool(load_jieba().dt.FREQ.get(word))


def is_name_in(name: str, text: str) -> bool:
    """Whether ``text``, a message that named ``name``, shows it to be a name (the module's rules). A name the
    text does not hold (an LLM judge proposed it) is taken as proposed."""
    return verdict_of(without_model(name, text))


def verdict_of(ruled: tuple[bool | None, list[str]]) -> bool:
    """The verdict :func:`without_model` reached, else the model's on the sentence starts it left to read."""
    verdict, openers = ruled
    return verdict if verdict is not None else any(opener_is_name(snippet) for snippet in openers)


def without_model(name: str, text: str) -> tuple[bool | None, list[str]]:
    """The verdict the rules reach without the model, else None and the sentence starts it must read."""
    if has_cjk(name):
        return _chinese_name_in(name, text), []
    starts = _occurrences(name, text)
    if not starts:
        return True, []
    if name.isalpha() and name.isupper():
        if is_unit(name) or all(qualifies_number(text, s, s + len(name)) for s in starts):
            return False, []
        if not is_english_word(name):  # an acronym (TAP, AWS, DHL): "OK" and "NOTE" go to the model
            return True, []
    if not name.isalpha():  # an identifier (X-200, config.py, E1101, v2.3.1): its shape names it, wherever it stands
        return True, []
    if any(not starts_sentence(text, s) for s in starts):
        return True, []
    return None, [sentence_start(text, s) for s in starts]


def named_mid_sentence(name: str, text: str) -> bool:
    """Whether ``text`` capitalizes ``name`` where no sentence starts: the rule that needs no model, which is
    all a word once judged filler is given again (each new message naming "Sure" would otherwise be read)."""
    return any(not starts_sentence(text, s) for s in _occurrences(name, text))


def _chinese_name_in(name: str, text: str) -> bool:
    posseg = load_posseg()  # loaded by the extractor already: Chinese names come from it

    for line in text.split("\n"):
        if name not in line:
            continue
        tagged = [(word, flag) for word, flag in posseg.cut(line)]
        replies = reply_words(tagged, _in_dictionary)
        if any(word.strip() == name and i not in replies for i, (word, _flag) in enumerate(tagged)):
            return True
        if any(word.strip() == name for word, _flag in tagged):
            continue  # only a reply on this line: another line may still name it
        return True  # tagged inside a longer word on this line: the extractor's call stands
    return not has_cjk(text) or name not in text


def names_among(ranked: Iterable[str], is_name: Callable[[str], bool], limit: int) -> list[str]:
    """The first ``limit`` of ``ranked`` (candidate names, best first) for which ``is_name`` holds (the caller
    judges each against a message that named it, :func:`is_name_in`, and keeps its verdicts); at most
    ``CANDIDATE_FACTOR * limit`` candidates are judged."""
    shown: list[str] = []
    for judged, name in enumerate(ranked):
        if len(shown) == limit or judged == CANDIDATE_FACTOR * limit:
            break
        if is_name(name):
            shown.append(name)
    return shown
