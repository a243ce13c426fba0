"""``agent-memory backup``: a consistent copy of an embedded data dir in a new folder, which opens as it is.

Each store copies itself (``snapshot_to``: agent_memory/stores/), while the caller's write exclusion holds
ingestion, forgetting, expiry and archiving still and each store's own lock keeps out the writes that do
not take it (a session append, an importance raise): the sessions and the catalog through SQLite's online
backup, which reads what their write-ahead logs hold too; the vector collections and the graph as their
files after a flush and a checkpoint. So the copy's catalog, vectors and graph agree: a copy of the files
of a served data dir without the SQLite logs held vectors whose sources the catalog did not know, which
nothing could forget.

A session's messages reach long-term memory under the write exclusion and its archive mark moves after, so
no session in the copy is marked archived past what the copy's vectors hold; what lies past the mark is
archived when the copy is opened, as after any stop.

Not copied: the owner and ingestion locks, the embedding cache (computed again when needed), upload jobs
still queued (``pending-jobs``: their sources are in the copy once they have run), and uploads being read
(``staged-uploads``: each is stored, or refused, by the request or job reading it). A deployment on servers
(PostgreSQL, a Qdrant server, Neo4j) is refused, naming each server's own backup tool: a copy of the local
parts alone would not agree with them.

Restoring: stop what uses the data dir, move it aside, and copy the backup to its path. Never copy a backup
over an existing data dir: SQLite and the graph would apply the newer write-ahead logs left there to the
older files, and the catalog would name sources the vectors do not hold.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path

from agent_memory.core import diskspace
from agent_memory.core.config import Settings
from agent_memory.core.errors import BackupError
from agent_memory.core.owner import LOCK_NAME
from agent_memory.ingest.lock import LOCK_NAME as INGEST_LOCK
from agent_memory.ingest.ownership import FILE_KEY
from agent_memory.services import (
    CATALOG_FILE,
    EMBEDDING_CACHE_FILE,
    INDEX_FORMAT_FILE,
    PENDING_JOBS,
    SESSIONS_FILE,
    Services,
    settings_for_stored_layout,
)
from agent_memory.stores.graph_factory import GRAPH_FILE
from agent_memory.stores.staging import STAGED_UPLOADS
from agent_memory.stores.vector_factory import vectors_folder


@dataclass
class BackupReport:
    destination: str
    copied: list[str]  # what the backup holds, relative to it
    # At the moment of the copy: the catalog's sources (what `check` counts as its catalog_sources: a file's
    # manifest is none, it records the sources the file held), the files ingested (their manifests), and the
    # vector stores' items.
    sources: int
    files: int
    items: int
    seconds: float

    def to_dict(self) -> dict:
        return asdict(self)


def refuse_server_stores(settings: Settings) -> None:
    """BackupError naming each store that lives on a server, with that server's own backup tool."""
    servers = []
    if settings.postgres_url:
        servers.append("the catalog and sessions are in PostgreSQL (AGENT_MEMORY_POSTGRES_URL): pg_dump")
    if settings.qdrant_url:
        servers.append("the vectors are on a Qdrant server (AGENT_MEMORY_QDRANT_URL): its collection snapshots "
                       "(POST /collections/<name>/snapshots)")
    if settings.neo4j_uri:
        servers.append("the graph is in Neo4j (AGENT_MEMORY_NEO4J_URI): neo4j-admin database dump")
    if servers:
        raise BackupError("`agent-memory backup` copies an embedded data dir, and this deployment keeps stores on "
                          f"servers; back each up with the server's own tool: {'; '.join(servers)}")


def check_destination(destination: str | Path, data_dir: Path) -> Path:
    """The backup's folder, absolute: refused when it holds anything, is no folder, lies inside the data
    dir (which a restore would then copy back into itself), or cannot be written (a read-only folder or
    filesystem, a path under a file, /proc): said before the copy starts (``POST /v1/backup`` answers 400),
    not as the failure of a job that began."""
    try:
        return _checked_destination(destination, data_dir)
    except (OSError, ValueError, RuntimeError) as exc:
        # A path the system will not look up at all: a name past its length limit (ENAMETOOLONG from a stat, a
        # 500 through the API), a NUL byte (ValueError), a ~user no account has (RuntimeError).
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise BackupError(f"the backup's destination {str(destination)!r} is no path this system can use "
                          f"({reason}): give a folder path it can create") from None


def _checked_destination(destination: str | Path, data_dir: Path) -> Path:
    target = Path(destination).expanduser().resolve()
    source = Path(data_dir).resolve()
    if target == source or source in target.parents:
        raise BackupError(f"the backup's destination {target} lies inside the data dir {source}: give a folder "
                          "outside it")
    if target.exists() and not target.is_dir():
        raise BackupError(f"the backup's destination {target} exists and is no folder: give a new folder")
    try:
        held = target.is_dir() and any(target.iterdir())
    except OSError as exc:
        raise BackupError(f"the backup's destination {target} cannot be read: {exc.strerror or exc}") from None
    if held:
        raise BackupError(f"the backup's destination {target} is not empty: give a new or empty folder (a backup "
                          "never writes over files)")
    problem = _unwritable(target)
    if problem:
        raise BackupError(f"the backup's destination {target} cannot be written: {problem}; give a folder this "
                          "process can create and write")
    return target


