"""Route each run of sentences to the English (spaCy) or Chinese (jieba) extractor."""

from __future__ import annotations

from typing import Sequence

from agent_memory.core.records import Triple
from agent_memory.core.text import has_cjk, split_sentences
from agent_memory.index.triples.base import Entity, check_batch, dedupe_entities, dedupe_triples
from agent_memory.index.triples.chinese import ChineseExtractor
from agent_memory.index.triples.english import EnglishExtractor


def language_runs(text: str) -> list[tuple[str, str]]:
    """Consecutive sentences grouped by language: [("en"|"zh", joined text), ...].

    Grouping keeps spaCy's context (pronouns, batching) for English runs while a
    Chinese sentence inside an English document still goes to jieba.
    """
    runs: list[tuple[str, list[str]]] = []
    for sentence in split_sentences(text or ""):
        lang = "zh" if has_cjk(sentence) else "en"
        if runs and runs[-1][0] == lang:
            runs[-1][1].append(sentence)
        else:
            runs.append((lang, [sentence]))
    return [(lang, ("" if lang == "zh" else " ").join(parts)) for lang, parts in runs]


class RuleBasedExtractor:
    """The offline extractor: English and Chinese, chosen per sentence run."""

    def __init__(self, english: EnglishExtractor | None = None, chinese: ChineseExtractor | None = None):
        self.english = english or EnglishExtractor()
        self.chinese = chinese or ChineseExtractor()

    def extract(self, text: str, *, tenant: str, source_id: str, item_id: str) -> list[Triple]:
        return self.extract_many([text], tenant=tenant, source_ids=[source_id], item_ids=[item_id])[0]

    def extract_many(
        self, texts: Sequence[str], *, tenant: str, source_ids: Sequence[str], item_ids: Sequence[str]
    ) -> list[list[Triple]]:
        """Batch form: English runs of all texts go through one nlp.pipe call."""
        check_batch(texts, source_ids, item_ids)
        out: list[list[Triple]] = [[] for _ in texts]
        en_texts: list[str] = []
        en_owner: list[int] = []
        for i, text in enumerate(texts):
            if not has_cjk(text or ""):
                if text and text.strip():
                    en_texts.append(text)
                    en_owner.append(i)
                continue
            for lang, run in language_runs(text):
                if lang == "zh":
                    out[i].extend(self.chinese.extract(run, tenant=tenant, source_id=source_ids[i], item_id=item_ids[i]))
                else:
                    en_texts.append(run)
                    en_owner.append(i)
        if en_texts:
            en = self.english.extract_many(
                en_texts, tenant=tenant, source_ids=[source_ids[i] for i in en_owner],
                item_ids=[item_ids[i] for i in en_owner],
            )
            for owner, triples in zip(en_owner, en):
                out[owner].extend(triples)
        return [dedupe_triples(ts) for ts in out]

    def entities(self, text: str) -> list[Entity]:
        found: list[Entity] = []
        for lang, run in language_runs(text):
            found.extend(self.chinese.entities(run) if lang == "zh" else self.english.entities(run))
        return dedupe_entities(found)
