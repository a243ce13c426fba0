"""One data dir, many processes: while `agent-memory serve` owns a data dir, the CLI and the MCP
server on that data dir work through its HTTP API, and a second `serve` is refused naming the first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import httpx
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from agent_memory.api.testing import serve_in_subprocess, wait_ready
from agent_memory.core.owner import current_holder

ROOT = Path(__file__).resolve().parents[2]
KEY = "k-one-dir"
SERVER_ENV = {"AGENT_MEMORY_API_KEYS": json.dumps({KEY: "acme"}), "AGENT_MEMORY_LLM_MODEL": "",
              "AGENT_MEMORY_QDRANT_URL": None, "AGENT_MEMORY_NEO4J_URI": None, "AGENT_MEMORY_POSTGRES_URL": None,
              "AGENT_MEMORY_TRIPLE_EXTRACTOR": "rules", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
              # Files above 60 bytes (both notes) go through the server's background jobs (the CLI follows them).
              "AGENT_MEMORY_API_JOB_THRESHOLD_BYTES": "60"}


def _env(**extra: str | None) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name, value in {**SERVER_ENV, "AGENT_MEMORY_API_KEYS": None, **extra}.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def cli(data_dir: Path, *args: str, key: str | None = KEY, cwd: Path = ROOT,
        progress: bool = False) -> subprocess.CompletedProcess:
    """``agent-memory --data-dir DATA_DIR ARGS``; ``progress``: with its progress on stderr, whatever the suite's
    AGENT_MEMORY_NO_PROGRESS says."""
    quiet = {"AGENT_MEMORY_NO_PROGRESS": None} if progress else {}
    return subprocess.run([sys.executable, "-m", "agent_memory.cli", "--data-dir", str(data_dir), *args],
                          cwd=cwd, env=_env(AGENT_MEMORY_API_KEY=key, **quiet), capture_output=True, text=True,
                          timeout=300)


def cli_here(monkeypatch, capsys):
    """``cli`` as the CLI's ``main`` in this process, with the environment and working folder ``cli`` gives its
    process: for the commands whose point is the server they find, not a process of their own (this process
    is not the server either)."""
    from agent_memory.cli import main

    def run(data_dir: Path, *args: str, key: str | None = KEY, cwd: Path = ROOT,
            progress: bool = False) -> subprocess.CompletedProcess:
        env = _env(AGENT_MEMORY_API_KEY=key, **({"AGENT_MEMORY_NO_PROGRESS": None} if progress else {}))
        argv = ["--data-dir", str(data_dir), *args]
        with monkeypatch.context() as mp:
            for name in set(os.environ) - set(env):
                mp.delenv(name)
            for name, value in env.items():
                mp.setenv(name, value)
            mp.chdir(cwd)
            capsys.readouterr()
            code = main(argv)
            out, err = capsys.readouterr()
        return subprocess.CompletedProcess(["agent-memory", *argv], code, out, err)

    return run


def test_cli_and_mcp_go_through_the_server_that_owns_the_data_dir(tmp_path, monkeypatch, capsys):
    # One CLI process of its own (the second `serve`, the first ingest), the other commands in this process.
    here = cli_here(monkeypatch, capsys)
    data = tmp_path / "data"
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "greenhouse.md").write_text("# Greenhouse\n\nThe X-300 humidity sensor replaced the X-200 in 2025.\n")
    (notes / "bakery.txt").write_text("Greta Lind founded the Orbital Bakery in Malmo; it bakes cardamom buns.\n")
    (notes / "blob.xyz").write_text("not a format anyone reads")
    with serve_in_subprocess(data, SERVER_ENV, log=tmp_path / "serve.log") as url:
        holder = current_holder(data)
        assert holder is not None and holder.command == "serve" and holder.url == url
        with httpx.Client(base_url=url, headers={"X-API-Key": KEY}, timeout=60) as client:
            wait_ready(client)

        # A second server on the same data dir stops at once, naming the first.
        second = cli(data, "serve", "--host", "127.0.0.1", "--port", "1")
        assert second.returncode == 2, second.stderr
        assert f"pid {holder.pid}" in second.stderr and url in second.stderr

        # Without the key the CLI says which variable to set (the server is beyond no-key mode).
        refused = here(data, "stats", key=None)
        assert refused.returncode == 2 and "AGENT_MEMORY_API_KEY" in refused.stderr, refused.stderr

        ingested = cli(data, "ingest", "--json", str(notes), "-r", cwd=tmp_path)
        assert ingested.returncode == 0, ingested.stderr
        report = json.loads(ingested.stdout)
        assert report["files_ingested"] == 2 and report["chunks"] >= 2 and report["ok"], report
        assert [path for path, _ in report["files_skipped"]] == [str(notes / "blob.xyz")]
        assert "working through its HTTP API" in ingested.stderr
        # The same text report; one file refreshed under its folder's ID (the base that job used).
        shown = here(data, "ingest", str(notes / "greenhouse.md"), "--base", str(tmp_path), cwd=tmp_path, progress=True)
        assert shown.returncode == 0 and "Ingestion report" in shown.stdout and "files unchanged  1" in shown.stdout
        assert f"[1/1] {notes / 'greenhouse.md'}: done" in shown.stderr  # the job's progress, as it went
        assert '"POST /v1/documents HTTP/1.1" 202' in (tmp_path / "serve.log").read_text()  # uploads were jobs
        again = json.loads(here(data, "ingest", "--json", str(notes), "-r", cwd=tmp_path).stdout)
        assert again["files_unchanged"] == 2 and again["files_ingested"] == 0

        stats = here(data, "stats")
        assert stats.returncode == 0, stats.stderr
        assert json.loads(stats.stdout)["acme"]["sources"] >= 2
        listed = json.loads(here(data, "list").stdout)
        assert {"notes/greenhouse.md", "notes/bakery.txt"} <= {row["source_id"] for row in listed["sources"]}
        wrong_tenant = here(data, "stats", "--tenant", "other")
        assert wrong_tenant.returncode == 2 and "'acme'" in wrong_tenant.stderr

        prompt = here(data, "prompt", "--json", "Which sensor replaced the X-200?", "--budget", "300")
        assert prompt.returncode == 0, prompt.stderr
        assert "[S:notes/greenhouse.md]" in json.loads(prompt.stdout)["prompt"]
        dump = here(data, "prompt", "Which sensor replaced the X-200?", "--budget", "300")
        assert "== Token accounting ==" in dump.stdout and "[S:notes/greenhouse.md]" in dump.stdout

        _mcp_scenario(data)
        _mcp_http_over_the_server(url)

        # An uploaded file is named by its own path, as after a local ingestion (the CLI sent where it was).
        inspected = here(data, "inspect", str(notes / "greenhouse.md"))
        assert inspected.returncode == 0 and "notes/greenhouse.md" in inspected.stdout, inspected.stderr
        forgotten = here(data, "forget", str(notes / "bakery.txt"))
        assert forgotten.returncode == 0 and json.loads(forgotten.stdout)["sources"] >= 1, forgotten.stderr
        assert here(data, "inspect", "notes/bakery.txt").returncode == 1
        again_forgotten = here(data, "forget", "notes/bakery.txt")
        assert again_forgotten.returncode == 1 and "nothing stored under 'notes/bakery.txt'" in again_forgotten.stderr
        gc = here(data, "gc")
        assert gc.returncode == 0 and json.loads(gc.stdout)["expired"]["sources"] == 0, gc.stderr
    # The server is gone: the data dir is free, and the CLI opens the stores itself again.
    assert current_holder(data) is None
    local = here(data, "list", "--tenant", "acme", key=None)
    assert local.returncode == 0, local.stderr
    assert "notes/greenhouse.md" in local.stdout and "notes/bakery.txt" not in local.stdout


def _mcp_scenario(data: Path) -> None:
    params = StdioServerParameters(command=sys.executable, env=_env(AGENT_MEMORY_API_KEY=KEY), cwd=str(ROOT),
                                   args=["-m", "agent_memory.cli", "--data-dir", str(data), "mcp"])

    async def scenario() -> None:
        async with Client(params, read_timeout_seconds=300) as client:
            stored = await client.call_tool("remember", {"text": "The night shift starts at 22:00 in hangar 4."})
            assert not stored.is_error, stored.content
            (source_id,) = stored.structured_content["source_ids"]
            assert source_id.startswith("memory/")
            recalled = await client.call_tool("recall", {"question": "When does the night shift start?",
                                                         "budget": 300})
            assert not recalled.is_error, recalled.content
            assert f"[S:{source_id}]" in recalled.structured_content["prompt"]
            assert all(0.0 <= p["score"] <= 1.0 for p in recalled.structured_content["passages"])

    anyio.run(scenario)


def test_a_local_command_names_the_process_that_holds_the_data_dir(tmp_path):
    from agent_memory.core.owner import own

    with own(tmp_path / "data", "mcp"):
        busy = cli(tmp_path / "data", "stats", key=None)
    assert busy.returncode == 2
    assert f"pid {os.getpid()} (agent-memory mcp" in busy.stderr and "agent-memory serve" in busy.stderr
    assert "WouldBlock" not in busy.stderr


def _mcp_http_over_the_server(url: str) -> None:
    """`mcp --http` on a served data dir: each caller's key is forwarded, and the server checks it."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from agent_memory.api.testing import serve_in_thread
    from agent_memory.core.config import load_settings
    from agent_memory.mcp_server.server import http_app
    from agent_memory.remote import RemoteMemory

    async def call(base: str, key: str | None, tool: str, args: dict):
        headers = {"X-API-Key": key} if key else {}
        async with httpx2.AsyncClient(headers=headers, timeout=300) as http, \
                Client(streamable_http_client(base + "/mcp", http_client=http)) as client:
            return await client.call_tool(tool, args)

    with RemoteMemory(url, api_key="") as remote, \
            serve_in_thread(http_app(remote, load_settings(), "127.0.0.1")) as mcp_url:
        found = anyio.run(call, mcp_url, KEY, "search", {"query": "cardamom buns", "limit": 2})
        assert not found.is_error, found.content
        assert found.structured_content["passages"][0]["source_id"] == "notes/bakery.txt"
        refused = anyio.run(call, mcp_url, None, "search", {"query": "cardamom buns"})
        assert refused.is_error and "AGENT_MEMORY_API_KEY" in refused.content[0].text


def test_commands_that_need_the_stores_refuse_a_served_data_dir(tmp_path):
    from agent_memory.core.owner import own

    with own(tmp_path / "data", "serve", address="127.0.0.1:9", url="http://127.0.0.1:9"):
        for args in (["reindex"], ["worker", "--once"]):
            refused = cli(tmp_path / "data", *args, key=None)
            assert refused.returncode == 2, (args, refused.stderr)
            assert f"pid {os.getpid()}" in refused.stderr and "stop the server first" in refused.stderr, refused.stderr
