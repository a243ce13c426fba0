"""docker-compose.yml, checked by parsing only (this machine has no Docker engine): the topology
docs/deployment.md describes, wired to settings that exist."""

from __future__ import annotations

from pathlib import Path

import yaml

from agent_memory.config import Settings

COMPOSE = Path(__file__).resolve().parents[2] / "docker-compose.yml"


def services() -> dict:
    return yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))["services"]


def test_servers_two_api_replicas_and_a_worker():
    found = services()
    assert {"qdrant", "neo4j", "postgres", "api-1", "api-2", "worker"} <= set(found)
    assert found["postgres"]["image"].startswith("postgres:")
    assert "pg_isready" in " ".join(found["postgres"]["healthcheck"]["test"])
    assert found["worker"]["command"] == ["agent-memory", "worker"]
    for name in ("api-1", "api-2"):
        assert found[name]["command"][:2] == ["agent-memory", "serve"]
    host_ports = {found[name]["ports"][0].split(":")[0] for name in ("api-1", "api-2")}
    assert len(host_ports) == 2  # both replicas reachable (behind a load balancer)


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


def test_every_setting_named_in_compose_exists():
    fields = set(Settings.model_fields)
    for name, service in services().items():
        for key in (service.get("environment") or {}):
            if key.startswith("AGENT_MEMORY_"):
                assert key.removeprefix("AGENT_MEMORY_").lower() in fields, (name, key)
