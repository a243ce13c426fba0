"""What each ``agent-memory`` subcommand does, given its parsed arguments (``parser.py``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agent_memory.cli.stores_or_server import data_dir_of, local_memory, own_stores_only, server_for, tenant_through
from agent_memory.core.config import load_settings
from agent_memory.core.errors import ConfigError
from agent_memory.core.metafilter import conditions
from agent_memory.core.owner import own
from agent_memory.core.sample_corpus import SAMPLES

# What a command needs only where it opens the stores itself (the ingestion's upkeep, the services) is imported
# on that path, so that a command through a server loads none of it (nor the models and store clients it
# imports); the server commands (serve, worker, mcp) import their stacks (FastAPI, uvicorn, the MCP SDK), and
# `eval` the evaluation harness, when they run, so that the other commands and --help do not load them.

# Decisions of a prompt that change what the caller gets (memory/memory.py): `prompt` also says them on stderr.
NOTED_DECISIONS = ("no such session", "archive catching up")


def cmd_ingest(args) -> int:
    remote = server_for(args)
    if remote is not None:
        with remote:
            tenant_through(remote, args)
            # The data dir the server owns is ours (found through its lock): kept out of the walk as locally.
            report = remote.ingest_paths(args.paths, recursive=args.recursive, glob=args.glob,
                                         progress=not args.json, base=args.base, keep_missing=args.keep_missing,
                                         data_dir=data_dir_of(args) if remote.owner else None,
                                         ignore_rules=args.ignore_rules)
    else:
        with local_memory(args) as memory:
            report = memory.add_paths(args.paths, recursive=args.recursive, glob=args.glob, progress=not args.json,
                                      base=args.base, keep_missing=args.keep_missing, ignore_rules=args.ignore_rules)
    listed = json.dumps(report.to_dict(), indent=2) if args.json else None
    print(listed or report.render(verbose=args.verbose, listed_in="--json"))
    return 0 if report.ok else 1


def cmd_forget(args) -> int:
    """Forget what ``ingest`` stored under an ID, a ``./`` path or a file's absolute path; say what matched."""
    remote = server_for(args)
    if remote is not None:
        with remote:
            tenant = tenant_through(remote, args)
            removed, similar = remote.forget_or_similar(args.source_id)
        print(json.dumps({"source_id": args.source_id, **removed}, ensure_ascii=False))
        if not any(removed.values()):
            _nothing_under(args.source_id, tenant, similar)
            return 1
        return 0
    with local_memory(args, creates=False, encodes=False) as memory:
        matched = memory.matching_sources(args.source_id)
        # One removal of all it names, as through a server: the claims of a file's job that died before its
        # manifest was written are released under the file's ID too (claims_released).
        removed = memory.forget(args.source_id)
        similar = [] if matched or any(removed.values()) else memory.similar_sources(args.source_id)
    print(json.dumps({"source_id": args.source_id, "matched": matched, **removed}, ensure_ascii=False))
    if not matched and not any(removed.values()):
        _nothing_under(args.source_id, memory.tenant, similar)
    return 0 if any(removed.values()) else 1


def _nothing_under(given: str, tenant: str, similar: list[str]) -> None:
    """On stderr, one line: nothing is stored under ``given``, how source IDs are named, and the
    stored IDs that look like it."""
    also = "; a file's absolute or ./ path also works"
    hint = f"; similar stored IDs: {', '.join(similar)}" if similar else ""
    print(f"nothing stored under {given!r} for tenant {tenant!r}: source IDs are paths "
          f"relative to the base given at ingestion (default: the folder holding each path given, so "
          f"'ingest notes/' stores 'notes/x.md'){also}{hint}", file=sys.stderr)


def cmd_gc(args) -> int:
    """Expired items (settings ttl_days) out of every store at once."""
    remote = server_for(args)
    if remote is not None:
        with remote:
            tenant_through(remote, args)
            print(json.dumps(remote.gc()))
        return 0
    from agent_memory.ingest.upkeep import expire

    with local_memory(args, creates=False, encodes=False) as memory, memory.write_lock:
        removed = expire(memory.services, tenants=[args.tenant] if args.tenant else None)
    print(json.dumps({"expired": removed}))
    return 0


