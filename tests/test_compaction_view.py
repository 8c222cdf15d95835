"""The moment of compaction as data (inspector.compaction_view), and the pure helpers and figures
that draw it: before = summarised + kept, after = summary + kept, the recorded and replayed cuts,
what triggers the policy, and the timeline and bars that read at any length."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector import load_session
from inspector.compaction import CompactionSettings, prepare_at_cut, prepare_compaction
from inspector.compaction_view import (
    KEPT,
    PREFIX,
    SUMMARY,
    compaction_steps,
    compaction_view,
    compactions_at,
    keep_range_for_cut,
    trigger_series,
)
from inspector.replay import CompactionSkipped, Pruned, ReplaySettings, Reread, StrategyEvent, replay
from inspector.replay.as_sent import sent_fit
from inspector.replay.sizes import changed_size
from inspector.ui import figures, narrate, urlstate, views

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_sessions" / "coding-session.jsonl"


@pytest.fixture(scope="module")
def coding():  # type: ignore[no-untyped-def]
    return load_session(SAMPLE)


def _entries(parts):  # type: ignore[no-untyped-def]
    return [p.message.entry_index for p in parts]


def test_a_recorded_compaction_before_and_after(coding) -> None:  # type: ignore[no-untyped-def]
    r = replay(coding, ReplaySettings())
    comp = next(i for i, e in enumerate(coding.entries) if e.type == "compaction")
    (i,) = [k for k, rec in enumerate(r.summaries) if rec.entry_index == comp]
    v = compaction_view(r, i)
    assert v.summarised_tokens + v.kept_tokens == v.tokens_before > 0
    assert v.tokens_after == v.summary_tokens + v.tokens((KEPT,), "after")
    assert v.kept_tokens == v.tokens((KEPT,), "after")  # what is kept is the same messages, before and after
    # after: exactly the context the replay continued with (its summary, then the kept part)
    assert [p.message for p in v.after] == r.summaries[i].after()
    assert [p.part for p in v.after][0] == SUMMARY and v.summary_text == coding.entries[comp].summary
    # the kept part starts at the recorded first kept entry; everything before it is summarised
    first_kept = coding.index_of(coding.entries[comp].firstKeptEntryId)
    kept = [p for p in v.before if p.part == KEPT]
    assert min(_entries(kept)) == first_kept and all(e < first_kept for e in _entries(v.summarised))
    assert len(v.summarised) + len(kept) == len(v.before)
    # both cuts: the recorded one (122) and pi's rule replayed with keepRecentTokens 20,000 (119)
    cuts = {c.label.split(",")[0]: c for c in v.cuts}
    assert cuts["recorded cut"].entry_index == first_kept == 122
    assert cuts["pi's cut"].entry_index == 119
    assert cuts["recorded cut"].offset == v.summarised_tokens  # drawn exactly where the kept part starts
    assert "cuts at entry 119" in v.cut_note and "kept from entry 122" in v.cut_note


def test_the_keep_range_that_reproduces_a_recorded_cut_is_exact(coding) -> None:  # type: ignore[no-untyped-def]
    comp = next(i for i, e in enumerate(coding.entries) if e.type == "compaction")
    lo, hi = keep_range_for_cut(coding, comp, 122)
    path = coding.path(coding.parents[comp])
    entries = coding.entries_at(path)

    def cut(keep: int) -> int:
        prep = prepare_compaction(entries, CompactionSettings(keepRecentTokens=keep), path_indexes=path)
        return path[prep.first_kept_path_index]

    assert lo <= hi and cut(lo) == cut(hi) == 122
    assert cut(lo - 1) != 122 and cut(hi + 1) != 122
    assert f"from {lo:,} to {hi:,}" in compaction_view(replay(coding, ReplaySettings()), 0).cut_note
    assert keep_range_for_cut(coding, comp, 10_000) is None  # not on its path


def test_a_what_if_pi_compaction_lists_what_its_summarizer_got(coding) -> None:  # type: ignore[no-untyped-def]
    r = replay(coding, ReplaySettings(compaction="pi", context_window=40_000))
    assert len(r.summaries) > 2
    for i, rec in enumerate(r.summaries):
        v = compaction_view(r, i)
        prep = rec.prep
        assert v.summarised_tokens + v.kept_tokens == v.tokens_before
        assert v.tokens_after == v.summary_tokens + v.kept_tokens
        assert v.summary_tokens == rec.summary_tokens and v.tokens_after == rec.tokens_after
        summarised = {e for e in _entries(v.summarised) if e is not None}
        assert summarised == {m.entry_index for m in (*prep.messagesToSummarize, *prep.turnPrefixMessages)}
        assert {e for e in _entries(p for p in v.before if p.part == PREFIX)} == {
            m.entry_index for m in prep.turnPrefixMessages
        }
        assert [c.entry_index for c in v.cuts] == [rec.first_kept_entry_index]
        assert v.cut_note is None
    assert any(p.part == PREFIX for i in range(len(r.summaries)) for p in compaction_view(r, i).before)


@pytest.mark.parametrize("policy", ["opencode", "codex", "claude-code"])
def test_other_policies_add_up_too(coding, policy: str) -> None:  # type: ignore[no-untyped-def]
    r = replay(coding, ReplaySettings(compaction=policy, context_window=40_000))
    assert r.summaries
    for i in range(len(r.summaries)):
        v = compaction_view(r, i)
        assert v.summarised_tokens + v.kept_tokens == v.tokens_before
        assert v.tokens_after == v.summary_tokens + v.tokens((KEPT,), "after")
        if policy == "claude-code":
            assert v.kept_tokens == 0 and not v.cuts  # only the summary continues
        if policy == "codex":
            assert not v.cuts  # the kept user messages are scattered: no single cut


def test_prepare_at_cut_at_pis_own_cut_is_pis_preparation(coding) -> None:  # type: ignore[no-untyped-def]
    path = coding.path(coding.default_leaf)
    entries = coding.entries_at(path)
    for keep in (2_000, 8_000, 20_000):
        want = prepare_compaction(entries, CompactionSettings(keepRecentTokens=keep), path_indexes=path)
        got = prepare_at_cut(
            entries, want.first_kept_path_index, CompactionSettings(keepRecentTokens=keep), path_indexes=path
        )
        assert got.firstKeptEntryId == want.firstKeptEntryId and got.isSplitTurn == want.isSplitTurn
        assert got.summarized_entry_indexes == want.summarized_entry_indexes
        assert [m.entry_index for m in got.turnPrefixMessages] == [
            m.entry_index for m in want.turnPrefixMessages
        ]
        assert got.fileOps.lists() == want.fileOps.lists() and got.tokensBefore == want.tokensBefore
    assert prepare_at_cut(entries, len(entries) + 5) is None


def test_compaction_steps_and_the_trigger_quantity(coding) -> None:  # type: ignore[no-untyped-def]
    rec = replay(coding, ReplaySettings())
    assert compaction_steps(rec) == [66] and compactions_at(rec, 66) == [0] and compactions_at(rec, 65) == []
    label, vals = trigger_series(rec)
    assert "recorded usage" in label  # pi compares the answer's recorded usage, not the estimate
    assert vals == [None if s.stop_reason in ("aborted", "error") else s.recorded_total for s in rec.steps]
    what_if = replay(coding, ReplaySettings(compaction="pi", context_window=40_000))
    label, vals = trigger_series(what_if)
    assert "usage the policy compares" in label
    # the recorded usage until the first compaction (the context is the recorded one), then that
    # usage plus what the what-if changed: the context it sent less the one the session sent, in
    # the provider's tokens by the session's size fit (coding-session: 1.06 per counted token)
    first = compaction_steps(what_if)[0]
    assert vals[:first] == [s.recorded_total for s in what_if.steps[:first]]
    ends = [k for k, s in enumerate(what_if.steps) if s.stop_reason != "toolUse"]  # agent runs end there
    over = next(k for k in ends if vals[k] is not None and vals[k] > 40_000 - 16_384)
    tried = [
        k + 1
        for k, s in enumerate(what_if.steps[1:])
        if {e.type for e in s.events} & {"compaction", "compaction_skipped"}
    ]
    assert tried[0] == over + 1  # pi tries there first
    sent = {s.entry_index: s.tokens for s in rec.steps}
    fit = sent_fit(coding, "pi")
    assert 1.05 < fit.scale < 1.07
    assert [v for v in vals[first:] if v is not None] == [
        changed_size(int(s.recorded_total), s.tokens - sent[s.entry_index], fit)
        for s in what_if.steps[first:]
        if s.recorded_total
    ]
    unscaled = [
        s.recorded_total + s.tokens - sent[s.entry_index] for s in what_if.steps[first:] if s.recorded_total
    ]
    assert [v for v in vals[first:] if v is not None] != unscaled
    assert trigger_series(replay(coding, ReplaySettings(compaction="never"))) is None


# -- figures ---------------------------------------------------------------------------------


def _rows(fig) -> dict[str, int]:  # type: ignore[no-untyped-def]
    out: dict[str, int] = {}
    for tr in fig.to_plotly_json()["data"]:
        if tr.get("type") == "bar":
            for row, x in zip(tr["y"], tr["x"], strict=True):
                out[row] = out.get(row, 0) + x
    return out


def test_compaction_bars_draw_before_after_and_both_cuts(coding) -> None:  # type: ignore[no-untyped-def]
    r = replay(coding, ReplaySettings())
    v = compaction_view(r, 0)
    fig = figures.compaction_bars(v, window=200_000, reserve=16_384)
    assert _rows(fig) == {"before compaction": v.tokens_before, "after compaction": v.tokens_after}
    spec = fig.to_plotly_json()
    names = {tr["name"] for tr in spec["data"]}
    assert {"summarised", "summary", "tool output"} <= names
    lines = [sh for sh in spec["layout"]["shapes"] if sh["yref"] == "y"]
    assert sorted(sh["x0"] for sh in lines) == sorted(c.offset for c in v.cuts)
    labels = " ".join(a["text"] for a in spec["layout"]["annotations"])
    assert "recorded cut (entry 122)" in labels and "(entry 119)" in labels


def _sent_row(fig) -> list[tuple[str, int, int]]:  # type: ignore[no-untyped-def]
    """The sent bar's segments: (legend name, base, width), left to right."""
    segs = [
        (tr["name"], b, x)
        for tr in fig.to_plotly_json()["data"]
        for row, b, x in zip(tr["y"], tr["base"], tr["x"], strict=True)
        if row == "sent to the model"
    ]
    return sorted(segs, key=lambda t: t[1])


