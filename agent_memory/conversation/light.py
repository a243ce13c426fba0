"""The light compression level: a long old message keeps its key sentences, behind a marker.

Pure and deterministic, so a reopened session recomputes exactly the text it showed before
(the store only records that a message was condensed; the raw message is never rewritten).
"""

from __future__ import annotations

import re
from typing import Any

from agent_memory.conversation.significance import DATE, RULES, entities, numbers
from agent_memory.core.sentence_scoring import Mark, SentenceWeights, score_sentences
from agent_memory.core.text import split_sentences

MARKER = re.compile(r"^\[condensed: kept \d+ of \d+ sentences\]")


def is_condensed(text: str) -> bool:
    return bool(MARKER.match(text))


# Numbers, dates, decisions, facts and names are what a later turn may need verbatim; an open
# question too. Position and length do not count: any sentence of a message may be the one.
KEY_SENTENCE_WEIGHTS = SentenceWeights(marks=(
    Mark(2.0, lambda s: len(numbers(s))),  # per distinct number
    Mark(1.0, lambda s: len(entities(s))),  # per named entity
    Mark(3.0, lambda s: sum(1 for rule in RULES.values() if rule.search(s))),  # per kind: decision, preference ...
    Mark(2.0, lambda s: bool(DATE.search(s))),  # it names a date
    Mark(1.5, lambda s: s.rstrip().endswith(("?", "？"))),  # it asks a question
))


def condense_text(text: str, keep_share: float = 0.35) -> str | None:
    """The key sentences in their order, after a marker; None when there is nothing to condense."""
    sentences = [s for s in split_sentences(text) if s.strip()]
    if len(sentences) < 3 or is_condensed(text):
        return None
    keep = max(1, round(len(sentences) * keep_share))
    scores = score_sentences(sentences, KEY_SENTENCE_WEIGHTS)
    ranked = sorted(range(len(sentences)), key=lambda i: (-scores[i], i))[:keep]
    kept = [sentences[i].strip() for i in sorted(ranked)]
    return f"[condensed: kept {keep} of {len(sentences)} sentences] " + " ".join(kept)


def condense_message(message: dict[str, Any], keep_share: float = 0.35) -> dict[str, Any] | None:
    """A copy of a plain user/assistant text message with its content condensed (tool traffic never is)."""
    if message.get("role") not in ("user", "assistant") or message.get("tool_calls"):
        return None
    content = message.get("content")
    if not isinstance(content, str):
        return None
    condensed = condense_text(content, keep_share)
    return None if condensed is None else {**message, "content": condensed}
