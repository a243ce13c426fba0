"""Two API replicas and two workers on one PostgreSQL, as separate processes on loopback.

Documents posted to one API are queued in PostgreSQL and their jobs answered by the other API;
session messages appended through one API are read through the other. A worker killed while
it runs a job loses the job to the other worker once its lease expires, and the job ends
with every item of its source stored once: none missing, none duplicated.

What this setup cannot share without a Qdrant server: vectors. No Qdrant server binary is installable on
this machine (one built from source was run by hand: docs/deployment.md), and both embedded vector stores (Qdrant Edge, qdrant-client's local mode) lock their folder
to one process. So each process keeps its own embedded vector store, the jobs' items are
checked in the store of the worker that finished them, and questions (/v1/ask) are not asked
across replicas: in a deployment every replica and worker points at one Qdrant server
(AGENT_MEMORY_QDRANT_URL, docs/deployment.md); where one is given, the last test here shares it. The graph is
Neo4j when the test run has one.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest
from postgres_support import NEEDS_POSTGRES, FreshSchema

from tests.helpers import finished_job

pytestmark = [*NEEDS_POSTGRES, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
KEY = "e2e-key"
LEASE_S = 5.0
BIG_RECORDS = 400  # about 10 s of a worker's time on a loaded two-core machine


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """``qdrant_url``: every process's vectors in that one server (the deployment's way); else each keeps its own
    embedded store."""

    def __init__(self, tmp_path: Path, schema: FreshSchema, qdrant_url: str | None = None) -> None:
        self.tmp_path = tmp_path
        self.tenant = f"e2e{uuid.uuid4().hex[:8]}"
        self.env = {**os.environ, "AGENT_MEMORY_POSTGRES_URL": schema.url, "AGENT_MEMORY_TRIPLE_EXTRACTOR": "rules",
                    "AGENT_MEMORY_API_KEYS": json.dumps({KEY: self.tenant}), "AGENT_MEMORY_API_JOB_THRESHOLD_BYTES": "1000",
                    "AGENT_MEMORY_LLM_MODEL": "", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                    "TOKENIZERS_PARALLELISM": "false", "PYTHONPATH": str(ROOT),
                    # The queue itself is under test, with or without shared stores (each process keeps
                    # its own where none is given): workers take the jobs either way.
                    "AGENT_MEMORY_JOB_RUNNER": "workers"}
        self.env.pop("AGENT_MEMORY_QDRANT_URL", None)
        if qdrant_url:
            self.env["AGENT_MEMORY_QDRANT_URL"] = qdrant_url
        if os.environ.get("AGENT_MEMORY_NEO4J_URI"):
            self.env["AGENT_MEMORY_NEO4J_URI"] = os.environ["AGENT_MEMORY_NEO4J_URI"]
        self.procs: dict[str, subprocess.Popen] = {}

    def start(self, name: str, *args: str) -> subprocess.Popen:
        log = open(self.tmp_path / f"{name}.log", "w")
        cmd = [sys.executable, "-m", "agent_memory.cli", "--data-dir", str(self.tmp_path / name), *args]
        proc = subprocess.Popen(cmd, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        self.procs[name] = proc
        return proc

    def api(self, name: str) -> httpx.Client:
        port = free_port()
        self.start(name, "serve", "--host", "127.0.0.1", "--port", str(port))
        # A new connection per request: the test alternates replicas, so one may sit idle past uvicorn's 5 s
        # keep-alive and close a pooled connection as the next request goes out on it (reset by peer on a
        # loaded machine), which a load balancer in front of the replicas would absorb.
        client = httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"X-API-Key": KEY}, timeout=60,
                              limits=httpx.Limits(max_keepalive_connections=0))
        deadline = time.monotonic() + 180
        while True:
            assert self.procs[name].poll() is None, self.log(name)
            try:
                if client.get("/healthz").status_code == 200:
                    return client
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, self.log(name)
            time.sleep(0.3)

    def worker(self, name: str) -> subprocess.Popen:
        return self.start(name, "worker", "--id", name, "--lease-s", str(LEASE_S), "--poll-s", "0.2")

    def log(self, name: str) -> str:
        return (self.tmp_path / f"{name}.log").read_text(errors="replace")[-4000:]

    def stop_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()


def post_doc(client: httpx.Client, source_id: str, text: str) -> str:
    resp = client.post("/v1/documents", json={"source_id": source_id, "text": text, "title": source_id})
    assert resp.status_code == 202, resp.text  # above the threshold: queued, not ingested by the API
    return resp.json()["job_id"]


def wait_job(client: httpx.Client, job_id: str, timeout: float = 300) -> dict:
    return finished_job(client, f"/v1/jobs/{job_id}", timeout=timeout, every=0.3)


def big_text(n: int) -> str:
    return " ".join(f"Record {i}: hangar door {i} opens at {i % 24}:{i % 60:02d} and sensor S-{i} reads "
                    f"{(i * 7) % 101} units." for i in range(n))


def test_two_apis_two_workers_share_jobs_sessions_and_survive_a_killed_worker(tmp_path):
    from agent_memory.stores.postgres_catalog import PostgresCatalog
    from agent_memory.stores.postgres_jobs import PostgresJobStore

    schema = FreshSchema()
    try:
        check_cluster(tmp_path, schema, PostgresJobStore(schema.open()), PostgresCatalog(schema.opened[0]))
    finally:
        schema.cleanup()


def check_cluster(tmp_path: Path, schema: FreshSchema, jobs, catalog) -> None:
    cluster = Cluster(tmp_path, schema)
    try:
        api_a, api_b = cluster.api("api-a"), cluster.api("api-b")
        w1 = cluster.worker("w1")

        # A big document posted to A; w1 takes it. Big enough that w1 still runs it when it is killed below (the
        # posts to B and a process start later), however fast the machine: w2 then runs it again.
        big_id = post_doc(api_a, "big/records", big_text(BIG_RECORDS))
        deadline = time.monotonic() + 180
        while (row := jobs.get(big_id, cluster.tenant))["status"] != "running":
            assert w1.poll() is None and time.monotonic() < deadline, cluster.log("w1")
            time.sleep(0.1)
        assert row["worker"] == "w1" and row["attempts"] == 1

        # More documents, posted to B while w1 is busy; a second worker joins; w1 dies mid-job.
        small = {f"notes/{i}": f"Note {i}: the greenhouse valve V-{i} was replaced on day {i}. " * 30
                 for i in range(3)}
        small_ids = {source: post_doc(api_b, source, text) for source, text in small.items()}
        w2 = cluster.worker("w2")
        w1.send_signal(signal.SIGKILL)
        w1.wait(timeout=30)

        # Each API answers for the jobs posted to the other.
        big = wait_job(api_b, big_id)
        assert big["status"] == "done", (big, cluster.log("w2"))
        assert big["result"]["source_ids"] == ["big/records"]
        for source, job_id in small_ids.items():
            job = wait_job(api_a, job_id)
            assert job["status"] == "done" and job["result"]["source_ids"] == [source], job
        row = jobs.get(big_id, cluster.tenant)
        assert row["worker"] == "w2" and row["attempts"] == 2  # taken again after w1's lease expired

        # Working memory is shared too: appended through A, read through B.
        resp = api_a.post("/v1/sessions/handover/messages",
                          json={"message": {"role": "user", "content": "Order 40 X-300 sensors."}})
        assert resp.status_code == 200, resp.text
        view = api_b.get("/v1/sessions/handover/view").json()
        assert view["messages"][-1] == {"role": "user", "content": "Order 40 X-300 sensors."}

        w2.send_signal(signal.SIGTERM)  # finishes what it runs, flushes its store, exits cleanly
        assert w2.wait(timeout=60) == 0, cluster.log("w2")
    finally:
        cluster.stop_all()

    # Every source once in the shared catalog; every one of its items in the store of the worker
    # that finished it (w2), and nothing else of that source there: none missing, none duplicated.
    from agent_memory.core.config import load_settings
    from agent_memory.core.records import SearchFilter
    from agent_memory.services import build_services

    settings = load_settings(data_dir=tmp_path / "w2", postgres_url=schema.url, qdrant_url=None, neo4j_uri=None)
    with build_services(settings) as w2_services:  # w2's own vector store, read as w2 wrote it
        store = w2_services.vectors
        for source in ["big/records", *small]:
            entry = catalog.get(cluster.tenant, source)
            assert entry is not None and entry.item_ids, source
            stored = store.ids_for_source(cluster.tenant, source)
            assert len(stored) == len(set(stored)) == len(entry.item_ids)
            assert set(stored) == set(entry.item_ids)
            assert store.count(SearchFilter(tenant=cluster.tenant, source_ids=[source])) == len(entry.item_ids)


def test_any_replica_answers_any_request_with_nothing_lost(tmp_path):
    """The deployment's topology without Docker: two `serve` replicas and a `worker` on PostgreSQL
    (and Neo4j when the run has one), every request sent to the next replica in turn as a load
    balancer without sticky sessions would: documents, jobs, session appends, views, settings."""
    from agent_memory.stores.postgres_catalog import PostgresCatalog

    schema = FreshSchema()
    catalog = PostgresCatalog(schema.open())
    cluster = Cluster(tmp_path, schema)
    try:
        replicas = [cluster.api("api-a"), cluster.api("api-b")]
        cluster.worker("w1")

        def turn(i: int) -> httpx.Client:
            return replicas[i % 2]

        # Documents through alternating replicas; each job polled through the other one.
        docs = {f"round/{i}": f"Round {i}: the valve V-{i} in hall {i % 3} was checked on day {i}. " * 20
                for i in range(6)}
        jobs = {source: post_doc(turn(i), source, text) for i, (source, text) in enumerate(docs.items())}
        for i, (source, job_id) in enumerate(jobs.items()):
            job = wait_job(turn(i + 1), job_id)
            assert job["status"] == "done" and job["result"]["source_ids"] == [source], (job, cluster.log("w1"))

        # Session appends alternate between replicas: every message kept once, in order, with the
        # sequence numbers 0..n-1, whichever replica is asked afterwards.
        sent = [f"Message {i}: move pallet P-{i} to bay {i % 4}." for i in range(16)]
        seqs = []
        for i, text in enumerate(sent):
            resp = turn(i).post("/v1/sessions/shared/messages",
                                json={"message": {"role": "user", "content": text}, "retention": "strict"})
            assert resp.status_code == 200, resp.text
            seqs.append(resp.json()["seq"])
        assert seqs == list(range(len(sent)))
        for client in replicas:
            view = client.get("/v1/sessions/shared/view", params={"budget": 100_000})
            assert view.status_code == 200, view.text
            assert [m["content"] for m in view.json()["messages"] if m["role"] == "user"] == sent

        # A session setting changed through one replica is the one the other applies.
        put = replicas[0].put("/v1/sessions/shared/config", json={"window_tokens": 50_000})
        assert put.status_code == 200, put.text
        got = replicas[1].get("/v1/sessions/shared/config").json()
        assert got["config"]["window_tokens"] == 50_000
        resp = replicas[1].post("/v1/sessions/shared/messages", json={"message": {"role": "user", "content": "last"}})
        assert resp.status_code == 200 and resp.json()["seq"] == len(sent), resp.text
        assert replicas[0].get("/v1/sessions/shared/view").json()["messages"][-1]["content"] == "last"
    finally:
        cluster.stop_all()
        try:
            # Every document once in the shared catalog, each with its items.
            for source in docs:
                entry = catalog.get(cluster.tenant, source)
                assert entry is not None and entry.item_ids, source
        finally:
            schema.cleanup()


QDRANT_URL = os.environ.get("AGENT_MEMORY_QDRANT_URL")


@pytest.mark.qdrant_server
@pytest.mark.skipif(not QDRANT_URL, reason="AGENT_MEMORY_QDRANT_URL not set: no Qdrant server for the replicas to share")
def test_with_one_qdrant_server_a_replica_answers_from_what_a_worker_stored(tmp_path):
    """The deployment with its vectors in one Qdrant server: a document posted to replica A, stored by the
    worker, is found by a question asked through replica B, with its source tag; forgotten through B, it is
    gone from A's answers."""
    schema = FreshSchema()
    schema.open()
    cluster = Cluster(tmp_path, schema, qdrant_url=QDRANT_URL)
    try:
        api_a, api_b = cluster.api("api-a"), cluster.api("api-b")
        cluster.worker("w1")
        text = "The Kestrel greenhouse in Lyon keeps its seed vault at minus eighteen degrees. " * 20
        job = wait_job(api_b, post_doc(api_a, "vault/kestrel", text))
        assert job["status"] == "done", (job, cluster.log("w1"))
        for client in (api_b, api_a):
            answer = client.post("/v1/prompt", json={"question": "How cold is the Kestrel seed vault?", "budget": 600})
            assert answer.status_code == 200, answer.text
            assert "[S:vault/kestrel]" in answer.json()["prompt"] and "minus eighteen" in answer.json()["prompt"]
        assert api_b.delete("/v1/sources/vault/kestrel").status_code == 200
        after = api_a.post("/v1/prompt", json={"question": "How cold is the Kestrel seed vault?", "budget": 600})
        assert after.status_code == 200 and "vault/kestrel" not in after.json()["prompt"], after.text
    finally:
        cluster.stop_all()
        schema.cleanup()


