"""What a command works on: the data dir's stores, opened by this process (``local_memory``), or the
server that owns the data dir or that ``--server`` names (``server_for``), through its HTTP API with the
tenant checked against the server's (``tenant_through``). A command through a server says on stderr which
settings set here it does not apply (the server applies its own)."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from agent_memory.core.config import load_settings, setting_variable
from agent_memory.core.errors import AgentMemoryError, ConfigError
from agent_memory.core.names import tenant_named
from agent_memory.core.owner import current_holder, own
from agent_memory.core.settings_here import settings_here
from agent_memory.remote import RemoteMemory

# Memory and the services are imported by ``local_memory``, which opens the stores: a command through a server
# never loads them (nor the ingestion, retrieval, models and store clients they import: about a second).
if TYPE_CHECKING:
    from agent_memory.memory import Memory


def data_dir_of(args, *, lenient: bool = False) -> Path:
    """``--data-dir``, else the setting; ``lenient``: read even where other settings are invalid (to find the
    server that owns it, which applies its own)."""
    if getattr(args, "data_dir", None):
        return Path(args.data_dir)
    return settings_here().value("data_dir") if lenient else load_settings().data_dir


class NoDataDirError(AgentMemoryError):
    """A command that reads what is stored was pointed at a data dir that does not exist: nothing to read,
    and nothing is created for it (exit 1, as a source not found)."""

    exit_code = 1


def stored_data_dir(args) -> Path:
    """The data dir a command that only reads (or removes) what is stored works on: it must exist. Opening
    the stores would create it (the session database, the embedding cache, the vector shards' sparse
    files), in whatever folder the command happened to run. Invalid settings are said first: they stop the
    command wherever its data dir is."""
    settings = load_settings()
    data_dir = Path(args.data_dir) if getattr(args, "data_dir", None) else settings.data_dir
    if not data_dir.exists():
        # The tenant named is checked as Memory would (no data, so no name from before the rule): a name no
        # data dir could hold is the mistake to say, wherever the data dir is.
        tenant_named(settings.tenant if getattr(args, "tenant", None) is None else args.tenant)
        raise NoDataDirError(f"no data dir at {data_dir.resolve()}: nothing is stored there yet (`agent-memory "
                             "ingest` creates it; --data-dir or AGENT_MEMORY_DATA_DIR choose another)")
    return data_dir


@contextmanager
def local_memory(args, *, creates: bool = True, encodes: bool = True, **kwargs) -> Iterator[Memory]:
    """The Python API over the settings (``--data-dir`` overrides where the stores live), with the
    data dir owned by this process while it runs (agent_memory/core/owner.py). ``creates``: False for a
    command that only reads or removes what is stored, which refuses a data dir that does not exist
    rather than create one. ``encodes``: False for a command that never embeds text (``READS_STORED``),
    which opens the vectors in the embedding models the data dir records: settings asking for others
    (refused where text is embedded, services.py) are none of its business."""
    from agent_memory.memory import Memory
    from agent_memory.services import settings_for_stored_layout

    tenant = getattr(args, "tenant", None)  # given blank (--tenant ''), refused as every surface does
    data_dir = data_dir_of(args) if creates else stored_data_dir(args)
    settings = load_settings(data_dir=data_dir)
    if not encodes:
        settings = settings_for_stored_layout(settings)
    with own(data_dir, args.command, doing=f"run `agent-memory {args.command}` on it"), \
            Memory(settings=settings, tenant=tenant, **kwargs) as memory:
        yield memory


def server_for(args) -> RemoteMemory | None:
    """The server to work through: ``--server URL``, else the live ``serve`` that owns the data dir,
    else None (the command opens the stores itself)."""
    if getattr(args, "server", None):
        _note_server_settings()
        return RemoteMemory(args.server)
    data_dir = data_dir_of(args, lenient=True)
    holder = current_holder(data_dir)
    if holder is None or not holder.url:
        return None  # no owner, or one without an API: local_memory names it if it still holds the data dir
    print(f"note: the data dir is served by {holder.describe()}: working through its HTTP API", file=sys.stderr)
    _note_server_settings()
    # This machine's server: its messages may name the data dir the user named, which it hides from clients.
    return RemoteMemory(holder.url, owner=holder.describe(), data_dir=data_dir)


# Settings this process still uses when it works through a server, so they are not said to be ignored:
# data_dir (whose lock file names the server), tenant (checked against the server's: tenant_through),
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


def tenant_through(remote: RemoteMemory, args) -> str:
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
        return tenant_named(wanted)
    except ConfigError:
        if wanted and wanted == remote.tenant():
            return wanted
        raise


def own_stores_only(args, command: str, why: str) -> None:
    """``--server`` is every command's option, but these open their stores themselves: said, not ignored."""
    if getattr(args, "server", None):
        raise ConfigError(f"`agent-memory {command}` does not work through a server ({why}): drop --server")

