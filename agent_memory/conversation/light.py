"""The light compression level: a long old message keeps its key sentences, behind a marker.

Pure and deterministic, so a reopened session recomputes exactly the text it showed before
(the store only records that a message was condensed; the raw message is never rewritten).
"""

from __future__ import annotations

import re
from typing import Any

from agent_memory.conversation.significance import DATE, RULES, entities, numbers
from agent_memory.core.text import split_sentences

MARKER = re.compile(r"^\[condensed: kept \d+ of \d+ sentences\]")


def is_condensed(text: str) -> bool:
    return bool(MARKER.match(text))


def _score(sentence: str) -> float:
    """Numbers, dates, decisions, facts and names are what a later turn may need verbatim."""
    score = 2.0 * len(numbers(sentence)) + 1.0 * len(entities(sentence))
    score += 3.0 * sum(1 for rule in RULES.values() if rule.search(sentence))
    score += 2.0 if DATE.search(sentence) else 0.0
    score += 1.5 if sentence.rstrip().endswith(("?", "？")) else 0.0
    return score


def condense_text(text: str, keep_share: float = 0.35) -> str | None:
    """The key sentences in their order, after a marker; None when there is nothing to condense."""
    sentences = [s for s in split_sentences(text) if s.strip()]
    if len(sentences) < 3 or is_condensed(text):
        return None
    keep = max(1, round(len(sentences) * keep_share))
    ranked = sorted(range(len(sentences)), key=lambda i: (-_score(sentences[i]), i))[:keep]
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
