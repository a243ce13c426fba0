"""The balancer of docker-compose.yml (deploy/nginx.conf) forwards the client's Host header with its port:
the API's redirects (``/v1/stats/`` → 307 to ``/v1/stats``) are absolute URLs built from that header, and
nginx's ``$host`` drops the port, so a client of the balancer on :8080 was sent to :80."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import httpx

from agent_memory.api import create_app
from agent_memory.core.config import load_settings

NGINX_CONF = Path(__file__).resolve().parents[2] / "deploy" / "nginx.conf"


def test_the_api_builds_its_redirects_from_the_host_header(tmp_path):
    app = create_app(load_settings(data_dir=tmp_path), warm=False)  # no lifespan: the router alone answers

    async def ask():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://lb.example:8080") as c:
            return await c.get("/v1/stats/")

    response = asyncio.run(ask())
    assert response.status_code == 307
    assert response.headers["location"] == "http://lb.example:8080/v1/stats"


def test_the_balancer_forwards_the_host_header_with_its_port():
    forwarded = re.findall(r"^\s*proxy_set_header\s+Host\s+(\S+);", NGINX_CONF.read_text(encoding="utf-8"), re.M)
    assert forwarded == ["$http_host"]
