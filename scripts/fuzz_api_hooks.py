"""Schemathesis hooks for scripts/fuzz_api.py (loaded through SCHEMATHESIS_HOOKS): how to send a body of
``POST /v1/import``, whose documented media types (JSON Lines) Schemathesis has no serializer for. The
schema says the body is a string, an export's lines: sent as text is."""

from __future__ import annotations

import schemathesis

from agent_memory.api.schemas_transfer import IMPORT_MEDIA_TYPES

for media_type in IMPORT_MEDIA_TYPES:
    if media_type != "text/plain":
        schemathesis.serializer.alias(media_type, "text/plain")
