"""Fuzz the HTTP API from its own OpenAPI schema: every answer a documented status code and content type, its
body the route's documented model, and never a 500, whatever the input.

Serves the app on a fresh embedded data dir (two tenants' API keys and an admin key; a few documents, a
session with messages), then runs Schemathesis against ``/openapi.json`` once with a tenant's key and once
with the admin key, with the checks not_a_server_error, status_code_conformance, content_type_conformance,
response_schema_conformance and response_headers_conformance. It is slow (minutes): not a test; tests/integration/test_api_schema_fuzz.py
runs a few requests per operation.

Schemathesis comes with the test extra (``pip install -e '.[test]'``); or install it into a folder of its own
put on the path::

    pip install --target /tmp/fuzzlib schemathesis
    env -u AGENT_MEMORY_POSTGRES_URL -u AGENT_MEMORY_NEO4J_URI -u AGENT_MEMORY_QDRANT_URL \\
        PYTHONPATH=.:/tmp/fuzzlib .venv/bin/python scripts/fuzz_api.py --max-examples 50 --seed 1

Exits 0 when both runs pass. ``--report-dir`` keeps Schemathesis' reports (JUnit XML and a pytest file
reproducing each failure). ``POST /v1/backup`` is left out unless ``--backup``: the server writes a copy of
the data dir into whatever absolute folder it is given, and a fuzzer gives it folders all over the machine.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_memory.api import create_app  # noqa: E402
from agent_memory.api.testing import serve_in_thread  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402

TENANT_KEYS = {"fuzz-acme-0123456789abcdef": "acme", "fuzz-globex-0123456789abcdef": "globex"}
ADMIN_KEY = "fuzz-admin-0123456789abcdef"
CHECKS = ("not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,"
          "response_headers_conformance")
# Settings that would point the served app at servers, another tenant or an LLM instead of an embedded data dir.
SERVER_ENV = ("AGENT_MEMORY_POSTGRES_URL", "AGENT_MEMORY_NEO4J_URI", "AGENT_MEMORY_QDRANT_URL",
              "AGENT_MEMORY_LLM_BASE_URL", "AGENT_MEMORY_TENANT", "AGENT_MEMORY_API_KEYS", "AGENT_MEMORY_API_KEY")


def seed(http: httpx.Client, key: str, tenant: str) -> None:
    """A few documents, one large enough to be ingested as a job, and a session with messages."""
    headers = {"X-API-Key": key}
    for n, text in enumerate(("The Heron server runs in Oslo and backs up nightly.",
                              "Maria leads the platform team; she moved the build farm to Bergen.",
                              f"The {tenant} archive lives in Tromso. " * 200)):
        answer = http.post("/v1/documents", json={"source_id": f"notes/{tenant}-{n}", "text": text}, headers=headers)
        if answer.status_code == 202:
            for _ in range(1200):
                if http.get(answer.json()["url"], headers=headers).json()["status"] in ("done", "failed"):
                    break
                time.sleep(0.1)
        elif answer.status_code != 200:
            raise SystemExit(f"seeding {tenant}'s document {n} failed: {answer.status_code} {answer.text}")
    for n in range(4):
        message = {"message": {"role": "user" if n % 2 == 0 else "assistant", "content": f"{tenant} message {n}"}}
        answer = http.post("/v1/sessions/chat/messages", json=message, headers=headers)
        if answer.status_code != 200:
            raise SystemExit(f"seeding {tenant}'s session failed: {answer.status_code} {answer.text}")


def fuzz(url: str, key: str, label: str, args: argparse.Namespace, scratch: str) -> int:
    command = [*args.schemathesis, "run", f"{url}/openapi.json", "-H", f"X-API-Key: {key}", "--checks", CHECKS,
               "--max-examples", str(args.max_examples), "--seed", str(args.seed), "--workers", "1",
               "--request-timeout", "120", "--suppress-health-check", "all", "--no-color"]
    if args.phases:
        command += ["--phases", args.phases]
    if not args.backup:
        command += ["--exclude-path", "/v1/backup"]
    if args.report_dir:
        command += ["--report", "junit,pytest", "--report-dir", str(Path(args.report_dir).resolve() / label)]
    print(f"== {label}: {' '.join(c if 'X-API-Key' not in c else 'X-API-Key: ...' for c in command)}", flush=True)
    env = {**os.environ, "SCHEMATHESIS_HOOKS": str(Path(__file__).with_name("fuzz_api_hooks.py")),
           "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
    # Run in the scratch folder: Schemathesis leaves its .schemathesis/ where it runs.
    return subprocess.run(command, check=False, env=env, cwd=scratch).returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-examples", type=int, default=50, help="test cases per operation and phase")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--phases", default="", help="Schemathesis' phases (default: all of them)")
    parser.add_argument("--report-dir", default="", help="keep Schemathesis' JUnit and pytest reports here")
    parser.add_argument("--backup", action="store_true", help="fuzz POST /v1/backup too (writes folders anywhere)")
    parser.add_argument("--only", choices=("tenant", "admin"), default="", help="run one of the two runs")
    parser.add_argument("--schemathesis", nargs="+", default=[sys.executable, "-m", "schemathesis.cli"],
                        help="the command that runs Schemathesis (default: this Python's module)")
    args = parser.parse_args()
    for name in SERVER_ENV:
        os.environ.pop(name, None)
    os.environ["AGENT_MEMORY_NO_PROGRESS"] = "1"
    os.environ.setdefault("AGENT_MEMORY_TRIPLE_EXTRACTOR", "rules")
    with tempfile.TemporaryDirectory(prefix="agent-memory-fuzz-") as scratch:
        data = Path(scratch) / "data"
        settings = load_settings(data_dir=data, api_keys=TENANT_KEYS, admin_keys=[ADMIN_KEY])
        app = create_app(settings, warm=False)
        with serve_in_thread(app, owns=data) as url:
            with httpx.Client(base_url=url, timeout=120) as http:
                for key, tenant in TENANT_KEYS.items():
                    seed(http, key, tenant)
            tenant_key = next(iter(TENANT_KEYS))
            runs = {"tenant": tenant_key, "admin": ADMIN_KEY}
            codes = {label: fuzz(url, key, label, args, scratch) for label, key in runs.items() if args.only in ("", label)}
    print("== " + ", ".join(f"{label}: {'passed' if code == 0 else f'failed ({code})'}" for label, code in codes.items()))
    return 0 if all(code == 0 for code in codes.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