@pytest.mark.parametrize("kind", ["plain", "compaction"])
def test_the_sent_bar_ends_at_the_prompt_the_provider_counted(coding, kind) -> None:  # type: ignore[no-untyped-def]
    """The bar of what is sent ends where "Window used" is: the messages, after what the provider
    counted beyond them (the system prompt and tools the file does not record), drawn first."""
    from inspector.replay import session_counter
    from inspector.ui.step_figures import step_bars

    r = replay(coding, ReplaySettings())
    comps = set(compaction_steps(r))
    k = next(
        st.step
        for st in r.steps
        if st.recorded_input and (st.step in comps) == (kind == "compaction") and st.step > 0
    )
    st = r.steps[k]
    c = session_counter(coding, "pi")
    counted = sum(c.count_many([x.message for x in r.step_detail(k).after]))
    assert st.provider_tokens > counted  # the recorded prompt holds the system prompt and tools
    segs = _sent_row(step_bars(r, k, c))
    assert segs[0] == (figures.NOT_IN_FILE, 0, st.provider_tokens - counted)
    assert sum(x for _, _, x in segs) == st.provider_tokens
    assert figures.NOT_IN_FILE not in {name for name, _, _ in segs[1:]}


def test_a_provider_count_below_the_messages_is_a_tick_not_a_segment(coding) -> None:  # type: ignore[no-untyped-def]
    from inspector.replay import session_counter

    r = replay(coding, ReplaySettings())
    d = r.step_detail(5)
    c = session_counter(coding, "pi")
    after = c.count_many([x.message for x in d.after])
    bars = {
        p: figures.context_bars(d.before, after, d.after, after, window=200_000, provider_tokens=p)
        for p in (None, sum(after), sum(after) - 500)
    }
    for p, fig in bars.items():
        segs = _sent_row(fig)
        assert sum(x for _, _, x in segs) == sum(after)
        assert figures.NOT_IN_FILE not in {name for name, _, _ in segs}
        spec = fig.to_plotly_json()["layout"]
        ticks = [sh for sh in spec.get("shapes", []) if sh["yref"] == "y"]
        notes = [a["text"] for a in spec.get("annotations", []) if a["yref"] == "y"]
        if p == sum(after) - 500:
            assert [sh["x0"] for sh in ticks] == [p] and ticks[0]["y0"] > 0.5  # on the sent bar
            assert notes == [f"the provider's count {p:,}"]
        else:
            assert not ticks and not notes


