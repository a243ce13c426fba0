"""What one app instance holds: the Python API's ``Memory`` over the services, jobs, auth, readiness."""

from __future__ import annotations

import gc
import hmac
import ipaddress
import logging
import threading
import time
from typing import Any, Callable

from agent_memory.api import ingestion
from agent_memory.core.config import Settings
from agent_memory.core.errors import ConfigError
from agent_memory.core.names import TENANT_RULE, refusal, tenant_problem
from agent_memory.core.records import MemoryItem, SearchFilter
from agent_memory.memory import Memory

log = logging.getLogger(__name__)
# One question per language path: the first Chinese question loads jieba's part-of-speech tagger
# (question entities), 1.1 s that would otherwise fall on a user's first request.
WARM_UP_QUESTIONS = ("warm up", "预热问题是什么？")
# How long a stop waits for a warm-up still running (loading the models takes seconds; a stop's grace, as
# docker's 10 s, is the operator's bound anyway).
WARM_UP_STOP_WAIT_S = 60

MAX_UPLOAD_BYTES = 64 * 1024 * 1024  # above this: 413


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


# The keys the docs and docker-compose.yml show: copied as they are, anyone who read the docs is let in.
PLACEHOLDER_KEYS = frozenset({"change-me-long-random-key", "k-acme", "k-globex", "<secret>", "<key>"})
MIN_KEY_CHARS = 16  # off loopback; `openssl rand -hex 32` gives 64


def check_api_keys(api_keys: dict[str, str], host: str) -> None:
    """Before a server listens: a key the docs show as an example is refused wherever it listens, and one
    shorter than ``MIN_KEY_CHARS`` is refused off loopback (guessable by anyone who reaches the port) and
    warned of on loopback. Messages name the key's tenant, never the key."""
    named = [(key, repr(tenant)) for key, tenant in dict(api_keys).items()]
    _check_strength("AGENT_MEMORY_API_KEYS", named, host, "the key of tenant {}",
                    lambda tenants: f"the keys of tenants {', '.join(sorted(set(tenants)))}")


def _check_strength(setting: str, named: list[tuple[str, str]], host: str, one: str,
                    many: Callable[[list[str]], str]) -> None:
    """The rule of :func:`check_api_keys` over ``named`` ((key, what names it: a tenant, a position)): a key is
    said as ``one`` (a format of its name) or, several short ones, as ``many`` of their names."""
    fix = "set a long random key, e.g. `openssl rand -hex 32`"
    short: list[str] = []
    for key, name in named:
        if key in PLACEHOLDER_KEYS:
            raise ConfigError(f"{setting}: {one.format(name)} is the example from the documentation, which anyone "
                              f"can read: {fix}")
        if len(key) < MIN_KEY_CHARS:
            short.append(name)
    if not short:
        return
    which = f"{one.format(short[0])} is" if len(short) == 1 else f"{many(short)} are"
    problem = f"{setting}: {which} shorter than {MIN_KEY_CHARS} characters"
    if not is_loopback(host):
        raise ConfigError(f"{problem}, too easily guessed by whoever reaches {host!r}: {fix}")
    log.warning("%s: accepted on loopback (%s); off loopback it would be refused", problem, host)


def check_admin_keys(settings) -> None:
    """Admin keys (AGENT_MEMORY_ADMIN_KEYS) pass the API keys' rules (no example key; long off loopback) and
    two of their own: none is also an API key (an admin key reaches no tenant's memory, and a key that was both
    would make a tenant's holder the whole server's), and they go with API keys (a server without them lets
    every caller run the server-wide operations already). Each key is named by its position, never quoted."""
    admin = list(settings.admin_keys)
    if not admin:
        return
    if not settings.api_keys:
        raise ConfigError("AGENT_MEMORY_ADMIN_KEYS is set but AGENT_MEMORY_API_KEYS is not: without API keys every "
                          "caller runs the server-wide operations already; set API keys for the tenants, or unset "
                          "the admin keys")
    for n, key in enumerate(admin, 1):
        tenant = tenant_for_key(dict(settings.api_keys), key)
        if tenant is not None:
            raise ConfigError(f"AGENT_MEMORY_ADMIN_KEYS: admin key {n} is also the API key of tenant {tenant!r}; "
                              "an admin key is no tenant's key: give it a key of its own")
    _check_strength("AGENT_MEMORY_ADMIN_KEYS", [(key, str(n)) for n, key in enumerate(admin, 1)], settings.api_host,
                    "admin key {}", lambda positions: f"admin keys {', '.join(positions)}")


