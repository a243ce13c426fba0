"""The PostgreSQL side of the contract suites: a fresh schema per test on the server that
scripts/test.sh starts (AGENT_MEMORY_POSTGRES_URL); tests needing it skip, with the reason, without it."""

from __future__ import annotations

import os
import socket
import threading
import uuid

import pytest

# conftest.py moves the URL here, out of the product settings' reach.
POSTGRES_URL = os.environ.get("AGENT_MEMORY_TEST_POSTGRES_URL")
NEEDS_POSTGRES = [
    pytest.mark.postgres,
    pytest.mark.skipif(not POSTGRES_URL, reason="AGENT_MEMORY_POSTGRES_URL not set: no PostgreSQL to test "
                                                "(scripts/test.sh starts one)"),
]


def needs_postgres(test):
    """``test`` with the marks of NEEDS_POSTGRES (a decorator, where a module holds tests without it too)."""
    for mark in NEEDS_POSTGRES:
        test = mark(test)
    return test


def postgres_param(name: str = "postgres"):
    """A backend parameter that runs only where a PostgreSQL server is configured."""
    return pytest.param(name, marks=NEEDS_POSTGRES)


class FreshSchema:
    """Opens pools on one new schema (reopening sees the same tables); drops it at the end."""

    def __init__(self) -> None:
        self.schema = f"t_{uuid.uuid4().hex[:16]}"
        self.opened: list = []

    def open(self, pool_size: int = 4):
        from agent_memory.stores.postgres import PostgresDB

        db = PostgresDB(POSTGRES_URL, schema=self.schema, pool_size=pool_size)
        self.opened.append(db)
        return db

    @property
    def url(self) -> str:
        """The server's URL with this schema as search_path: for settings and other processes
        (open() first, so that the schema and its tables exist)."""
        sep = "&" if "?" in POSTGRES_URL else "?"
        return f"{POSTGRES_URL}{sep}options=-csearch_path%3D{self.schema}"

    def cleanup(self) -> None:
        if self.opened:
            self.opened[-1].drop_schema()
        for db in self.opened:
            db.close()


class BackendOpener:
    """Opens one store per call on a contract suite's backend ("sqlite" under ``tmp_path``, or
    "postgres" on a fresh schema) and closes every one, and the schema, at ``cleanup``."""

    def __init__(self, backend: str, tmp_path) -> None:
        self.backend = backend
        self.tmp_path = tmp_path
        self.schema = FreshSchema() if backend == "postgres" else None
        self.opened: list = []

    def open_sqlite(self, tmp_path):
        raise NotImplementedError

    def open_postgres(self, db):
        raise NotImplementedError

    def __call__(self):
        store = self.open_sqlite(self.tmp_path) if self.backend == "sqlite" else self.open_postgres(self.schema.open())
        self.opened.append(store)
        return store

    def cleanup(self) -> None:
        for store in self.opened:
            store.close()
        if self.schema:
            self.schema.cleanup()
class CuttableRelay:
    """A loopback TCP relay to the test server that a test cuts and restores on the same port: while cut,
    connections are refused and the open ones are dropped, which is what a client sees of a database that
    went down (the shared test server itself stays up for the other tests). ``hang()``: the open ones are
    dropped and new ones accepted but never answered, as by a server that hangs."""

    def __init__(self, url: str) -> None:
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        self._target = (parts.hostname or "127.0.0.1", parts.port or 5432)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = url.replace(f"@{parts.hostname}:{parts.port}/", f"@127.0.0.1:{self.port}/", 1)
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._listening = False
        self._hanging = False
        self._acceptor: threading.Thread | None = None
        self.restore()

    def hang(self) -> None:
        self.cut()
        self.restore(hanging=True)

    def restore(self, hanging: bool = False) -> None:
        self._hanging = hanging
        listener = socket.create_server(("127.0.0.1", self.port))
        listener.settimeout(0.05)
        self._listening = True
        self._acceptor = threading.Thread(target=self._accept, args=(listener,), daemon=True)
        self._acceptor.start()

    def cut(self) -> None:
        """Refuse new connections (the listener is closed when this returns) and drop the open ones."""
        with self._lock:
            self._listening = False
            for sock in self._open:
                _shut(sock)
            self._open.clear()
        if self._acceptor:
            self._acceptor.join()

    close = cut

    def _accept(self, listener: socket.socket) -> None:
        with listener:
            while self._listening:
                try:
                    client, _ = listener.accept()
                except TimeoutError:
                    continue
                if self._hanging:
                    with self._lock:
                        self._open.add(client)
                    continue
                try:
                    server = socket.create_connection(self._target)
                except OSError:
                    client.close()
                    continue
                with self._lock:
                    if not self._listening:  # cut while this one was being accepted
                        _shut(client)
                        _shut(server)
                        return
                    self._open |= {client, server}
                for source, sink in ((client, server), (server, client)):
                    threading.Thread(target=_pipe, args=(source, sink), daemon=True).start()


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        _shut(source)
        _shut(sink)


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