def test_context_bars_mark_pruned_segments_and_keep_labels_apart(coding) -> None:  # type: ignore[no-untyped-def]
    from inspector.replay import session_counter

    r = replay(
        coding,
        ReplaySettings(strategy="opencode").with_strategy_settings(
            {"prune_protect": 1000, "prune_minimum": 0}
        ),
    )
    k = next(s.step for s in r.steps if s.pruned_items and s.step > 0)
    d = r.step_detail(k)
    c = session_counter(coding, "pi")
    pruned = {row["#"] for row in views.pruned_rows(d, c)}
    assert pruned
    fig = figures.context_bars(
        d.before,
        c.count_many([x.message for x in d.before]),
        d.after,
        c.count_many([x.message for x in d.after]),
        pruned_positions=views.pruned_positions(d),
        pruned_before=pruned,
        window=200_000,
        reserve=16_384,
        keep_recent=1_000,
    )
    spec = fig.to_plotly_json()
    hatched = [tr for tr in spec["data"] if tr["marker"].get("pattern")]
    assert hatched and all(tr["y"][0] == "as built" for tr in hatched)
    assert sum(len(tr["x"]) for tr in hatched) == len(pruned)
    ticks = [sh for sh in spec["layout"]["shapes"] if sh["yref"] == "y"]
    assert len(ticks) == len(views.pruned_positions(d))  # every tiny marker gets a visible tick
    tops = [a for a in spec["layout"]["annotations"] if a["yref"] == "paper"]
    assert len({a.get("yshift", 0) for a in tops}) == len(tops) == 3  # window, reserve, keepRecentTokens