def is_admin_key(admin_keys: list[str], key: str) -> bool:
    """Whether ``key`` is one of the admin keys, compared against every one in constant time."""
    found = False
    for known in admin_keys:
        found |= hmac.compare_digest(known.encode(), key.encode())
    return found


def tenant_for_key(api_keys: dict[str, str], key: str) -> str | None:
    """The tenant bound to an API key, or None. Shared by the HTTP API and the MCP server."""
    tenant = None
    # Compare against every key in constant time so timing does not reveal a key's prefix.
    for known, bound in api_keys.items():
        if hmac.compare_digest(known.encode(), key.encode()):
            tenant = bound
    return tenant



def check_tenant_names(settings, held: Callable[[str], bool] | None = None) -> None:
    """The served tenant and every API key's tenant are tenant names (``core/names.py``), as every surface
    takes them: ``serve`` checks before it starts (a bad key is one line, not a traceback out of the
    server's start-up), the app's state again with ``held`` (whether the data dir holds data under a
    name): a name the rule refuses that a data dir written before the rule holds is served all the same.
    Before the stores are open (``held`` None) only a name no data dir can hold is refused (empty, '/')."""
    for tenant in [settings.tenant, *dict(settings.api_keys).values()]:
        problem = tenant_problem(tenant) if isinstance(tenant, str) else "is not a string"
        if problem is None or (held is None and tenant and "/" not in tenant) or (held is not None and held(tenant)):
            continue
        # Worded as every surface words a refused name (the name cut at 80 characters), and where it was given.
        raise ConfigError(refusal(TENANT_RULE, str(tenant), problem)
                          + (" in AGENT_MEMORY_API_KEYS" if tenant != settings.tenant else ""))

