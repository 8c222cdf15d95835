"""Real browser through the Learn path: a shared ``?screen=N`` link, a control moved with the
keyboard, the reveal, every screen in turn, and the jump to the Replay page (headless Debian
chromium through Playwright; skips, saying why, without them). Screenshots of the Learn screens go
to ``$INSPECTOR_SCREENSHOTS`` (or a temporary folder)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inspector import learn

from .test_e2e_browser import ARGS, CHROMIUM, _idle, _serve

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def learn_url() -> Iterator[str]:
    with _serve() as url:
        yield url


@pytest.fixture
def page(learn_url: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        pg = browser.new_page(viewport={"width": 1440, "height": 1100})
        pg.outside = []
        pg.on(
            "request",
            lambda r: None if r.url.startswith((learn_url, "data:", "blob:")) else pg.outside.append(r.url),
        )
        yield pg
        browser.close()


def _shots() -> Path | None:
    d = os.environ.get("INSPECTOR_SCREENSHOTS")
    if d:
        Path(d).mkdir(parents=True, exist_ok=True)
    return Path(d) if d else None


def _header(page: Any) -> str:
    return page.locator("[data-testid=stMain] h2").first.inner_text()


def test_the_learn_path_in_a_real_browser(page: Any, learn_url: str) -> None:
    shots = _shots()
    page.set_default_timeout(120_000)  # a loaded machine is slow, not wrong: waits fail only on a hang
    page.goto(learn_url + "/learn?screen=3")  # a teacher's shared link
    page.get_by_text("3. The trigger").wait_for(timeout=60000)
    _idle(page)
    # move the window with the keyboard: three steps of 8,000 down from 64,000
    thumb = page.locator(".st-key-learn_trigger input[type=range]").first
    thumb.focus()
    for _ in range(3):
        thumb.press("ArrowLeft")
    _idle(page)
    page.wait_for_function(
        "() => document.querySelector('.st-key-learn_trigger input[type=range]').value === '40000'",
        timeout=120000,
    )
    page.get_by_role("button", name="Reveal").click()
    _idle(page)
    expected = learn.reveal(learn.load_learn_session(), "trigger", 40_000)
    page.get_by_text(f"Answer: {expected.answer}").wait_for(timeout=120000)
    if shots:
        page.screenshot(path=str(shots / "learn-3-trigger.png"), full_page=True)
    # every screen in turn, the URL following
    for n in range(4, len(learn.SCREENS) + 1):
        page.get_by_role("button", name="Next").click()
        _idle(page)
        assert _header(page).startswith(f"{n}. "), _header(page)
        assert f"screen={n}" in page.url
        page.get_by_role("button", name="Reveal").click()
        _idle(page)
        page.get_by_text("Answer:").first.wait_for(timeout=120000)
        if shots and n in (4, 5, 7):
            page.screenshot(path=str(shots / f"learn-{n}-{learn.SCREENS[n - 1].key}.png"), full_page=True)
    # the link to the Replay page: the same session and step
    step = learn.reveal(learn.load_learn_session(), "cost").replay_step
    page.get_by_role("button", name=re.compile("Open in Replay")).click()
    page.get_by_role("heading", name="Replay").wait_for(timeout=60000)
    _idle(page)
    assert (
        "session=sample%3Acoding-session.jsonl" in page.url
        or "session=sample:coding-session.jsonl" in page.url
    )
    assert page.locator(".st-key-step input[type=range]").first.input_value() == str(step)
    assert not page.outside, page.outside  # nothing fetched from anywhere else