def test_aborted_calls_have_no_recorded_point(sb) -> None:  # type: ignore[no-untyped-def]
    sb.user("go")
    for k in range(5):
        sb.assistant("", tools=[("read", {"path": "/p/a.ts"})], usage=1000 + 100 * k)
        sb.tool_result("ok")
    sb.assistant("partial", usage=0, stop="aborted")
    sb.user("again")
    sb.assistant("done", usage=5000)
    s = sb.session()
    for settings in (ReplaySettings(), ReplaySettings(compaction="pi")):
        r = replay(s, settings)
        aborted = next(st.step for st in r.steps if st.aborted)
        spec = figures.timeline(r).to_plotly_json()
        recorded = [tr for tr in spec["data"] if tr["name"].startswith("recorded usage")]
        assert recorded and all(aborted not in tr["x"] for tr in recorded)
        assert all(aborted - 1 in tr["x"] and aborted + 1 in tr["x"] for tr in recorded)


def test_the_timeline_reads_at_any_length() -> None:
    s = load_session(REPO / "sample_sessions" / "long-session.jsonl")
    r = replay(
        s,
        ReplaySettings(compaction="pi", context_window=128_000, strategy="opencode").with_strategy_settings(
            {"prune_protect": 20_000}
        ),
    )
    spec = figures.timeline(r, current_step=3).to_plotly_json()
    window = 128_000
    assert spec["layout"]["yaxis"]["range"] == [0, window * figures.CLIP]  # scaled to the window
    peak = max(y for tr in spec["data"] if tr["mode"] in ("lines", "lines+markers") for y in tr["y"])
    assert peak > window * figures.CLIP
    clipped = [tr for tr in spec["data"] if tr["name"].endswith("above the chart")]
    assert clipped and max(max(tr["customdata"]) for tr in clipped) == peak  # marked at the edge, real value
    assert any("above the chart" in a["text"] for a in spec["layout"]["annotations"])
    lanes = {tr["name"]: tr for tr in spec["data"] if tr.get("yaxis") == "y2"}
    assert {"re-reads", "pruning"} <= set(lanes)  # each kind of event in its own lane, off the line
    assert sum(c for _, c, _ in lanes["re-reads"]["customdata"]) == sum(
        1 for st in r.steps for e in st.events if e.type == "reread"
    )
    policy = next(tr for tr in spec["data"] if tr["name"].startswith("usage the policy compares"))
    assert len(policy["x"]) == len(r.steps)  # what the policy compares is drawn
    part = figures.timeline(r, x_range=(10, 20)).to_plotly_json()
    assert part["data"][0]["x"] == list(range(10, 21))


