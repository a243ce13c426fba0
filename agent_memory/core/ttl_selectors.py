"""The selectors of the ``ttl_days`` setting: which stored items (or working-memory messages) a time to live
applies to. Validated by the settings (``settings.py``), applied by ``ingest/upkeep.py`` and
``conversation/expiry.py``."""

from __future__ import annotations

# Time-to-live selectors (agent_memory/ingest/upkeep.py applies them): a kind alone, or field:value.
TTL_KINDS = ("chunk", "summary", "turn")
TTL_RETENTIONS = ("strict", "fuzzy", "forgettable")
# "session": the messages of working-memory sessions (agent_memory/conversation/expiry.py), not an item kind.
TTL_SESSION = "session"
TTL_SELECTOR_FORMS = ("'chunk' | 'summary' | 'turn' (a kind), 'kind:<chunk|summary|turn>', 'source:<ID prefix>', "
                      "'tenant:<name>', 'retention:<strict|fuzzy|forgettable>', 'session' (working-memory messages)")


def ttl_selector_problem(selector: str) -> str | None:
    """Why a ttl_days selector is not one of the forms, or None when it is."""
    field, sep, value = selector.partition(":")
    if not sep:
        return None if selector in (*TTL_KINDS, TTL_SESSION) else "not a kind"
    if field == "kind":
        return None if value in TTL_KINDS else f"unknown kind {value!r}"
    if field == "retention":
        return None if value in TTL_RETENTIONS else f"unknown retention class {value!r}"
    if field in ("source", "tenant"):
        return None if value else f"{field}: needs a value"
    return f"unknown field {field!r}"
