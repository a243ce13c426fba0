"""Speaker labels that name a role, not a person, in the languages the memory reads.

A transcript's speaker may be a person ("Caroline") or a role: "assistant" in English, "助手" in
Chinese. A role is never a name a question can name, and what is tuned per role (the reranker's
``speaker_prior``, the speakers whose long turns store their sentences) holds for it in either
language: one configuration for both (issue 12).
"""

from __future__ import annotations

ROLE_LABELS = {
    "user": "user", "human": "user", "用户": "user",
    "assistant": "assistant", "ai": "assistant", "助手": "assistant",
    "system": "system", "系统": "system",
    "tool": "tool", "工具": "tool",
}


def speaker_role(label: object) -> str:
    """The role a speaker label names ("助手" → "assistant"), else the label in lower case."""
    lowered = str(label or "").strip().lower()
    return ROLE_LABELS.get(lowered, lowered)


def is_role(label: object) -> bool:
    return str(label or "").strip().lower() in ROLE_LABELS
