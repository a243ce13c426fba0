"""``agent-memory check``: whether the catalog, the vectors and the graph agree, per tenant; ``--repair``
mends what it can (agent_memory/ingest/consistency.py). The JSON report goes to stdout; exit 1 when the
stores disagree (with ``--repair``: when anything is left to do by hand). Through a server that requires API
keys, an admin key in AGENT_MEMORY_ADMIN_KEY (and no ``--tenant``) checks every tenant; else the API key's."""

from __future__ import annotations

import json
import sys

from agent_memory.cli.backup import admin_key_refused, given_admin_key
from agent_memory.cli.stores_or_server import local_memory, server_for, tenant_through
from agent_memory.core.errors import ConfigError

# The comparison over the stores is imported where this process opens them: a check through a server loads
# none of the ingestion package.


def cmd_check(args) -> int:
    if args.adopt and not args.repair:
        raise ConfigError("--adopt goes with --repair: it records in the catalog what a repair would otherwise remove")
    remote = server_for(args)
    if remote is not None:
        admin_key = given_admin_key()
        with remote:
            if admin_key is not None and not args.tenant:  # an admin key checks every tenant of the server
                with admin_key_refused(remote, admin_key):
                    report = remote.check(repair=args.repair, adopt=args.adopt, key=admin_key)
            else:
                tenant_through(remote, args)
                report = remote.check(repair=args.repair, adopt=args.adopt)
    else:
        from agent_memory.ingest.consistency import check_and_repair

        with local_memory(args, creates=False) as memory:
            memory.settle()  # the start's archive pass first: its turns are written before they are recorded
            with memory.write_lock:
                report = check_and_repair(memory.services, memory.ingestion, [args.tenant] if args.tenant else None,
                                          repair_them=args.repair, adopt=args.adopt)
    print(json.dumps(report, indent=2, ensure_ascii=False))
    for note in report.get("data_dir", {}).get("notes", []):
        print(f"note: {note}", file=sys.stderr)
    if not report["ok"]:
        _say_what_is_wrong(report, repaired=args.repair)
    return 0 if report["ok"] else 1


def _say_what_is_wrong(report: dict, *, repaired: bool) -> None:
    """On stderr, one line per tenant whose stores disagree (stdout stays the JSON scripts read)."""
    for tenant, row in report["tenants"].items():
        if repaired and "repair" in row:
            for line in row["repair"]["left"]:
                print(f"note: tenant {tenant!r}: {line}", file=sys.stderr)
        elif not row["ok"]:
            counts = [f"{len(row[key])} {what}" for key, what in (
                ("uncatalogued", "sources the catalog does not know"), ("items_missing", "sources missing items"),
                ("facts_missing", "sources missing facts")) if row[key]]
            # A problem says its own way out; the counts alone are for the repair.
            said = "; ".join(row["problems"]) or "; ".join(counts) + ": `agent-memory check --repair` mends what it can"
            print(f"note: tenant {tenant!r}: {said}", file=sys.stderr)