def _unwritable(target: Path) -> str | None:
    """Why no backup can be written at ``target`` (an empty folder, or none yet), or None. Tried, not
    inferred from permission bits: root passes every ``access`` check, yet not a read-only mount, nor /proc.
    Only what the probe made is removed: nothing at ``target`` changes."""
    base = next((p for p in (target, *target.parents) if p.exists()), None)
    if base is None or not base.is_dir():
        return f"{base} is a file, not a folder" if base is not None else "no part of the path exists"
    try:
        if base == target:  # an empty folder given: the files go in it
            with tempfile.NamedTemporaryFile(dir=target, prefix=".agent-memory-backup-probe-"):
                pass
        else:  # the folder is made under its nearest existing parent
            os.rmdir(tempfile.mkdtemp(dir=base, prefix=".agent-memory-backup-probe-"))
    except OSError as exc:
        return f"{base} takes no new {'file' if base == target else 'folder'} ({exc.strerror or exc})"
    return None


def check_space(data_dir: Path, target: Path, reserve_mb: int) -> None:
    """BackupError when the destination's filesystem has less free space than the data dir's files take
    (what is copied is as sparse as they are), plus the writes' reserve where the destination shares the data
    dir's filesystem: a backup that filled it would starve the stores it copies (the embedded vector engine
    dies of SIGBUS on a full disk)."""
    need = sum(_allocated(path) for path in data_dir.rglob("*") if path.is_file() and not _left_out(data_dir, path))
    shared = _device(target) == _device(data_dir)
    keep = reserve_mb * 1048576 if shared else 0
    free = diskspace.free_bytes(target)
    if free is None or free >= need + keep:
        return
    also = f" and keeps the data dir's reserve of {reserve_mb} MB (AGENT_MEMORY_MIN_FREE_MB) there" if keep else ""
    raise BackupError(f"the backup needs about {need / 1048576:.1f} MB at {target}{also}, and that filesystem has "
                      f"{free / 1048576:.1f} MB free: free space there, or give a destination on another filesystem")


def backup(services: Services, destination: str | Path, hold: AbstractContextManager) -> BackupReport:
    """Copy every store of ``services`` into ``destination`` (new or empty) while ``hold`` (the write
    exclusion of the process that holds them) is held. A failure removes what was written there."""
    refuse_server_stores(services.settings)
    target = check_destination(destination, services.data_dir)
    check_space(services.data_dir, target, services.settings.min_free_mb)
    created = not target.exists()
    started = time.monotonic()
    try:
        target.mkdir(parents=True, exist_ok=True)
        with hold:
            services.sessions.store.snapshot_to(target / SESSIONS_FILE)
            services.catalog.snapshot_to(target / CATALOG_FILE)
            services.vectors.snapshot_to(target / vectors_folder(services.settings))
            services.graph.snapshot_to(target / GRAPH_FILE)
            marker = services.data_dir / INDEX_FORMAT_FILE
            if marker.exists():
                shutil.copy2(marker, target / INDEX_FORMAT_FILE)
            sources, files = _catalog_counts(services.catalog)
            items = services.vectors.count()
    except BaseException:
        _remove_contents(target, created)
        raise
    return BackupReport(str(target), _listed(target, vectors_folder(services.settings)), sources, files, items,
                        round(time.monotonic() - started, 2))


def _catalog_counts(catalog) -> tuple[int, int]:
    """The catalog's sources and files' manifests, every tenant together (counted as the catalog holds them:
    a plain text file is a source under its path and a manifest beside it, one of each)."""
    sources = files = 0
    for tenant in catalog.tenants():
        for entry in catalog.entries(tenant):
            if entry.source_id.startswith(FILE_KEY):
                files += 1
            else:
                sources += 1
    return sources, files


def backup_data_dir(settings: Settings, destination: str | Path) -> BackupReport:
    """The backup of a data dir that the caller owns (no other process has it open): its vector collections
    opened as its index-format marker records them, whatever embedding models the settings name, so a data
    dir waiting for ``reindex`` is backed up as it is."""
    refuse_server_stores(settings)  # before any model loads
    check_space(settings.data_dir, check_destination(destination, settings.data_dir), settings.min_free_mb)
    with Services(settings_for_stored_layout(settings), check_layout=False) as services:
        return backup(services, destination, nullcontext())


# What a backup leaves behind (the module's docstring says why), by name under the data dir.
LEFT_OUT = (LOCK_NAME, INGEST_LOCK, EMBEDDING_CACHE_FILE, PENDING_JOBS, STAGED_UPLOADS)


def _left_out(data_dir: Path, path: Path) -> bool:
    return path.relative_to(data_dir).parts[0] in LEFT_OUT


def _allocated(path: Path) -> int:
    try:
        return path.stat().st_blocks * 512
    except OSError:  # gone meanwhile
        return 0


def _device(path: Path) -> int | None:
    for candidate in (path, *path.parents):  # the destination may not exist yet
        try:
            return candidate.stat().st_dev
        except OSError:
            continue
    return None


def _listed(target: Path, vectors: str) -> list[str]:
    """What the backup holds: its files, and each vector collection by its folder."""
    return [str(p.relative_to(target)) for top in sorted(target.iterdir())
            for p in (sorted(top.iterdir()) if top.name == vectors and top.is_dir() else [top])]


def _remove_contents(target: Path, created: bool) -> None:
    """Undo a failed backup: the folder it created, or what it wrote in the empty one it was given."""
    if created:
        shutil.rmtree(target, ignore_errors=True)
        return
    for entry in target.iterdir() if target.is_dir() else ():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