def cmd_reindex(args) -> int:
    """Every stored vector re-embedded with the embedding settings in force (stored text, no files)."""
    own_stores_only(args, "reindex", "it rewrites the stores of its data dir, which a running server must not hold")
    from agent_memory.ingest.lock import ingest_lock
    from agent_memory.ingest.reindex import reindex

    settings = load_settings(**({"data_dir": args.data_dir} if getattr(args, "data_dir", None) else {}))
    with own(settings.data_dir, "reindex", doing="reindex it"), \
            ingest_lock(settings.data_dir):
        report = reindex(settings, everything=args.everything)
    print(json.dumps(report.to_dict()))
    return 0


def _note_if_empty(memory, tenant: str | None) -> None:
    """On stderr (stdout stays the JSON scripts read): an empty tenant, and the tenants that hold data."""
    from agent_memory.ingest.upkeep import empty_tenant_note

    note = empty_tenant_note(memory.services, tenant or memory.tenant, name_others=True,
                             where=f"the data dir {memory.services.settings.data_dir.resolve()}")
    if note:
        print(f"note: {note}", file=sys.stderr)


def cmd_stats(args) -> int:
    """``--tenant T``: that tenant's counts, the object ``GET /v1/stats`` answers for it; else the counts of
    every tenant the command may see, by tenant (through a server: the one it serves this caller)."""
    remote = server_for(args)
    if remote is not None:
        with remote:
            tenant = tenant_through(remote, args)
            counts = remote.stats(args.soon_days)
        print(json.dumps(counts if args.tenant is not None else {tenant: counts}, indent=2))
        return 0
    from agent_memory.ingest.upkeep import stats

    with local_memory(args, creates=False, encodes=False) as memory:
        counts = stats(memory.services, args.tenant, soon_days=args.soon_days)
        found = counts[args.tenant] if args.tenant is not None else counts
        # The catalog read before anything is printed: a damaged one is one error, not the JSON and then an error.
        if args.tenant or not memory.services.catalog.tenants():
            _note_if_empty(memory, args.tenant)
    print(json.dumps(found, indent=2))
    return 0


def cmd_list(args) -> int:
    remote = server_for(args)
    if remote is not None:
        with remote:
            tenant_through(remote, args)
            params = {"prefix": args.prefix, "offset": args.offset, "limit": args.limit,
                      **({"kind": args.kind} if args.kind else {})}
            page = remote.json("GET", "/v1/sources", params=params)  # its total and next offset too
    else:
        from agent_memory.ingest.upkeep import source_page

        with local_memory(args, creates=False, encodes=False) as memory:
            page = source_page(memory.services, args.tenant or memory.services.settings.tenant, prefix=args.prefix,
                               kind=args.kind, offset=args.offset, limit=args.limit)
            if not page["sources"]:
                _note_if_empty(memory, args.tenant)
    print(json.dumps(page, indent=2, ensure_ascii=False))
    return 0


def cmd_inspect(args) -> int:
    """One source as stored, named as ``forget`` takes it: an ID, its ./ path or the file's absolute path."""
    remote = server_for(args)
    if remote is not None:
        with remote:
            tenant = tenant_through(remote, args)
            # The server resolves a path as forget does, and names the stored IDs like one that matched nothing.
            found, similar = remote.inspect_or_similar(args.source_id, full=args.full)
    else:
        from agent_memory.ingest.upkeep import inspect

        with local_memory(args, creates=False, encodes=False) as memory:
            tenant = memory.tenant
            # The given ID last: a source known only by its items has no catalog entry to match.
            named = [*memory.matching_sources(args.source_id), args.source_id]
            found = next(filter(None, (inspect(memory.services, tenant, sid, full=args.full) for sid in named)), None)
            similar = [] if found else memory.similar_sources(args.source_id)
    if not found:  # stdout stays empty (no `null` for a script to read as a source): the hint goes to stderr
        _nothing_under(args.source_id, tenant, similar)
        return 1
    print(json.dumps(found, indent=2, ensure_ascii=False))
    return 0


def _where(text: str | None) -> dict | None:
    """``--where`` JSON as prompt filters; a malformed one is a usage error naming it."""
    if not text:
        return None
    try:
        spec = json.loads(text)
        conditions(spec if isinstance(spec, dict) else {"": spec})
    except ValueError as exc:  # json.JSONDecodeError is a ValueError too
        raise ConfigError(f"--where {text!r}: {exc}") from exc
    return {"metadata": spec}


