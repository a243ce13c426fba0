"""/docs and /redoc on a machine without the internet: the pages loaded Swagger UI and ReDoc (scripts, styles,
icon) from a CDN and stayed blank offline. Now every URL a page names is on this server and answers, with
API keys configured too (a browser sends none)."""

from __future__ import annotations

import asyncio
import re

import httpx
import pytest

from agent_memory.api.app import create_app
from agent_memory.core.config import load_settings

# What a page loads: an element's src/href, ReDoc's spec-url, Swagger UI's document url.
REFERENCED = re.compile(r"""(?:\b(?:src|href|spec-url)=|\burl:\s*)["']([^"']+)["']""")


def fetch_all(tmp_path, paths: list[str]) -> dict[str, httpx.Response]:
    settings = load_settings(data_dir=tmp_path, api_keys={"3f9a1c7e5b2d4a608e1f7c3b9d2a5e4f": "acme"})
    app = create_app(settings, warm=False)  # no lifespan: the routes alone answer

    async def run() -> dict[str, httpx.Response]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
            return {path: await client.get(path) for path in paths}

    return asyncio.run(run())


@pytest.mark.parametrize("page, script_names", [("/docs", b"SwaggerUIBundle"), ("/redoc", b"Redoc")])
def test_a_docs_page_loads_everything_from_this_server(tmp_path, page, script_names):
    html = fetch_all(tmp_path, [page])[page]
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html"), html.text
    assert "://" not in html.text, html.text  # no other host named anywhere on the page
    urls = REFERENCED.findall(html.text)
    assert urls and all(url.startswith("/") and not url.startswith("//") for url in urls), urls
    assert "/openapi.json" in urls
    answers = fetch_all(tmp_path, urls)
    for url, answer in answers.items():
        assert answer.status_code == 200 and answer.content, url
    scripts = [answer.content for url, answer in answers.items() if url.endswith(".js")]
    assert scripts and any(script_names in script for script in scripts), urls


def test_swagger_ui_sends_the_document_to_no_validator(tmp_path):
    html = fetch_all(tmp_path, ["/docs"])["/docs"].text
    assert '"validatorUrl": null' in html  # Swagger UI's default posts the document to validator.swagger.io