def test_events_are_counted_per_group_of_calls() -> None:
    class S:
        def __init__(self, k: int) -> None:
            self.step = k
            self.events = (Reread("a.py", 0),) * (2 if k % 10 == 0 else 0)

    pts = figures.timelines._lane_points([S(k) for k in range(1000)], "reread", limit=50)
    assert len(pts) <= 50 and sum(c for _, _, c in pts) == 200


# -- reading and stepping ----------------------------------------------------------------------


def test_full_text_shows_everything_as_plain_text(sb) -> None:  # type: ignore[no-untyped-def]
    long = "line\n" * 500 + "<b>end</b> [x](javascript:alert(1))"
    sb.user("hi")
    sb.msg(
        "assistant",
        content=[
            {"type": "thinking", "thinking": "let me think"},
            {
                "type": "toolCall",
                "id": "c1",
                "name": "edit",
                "arguments": {"path": "/p/a.ts", "newText": "x = 1"},
            },
        ],
        stopReason="toolUse",
        usage={"input": 5, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 6},
    )
    sb.msg(
        "toolResult",
        toolCallId="c1",
        toolName="edit",
        content=[{"type": "text", "text": long}],
        isError=False,
    )
    s = sb.session()
    msgs = [e.message for e in s.entries]
    assert "[thinking]\nlet me think" in views.full_text(msgs[1])
    assert '"newText": "x = 1"' in views.full_text(msgs[1]) and "[tool call edit · id c1]" in views.full_text(
        msgs[1]
    )
    assert views.full_text(msgs[2]).endswith(long)  # never cut, markup left as text


def test_paths_relative_to_the_sessions_folder() -> None:
    assert (
        views.relative_paths("/home/dev/app/src/a.ts was read 4 times", "/home/dev/app")
        == "src/a.ts was read 4 times"
    )
    assert views.relative_paths("cd /home/dev/app", "/home/dev/app/") == "cd ."
    assert views.relative_paths("/etc/x", None) == "/etc/x"


def test_skipped_prunes_are_not_events_unless_asked() -> None:
    class R:
        steps = [
            type("S", (), {"step": k, "events": ev})()
            for k, ev in enumerate(
                [
                    (),
                    (StrategyEvent({"type": "prune_skipped"}),),
                    (Pruned(1, 10, ()),),
                    (CompactionSkipped("nothing to compact", "threshold"),),
                ]
            )
        ]

    assert narrate.notable_steps(R()) == [2]
    assert narrate.notable_steps(R(), include_skipped=True) == [1, 2, 3]
    assert views.neighbour([2, 5, 9], 5, 1) == 9 and views.neighbour([2, 5, 9], 5, -1) == 2
    assert views.neighbour([2, 5, 9], 9, 1) is None


# -- settings that say what is in effect ---------------------------------------------------------------


def test_the_preset_in_effect_and_custom() -> None:
    assert urlstate.preset_in_effect({}) == "recorded"  # the sidebar's defaults are the 'As recorded' preset
    assert urlstate.preset_in_effect({"strategy": "none"}) == urlstate.CUSTOM
    oc = urlstate.agent_preset_updates("opencode")
    assert urlstate.preset_in_effect(oc) == "opencode"
    assert urlstate.preset_in_effect({**oc, "set.opencode.prune_protect": 20_000}) == urlstate.CUSTOM
    assert urlstate.preset_in_effect({**oc, "window_preset": "Custom", "window_custom": 5000}) == "opencode"
    assert urlstate.preset_in_effect({**urlstate.agent_preset_updates("pi"), "keep": 1}) == urlstate.CUSTOM


