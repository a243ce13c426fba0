"""An export's ``file`` lines read back (``memory/export_lines.py`` writes them): each ingested file's manifest
recorded again, so the next ingestion of that file skips it as unchanged (by its content hash) instead of
reading and embedding it again. A manifest is recorded only where the import left every source the export
listed for the file stored here, held by that file, and holding the text the file's ingestion stored (its
content hash, the line's ``source_hashes``) and the metadata exported (each source line's ``metadata_hash``):
one recorded over a missing source would have the next ingestion skip the file and never write that source
again, and one recorded over a source edited in the export would keep text or metadata that no file holds, for
as long as the file does not change. Where this data dir already records
the file, such an import makes its manifest one that never matches, so the next ingestion reads it again."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from agent_memory.core.storable import control_character
from agent_memory.ingest.consistency import NO_HASH
from agent_memory.ingest.discovery import check_source_id
from agent_memory.ingest.file_ingestion import PARTIAL
from agent_memory.ingest.ownership import FILE_KEY
from agent_memory.memory.arguments import expect_type
from agent_memory.stores.catalog import SourceEntry

# A manifest's hash is a sha256 in hex, with a prefix and an encoding's name at most; a path, a file system's.
MAX_HASH_CHARS = 256
MAX_PATH_CHARS = 4096


def record_file(memory, tenant: str, record: dict[str, Any],
                metadata_edited: set[str] | frozenset[str] = frozenset()) -> tuple[bool, str | None]:
    """Record the manifest of ``record`` (a ``file`` line) for ``tenant``: whether it was recorded now (not: it
    was before, or see the warning), and a warning saying why not and what the next ingestion does.
    ``metadata_edited``: the sources whose lines held metadata other than exported (their ``metadata_hash``).
    ValueError/TypeError/KeyError for a line that is no file's manifest (the import's skip)."""
    file_id = check_source_id(expect_type(record["file_id"], str, "file_id", "a file's source ID"))
    content_hash = expect_type(record["content_hash"], str, "content_hash", "a file's content hash")
    if not content_hash or len(content_hash) > MAX_HASH_CHARS or control_character(content_hash):
        raise ValueError(f"content_hash must be a file's content hash (at most {MAX_HASH_CHARS} characters), got "
                         f"{content_hash[:80]!r}")
    path = expect_type(record.get("path") or "", str, "path", "the file's path")
    if len(path) > MAX_PATH_CHARS or control_character(path):
        raise ValueError(f"path must be a file's path (at most {MAX_PATH_CHARS} characters), got {path[:80]!r}")
    sources = expect_type(record["sources"], list, "sources", "a list of the file's source IDs")
    for sid in sources:
        expect_type(sid, str, "each of sources", "a source ID")
    # Absent from an export written before them: its sources' text is then taken as the file's.
    exported = expect_type(record.get("source_hashes") or {}, dict, "source_hashes",
                           "an object of each source's content hash")
    for digest in exported.values():
        expect_type(digest, str, "each of source_hashes", "a source's content hash")
    owner = FILE_KEY + file_id
    catalog = memory.services.catalog
    # The file's lock, as its ingestion holds it: a repair in another process does not mark its sources meanwhile.
    with memory.write_lock, memory.services.source_locks.hold(tenant, file_id):
        present = catalog.get_many(tenant, sources)
        owners = catalog.owners(tenant, sources)
        here = catalog.get(tenant, owner)
        # Stored with text other than the file's ingestion stored: edited in the export (or its text not
        # restored exactly). The file on disk is what the next ingestion stores again.
        altered = [sid for sid in sources if sid in present and sid in exported
                   and present[sid].content_hash != exported[sid]]
        # Metadata edited in the export, which no content hash covers: each such source of the file loses its
        # hash (as `check --repair` marks one to ingest again), so the next ingestion writes it with the file's
        # metadata instead of calling it unchanged by its title and text.
        edited = [sid for sid in sources if sid in metadata_edited and sid in present and owners.get(sid) == owner]
        if edited:
            catalog.put_many([replace(present[sid], content_hash=NO_HASH) for sid in edited])
            altered += [sid for sid in edited if sid not in altered]
        if here is not None and here.content_hash == content_hash and not altered:
            return False, None  # imported before (or ingested here from the same bytes)
        missing = [sid for sid in sources if sid not in present or owners.get(sid) != owner]
        if here is not None:
            # Another version of the file was ingested here, and the import wrote the exported one over it (or
            # edited text over one of its sources): the manifest no longer says what is stored, so it is made one
            # that never matches (as a file whose job died midway, ingest/incomplete.py): the next ingestion
            # reads the file again.
            held = sorted(set(here.item_ids) | (set(sources) - set(missing)))
            stale = here.content_hash if here.content_hash.startswith(PARTIAL) else PARTIAL + here.content_hash
            catalog.put_many([replace(here, content_hash=stale, item_ids=held)])
            if here.content_hash == content_hash:
                return False, _altered_warning(file_id, altered, sources)
            return False, (f"file {file_id!r}: this data dir held another version of it; the next ingestion reads "
                           "it again")
        if altered:
            return False, _altered_warning(file_id, altered, sources)
        if missing:
            return False, (f"file {file_id!r}: {len(missing)} of its {len(sources)} sources were not imported "
                           f"(first {missing[0]!r}), so it is not recorded as ingested: the next ingestion reads it "
                           "again")
        # Its sources and what was derived from them here (a transcript's session summary), all the file's.
        claimed = catalog.owned_by(tenant, owner)
        held = sorted(set(sources) | set(catalog.get_many(tenant, claimed)))
        catalog.put_many([SourceEntry(tenant, owner, "file", content_hash, path=path, item_ids=held,
                                      named_by_user=record.get("named_by_user") is True)])
    return True, None


def _altered_warning(file_id: str, altered: list[str], sources: list[str]) -> str:
    return (f"file {file_id!r}: {len(altered)} of its {len(sources)} sources now hold text or metadata other than "
            f"the file's ingestion stored (first {altered[0]!r}: edited in the export, or not restored exactly), so "
            "it does not count as ingested unchanged: the next ingestion reads it again and stores the file's text")
