"""Deterministic identifiers: the same input always yields the same IDs."""

from __future__ import annotations

import hashlib
import uuid

_NAMESPACE = uuid.UUID("6f1c3a52-8d0e-4b8e-9a57-2f4d1c0b9e11")


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def item_id(tenant: str, source_id: str, kind: str, start: int, end: int, text_hash: str) -> str:
    """UUID5 of the item's provenance and content: re-ingesting writes nothing new."""
    return str(uuid.uuid5(_NAMESPACE, f"{tenant}\x1f{source_id}\x1f{kind}\x1f{start}\x1f{end}\x1f{text_hash}"))
