"""``agent-memory export`` and ``agent-memory import``: a tenant's memory as JSON Lines and back (a user's data
request, a move between deployments: ``memory/export_lines.py`` says what the lines hold).

Both go through the server that owns the data dir (or ``--server``), as the other commands do (``GET
/v1/export``, ``POST /v1/import``), and print what they print without one.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import contextmanager
from itertools import chain
from pathlib import Path
from typing import IO, BinaryIO, Iterator

from agent_memory.cli.commands import _note_if_empty
from agent_memory.cli.stores_or_server import local_memory, server_for, tenant_through
from agent_memory.core.errors import ConfigError, IngestError, StoreUnavailableError
from agent_memory.core.export_format import ImportReport, header_of
from agent_memory.remote import RemoteMemory
from agent_memory.remote.responses import RemoteError

# What is sent at a time of an export read from stdin (a file is sent whole, with its length).
SEND_CHUNK = 1 << 20


def cmd_export(args) -> int:
    """The tenant's export to ``--out`` (written whole, then renamed into place) or to stdout (a reader that
    stops early, ``| head``, ends it as it ends every command: ``cli.main``)."""
    return _export(args)


def _export(args) -> int:
    remote = server_for(args)
    with _output(args.out) as out:
        if remote is not None:
            with remote:
                tenant = tenant_through(remote, args)
                counts = _stream_from(remote, out)
        else:
            with local_memory(args, creates=False, encodes=False) as memory:
                tenant = memory.tenant
                counts = {}
                for line in memory.export():
                    out.write(json.dumps(line, ensure_ascii=False) + "\n")
                    if line["type"] == "end":
                        counts = line
                if not counts.get("sources") and not counts.get("sessions"):
                    _note_if_empty(memory, args.tenant)
    where = f" to {args.out}" if args.out else ""
    print(f"exported tenant {tenant!r}{where}: {counts.get('sources', 0)} sources, {counts.get('sessions', 0)} "
          f"sessions, {counts.get('messages', 0)} messages", file=sys.stderr)
    return 0


@contextmanager
def _output(path: str | None) -> Iterator[IO[str]]:
    """stdout, or a file written beside ``path`` and renamed onto it once whole: a failed export leaves no
    half file that an import would take for the tenant's data."""
    if not path or path == "-":
        yield sys.stdout
        return
    target = Path(path)
    partial = target.with_name(target.name + ".partial")
    try:
        with partial.open("w", encoding="utf-8") as out:
            yield out
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


def _stream_from(remote: RemoteMemory, out: IO[str]) -> dict:
    """``GET /v1/export`` into ``out`` as it arrives; the end line's counts (an export cut short raises)."""
    counts: dict = {}
    with remote.client.stream("GET", "/v1/export") as response:
        if response.status_code != 200:
            response.read()
            try:
                reason = response.json()["error"]["message"]
            except (ValueError, KeyError, TypeError):
                reason = response.text[:300]
            raise StoreUnavailableError(f"the server at {remote.url} refused the export: {reason} (HTTP "
                                        f"{response.status_code})")
        for line in response.iter_lines():
            if line:
                out.write(line + "\n")
                if line.startswith('{"type": "end"'):
                    counts = json.loads(line)
    if not counts:
        raise StoreUnavailableError(f"the export from {remote.url} ended before its last line: it was cut short "
                                    "(nothing was written in place of --out); run it again")
    return counts


def cmd_import(args) -> int:
    """An export's lines into the data dir's stores, for ``--tenant`` or the tenant the export names; through
    the server that owns the data dir when one runs (``POST /v1/import``)."""
    if args.file != "-" and not Path(args.file).is_file():
        raise ConfigError(f"no export file at {args.file!r} (`agent-memory export --out FILE` writes one; '-' reads "
                          "stdin)")
    remote = server_for(args)
    if remote is not None:
        with remote:
            report = _import_through(remote, args)
    else:
        # Bytes, as through a server: a file that is no export (a binary one) is refused as such by its header,
        # read first (``export_format.header_of``); a later line that is not UTF-8 is a skip by number.
        handle: BinaryIO = sys.stdin.buffer if args.file == "-" else open(args.file, "rb")
        try:
            first, _ = _header(handle)
            with local_memory(args) as memory:
                report = memory.import_export(chain(first.splitlines(keepends=True), handle), tenant=args.tenant)
        finally:
            if handle is not sys.stdin.buffer:
                handle.close()
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(_render(report))
    return 0 if report.ok else 1


def _import_through(remote: RemoteMemory, args) -> ImportReport:
    """The export sent to the server, into the tenant the import would go to here: ``--tenant``, else the one
    the export names; refused, naming the fix, where that is not the tenant the server writes for this key."""
    handle: BinaryIO = sys.stdin.buffer if args.file == "-" else open(args.file, "rb")
    try:
        first, header = _header(handle)
        if args.tenant is not None:
            tenant_through(remote, args)
        elif header["tenant"] != (served := remote.tenant()):
            raise ConfigError(f"the export is of tenant {header['tenant']!r}, and the server at {remote.url} writes "
                              f"tenant {served!r} for this client: import it there with --tenant {served!r}, or "
                              f"through a key bound to {header['tenant']!r} (AGENT_MEMORY_API_KEY)")
        if handle is sys.stdin.buffer:
            data = remote.import_export(_chunks(first, handle))
        else:
            handle.seek(0)  # sent whole, with its length: a server whose limit it passes says so at once
            data = remote.import_export(handle)
    finally:
        if handle is not sys.stdin.buffer:
            handle.close()
    try:
        return ImportReport.from_dict(data)
    except (ValueError, KeyError, TypeError) as exc:
        raise RemoteError(200, "bad_answer", f"the server at {remote.url} answered the import with no report: "
                                             f"{str(data)[:200]} ({exc!r})") from None


def _header(handle: BinaryIO) -> tuple[bytes, dict]:
    """What was read of ``handle`` up to its header line, and the header: read here first, so that a file that
    is no export is refused as it is without a server (nothing is sent)."""
    found = header_of(handle)
    if found is None:
        raise IngestError("the export is empty: no header line")
    return found


def _chunks(first: bytes, handle: BinaryIO) -> Iterator[bytes]:
    yield first
    while chunk := handle.read(SEND_CHUNK):
        yield chunk


def _render(report) -> str:
    lines = [f"imported into tenant {report.tenant!r}",
             f"  sources written    {report.sources_written}",
             f"  sources unchanged  {report.sources_unchanged}",
             *([f"  files recorded     {report.files_recorded} (an unchanged one is skipped by the next ingest)"]
               if report.files_recorded else []),
             f"  sessions imported  {report.sessions_imported} ({report.messages_appended} messages)",
             f"  sessions unchanged {report.sessions_unchanged}"]
    if report.sessions_refused:
        lines.append(f"  sessions refused   {report.sessions_refused}")
    if report.turns_forgotten:
        lines.append(f"  turns forgotten    {report.turns_forgotten} (forgotten where it was exported)")
    lines += [f"  skipped line {number}: {why}" for number, why in report.skipped]
    lines += [f"  warning: {warning}" for warning in report.warnings]
    return "\n".join(lines)
