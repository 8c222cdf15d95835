"""Real browser: headless Debian chromium driven by Playwright (no browser download)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import REPO

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]
pytestmark = pytest.mark.browser


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def app_url() -> Iterator[str]:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    pytest.importorskip("playwright.sync_api")
    port = _free_port()
    env = {**os.environ, "INSPECTOR_ROOTS": str(REPO / "sample_sessions")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(REPO / "app.py"), "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                if urllib.request.urlopen(url + "/_stcore/health", timeout=1).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("streamlit did not start: " + proc.stderr.read(2000).decode(errors="replace"))
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def page(app_url: str) -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        pg = browser.new_page(viewport={"width": 1440, "height": 900})
        dialogs: list[str] = []
        pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        pg.dialogs = dialogs  # type: ignore[attr-defined]
        yield pg
        browser.close()


def _load_sample(page, app_url: str, name: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(app_url + "/")
    page.get_by_text("Bundled samples").wait_for(timeout=60000)
    box = page.get_by_test_id("stSelectbox").filter(has_text="Sample session")
    box.click()
    page.get_by_role("option", name=name).click()
    page.get_by_role("button", name="Load sample").click()
    page.get_by_text("Entries by type").wait_for(timeout=60000)


def _metric(page, label: str) -> str:  # type: ignore[no-untyped-def]
    m = page.get_by_test_id("stMetric").filter(has_text=label).first
    return m.get_by_test_id("stMetricValue").inner_text()


def test_slider_moves_the_context_bar_and_the_token_figures(page, app_url: str) -> None:  # type: ignore[no-untyped-def]
    _load_sample(page, app_url, "coding-session.jsonl")
    page.get_by_role("link", name="Replay").click()
    page.get_by_text("What happened here").wait_for(timeout=60000)
    page.wait_for_selector(".js-plotly-plot .barlayer", timeout=60000)
    before_tokens = _metric(page, "Tokens sent")
    before_title = page.locator(".js-plotly-plot .gtitle").first.text_content()
    slider = page.get_by_role("slider").first
    slider.focus()
    page.keyboard.press("Home")
    page.wait_for_function("t => !document.querySelector('.js-plotly-plot .gtitle').textContent.includes(t)",
                           arg=before_title.split("(")[0].strip(), timeout=60000)
    after_title = page.locator(".js-plotly-plot .gtitle").first.text_content()
    assert "model call 0" in after_title and after_title != before_title
    page.wait_for_timeout(500)
    assert _metric(page, "Tokens sent") != before_tokens
    page.screenshot(path=str(REPO / "bench" / "out" / "e2e-replay.png"), full_page=False)
    assert page.dialogs == []


def test_hostile_session_text_is_shown_inertly(page, app_url: str) -> None:  # type: ignore[no-untyped-def]
    _load_sample(page, app_url, "hostile-content.jsonl")
    page.get_by_role("link", name="Replay").click()
    page.get_by_text("Messages the model receives").wait_for(timeout=60000)
    page.wait_for_timeout(1500)
    assert page.dialogs == []  # no alert() ran
    assert page.evaluate("document.title") != "pwned"
    assert page.locator("iframe[src*='example.invalid']").count() == 0
    assert page.locator("img[src='x']").count() == 0
    # the text is there, as text
    page.get_by_role("link", name="Tree").click()
    page.get_by_text("Entries (fork-indented").wait_for(timeout=60000)
    code = page.locator("code").filter(has_text="<script>").first
    assert "<script>alert(1)</script>" in code.inner_text()
