"""Choose the triple extractor from settings: an LLM when configured, offline rules otherwise.

With an LLM, a failing call falls back to the rules for that text, so the graph still
gets triples and the chunks are never held back by extraction.
"""

from __future__ import annotations

import logging
from typing import Sequence

from agent_memory.core.records import Triple
from agent_memory.index.triples import LLMExtractor, RuleBasedExtractor

log = logging.getLogger(__name__)


class FallbackExtractor:
    def __init__(self, primary, fallback) -> None:
        self.primary = primary
        self.fallback = fallback
        self.failures = 0

    def extract(self, text: str, *, tenant: str, source_id: str, item_id: str) -> list[Triple]:
        try:
            return self.primary.extract(text, tenant=tenant, source_id=source_id, item_id=item_id)
        except Exception as exc:  # noqa: BLE001 - any LLM failure means: use the rules
            self.failures += 1
            log.warning("LLM triple extraction failed for %s (%s); using rules", source_id, exc)
            return self.fallback.extract(text, tenant=tenant, source_id=source_id, item_id=item_id)

    def extract_many(self, texts: Sequence[str], *, tenant: str, source_ids: Sequence[str],
                     item_ids: Sequence[str]) -> list[list[Triple]]:
        return [self.extract(t, tenant=tenant, source_id=s, item_id=i) for t, s, i in zip(texts, source_ids, item_ids)]


def make_extractor(settings, llm=None):
    mode = settings.triple_extractor
    if mode == "none":
        return None
    rules = RuleBasedExtractor()
    if mode == "rules" or llm is None:
        return rules
    return FallbackExtractor(LLMExtractor(llm), rules)
