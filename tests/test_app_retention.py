"""Retention in the app (issue 21), through AppTest: the Summaries page's scores, forgotten list
(opening its entries in the replay), highlighted summary and comparison; the Replay timeline's
marker at the first call that used a forgotten item."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from inspector import load_session
from inspector.replay import ReplaySettings, replay
from inspector.retention import retention

from .support.paths import REPO

APP = str(REPO / "app.py")
SAMPLE = REPO / "sample_sessions" / "coding-session.jsonl"


def _loaded() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.selectbox(key="sample_choice").set_value(SAMPLE.name)
    at.button(key="load_sample").click().run()
    assert not at.exception, at.exception
    return at


def _page(at: AppTest, name: str) -> AppTest:
    return at.switch_page(f"inspector/ui/pages/{name}.py").run()


def _expected():  # type: ignore[no-untyped-def]
    r = replay(load_session(SAMPLE), ReplaySettings())
    return r, retention(r)


def test_summaries_page_scores_and_lists_what_was_forgotten() -> None:
    r, rep = _expected()
    c = rep.compactions[-1]
    assert c.forgotten  # the sample's compaction forgets something the session used later
    at = _page(_loaded(), "summaries")
    assert not at.exception, at.exception
    m = {x.label: x.value for x in at.metric}
    rec = c.recall()
    assert m["Files kept"] == ("—" if rec["files"] is None else f"{rec['files']:.0%}")
    assert m["Identifiers kept"] == ("—" if rec["identifiers"] is None else f"{rec['identifiers']:.0%}")
    assert m["Overall"] == f"{c.overall:.0%}"
    i = len(rep.compactions) - 1
    table = at.dataframe(key=f"ret_forgot_{i}").value
    assert list(table["item"]) == [n.item for n in c.forgotten]
    assert list(table["needed at"]) == [n.needed_at for n in c.forgotten]
    # the summary text, highlighted, and the items it misses
    missing = next(x.value for x in at.markdown if x.value.startswith("**Missing:**"))
    assert missing.count("red-background") == len(c.forgotten) and "cli\\.js" in missing
    # the same span under the offline summary
    cmp = next(
        df.value for df in at.dataframe if "summary" in df.value.columns and "overall" in df.value.columns
    )
    assert list(cmp["summary"]) == ["recorded", "offline"]


def test_a_forgotten_item_opens_where_it_was_needed() -> None:
    r, rep = _expected()
    i = len(rep.compactions) - 1
    n = rep.compactions[i].forgotten[0]
    at = _page(_loaded(), "summaries")
    at.button(key=f"ret_go_{i}_Open entry {n.needed_at} (needed)").click().run()
    assert not at.exception, at.exception
    assert at.slider(key="step").value == next(s.step for s in r.steps if s.entry_index > n.needed_at)


def test_replay_timeline_marks_the_first_use_of_a_forgotten_item() -> None:
    r, rep = _expected()
    at = _page(_loaded(), "replay")
    assert not at.exception, at.exception
    fig = next(
        json.loads(el.proto.spec)
        for el in at.get("plotly_chart")
        if any(t.get("name") == "first use of a forgotten item" for t in json.loads(el.proto.spec)["data"])
    )
    mark = next(t for t in fig["data"] if t.get("name") == "first use of a forgotten item")
    assert mark["x"] == [k for k in rep.first_need_steps if k is not None]
    assert mark["y"] == [r.steps[k].tokens for k in mark["x"]]


def test_compare_page_weighs_retention_per_configuration() -> None:
    at = _page(_loaded(), "compare")
    assert not at.exception, at.exception
    table = next(df.value for df in at.dataframe if "metric" in df.value.columns)
    rows = {row["metric"]: row for row in table.to_dict("records")}
    configs = [c for c in table.columns if c != "metric"]
    assert len(configs) == 2
    s = load_session(SAMPLE)
    for name, settings in zip(
        configs, (ReplaySettings(), ReplaySettings(strategy="opencode", compaction="pi")), strict=True
    ):
        cs = retention(replay(s, settings)).compactions
        needed, lost = sum(len(c.needed) for c in cs), sum(len(c.forgotten) for c in cs)
        assert rows["items forgotten by compactions"][name] == (str(lost) if cs else "—")
        assert rows["retention (kept / needed later)"][name] == (
            f"{(needed - lost) / needed:.0%} of {needed}" if needed else "—"
        )
    assert rows["items forgotten by compactions"][configs[0]] == "1"  # the sample's recorded compaction


def test_a_sweep_is_scored_by_what_each_cell_forgot() -> None:
    """Compare & tune: retention as an objective of the sweep — the grid coloured by the share kept,
    the cells ranked by the items forgotten, each as retention_metrics replays and scores it."""
    from inspector.retention import retention_metrics

    from .test_app import run_sweep

    at = _loaded()
    at.selectbox(key="compaction").set_value("pi").run()
    at = run_sweep(_page(at, "compare"), "keep_recent_tokens", "2000, 20000", "context_window", "60000")
    assert not at.exception
    at.toggle(key="sw_retention").set_value(True).run()
    assert not at.exception
    heat = next(
        json.loads(el.proto.spec)
        for el in at.get("plotly_chart")
        if json.loads(el.proto.spec)["data"][0].get("colorbar", {}).get("title", {}).get("text")
        == "retention"
    )
    base = ReplaySettings(compaction="pi", context_window=60_000)
    s = load_session(SAMPLE)
    want = [retention_metrics(s, base.model_copy(update={"keep_recent_tokens": k})) for k in (2000, 20000)]
    assert heat["data"][0]["z"] == [[w["retention"] for w in want]]
    table = next(d.value for d in at.dataframe if "needed later" in d.value.columns)
    assert list(table["forgotten"]) == sorted(w["forgotten"] for w in want)
    assert want[0]["forgotten"] > want[1]["forgotten"]  # keeping more verbatim forgets less here


def test_a_compaction_with_no_summary_text_says_so() -> None:
    """A Codex rollout whose ``compacted`` line has an empty message: the Summaries page says the
    file records no summary text, instead of an empty box, and retention counts what Codex put
    back as kept."""

    def line(k: int, kind: str, payload: dict) -> str:  # type: ignore[type-arg]
        return json.dumps({"timestamp": f"2026-01-02T03:04:{k:02d}.000Z", "type": kind, "payload": payload})

    ask = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "Always run the tests with uv."}],
    }
    rows = [
        ("session_meta", {"id": "s", "cwd": "/w"}),
        ("response_item", ask),
        (
            "response_item",
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
        ),
        ("compacted", {"message": "", "replacement_history": [ask]}),
        (
            "response_item",
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "go"}]},
        ),
    ]
    data = "\n".join(line(k, kind, p) for k, (kind, p) in enumerate(rows)).encode()
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.file_uploader(key="upload").set_value(("rollout.jsonl", data, "application/jsonl"))
    at = _page(at.run(), "summaries")
    assert not at.exception, at.exception
    assert any("records no summary text" in x.value and "Codex put back" in x.value for x in at.info)
    assert not any(t.label.startswith("Diff") for t in at.tabs)  # nothing recorded to diff against
    assert {x.label: x.value for x in at.metric}["Instructions kept"] == "100%"


def test_a_picked_forgotten_item_is_shown_as_plain_text() -> None:
    """The caption under the forgotten list showed the item as markdown (only brackets were
    swapped): a forgotten instruction "never push to http://x, always **…**" became a live link and
    bold text. It goes through the page's escaping now."""
    from inspector.ui.urlstate import esc
    from inspector.visible import clip

    _, rep = _expected()
    i = len(rep.compactions) - 1
    n = rep.compactions[i].forgotten[0]
    at = _page(_loaded(), "summaries")
    at.session_state[f"ret_forgot_{i}"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert not at.exception, at.exception
    want = esc(f"{n.kind}: {clip(n.item, 80)}")
    assert "\\." in want  # a path: escaping shows
    assert any(c.value == want for c in at.caption), [c.value for c in at.caption][:8]