NGINX = os.environ.get("AGENT_MEMORY_TEST_NGINX") or shutil.which("nginx")


@pytest.mark.skipif(not NGINX, reason="no nginx binary (PATH or AGENT_MEMORY_TEST_NGINX): the balancer is not run")
def test_the_compose_balancer_config_round_robins_over_two_replicas(tmp_path):
    """deploy/nginx.conf itself (only the replicas' addresses and the port changed) in front of two
    `serve` replicas and a worker: every request through the balancer, both replicas used, nothing lost."""
    schema = FreshSchema()
    schema.open()
    cluster = Cluster(tmp_path, schema)
    nginx = None
    try:
        replicas = [cluster.api("api-a"), cluster.api("api-b")]
        cluster.worker("w1")
        port = free_port()
        conf = (ROOT / "deploy" / "nginx.conf").read_text(encoding="utf-8")
        for name, client in zip(("api-1", "api-2"), replicas):
            conf = conf.replace(f"server {name}:8080", f"server {client.base_url.host}:{client.base_url.port}")
        conf = conf.replace("listen 8080;", f"listen 127.0.0.1:{port};")
        run = tmp_path / "nginx"
        run.mkdir()
        temps = "".join(f"{kind}_temp_path {run}/{kind};\n" for kind in
                        ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        (run / "nginx.conf").write_text(
            ("user root;\n" if os.geteuid() == 0 else "")
            + f"daemon off;\nworker_processes 1;\npid {run}/nginx.pid;\nerror_log {run}/error.log;\nevents {{}}\n"
            + f"http {{\nlog_format up '$request $status $upstream_addr';\naccess_log {run}/access.log up;\n"
            + temps + conf + "\n}\n")
        nginx = subprocess.Popen([NGINX, "-p", str(run), "-c", str(run / "nginx.conf")],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        lb = httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"X-API-Key": KEY}, timeout=60)
        deadline = time.monotonic() + 30
        while True:
            assert nginx.poll() is None, (run / "error.log").read_text()
            try:
                if lb.get("/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline
            time.sleep(0.2)

        jobs = {f"lb/{i}": post_doc(lb, f"lb/{i}", f"Shelf {i} holds crate C-{i} of bolts. " * 40) for i in range(4)}
        for source, job_id in jobs.items():
            job = wait_job(lb, job_id)
            assert job["status"] == "done" and job["result"]["source_ids"] == [source], job
        sent = [f"Step {i}: label box B-{i}." for i in range(12)]
        seqs = [lb.post("/v1/sessions/lb/messages", json={"message": {"role": "user", "content": text}}).json()["seq"]
                for text in sent]
        assert seqs == list(range(12))
        for _ in range(2):  # two views: the balancer sends them to both replicas in turn
            view = lb.get("/v1/sessions/lb/view", params={"budget": 100_000}).json()
            assert [m["content"] for m in view["messages"] if m["role"] == "user"] == sent
        used = {line.rsplit(" ", 1)[-1] for line in (run / "access.log").read_text().splitlines()}
        assert {f"{c.base_url.host}:{c.base_url.port}" for c in replicas} <= used  # round robin: both served
    finally:
        if nginx is not None:
            nginx.terminate()
            nginx.wait(timeout=30)
        cluster.stop_all()
        schema.cleanup()
