"""``agent-memory forget``: one source (``commands.cmd_forget``), every source under a prefix (``--prefix``), or
everything a tenant holds (``--all``, with the tenant named and the removal confirmed), in batches
(``ingest/bulk_forget.py``), through the server that owns the data dir when one does. Through a server,
``--all`` with an admin key in AGENT_MEMORY_ADMIN_KEY removes any tenant (``DELETE /v1/tenants/{tenant}``),
its own key not needed; else the API key's tenant, which ``--tenant`` must name."""

from __future__ import annotations

import json
import sys
from urllib.parse import quote, urlencode

from agent_memory.cli.backup import admin_key_refused, given_admin_key
from agent_memory.cli.commands import cmd_forget
from agent_memory.cli.stores_or_server import local_memory, server_for, tenant_through
from agent_memory.core.errors import ConfigError


def cmd_forget_any(args) -> int:
    if args.prefix is not None and not args.prefix.strip("/ "):
        raise ConfigError(f"--prefix {args.prefix!r} would name every source: to forget everything a tenant holds, "
                          "use --all --tenant T (it asks for the tenant's name first)")
    given = [name for name, value in (("a source ID", args.source_id), ("--prefix", args.prefix),
                                      ("--all", args.everything)) if value]
    if len(given) != 1:
        raise ConfigError("forget takes one of: a source ID, --prefix P (every source whose ID starts with P), or "
                          f"--all --tenant T (everything tenant T holds); got {' and '.join(given) or 'none'}")
    if args.source_id:
        return cmd_forget(args)
    if args.prefix is not None:
        return _forget_prefix(args)
    return _forget_tenant(args)


def _forget_prefix(args) -> int:
    remote = server_for(args)
    if remote is not None:
        with remote:
            tenant = tenant_through(remote, args)
            removed = _answer(remote, "/v1/sources?" + urlencode({"prefix": args.prefix}))
    else:
        with local_memory(args, creates=False, encodes=False) as memory:
            tenant = memory.tenant
            removed = memory.forget_prefix(args.prefix)
    print(json.dumps(removed, ensure_ascii=False))
    if not removed["sources"] and not removed["files"]:
        print(f"nothing stored under the prefix {args.prefix!r} for tenant {tenant!r} (`agent-memory list --prefix "
              "...` shows what is stored)", file=sys.stderr)
        return 1
    return 0


def _forget_tenant(args) -> int:
    if args.tenant is None:
        raise ConfigError("forget --all removes a whole tenant: name it with --tenant (AGENT_MEMORY_TENANT and the "
                          "default tenant are never taken for it)")
    if not args.yes:
        _confirm(args.tenant)
    remote = server_for(args)
    admin_key = given_admin_key()
    if remote is not None and admin_key is not None:  # an operator's removal: any tenant, its key not needed
        with remote, admin_key_refused(remote, admin_key):
            removed = _answer(remote, f"/v1/tenants/{quote(args.tenant, safe='')}", key=admin_key)
    elif remote is not None:
        with remote:
            tenant = tenant_through(remote, args)
            removed = _answer(remote, "/v1/tenant?" + urlencode({"confirm": tenant}))
    else:
        with local_memory(args, creates=False, encodes=False) as memory:
            removed = memory.forget_tenant(args.tenant)
    print(json.dumps(removed, ensure_ascii=False))
    return 0


def _answer(remote, path: str, key: str | None = None) -> dict:
    """A DELETE's answer: inline, or the result of the job it was queued as behind a running one (waited for)."""
    return remote.answer(remote.request("DELETE", path, ok=(200, 202), key=key), key=key)


def _confirm(tenant: str) -> None:
    """The tenant's name typed again at a terminal; without one, --yes is the confirmation."""
    if not sys.stdin.isatty():
        raise ConfigError(f"forget --all removes everything tenant {tenant!r} holds (sources, sessions, facts) and "
                          "cannot ask for a confirmation here (no terminal): add --yes to confirm")
    print(f"This removes everything tenant {tenant!r} holds: its sources, sessions and facts, from every store.",
          file=sys.stderr)
    typed = input(f"Type the tenant's name ({tenant}) to confirm: ").strip()
    if typed != tenant:
        raise ConfigError(f"not confirmed (typed {typed!r}, not {tenant!r}): nothing was removed")
