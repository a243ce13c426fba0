"""``agent-memory serve``: the API under uvicorn."""

from __future__ import annotations

import errno
import logging
import signal
import socket
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import uvicorn
from uvicorn.config import STARTUP_FAILURE
from uvicorn.server import HANDLED_SIGNALS

from agent_memory.api.app import create_app
from agent_memory.api.state import check_admin_keys, check_api_keys, check_tenant_names, is_loopback
from agent_memory.core.config import load_settings
from agent_memory.core.errors import ConfigError
from agent_memory.core.owner import DataDirBusyError, busy_message, client_url, current_holder, own
from agent_memory.services import check_models_installed

log = logging.getLogger(__name__)


def serve(host: str | None = None, port: int | None = None, data_dir: str | None = None) -> int:
    """Run the API until interrupted; ``host``/``port``/``data_dir`` override the settings."""
    settings = load_settings()
    overrides: dict = {"data_dir": Path(data_dir)} if data_dir else {}
    if host:
        overrides["api_host"] = host
    if port is not None:
        overrides["api_port"] = port
    settings = settings.model_copy(update=overrides)
    if not is_loopback(settings.api_host) and not settings.api_keys:
        # Off loopback every request needs a key; with none configured nothing could ever be served.
        raise ConfigError(f"listening on {settings.api_host!r} needs API keys: set AGENT_MEMORY_API_KEYS, "
                          'e.g. \'{"<secret>": "<tenant>"}\'')
    check_api_keys(settings.api_keys, settings.api_host)
    check_admin_keys(settings)
    # A model that is not installed is a configuration error: refused now, as the CLI refuses it, not met by
    # the warm-up after the server started (which then stayed up, unready for ever).
    check_models_installed(settings)
    # A data dir that holds nothing yet (and no shared catalog) holds no tenant from before the name rule.
    fresh = not settings.postgres_url and not (settings.data_dir.is_dir() and any(settings.data_dir.iterdir()))
    check_tenant_names(settings, (lambda name: False) if fresh else None)
    # The data dir is this server's from before anything opens its stores until the process ends: a
    # second server on it stops here, naming this one; the CLI and `mcp` find it and use its API.
    host, port = settings.api_host, settings.api_port
    holder = current_holder(settings.data_dir)  # a server on it already: that, rather than its port, is the news
    if holder is not None:
        raise DataDirBusyError(busy_message(settings.data_dir, holder, "serve", "serve"), holder)
    check_port_free(host, port)  # before the data dir is created or opened and the model loads
    with own(settings.data_dir, "serve", address=f"{host}:{port}", url=client_url(host, port), doing="serve"):
        app = create_app(settings)
        log.info("serving on http://%s:%d", host, port)
        return run_app(app, host, port)


def run_app(app, host: str, port: int) -> int:
    """Serve ``app`` under uvicorn until SIGTERM or SIGINT; 0 after a graceful stop (``_stop_signals_to``),
    uvicorn's startup-failure code when it never started (it logged why; ``uvicorn.run`` exits the same)."""
    # log_config=None: uvicorn's own lines (start, stop, the access log) go through the root logger that the
    # command set up, time-stamped like every other line; its default config printed them without a time.
    if not logging.getLogger().handlers:
        logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="info", log_config=None))
    quiet = QuietHealthChecks()
    access = logging.getLogger("uvicorn.access")
    access.addFilter(quiet)
    try:
        with _stop_signals_to(server):
            server.run()
    finally:
        access.removeFilter(quiet)
    return 0 if server.started else STARTUP_FAILURE


class QuietHealthChecks(logging.Filter):
    """Leave answered health checks out of the access log: a compose health check or a load balancer asks
    every few seconds, and those lines buried every other request. A failing one is still logged."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        # uvicorn's access record: (client, method, path, http version, status)
        if len(args) == 5 and str(args[2]).split("?")[0] in HEALTH_PATHS and args[4] == 200:
            return False
        return True


HEALTH_PATHS = ("/healthz", "/readyz")


def check_port_free(host: str, port: int) -> None:
    """Refuse a port that cannot be listened on, before anything starts: uvicorn finds out only after the
    app started (the data dir's files created, the stores opened) and exits 3 with the raw OSError. Each
    address ``host`` names is bound for an instant as asyncio's server binds it (SO_REUSEADDR, so a port
    whose last connections linger in TIME_WAIT is free, as it is to uvicorn)."""
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ConfigError(f"cannot listen on {host!r}: {exc.strerror or exc} (--host names an address of this "
                          "machine)") from exc
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6 and hasattr(socket, "IPV6_V6ONLY"):
                probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)  # as asyncio's server does
            try:
                probe.bind(address)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    raise ConfigError(f"port {port} on {host} is in use (another agent-memory serve? `--port` "
                                      "picks another)") from exc
                raise ConfigError(f"cannot listen on port {port} on {host}: {exc.strerror or exc}") from exc


@contextmanager
def _stop_signals_to(server: uvicorn.Server) -> Iterator[None]:
    """SIGTERM and SIGINT stop ``server`` gracefully, and the process then exits 0.

    uvicorn catches both while it serves, shuts down, then restores the handlers it found and raises the
    signal again (uvicorn/server.py ``capture_signals``): under the default handlers that killed the
    process by SIGTERM after a clean shutdown (exit 143, which systemd marks as failed) or raised
    KeyboardInterrupt (exit 130). The handlers it finds here ask the server to stop: on that second
    delivery it already has; before uvicorn's own are in place (during its start) it stops as soon as
    it has started. While it serves, uvicorn's handlers are in place (a second Ctrl-C forces the exit)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # uvicorn handles no signals off the main thread either
        return

    def stop(sig: int, frame) -> None:
        server.should_exit = True

    previous = {sig: signal.signal(sig, stop) for sig in HANDLED_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
