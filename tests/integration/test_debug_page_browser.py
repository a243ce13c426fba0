"""The /debug page in a real headless Chromium (Debian's, driven by Playwright): ask a question
against the sample corpus, see the prompt sections and token bar, click a citation, screenshot. And the
API's /docs and /redoc pages, rendered with every host but the server refused."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import httpx
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("AGENT_MEMORY_NO_PROGRESS", "1")
os.environ["AGENT_MEMORY_TRIPLE_EXTRACTOR"] = "rules"

CHROMIUM = os.environ.get("AGENT_MEMORY_CHROMIUM", "/usr/bin/chromium")
if not Path(CHROMIUM).exists():
    pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)", allow_module_level=True)
playwright_sync = pytest.importorskip("playwright.sync_api",
                                      reason="Playwright not installed (pip install playwright)")

from agent_memory.api import create_app  # noqa: E402
from agent_memory.api.testing import serve_in_thread, upload_samples, wait_ready  # noqa: E402
from agent_memory.core.config import load_settings  # noqa: E402

STORES_DOC = "samples/docs/embedded-stores.md"
REPORTS = Path(__file__).resolve().parents[2] / "reports"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def base_url(tmp_path_factory):
    settings = load_settings(data_dir=tmp_path_factory.mktemp("api-debug"), triple_extractor="rules", api_keys={})
    with serve_in_thread(create_app(settings)) as url, httpx.Client(base_url=url, timeout=120) as client:
        wait_ready(client)
        upload_samples(client)
        yield url


@pytest.fixture(scope="module")
def browser():
    with playwright_sync.sync_playwright() as p:
        try:
            chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        except Exception as exc:  # noqa: BLE001 - a browser that cannot start here is an environment gap
            pytest.skip(f"Chromium at {CHROMIUM} did not start: {exc}")
        yield chromium
        chromium.close()


def test_debug_page_shows_prompt_routes_and_citations(base_url, browser, tmp_path):
    page = browser.new_page(viewport={"width": 1400, "height": 1800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{base_url}/debug")
    assert page.title() == "agent-memory · retrieval debug"

    page.fill("#question", "Which vector store does agent-memory embed, and why?")
    page.fill("#budget", "900")
    page.click("#ask")
    page.wait_for_selector("#prompt .cite", timeout=120_000)

    assert page.inner_text("#mode") == "retrieval-only"
    sections = page.eval_on_selector_all("#prompt .prompt-section", "els => els.map(e => e.dataset.section)")
    assert sections[0] == "instructions" and sections[-1] == "question" and "passages" in sections
    assert "other" not in sections  # Markdown headings inside passages do not split the prompt
    bar = page.eval_on_selector_all("#token-bar .seg", "els => els.map(e => [e.dataset.section, e.style.width])")
    assert {name for name, _ in bar} >= {"instructions", "passages", "question"}
    assert all(float(width.rstrip("%")) > 0 for _, width in bar)
    assert "of 900 tokens" in page.inner_text("#token-total")
    routes = page.eval_on_selector_all("#routes details", "els => els.map(e => e.dataset.route)")
    assert {"dense", "keyword"} <= set(routes)
    assert page.locator("#fused tbody tr").count() > 0

    page.locator(f'#prompt .cite[data-source="{STORES_DOC}"]').first.click()
    assert page.inner_text("#passage-source") == STORES_DOC
    assert "qdrant-edge-py" in page.inner_text("#passage-body")
    assert page.locator("#prompt .cite.active").count() >= 1

    shot = tmp_path / "debug-page.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    if REPORTS.is_dir():
        shutil.copy(shot, REPORTS / "debug-page.png")
    assert errors == []
    page.close()


def test_debug_page_reports_errors(base_url, browser):
    page = browser.new_page()
    page.goto(f"{base_url}/debug")
    page.fill("#question", "Which vector store does agent-memory embed, and why?")
    page.fill("#budget", "3")
    page.click("#ask")
    page.wait_for_function("document.getElementById('status').className === 'error'", timeout=60_000)
    assert "400 budget" in page.inner_text("#status")
    page.close()


@pytest.mark.parametrize("page_path", ["/docs", "/redoc"])
def test_the_api_docs_pages_render_with_every_other_host_refused(browser, tmp_path, page_path):
    """On a machine without the internet: /docs and /redoc loaded their scripts from a CDN, and stayed blank."""
    settings = load_settings(data_dir=tmp_path / "data", triple_extractor="rules", api_keys={})
    with serve_in_thread(create_app(settings, warm=False)) as url:
        context = browser.new_context()
        elsewhere: list[str] = []

        def only_this_server(route):
            if route.request.url.startswith(url + "/"):
                route.continue_()
            else:
                elsewhere.append(route.request.url)
                route.abort()

        context.route("**/*", only_this_server)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(url + page_path)
        page.wait_for_function("document.body.innerText.includes('/v1/documents')", timeout=60_000)
        assert elsewhere == [] and errors == []
        context.close()
