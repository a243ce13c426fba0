"""``agent-memory session``: an agent's working-memory sessions from the terminal, through the stores or the
server that owns them, as the HTTP API and MCP show them: which sessions a tenant holds, what the next model
call would see (the compacted view), the raw history, and a delete (with ``--forget``, the archived turns too).
An agent developer asking why their agent forgot something reads the view beside ``prompt --session``."""

from __future__ import annotations

import datetime as dt
import json
import sys
from typing import Any
from urllib.parse import quote

from agent_memory.cli.parser import VIEW_BUDGET
from agent_memory.cli.stores_or_server import local_memory, server_for, tenant_through
from agent_memory.core.errors import ConfigError, NotFoundError
from agent_memory.core.limits import MAX_LIST_LIMIT

# The messages' rendering (agent_memory/conversation/, which loads the whole session layer) is imported by the
# view's printing, its one user: `session list`, `messages` and `delete` through a server load none of it.


def cmd_session(args) -> int:
    if args.action == "list":
        if args.session_id is not None:
            raise ConfigError(f"`session list` takes no session ID (got {args.session_id!r}): "
                              "`session view ID` shows one")
    elif args.session_id is None:
        raise ConfigError(f"`session {args.action}` needs a session ID (`agent-memory session list` lists them)")
    if args.forget and args.action != "delete":
        raise ConfigError(f"--forget is an option of `session delete`, not of `session {args.action}`")
    if args.budget is not None and args.action != "view":
        raise ConfigError(f"--budget is an option of `session view`, not of `session {args.action}`")
    args.budget = args.budget or VIEW_BUDGET
    remote = server_for(args)
    try:
        if remote is not None:
            with remote:
                tenant_through(remote, args)
                found = _through_server(remote, args)
        else:
            with local_memory(args, creates=False, encodes=args.action == "delete") as memory:
                found = _local(memory, args)
    except NotFoundError as exc:  # as `inspect` and `forget` of a source that is not there: exit 1, stdout empty
        print(f"error: {exc}", file=sys.stderr)
        return 1
    _print(args, found)
    return 0


def _local(memory, args) -> Any:
    sid = args.session_id
    if args.action == "list":
        return {"sessions": memory.sessions(tenant=args.tenant)}
    if args.action == "view":
        messages = memory.view(sid, args.budget, tenant=args.tenant)
        tokens = memory.session(sid, tenant=args.tenant).count_view(messages)
        return {"session_id": sid, "budget": args.budget, "tokens": tokens, "messages": messages}
    if args.action == "messages":
        return {"session_id": sid, "messages": memory.messages(sid, tenant=args.tenant)}
    return memory.delete_session(sid, forget_archived=args.forget, tenant=args.tenant)


def _through_server(remote, args) -> Any:
    sid = args.session_id
    if args.action == "list":
        return remote.json("GET", "/v1/sessions")
    if args.action == "view":
        data = remote.view(sid, args.budget)
        return {k: data[k] for k in ("session_id", "budget", "tokens", "messages")}
    if args.action == "messages":
        rows: list[dict[str, Any]] = []
        offset: int | None = 0
        while offset is not None:  # the API pages the history; the command prints all of it
            page = remote.json("GET", f"/v1/sessions/{quote(sid, safe='')}/messages",
                               params={"offset": offset, "limit": MAX_LIST_LIMIT})
            rows += page["messages"]
            offset = page["next_offset"]
        return {"session_id": sid, "messages": rows}
    return remote.delete_session(sid, forget=args.forget)


def _print(args, found: dict[str, Any]) -> None:
    if args.json or args.action in ("messages", "delete"):
        print(json.dumps(found, indent=2, ensure_ascii=False))
    elif args.action == "list":
        sessions = found["sessions"]
        if not sessions:
            print("note: no session for this tenant", file=sys.stderr)
        for s in sorted(sessions, key=lambda s: s["updated_at"] or 0, reverse=True):
            agents = [a for a in s["agents"] if a]
            print(f"{s['session_id']}\t{s['messages']} messages\tlast {_when(s['updated_at'])}"
                  + (f"\tsub-agents: {', '.join(agents)}" if agents else ""))
    else:  # the view as the model would read it: one line per message, tool traffic and markers as they stand
        from agent_memory.conversation.messages import call_names, readable

        print(f"# session {found['session_id']}: {len(found['messages'])} messages, {found['tokens']} of "
              f"{found['budget']} tokens")
        names: dict[str, str] = {}  # a result's tool, named by the call before it
        for message in found["messages"]:
            print(readable([message], max_chars_per_part=None, names=names))
            names.update(call_names(message))


def _when(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
