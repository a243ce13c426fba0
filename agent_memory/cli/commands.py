"""What each ``agent-memory`` subcommand does, given its parsed arguments (``parser.py``)."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from agent_memory.core.config import load_settings, setting_variable
from agent_memory.core.errors import AgentMemoryError, ConfigError
from agent_memory.core.metafilter import conditions
from agent_memory.core.owner import current_holder, own
from agent_memory.core.sample_corpus import SAMPLES
from agent_memory.core.settings_here import settings_here
from agent_memory.ingest.lock import ingest_lock
from agent_memory.ingest.reindex import reindex
from agent_memory.ingest.upkeep import empty_tenant_note, expire, inspect, list_sources, stats
from agent_memory.memory import Memory
from agent_memory.memory.arguments import check_tenant
from agent_memory.remote import RemoteMemory
from agent_memory.retrieval.debug import render_dump
from agent_memory.services import check_models_installed

# The server commands (serve, worker, mcp) import their stacks (FastAPI, uvicorn, the MCP SDK), and `eval`
# the evaluation harness, when they run, so that the other commands and --help do not load them.

# Decisions of a prompt that change what the caller gets (memory/memory.py): `prompt` also says them on stderr.
NOTED_DECISIONS = ("no such session", "archive catching up")


def _data_dir(args, *, lenient: bool = False) -> Path:
    """``--data-dir``, else the setting; ``lenient``: read even where other settings are invalid (to find the
    server that owns it, which applies its own)."""
    if getattr(args, "data_dir", None):
        return Path(args.data_dir)
    return settings_here().value("data_dir") if lenient else load_settings().data_dir


class NoDataDirError(AgentMemoryError):
    """A command that reads what is stored was pointed at a data dir that does not exist: nothing to read,
    and nothing is created for it (exit 1, as a source not found)."""

    exit_code = 1


def _stored_data_dir(args) -> Path:
    """The data dir a command that only reads (or removes) what is stored works on: it must exist. Opening
    the stores would create it (the session database, the embedding cache, the vector shards' sparse
    files), in whatever folder the command happened to run. Invalid settings are said first: they stop the
    command wherever its data dir is."""
    settings = load_settings()
    data_dir = Path(args.data_dir) if getattr(args, "data_dir", None) else settings.data_dir
    if not data_dir.exists():
        # The tenant named is checked as Memory would (no data, so no name from before the rule): a name no
        # data dir could hold is the mistake to say, wherever the data dir is.
        check_tenant(settings.tenant if getattr(args, "tenant", None) is None else args.tenant)
        raise NoDataDirError(f"no data dir at {data_dir.resolve()}: nothing is stored there yet (`agent-memory "
                             "ingest` creates it; --data-dir or AGENT_MEMORY_DATA_DIR choose another)")
    return data_dir


@contextmanager
def _memory(args, *, creates: bool = True, **kwargs) -> Iterator[Memory]:
    """The Python API over the settings (``--data-dir`` overrides where the stores live), with the
    data dir owned by this process while it runs (agent_memory/core/owner.py). ``creates``: False for a
    command that only reads or removes what is stored, which refuses a data dir that does not exist
    rather than create one."""
    tenant = getattr(args, "tenant", None)  # given blank (--tenant ''), refused as every surface does
    data_dir = _data_dir(args) if creates else _stored_data_dir(args)
    with own(data_dir, args.command, doing=f"run `agent-memory {args.command}` on it"), \
            Memory(data_dir=getattr(args, "data_dir", None), tenant=tenant, **kwargs) as memory:
        yield memory


def _server(args) -> RemoteMemory | None:
    """The server to work through: ``--server URL``, else the live ``serve`` that owns the data dir,
    else None (the command opens the stores itself)."""
    if getattr(args, "server", None):
        _note_server_settings()
        return RemoteMemory(args.server)
    holder = current_holder(_data_dir(args, lenient=True))
    if holder is None or not holder.url:
        return None  # no owner, or one without an API: _memory names it if it still holds the data dir
    print(f"note: the data dir is served by {holder.describe()}: working through its HTTP API", file=sys.stderr)
    _note_server_settings()
    return RemoteMemory(holder.url, owner=holder.describe())


# Settings this process still uses when it works through a server, so they are not said to be ignored:
# data_dir (whose lock file names the server), tenant (checked against the server's: _tenant_through),
# api_host and api_keys (`mcp --http` through a server listens on that host and guards its own listener
# with those keys: mcp_server/server.py) and model_cache_dir (where every process on this machine keeps
# its model graphs: nothing the server answers depends on it). The API key is AGENT_MEMORY_API_KEY, no
# setting. Every other setting configures what the server does (ingestion, embedding, retrieval, stores,
# LLM, its listener) and is the server's own.
CLIENT_SETTINGS = frozenset({"data_dir", "tenant", "api_host", "api_keys", "model_cache_dir"})
TENANT_ENV = "AGENT_MEMORY_TENANT"


def _note_server_settings() -> None:
    """On stderr, one line naming the server-side settings set here (environment or .env), which a command
    through a server does not apply: without it they would be ignored silently (the server's apply). One
    that is invalid here is said to be, and does not stop the command (it would stop one without a server)."""
    here = settings_here()
    invalid = {name: problem for name, problem in here.invalid.items() if name not in CLIENT_SETTINGS}
    ignored = sorted(here.set_here - CLIENT_SETTINGS - set(invalid))
    if not ignored and not invalid:
        return
    parts = []
    if ignored:
        parts.append(f"{_variables(ignored)} set here {'does' if len(ignored) == 1 else 'do'} not apply "
                     "through a server")
    if invalid:
        problems = "; ".join(f"{name}: {problem}" for name, problem in invalid.items())
        one = len(invalid) == 1
        parts.append(f"{_variables(invalid)} set here {'is' if one else 'are'} invalid ({problems}) and "
                     f"{'does' if one else 'do'} not apply through a server")
    # The server decodes what it is sent by its own setting: the file bytes go as they are.
    encodings = (" (it reads the files it is sent in the encodings its own AGENT_MEMORY_TEXT_ENCODINGS names)"
                 if "text_encodings" in here.set_here else "")
    print(f"note: {'; '.join(parts)}: its own settings do{encodings}", file=sys.stderr)


def _variables(names) -> str:
    return ", ".join(setting_variable(name) for name in names)


def _tenant_through(remote: RemoteMemory, args) -> str:
    """The server's tenant for this command, refused (naming how it was given) unless it is the tenant the
    command would use locally: ``--tenant``, else AGENT_MEMORY_TENANT when set (unset: the server's own
    tenant, or its key's)."""
    if getattr(args, "tenant", None) is not None:
        return remote.check_tenant(_tenant_name(remote, args.tenant))
    here = settings_here()  # the tenant is read and checked even where settings the server applies are invalid
    if "tenant" in here.set_here:  # refused as locally where it is no tenant name (core/names.py)
        return remote.check_tenant(_tenant_name(remote, here.value("tenant")), given_as=TENANT_ENV)
    return remote.check_tenant(None)


def _tenant_name(remote: RemoteMemory, wanted: str) -> str:
    """``wanted`` if it is a tenant name, or the server's own tenant (served before the rule, it holds data):
    else the rule's refusal, as a local command gives it."""
    try:
        return check_tenant(wanted)
    except ConfigError:
        if wanted and wanted == remote.tenant():
            return wanted
        raise


def cmd_ingest(args) -> int:
    remote = _server(args)
    if remote is not None:
        with remote:
            _tenant_through(remote, args)
            # The data dir the server owns is ours (found through its lock): kept out of the walk as locally.
            report = remote.ingest_paths(args.paths, recursive=args.recursive, glob=args.glob,
                                         progress=not args.json, base=args.base, keep_missing=args.keep_missing,
                                         data_dir=_data_dir(args) if remote.owner else None,
                                         ignore_rules=args.ignore_rules)
    else:
        with _memory(args) as memory:
            report = memory.add_paths(args.paths, recursive=args.recursive, glob=args.glob, progress=not args.json,
                                      base=args.base, keep_missing=args.keep_missing, ignore_rules=args.ignore_rules)
    listed = json.dumps(report.to_dict(), indent=2) if args.json else None
    print(listed or report.render(verbose=args.verbose, listed_in="--json"))
    return 0 if report.ok else 1


def cmd_forget(args) -> int:
    """Forget what ``ingest`` stored under an ID, a ``./`` path or a file's absolute path; say what matched."""
    remote = _server(args)
    if remote is not None:
        with remote:
            tenant = _tenant_through(remote, args)
            removed, similar = remote.forget_or_similar(args.source_id)
        print(json.dumps({"source_id": args.source_id, **removed}, ensure_ascii=False))
        if not any(removed.values()):
            _nothing_under(args.source_id, tenant, similar)
            return 1
        return 0
    with _memory(args, creates=False) as memory:
        matched = memory.matching_sources(args.source_id)
        removed = {"sources": 0, "items": 0, "triples": 0}
        for sid in matched:
            for key, value in memory.forget(sid).items():
                removed[key] += value
        similar = [] if matched else memory.similar_sources(args.source_id)
    print(json.dumps({"source_id": args.source_id, "matched": matched, **removed}, ensure_ascii=False))
    if not matched:
        _nothing_under(args.source_id, memory.tenant, similar)
    return 0 if matched and any(removed.values()) else 1


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
    remote = _server(args)
    if remote is not None:
        with remote:
            _tenant_through(remote, args)
            print(json.dumps(remote.gc()))
        return 0
    with _memory(args, creates=False) as memory, memory.write_lock:
        removed = expire(memory.services, memory.ingestion.forget, tenants=[args.tenant] if args.tenant else None)
    print(json.dumps({"expired": removed}))
    return 0


def cmd_reindex(args) -> int:
    """Every stored vector re-embedded with the embedding settings in force (stored text, no files)."""
    _own_stores_only(args, "reindex", "it rewrites the stores of its data dir, which a running server must not hold")
    settings = load_settings(**({"data_dir": args.data_dir} if getattr(args, "data_dir", None) else {}))
    with own(settings.data_dir, "reindex", doing="reindex it"), \
            ingest_lock(settings.data_dir):
        report = reindex(settings, everything=args.everything)
    print(json.dumps(report.to_dict()))
    return 0


def _note_if_empty(memory, tenant: str | None) -> None:
    """On stderr (stdout stays the JSON scripts read): an empty tenant, and the tenants that hold data."""
    note = empty_tenant_note(memory.services, tenant or memory.tenant, name_others=True,
                             where=f"the data dir {memory.services.settings.data_dir.resolve()}")
    if note:
        print(f"note: {note}", file=sys.stderr)


def cmd_stats(args) -> int:
    remote = _server(args)
    if remote is not None:
        with remote:
            tenant = _tenant_through(remote, args)
            print(json.dumps({tenant: remote.stats(args.soon_days)}, indent=2))
        return 0
    with _memory(args, creates=False) as memory:
        print(json.dumps(stats(memory.services, args.tenant, soon_days=args.soon_days), indent=2))
        if args.tenant or not memory.services.catalog.tenants():
            _note_if_empty(memory, args.tenant)
    return 0


def cmd_list(args) -> int:
    remote = _server(args)
    if remote is not None:
        with remote:
            _tenant_through(remote, args)
            rows = remote.list_sources(prefix=args.prefix, kind=args.kind, offset=args.offset, limit=args.limit)
    else:
        with _memory(args, creates=False) as memory:
            rows = list_sources(memory.services, args.tenant or memory.services.settings.tenant, prefix=args.prefix,
                                kind=args.kind, offset=args.offset, limit=args.limit)
            if not rows:
                _note_if_empty(memory, args.tenant)
    print(json.dumps(rows, indent=2, ensure_ascii=False))
    return 0


def cmd_inspect(args) -> int:
    """One source as stored, named as ``forget`` takes it: an ID, its ./ path or the file's absolute path."""
    remote = _server(args)
    if remote is not None:
        with remote:
            tenant = _tenant_through(remote, args)
            # The server resolves a path as forget does, and names the stored IDs like one that matched nothing.
            found, similar = remote.inspect_or_similar(args.source_id, full=args.full)
    else:
        with _memory(args, creates=False) as memory:
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
    remote = _server(args)
    if remote is not None:
        with remote:
            _tenant_through(remote, args)
            result = remote.prompt({"question": args.question, "session_id": args.session, "budget": args.budget,
                                    "preset": args.preset, "filters": filters or {},
                                    "question_date": args.question_date})
    else:
        with _memory(args, creates=False, preset=args.preset) as memory:
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
        print(render_dump(result))
    return 0


def cmd_demo(args) -> int:
    """The main job on embedded defaults: ingest the sample corpus, then show a prompt."""
    remote = _server(args)
    if remote is not None:
        with remote:
            _tenant_through(remote, args)
            report = remote.ingest_paths([SAMPLES], recursive=True, progress=True)
            print(report.render())
            if not report.ok:
                return 1
            result = remote.prompt({"question": args.question, "budget": args.budget})
        print(f"\n=== Prompt for: {args.question!r} ({result.total_tokens} of {args.budget} tokens) ===\n")
        print(result.prompt)
        return 0
    with _memory(args) as memory:
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


def _own_stores_only(args, command: str, why: str) -> None:
    """``--server`` is every command's option, but these open their stores themselves: said, not ignored."""
    if getattr(args, "server", None):
        raise ConfigError(f"`agent-memory {command}` does not work through a server ({why}): drop --server")


def cmd_serve(args) -> int:
    _own_stores_only(args, "serve", "it is the server")
    from agent_memory.api.server import serve

    return serve(host=args.host, port=args.port, data_dir=getattr(args, "data_dir", None))


def cmd_worker(args) -> int:
    from agent_memory.api.worker import work

    _own_stores_only(args, "worker", "it takes its jobs from PostgreSQL and writes the shared stores itself")
    settings = load_settings()
    if getattr(args, "data_dir", None):
        settings = settings.model_copy(update={"data_dir": Path(args.data_dir)})
    check_models_installed(settings)  # a configuration error now, as `serve` refuses it, not a job's failure later
    with own(settings.data_dir, "worker", doing="run a worker on it (give the worker a data dir of its own)"):
        return work(settings, once=args.once, worker_id=args.id, lease_s=args.lease_s, poll_s=args.poll_s)


def cmd_mcp(args) -> int:
    from agent_memory.mcp_server.server import serve

    remote = _server(args)
    if remote is not None:
        with remote:
            _tenant_through(remote, args)
            return serve(http=args.http, host=args.host, port=args.port, remote=remote)
    settings = load_settings()
    check_models_installed(settings)  # the models are this process's only without a server
    if args.http:  # before `own` creates the data dir, as `serve` checks it
        from agent_memory.api.server import check_port_free
        from agent_memory.mcp_server.server import HTTP_PORT

        check_port_free(args.host or settings.api_host, HTTP_PORT if args.port is None else args.port)
    with own(_data_dir(args), "mcp", doing="serve MCP on it"):
        return serve(http=args.http, host=args.host, port=args.port, data_dir=getattr(args, "data_dir", None),
                     tenant=args.tenant)


# Argument types: a value the HTTP API answers 422 for is refused here too, naming it, so a command
# behaves the same with and without a server (argparse prints "argument --x: <message>", rc 2).
