"""Real browser: headless Debian chromium driven by Playwright (no browser download).

Starts ``streamlit run app.py`` on a free port on 127.0.0.1, then drives the pages as a user
would. Screenshots of every page at 1440×900 go to ``$INSPECTOR_SCREENSHOTS`` (or a temporary
folder). Skips, saying why, without ``/usr/bin/chromium`` or the playwright package.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from inspector.ui.figures import NOT_IN_FILE

from .support.paths import REPO

CHROMIUM = "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else (shutil.which("chromium") or "")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]
PAGES = ["Load", "Replay", "Tree", "Summaries", "Compare & tune", "Doctor"]
pytestmark = pytest.mark.browser


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def _serve(*app_args: str) -> Iterator[str]:
    """``streamlit run app.py [-- app_args]`` on a free port of 127.0.0.1; yields its URL."""
    if not CHROMIUM or not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed (apt-get install chromium): no real-browser test")
    pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    port = _free_port()
    env = {**os.environ, "INSPECTOR_ROOTS": str(REPO / "sample_sessions")}
    # the server's log goes to a file: a pipe nobody reads fills up (64 KB) and then blocks the
    # server at its next log line, so a page stops answering in the middle of a test
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
            "--server.fileWatcherType",
            "none",
            *(("--", *app_args) if app_args else ()),
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                if urllib.request.urlopen(url + "/_stcore/health", timeout=1).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.5)
        else:
            log.seek(0)
            pytest.fail("streamlit did not start: " + log.read(2000).decode(errors="replace"))
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


@pytest.fixture(scope="module")
def app_url() -> Iterator[str]:
    with _serve() as url:
        yield url


@pytest.fixture
def page(app_url: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        pg = browser.new_page(viewport={"width": 1440, "height": 900})
        pg.dialogs = []
        pg.outside = []
        pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
        pg.on(
            "request",
            lambda r: None if r.url.startswith((app_url, "data:", "blob:")) else pg.outside.append(r.url),
        )
        yield pg
        browser.close()


@pytest.fixture(scope="module")
def shots_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = Path(os.environ.get("INSPECTOR_SCREENSHOTS") or tmp_path_factory.mktemp("screens"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def _idle(page: Any) -> None:
    """Wait until Streamlit has finished the current run."""
    page.wait_for_timeout(600)
    page.wait_for_function("() => !document.querySelector('[data-testid=stStatusWidget]')", timeout=120000)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=stMain] [data-testid=stSkeleton]') && "
        "[...document.querySelectorAll('[data-testid=stPlotlyChart]')]"
        ".every(c => c.querySelector('.main-svg'))",
        timeout=60000,
    )
    page.wait_for_timeout(400)


def _load_sample(page: Any, app_url: str, name: str, query: str = "") -> None:
    page.goto(app_url + "/" + query)
    page.get_by_text("Bundled samples").wait_for(timeout=60000)
    page.get_by_test_id("stSelectbox").filter(has_text="Sample session").click()
    page.get_by_role("option", name=name).click()
    page.get_by_role("button", name="Load sample").click()
    page.get_by_text("Entries by type").wait_for(timeout=60000)
    _idle(page)


def _go(page: Any, name: str) -> None:
    page.get_by_test_id("stSidebarNavLink").filter(has_text=name).click()
    _idle(page)


def _metric(page: Any, label: str) -> str:
    m = page.get_by_test_id("stMetric").filter(has_text=label).first
    return m.get_by_test_id("stMetricValue").inner_text()


# JS reading the plotly figures the page shows: the messages' bar widths per row (without what the
# provider counted beyond them), the timeline's marked step
BAR_SUMS = (
    """() => { const gd = document.querySelectorAll('.js-plotly-plot')[0]; const out = {};
  for (const t of gd.data) if (t.type === 'bar' && t.name !== '%s')
    t.y.forEach((r, i) => out[r] = (out[r] || 0) + t.x[i]);
  return out; }"""
    % NOT_IN_FILE
)
POINT = """([idx, name, k]) => { const all = [...document.querySelectorAll('.js-plotly-plot')];
  const gd = all[idx < 0 ? all.length + idx : idx]; const fl = gd._fullLayout;
  const t = gd.data.find(t => (t.name || '') === name && t.type === 'scatter');
  const r = gd.getBoundingClientRect();
  return [fl.xaxis.l2p(fl.xaxis.d2l(t.x[k])) + fl._size.l + r.left, fl.yaxis.l2p(fl.yaxis.d2l(t.y[k])) + fl._size.t + r.top]; }"""
MARKED_STEP = """() => { const gd = document.querySelectorAll('.js-plotly-plot')[1];
  const t = gd.data.find(t => t.name === 'this step'); return t ? t.x[0] : null; }"""


def test_slider_moves_the_context_bar_and_the_token_figures(page: Any, app_url: str, shots_dir: Path) -> None:
    _load_sample(page, app_url, "coding-session.jsonl")
    _go(page, "Replay")
    page.get_by_text("What happened here").wait_for(timeout=60000)
    page.wait_for_selector(".js-plotly-plot .barlayer", timeout=60000)
    tokens_before = _metric(page, "Tokens sent")
    bars_before = page.evaluate(BAR_SUMS)
    last = page.evaluate(MARKED_STEP)
    assert bars_before["sent to the model"] == int(tokens_before.replace(",", ""))
    # with the part the file does not hold, the sent bar ends at the prompt the provider recorded
    whole = page.evaluate(BAR_SUMS.replace("t.name !== ", "'' !== "))
    assert whole["sent to the model"] == int(_metric(page, "Recorded prompt").replace(",", ""))
    slider = page.get_by_role("slider").first
    slider.focus()
    page.keyboard.press("Home")
    page.wait_for_function(
        MARKED_STEP.replace("return t ? t.x[0] : null;", "return t && t.x[0] === 0;"), timeout=60000
    )
    _idle(page)
    tokens_after = _metric(page, "Tokens sent")
    bars_after = page.evaluate(BAR_SUMS)
    assert last > 0 and page.evaluate(MARKED_STEP) == 0
    assert tokens_after != tokens_before
    assert bars_after != bars_before and bars_after["sent to the model"] == int(tokens_after.replace(",", ""))
    assert "model call 0" in page.locator(".js-plotly-plot .gtitle").first.text_content()
    page.locator(".st-key-next_event button").first.click()
    _idle(page)
    assert page.evaluate(MARKED_STEP) > 0
    # clicking a point of the timeline jumps to that call
    page.locator(".js-plotly-plot").nth(1).scroll_into_view_if_needed()
    x, y = page.evaluate(POINT, [1, "replayed (sent)", 10])
    page.mouse.move(x, y)
    page.mouse.click(x, y)
    page.wait_for_function(
        MARKED_STEP.replace("return t ? t.x[0] : null;", "return t && t.x[0] === 10;"), timeout=60000
    )
    page.screenshot(path=str(shots_dir / "replay-after-slider.png"))
    assert page.dialogs == []
    assert page.outside == [], f"requests left the machine: {page.outside}"


BARS_AT = """() => { const gd = [...document.querySelectorAll('.js-plotly-plot')][0]; const out = {};
  for (const t of gd.data) if (t.type === 'bar') t.y.forEach((r, i) => out[r] = (out[r] || 0) + t.x[i]);
  return out; }"""


def test_the_keyboard_steps_to_the_next_compaction_and_its_bars_differ(
    page: Any, app_url: str, shots_dir: Path
) -> None:
    """Without focusing anything: PageDown is "next compaction"; there the before and after bars
    differ by what was summarised. A reload keeps the session (it is named in the URL)."""
    from inspector import load_session
    from inspector.compaction_view import compaction_view
    from inspector.replay import ReplaySettings, replay

    r = replay(
        load_session(REPO / "sample_sessions" / "coding-session.jsonl"),
        ReplaySettings(compaction="pi", context_window=40_000, strategy="recorded"),
    )
    _load_sample(page, app_url, "coding-session.jsonl", "?compaction=pi&window=40000")
    _go(page, "Replay")
    page.get_by_text("What happened here").wait_for(timeout=60000)
    first, second = r.summaries[0].step, r.summaries[1].step
    assert page.evaluate(MARKED_STEP) == first  # it opens on the first event: here, a compaction
    page.locator("h1").first.click()  # nothing focused that takes keys
    page.keyboard.press("PageDown")
    page.wait_for_function(
        MARKED_STEP.replace("return t ? t.x[0] : null;", f"return t && t.x[0] === {second};"), timeout=60000
    )
    _idle(page)
    bars = page.evaluate(BARS_AT)
    v = compaction_view(r, 1)
    assert bars["before compaction"] == v.tokens_before and bars["after compaction"] == v.tokens_after
    assert bars["before compaction"] != bars["after compaction"]
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        MARKED_STEP.replace("return t ? t.x[0] : null;", f"return t && t.x[0] === {second + 1};"),
        timeout=60000,
    )
    page.keyboard.press("ArrowLeft")
    page.wait_for_function(
        MARKED_STEP.replace("return t ? t.x[0] : null;", f"return t && t.x[0] === {second};"), timeout=60000
    )
    _idle(page)
    main = page.get_by_test_id("stMain").locator("[data-testid=stMainBlockContainer]").bounding_box()
    tl = page.locator(".js-plotly-plot").nth(1).bounding_box()
    assert tl["width"] > 0.9 * main["width"] - 2 * 48  # the timeline spans the page
    page.screenshot(path=str(shots_dir / "replay-compaction.png"), full_page=True)
    assert f"step={second}" in page.url  # the call is kept in the URL
    page.reload()
    page.get_by_text("What happened here").wait_for(timeout=60000)
    _idle(page)
    assert page.get_by_test_id("stException").count() == 0
    assert page.evaluate(MARKED_STEP) == second  # the reload reopens the same call
    assert page.outside == [], f"requests left the machine: {page.outside}"


def test_clicking_a_sweep_cell_applies_its_settings(page: Any, app_url: str, shots_dir: Path) -> None:
    _load_sample(page, app_url, "coding-session.jsonl", "?strategy=opencode&compaction=pi")
    _go(page, "Compare & tune")
    values = page.get_by_test_id("stTextInput").filter(has_text="prune_protect values").locator("input")
    values.fill("1000, 20000")
    values.press("Enter")
    _idle(page)
    page.get_by_role("button", name="Run sweep").click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.js-plotly-plot')]"
        ".some(g => g.data && g.data.some(t => t.type === 'heatmap'))",
        timeout=120000,
    )
    _idle(page)
    heat = page.locator(".js-plotly-plot").last
    heat.scroll_into_view_if_needed()
    x, y = page.evaluate(POINT, [-1, "", 0])  # the first cell: prune_protect 1,000
    page.mouse.move(x, y)
    page.mouse.click(x, y)
    page.get_by_text("Applied prune_protect = 1,000").wait_for(timeout=60000)
    value = (
        page.get_by_test_id("stNumberInput").filter(has_text="prune protect").locator("input").input_value()
    )
    assert value == "1000"
    page.screenshot(path=str(shots_dir / "compare-sweep.png"))
    assert page.get_by_test_id("stException").count() == 0


def test_every_page_renders_and_is_screenshotted(page: Any, app_url: str, shots_dir: Path) -> None:
    _load_sample(page, app_url, "coding-session.jsonl", "?window=40000&compaction=pi&strategy=dcp&keep=8000")
    for name in PAGES:
        if name != "Load":
            _go(page, name)
        main = page.get_by_test_id("stMain")
        assert page.get_by_test_id("stException").count() == 0, f"{name}: an exception is shown"
        assert main.locator("h1").first.inner_text().strip(), name
        page.screenshot(path=str(shots_dir / f"{name.split()[0].lower()}.png"))
    assert page.outside == [], f"requests left the machine: {page.outside}"


def test_hostile_session_text_is_shown_inertly(page: Any, app_url: str) -> None:
    _load_sample(page, app_url, "hostile-content.jsonl")
    # the session's name holds markup: shown as text
    head = page.get_by_test_id("stMain").locator("h3").filter(has_text="hostile-content").first
    assert "<b>bold</b>" in head.inner_text() and head.locator("b, script").count() == 0
    _go(page, "Replay")
    page.get_by_text("Messages the model receives").wait_for(timeout=60000)
    _go(page, "Tree")
    from inspector import load_session
    from inspector.ui.views import entry_label

    s = load_session(REPO / "sample_sessions" / "hostile-content.jsonl")
    k = next(i for i in range(len(s.entries)) if "<script>" in entry_label(s, i, 160))
    entry = page.get_by_test_id("stNumberInput").filter(has_text="Entry (file order)").locator("input")
    entry.fill(str(k))
    entry.press("Enter")
    _idle(page)
    text = page.get_by_test_id("stText").filter(has_text="<script>").first.inner_text()
    assert text == entry_label(s, k, 160)  # exactly the text, markup and all, as text
    page.wait_for_timeout(1000)
    assert page.dialogs == []  # no alert() ran
    assert page.evaluate("document.title") != "pwned"
    assert page.locator("img[src='x']").count() == 0
    assert page.locator("main script").count() == 0
    assert page.outside == []


def test_the_readme_command_preloads_a_session(page: Any) -> None:
    """``streamlit run app.py -- --session sample_sessions/coding-session.jsonl`` opens on that session."""
    from inspector import load_session

    with _serve("--session", "sample_sessions/coding-session.jsonl") as url:
        page.outside = []
        page.goto(url + "/")
        page.get_by_text("Entries by type").wait_for(timeout=60000)
        n = len(load_session(REPO / "sample_sessions" / "coding-session.jsonl").entries)
        assert _metric(page, "Entries") == f"{n:,}"
        _go(page, "Replay")
        page.get_by_text("What happened here").wait_for(timeout=60000)
        assert page.get_by_test_id("stException").count() == 0


def test_each_page_opens_by_its_url(page: Any, app_url: str) -> None:
    """Typing a page's address opens that page: ``/load`` too (Streamlit serves the default page
    at ``/`` only, so ``/load`` leads there), and never Streamlit's "Page not found"."""
    for path, heading in (("/load", "Load a session"), ("/", "Load a session"), ("/corpus", "Corpus")):
        page.goto(app_url + path)
        page.get_by_test_id("stMain").locator("h1").filter(has_text=heading).wait_for(timeout=60000)
        _idle(page)
        assert "Page not found" not in page.inner_text("body"), path
        nav = page.get_by_test_id("stSidebarNavLink")
        assert nav.filter(has_text="Load").count() == 1, f"{path}: the menu lists Load once"