def test_inert_and_no_op_settings_are_named() -> None:
    assert set(urlstate.inert_settings("recorded")) == {"keep", "reserve", "summarizer"}
    assert set(urlstate.inert_settings("codex")) == {"keep"} and urlstate.inert_settings("pi") == {}
    w = urlstate.noop_warnings(ReplaySettings(compaction="pi", context_window=32_768))
    assert "16,384" in w["keep"]
    assert urlstate.noop_warnings(ReplaySettings(compaction="pi", context_window=128_000)) == {}
    oc = ReplaySettings(strategy="opencode", context_window=32_768).with_strategy_settings(
        {"prune_protect": 40_000}
    )
    assert "never prunes" in urlstate.noop_warnings(oc)["set.opencode.prune_protect"]


def test_a_pi_settings_json_switches_to_pi() -> None:
    import json

    updates, said = urlstate.pi_settings_updates(
        json.dumps({"compaction": {"keepRecentTokens": 9000}}).encode()
    )
    assert updates == {"keep": 9000, "compaction": "pi", "strategy": "none"}
    assert any("policy: pi" in x for x in said)


def test_the_session_travels_in_the_url() -> None:
    assert urlstate.session_query(("sample", "a.jsonl"), "ab" * 32) == {
        "sid": "ab" * 8,
        "session": "sample:a.jsonl",
    }
    assert urlstate.session_query(None, "ab" * 32) == {"sid": "ab" * 8}  # an upload: only its hash
    assert urlstate.parse_session_ref("path:/x/y.jsonl") == ("path", "/x/y.jsonl")
    assert (
        urlstate.parse_session_ref("file:/etc/passwd") is None
        and urlstate.parse_session_ref("sample:") is None
    )


def test_the_apps_report_is_the_clis(coding, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from inspector.cli import main
    from inspector.replay_report import replay_report

    r = replay(coding, ReplaySettings(compaction="pi", context_window=40_000))
    import re

    def same(text: str) -> str:  # plotly names each figure's div with a fresh uuid
        return re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "ID", text)

    for fmt in ("html", "json", "csv"):
        out = tmp_path / f"r.{fmt}"
        assert (
            main(["export", "replay", str(SAMPLE), "-o", str(out), "--compaction", "pi", "--window", "40000"])
            == 0
        )
        assert same(out.read_bytes().decode("utf-8")) == same(replay_report(coding, r, fmt))


def test_a_compaction_record_gives_typed_fields_and_the_json_the_notebook_shows(coding) -> None:  # type: ignore[no-untyped-def]
    (rec,) = replay(coding, ReplaySettings()).summaries
    comp = next(i for i, e in enumerate(coding.entries) if e.type == "compaction")
    assert not rec.simulated and rec.entry_index == comp and rec.policy == "recorded" and rec.reason is None
    assert (
        rec.text == coding.entries[comp].summary
        and rec.recorded_tokens_before == coding.entries[comp].tokensBefore
    )
    assert rec.after()[0].role == "compactionSummary" and len(rec.before()) > len(rec.after())
    assert set(rec.to_json()) == {
        "type", "simulated", "policy", "entryIndex", "firstKeptEntryIndex", "summaryTokens", "tokensAfter",
        "tokensBefore", "step", "text", "summarizedEntryIndexes",
    }  # fmt: skip
    sim = replay(coding, ReplaySettings(compaction="pi", context_window=40_000)).summaries[0]
    assert (
        sim.simulated
        and sim.entry_index is None
        and sim.recorded_tokens_before is None
        and sim.policy == "pi"
    )
    assert sim.reason and sim.story and sim.prep is not None and sim.summarized_entry_indexes
    assert set(sim.to_json()) == {
        "type", "simulated", "policy", "kind", "reason", "firstKeptEntryIndex", "summarizedMessages",
        "summaryTokens", "summarizer", "fellBack", "error", "tokensAfter", "step", "text",
        "summarizedEntryIndexes", "story",
    }  # fmt: skip