def cmd_prompt(args) -> int:
    filters = _where(args.where)
    remote = server_for(args)
    if remote is not None:
        with remote:
            tenant_through(remote, args)
            result = remote.prompt({"question": args.question, "session_id": args.session, "budget": args.budget,
                                    "preset": args.preset, "filters": filters or {},
                                    "question_date": args.question_date})
    else:
        with local_memory(args, creates=False, preset=args.preset) as memory:
            result = memory.prompt(args.question, session_id=args.session, budget=args.budget, debug=True,
                                   filters=filters, question_date=args.question_date)
            if not result.passages:
                _note_if_empty(memory, args.tenant)
    for decision in result.decisions:  # on stderr too: a typo in --session is otherwise easy to miss
        if decision.action in NOTED_DECISIONS:
            print(f"note: {decision.reason}", file=sys.stderr)
    if args.json:
        print(json.dumps(result.debug_dict(), indent=2, ensure_ascii=False))
    else:
        from agent_memory.retrieval.debug import render_dump

        print(render_dump(result))
    return 0


def cmd_demo(args) -> int:
    """The main job on embedded defaults: ingest the sample corpus, then show a prompt."""
    remote = server_for(args)
    if remote is not None:
        with remote:
            tenant_through(remote, args)
            report = remote.ingest_paths([SAMPLES], recursive=True, progress=True)
            print(report.render())
            if not report.ok:
                return 1
            result = remote.prompt({"question": args.question, "budget": args.budget})
        print(f"\n=== Prompt for: {args.question!r} ({result.total_tokens} of {args.budget} tokens) ===\n")
        print(result.prompt)
        return 0
    with local_memory(args) as memory:
        report = memory.add_paths([SAMPLES], recursive=True, progress=True)
        print(report.render())
        if not report.ok:
            return 1
        question = args.question
        result = memory.prompt(question, budget=args.budget)
        print(f"\n=== Prompt for: {question!r} ({result.total_tokens} of {args.budget} tokens) ===\n")
        print(result.prompt)
    return 0


def cmd_eval(args) -> int:
    from agent_memory.evaluation.cli import run_eval

    if getattr(args, "data_dir", None):  # stores of its own there: owned like any other command's
        with own(args.data_dir, "eval", doing="evaluate on it (give the evaluation a data dir of its own)"):
            return run_eval(args)
    return run_eval(args)



def cmd_serve(args) -> int:
    own_stores_only(args, "serve", "it is the server")
    from agent_memory.api.server import serve

    return serve(host=args.host, port=args.port, data_dir=getattr(args, "data_dir", None))


def cmd_worker(args) -> int:
    from agent_memory.api.worker import work
    from agent_memory.services import check_models_installed

    own_stores_only(args, "worker", "it takes its jobs from PostgreSQL and writes the shared stores itself")
    settings = load_settings()
    if getattr(args, "data_dir", None):
        settings = settings.model_copy(update={"data_dir": Path(args.data_dir)})
    check_models_installed(settings)  # a configuration error now, as `serve` refuses it, not a job's failure later
    with own(settings.data_dir, "worker", doing="run a worker on it (give the worker a data dir of its own)"):
        return work(settings, once=args.once, worker_id=args.id, lease_s=args.lease_s, poll_s=args.poll_s)


def cmd_mcp(args) -> int:
    from agent_memory.mcp_server.server import serve

    remote = server_for(args)
    if remote is not None:
        with remote:
            tenant_through(remote, args)
            return serve(http=args.http, host=args.host, port=args.port, remote=remote)
    from agent_memory.services import check_models_installed

    settings = load_settings()
    check_models_installed(settings)  # the models are this process's only without a server
    if args.http:  # before `own` creates the data dir, as `serve` checks it
        from agent_memory.api.server import check_port_free
        from agent_memory.mcp_server.server import HTTP_PORT

        check_port_free(args.host or settings.api_host, HTTP_PORT if args.port is None else args.port)
    with own(data_dir_of(args), "mcp", doing="serve MCP on it"):
        return serve(http=args.http, host=args.host, port=args.port, data_dir=getattr(args, "data_dir", None),
                     tenant=args.tenant)
