"""What keeps the Replay page quick on long runs without changing what it shows: the step in the
URL, work deferred to the background, merged bar segments (issue 15, item 7). Speed itself is
measured by ``bench/app.py``, never asserted here."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from inspector import load_session
from inspector.replay import ReplaySettings, replay, session_counter
from inspector.ui import deferred, figures, views
from inspector.ui.state import caches

from .test_app import SAMPLE, fresh, load, page


def qp(at: AppTest, key: str) -> Any:
    v = at.query_params.get(key)
    return v[-1] if isinstance(v, list) else v


def test_the_step_is_kept_in_the_url_and_a_link_reopens_it() -> None:
    at = page(load(fresh()), "replay")
    first = at.slider(key="step").value
    assert qp(at, "step") == str(first)
    at.button(key="next").click().run()
    assert qp(at, "step") == str(first + 1)
    session = qp(at, "session")
    assert session == "sample:coding-session.jsonl"
    # a reload, or the link opened elsewhere: the same session at the same call
    again = page(fresh(session=session, step=str(first + 1)), "replay")
    assert not again.exception, again.exception
    assert again.slider(key="step").value == first + 1
    assert again.session_state["cur_step"] == first + 1


def test_a_step_beyond_the_run_opens_the_last_call_and_a_bad_one_is_reported() -> None:
    n = len(replay(load_session(SAMPLE), ReplaySettings()).steps)
    at = page(fresh(session="sample:coding-session.jsonl", step="99999"), "replay")
    assert at.slider(key="step").value == n - 1 and qp(at, "step") == str(n - 1)
    bad = fresh(session="sample:coding-session.jsonl", step="seven")
    assert any("step='seven' is not a whole number" in w.value for w in bad.sidebar.warning)


def test_a_long_runs_cache_model_follows_the_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deferred, "DEFER_CALLS", 0)  # every run counts as long here
    go = threading.Event()
    model = deferred.cache_replay

    def slow_model(r: Any) -> Any:  # still being computed while the page is drawn
        go.wait(60)
        return model(r)

    monkeypatch.setattr(deferred, "cache_replay", slow_model)
    at = page(load(fresh()), "replay")
    go.set()
    deferred.wait()
    go.clear()
    at.selectbox(key="counter").set_value("tiktoken").run()  # a replay no cache model was made for
    assert not at.exception, at.exception
    assert any(c.value.startswith("Computing the prompt-cache model") for c in at.caption)
    assert not [c for c in at.caption if c.value.startswith("What was sent, split the way")]
    go.set()
    deferred.wait()
    misses = caches()["misc"].misses
    at.run()  # what the poller's rerun shows
    assert [c for c in at.caption if c.value.startswith("What was sent, split the way")]
    assert not any(c.value.startswith("Computing the prompt") for c in at.caption)
    assert caches()["misc"].misses == misses  # the cache view found the report made in the background


def test_merged_bar_segments_add_up_and_keep_marker_ticks() -> None:
    s = load_session(SAMPLE)
    settings = ReplaySettings(strategy="opencode").with_strategy_settings(
        {"prune_protect": 1000, "prune_minimum": 0}
    )
    r = replay(s, settings)
    k = len(r.steps) - 1
    d = r.step_detail(k)
    c = session_counter(s, "pi")
    before = list(d.before) * 20  # a long context: far more messages than segments
    toks = c.count_many([m.message for m in before])
    after = list(d.after) * 20
    after_toks = c.count_many([m.message for m in after])
    marked = {i + len(d.after) * j for i in views.pruned_positions(d) for j in range(20)}
    assert marked
    segs = figures.bars._segments(after, after_toks, marked)
    assert len(segs) <= 2 * figures.MAX_SEGMENTS < len(after)
    assert sum(x["tokens"] for x in segs) == sum(after_toks)
    assert sum(x["count"] for x in segs) == len(after)
    assert any("small messages" in x["label"] for x in segs)
    fig = figures.context_bars(before, toks, after, after_toks, pruned_positions=marked, window=10**7)
    spec = fig.to_plotly_json()
    rows: dict[str, int] = {}
    for tr in spec["data"]:
        for row, x in zip(tr["y"], tr["x"], strict=True):
            rows[row] = rows.get(row, 0) + x
    assert rows == {"as built": sum(toks), "sent to the model": sum(after_toks)}
    ticks = [sh for sh in spec["layout"]["shapes"] if sh["yref"] == "y"]
    assert ticks and len(ticks) <= len(segs)


def test_pruned_positions_are_the_pruned_rows() -> None:
    s = load_session(SAMPLE)
    r = replay(s, ReplaySettings(strategy="opencode").with_strategy_settings({"prune_protect": 1000}))
    c = session_counter(s, "pi")
    seen = 0
    for k in range(len(r.steps)):
        d = r.step_detail(k)
        rows = {row["#"] for row in views.pruned_rows(d, c)}
        assert views.pruned_before(d) == rows
        seen += bool(rows)
    assert seen


def test_the_trigger_label_is_the_series_label() -> None:
    from inspector.compaction_view import trigger_label, trigger_series

    s = load_session(SAMPLE)
    for policy in ("recorded", "pi", "codex", "never"):
        r = replay(s, ReplaySettings(compaction=policy, context_window=40_000))
        series = trigger_series(r)
        assert trigger_label(r) == (series[0] if series is not None else None)
