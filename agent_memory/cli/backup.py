"""``agent-memory backup DEST``: a consistent copy of the data dir in a new folder, which opens as a data dir
as it is (agent_memory/ingest/backup.py).

Only the process that holds a data dir's stores can hold their writes still: with a server on the data dir
(found through its owner lock, or named by --server) the server copies it, into DEST on its own machine;
otherwise this command owns the data dir while it copies, as every write command does. A server that requires
API keys takes a backup from an admin key alone (its AGENT_MEMORY_ADMIN_KEYS): this command sends the one in
``ADMIN_KEY_ENV`` when it is set, as every command sends AGENT_MEMORY_API_KEY.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from agent_memory.cli.parser import ADMIN_KEY_ENV
from agent_memory.cli.stores_or_server import server_for, stored_data_dir
from agent_memory.core.config import load_settings
from agent_memory.core.errors import ConfigError
from agent_memory.core.owner import own
from agent_memory.remote import RemoteMemory

# The copy itself (agent_memory/ingest/backup.py, over the stores) is imported where this process makes it:
# a backup through a server, and `check` and `forget` that import this module's key helpers, load none of it.


def cmd_backup(args) -> int:
    remote = server_for(args)
    if remote is not None:
        admin_key = given_admin_key()
        with remote:
            destination = _on_server(args.destination, remote)
            with admin_key_refused(remote, admin_key):
                response = remote.request("POST", "/v1/backup", ok=(202,), json={"destination": destination},
                                          key=admin_key)
            report = remote.answer(response, key=admin_key)
    else:
        from agent_memory.ingest.backup import backup_data_dir

        data_dir = stored_data_dir(args)
        settings = load_settings(data_dir=data_dir)
        with own(data_dir, "backup", doing="back it up"):
            report = backup_data_dir(settings, args.destination).to_dict()
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


def given_admin_key() -> str | None:
    """The admin key this command sends for a server-wide operation (``ADMIN_KEY_ENV``), if one is set."""
    return os.environ.get(ADMIN_KEY_ENV) or None


@contextmanager
def admin_key_refused(remote: RemoteMemory, admin_key: str | None) -> Iterator[None]:
    """A 401 answering the admin key said as what it is (the key itself never printed)."""
    try:
        yield
    except ConfigError as exc:  # a 401: the key sent is none of the server's
        if admin_key is None:
            raise
        raise ConfigError(f"the server at {remote.url} refused the admin key in {ADMIN_KEY_ENV}: it is none "
                          "of its AGENT_MEMORY_ADMIN_KEYS") from exc


def _on_server(destination: str, remote: RemoteMemory) -> str:
    """DEST as the server reads it: a server found through the data dir's lock runs on this machine, so a
    relative path is made absolute here; one named by --server may run elsewhere, where only an absolute
    path means what the user meant."""
    if remote.owner:
        return str(Path(destination).expanduser().resolve())
    if not Path(destination).is_absolute():
        raise ConfigError(f"backup through --server: the destination {destination!r} is a folder on the server's "
                          "machine: give its absolute path there")
    return destination