class ApiState:
    def __init__(self, settings: Settings, services, *, job_threshold_bytes: int | None = None,
                 max_upload_bytes: int = MAX_UPLOAD_BYTES) -> None:
        """``job_threshold_bytes``: the settings' ``api_job_threshold_bytes`` unless a test gives another."""
        self.settings = settings
        self.services = services
        self.job_threshold_bytes = (settings.api_job_threshold_bytes if job_threshold_bytes is None
                                    else job_threshold_bytes)
        self.max_upload_bytes = max_upload_bytes
        self.api_keys: dict[str, str] = dict(settings.api_keys)
        # The server-wide operations' keys (api/deps.py); `serve` checked them (check_admin_keys).
        self.admin_keys: list[str] = list(settings.admin_keys)
        # Keys are needed whenever some are configured, and always off loopback: an open port
        # without them would let anyone read every tenant's memory.
        self.auth_required = bool(self.api_keys) or not is_loopback(settings.api_host)
        # The Python API does the work; this state adds auth, jobs and readiness around it.
        # Its deletes ask this server's queue when they come (ingestion.refuse_pending_upload), and a forget job
        # accepted then is not refused by an upload queued after it: the Memory does not ask again.
        self.memory = Memory(services=services, tenant=settings.tenant, name_other_tenants=not self.auth_required,
                             check_queued_writes=False)
        check_tenant_names(settings, self.memory._holds_tenant)
        # What a process before this one staged and never released (killed while it read an upload): no job
        # refers to it, since a queued job's file is in its spool entry (stores/staging.py).
        services.staging.sweep()
        self.jobs, self.locks = ingestion.job_queue(self)  # durable on PostgreSQL, else in process
        self.ingest_lock = self.memory.write_lock
        self.warm_error: str | None = None
        self.warm_done = threading.Event()

    # ---- lazily built parts (owned by the Python API) ---------------------------------------------
    @property
    def pipeline(self):
        return self.memory.pipeline

    @property
    def working_memory(self):
        return self.memory.working_memory

    @property
    def sessions(self):
        return self.working_memory.sessions

    # ---- working memory, scoped by tenant ---------------------------------------------------------
    def session(self, tenant: str, session_id: str):
        return self.working_memory.session(tenant, session_id)

    def session_exists(self, tenant: str, session_id: str) -> bool:
        return self.working_memory.exists(tenant, session_id)

    def recent_turns(self, tenant: str, session_id: str, n: int) -> list[MemoryItem]:
        return self.working_memory.recent_turns(tenant, session_id, n)

    # ---- readiness ------------------------------------------------------------------------------
    def warm_up(self) -> None:
        """Load the model and open the stores off the request path (readyz says 503 until done)."""
        started = time.perf_counter()
        try:
            self.services.embedder.embed_query("warm up")
            for question in WARM_UP_QUESTIONS:
                self.pipeline.run(question, tenant=self.settings.tenant, budget=400)
            self._warm_cross_encoder()
            # What is alive now (models, stores, caches: 1.6 million objects in a server of 100k
            # items) is left out of every later run of the cyclic collector: one full collection
            # over it took 0.7 s, a pause any request could fall into. Collected once first, so no
            # garbage of the start-up is kept for good.
            gc.collect()
            gc.freeze()
            log.info("warm-up done in %.1fs", time.perf_counter() - started)
        except Exception as exc:  # noqa: BLE001 - reported by /readyz
            self.warm_error = f"{type(exc).__name__}: {exc}"
            log.warning("warm-up failed: %s", self.warm_error)
        finally:
            self.warm_done.set()
            self.resume_jobs()

    def _warm_cross_encoder(self) -> None:
        """A configured cross-encoder's session built now (its graph read or written), not in the first question
        that has candidates. A failure is the stage's (each question then keeps the reranker's order, with a
        decision saying why), never the server's readiness."""
        scorer = self.services.cross_encoder
        if scorer is None:
            return
        try:
            scorer.score("warm up", ["warm up"])
        except Exception as exc:  # noqa: BLE001 - the stage falls back per question; the server serves
            log.warning("cross-encoder warm-up failed (questions keep the reranker's order): %s: %s",
                        type(exc).__name__, exc)

    def resume_jobs(self) -> None:
        """Queue again the jobs the last stop interrupted (once the stores are open: after warm-up)."""
        self.jobs.resume()

    def readiness(self) -> dict[str, Any]:
        """The checks ``/readyz`` reports. The start's archive catch-up (messages a crash left unarchived,
        ``conversation/working_memory.py``) is not one of them: during it the server takes appends as
        ever, and its reads (``/v1/search``, ``/v1/prompt``, ``/v1/ask``: ``Memory``'s own) wait for the
        catch-up before they read, at most ``Memory.catch_up_wait_s``, so a client asking right after a
        restart gets what was said before the crash, not a stale answer. A 503 would instead keep every
        route away from a replica (appends, sessions) for as long as a large backlog takes."""
        checks: dict[str, str] = {}
        if not self.warm_done.is_set():
            checks["model"] = "loading"
        elif "embedder" in self.services.__dict__:  # the cached property is set once the model loaded
            checks["model"] = "ok"
        else:
            checks["model"] = f"failed: {self.warm_error}"
        if self.warm_error and checks["model"] == "ok":
            checks["warm_up"] = f"failed: {self.warm_error}"
        probes = {
            "catalog": lambda: self.services.catalog.count(),
            "vectors": lambda: self.services.vectors.count(SearchFilter(tenant=self.settings.tenant)),
            "graph": lambda: self.services.graph.stats(self.settings.tenant),
        }
        if self.warm_done.is_set():  # before that, probing would race the warm-up opening the stores
            for name, probe in probes.items():
                try:
                    probe()
                    checks[name] = "ok"
                except Exception as exc:  # noqa: BLE001 - any failure means "not ready"
                    checks[name] = f"failed: {type(exc).__name__}: {exc}"
        return checks

    def close(self) -> None:
        # A stop during the warm-up waits for it: closing the model and the stores under its thread, then
        # leaving the interpreter with that thread inside the ONNX runtime, aborted the process after a
        # graceful shutdown ("terminate called without an active exception", exit -6).
        if not self.warm_done.wait(WARM_UP_STOP_WAIT_S):
            log.warning("stopping before the warm-up finished (%d s): closing under it", WARM_UP_STOP_WAIT_S)
        self.jobs.close()
        self.memory.close()
        self.services.close()
        # What warm-up froze goes back to the collector: a frozen object is never freed, and at exit
        # native bindings built with nanobind (triton's, when torch is installed) report every one still alive as a leak.
        gc.unfreeze()
