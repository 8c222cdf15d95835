"""The app's pure helpers (no streamlit): URL and settings.json round trips, tree rows, the
plain-words story, sweep values, and the figures (escaping, sums, thresholds)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from inspector import load_session
from inspector.policies import PolicySettings
from inspector.replay import ReplaySettings, replay, session_counter
from inspector.ui import figures, narrate, step_figures, urlstate, views

from .support.paths import REPO

SAMPLE = REPO / "sample_sessions" / "coding-session.jsonl"
HOSTILE = REPO / "sample_sessions" / "hostile-content.jsonl"


def settings_from_widgets(w: dict) -> ReplaySettings:
    """What the sidebar builds from widget values (the inverse of from_query, for the round trip)."""
    strategy = w.get("strategy", "none")
    strat = urlstate.strategies()[strategy]
    values = {}
    for k, f in strat.Settings.model_fields.items():
        v = w.get(f"set.{strategy}.{k}", f.default)
        values[k] = tuple(x.strip() for x in v.split(",") if x.strip()) if isinstance(f.default, tuple) else v
    window = (
        urlstate.WINDOW_PRESETS[w.get("window_preset", "Claude Sonnet / Opus (200k)")] or w["window_custom"]
    )
    pol = {k[4:]: v for k, v in w.items() if k.startswith("pol.")}
    return ReplaySettings(
        compaction=w.get("compaction", "recorded"),
        strategy=strategy,
        strategy_settings=tuple(sorted(values.items())),
        context_window=window,
        reserve_tokens=w.get("reserve", 16384),
        keep_recent_tokens=w.get("keep", 20000),
        counter=w.get("counter", "pi"),
        summarizer=w.get("summarizer", "offline"),
        pi_version=w.get("pi_version", "0.73"),
        policy=PolicySettings(**pol),
    )


@pytest.mark.parametrize(
    "settings",
    [
        ReplaySettings(),
        ReplaySettings(
            compaction="pi",
            context_window=128_000,
            keep_recent_tokens=8000,
            reserve_tokens=4096,
            counter="tiktoken",
            pi_version="0.58",
        ),
        ReplaySettings(
            compaction="early",
            strategy="opencode",
            context_window=77_777,
            policy=PolicySettings(early_red_fraction=0.6),
        ).with_strategy_settings(
            {
                "prune_protect": 1234,
                "prune_minimum": 20000,
                "protected_turns": 2,
                "protected_tools": ("skill", "x"),
            }
        ),
    ],
)
def test_settings_survive_the_url(settings: ReplaySettings) -> None:
    qs = urlstate.to_query(settings)
    assert all(isinstance(v, str) for v in qs.values())
    widgets, problems = urlstate.from_query(qs)
    assert problems == []
    back = settings_from_widgets(widgets)
    if not settings.strategy_settings:
        back = back.model_copy(update={"strategy_settings": settings.strategy_settings})
    assert back == settings


def test_bad_url_values_are_reported() -> None:
    widgets, problems = urlstate.from_query(
        {"keep": "x", "window": "5", "strategy": "nope", "counter": "usage", "s.prune_protect": "[1"}
    )
    assert widgets == {"counter": "usage"}
    assert len(problems) == 4


def test_a_long_url_value_is_repeated_clipped() -> None:
    """A link's value of thousands of characters was repeated whole in the warning above the page."""
    long = "9" * 5000
    _, problems = urlstate.from_query(
        {
            "window": long,
            "keep": "1" * 600,
            "strategy": "x" * 900,
            "s." + "k" * 900: "[" * 900,
            "p.y": "z" * 900,
        }
    )
    assert len(problems) == 5 and all(len(p) < 200 for p in problems), problems
    assert problems[0] == "window='" + "9" * 58 + "… is not a whole number"


def test_pi_settings_json_import() -> None:
    data = json.dumps(
        {
            "compaction": {"enabled": False, "reserveTokens": 8192, "keepRecentTokens": 12000},
            "contextPruning": {"enabled": True},
            "theme": "dark",
        }
    ).encode()
    updates, said = urlstate.pi_settings_updates(data)
    assert updates == {
        "reserve": 8192,
        "keep": 12000,
        "compaction": "never",
        "strategy": "pi-context-pruning",
    }
    assert len(said) == 4
    assert urlstate.pi_settings_updates(b"{}") == ({}, [])
    with pytest.raises(ValueError):
        urlstate.pi_settings_updates(b"[1, 2]")
    with pytest.raises(ValueError):
        urlstate.pi_settings_updates(b"{not json")


def test_markdown_escape_leaves_nothing_active() -> None:
    raw = "[x](javascript:alert(1)) **b** <b>h</b> :red[t] `c` # h"
    out = urlstate.esc(raw)
    assert out.replace("\\", "") == raw.replace("\\", "")
    for ch in "[]()*<>:`#":
        assert all(out[i - 1] == "\\" for i, c in enumerate(out) if c == ch)


def test_a_codex_compaction_counts_what_codex_put_back_as_the_context_after() -> None:
    """Codex keeps nothing verbatim and puts its replacement_history back as entries after the
    compaction: "Context after" said 0 (the summary alone, empty in the shared rollout) while the
    next call sent those messages. It is now the summary plus what Codex put back, which is the next
    call's context; a pi compaction still shows what it kept."""
    from inspector.compaction_view import compaction_view
    from inspector.importers import load_any

    for name, label in (("codex-session.jsonl", "Put back"), ("coding-session.jsonl", "Kept")):
        s = load_any(REPO / "sample_sessions" / name)
        r = replay(s, ReplaySettings())
        v = compaction_view(r, 0)
        (kept, tokens, why), (after, _) = views.kept_and_after(
            r, v, views.put_back_parts(r, v.entry_index, session_counter(s, "pi").count)
        )
        assert kept == label and after == r.steps[r.summaries[0].step].tokens
        if label == "Put back":
            assert v.kept_tokens == 0 and tokens == after - v.summary_tokens > 0 and "Codex" in why
        else:
            assert tokens == v.kept_tokens and after == v.tokens_after
        # the bars' "after compaction" row draws the same context (it had drawn the summary alone)
        fig = step_figures.step_bars(r, r.summaries[0].step, session_counter(s, "pi")).to_dict()
        row = [
            x for tr in fig["data"] for y, x in zip(tr["y"], tr["x"], strict=True) if y == "after compaction"
        ]
        assert sum(row) == after
        labels = [
            h
            for tr in fig["data"]
            for y, h in zip(tr["y"], tr["hovertext"], strict=True)
            if y == "after compaction"
        ]
        assert (label == "Put back") == any("put back" in str(h) for h in labels)


def test_tree_labels_close_together_are_not_written_over_each_other() -> None:
    """Labels a few entries apart on a long branch were drawn on top of each other: only those that
    fit side by side are written above their nodes; every labelled node still names its label on hover."""
    from .support.builder import SessionBuilder

    b = SessionBuilder()
    ids = []
    for k in range(300):
        ids.append(b.user(f"u{k}"))
        b.assistant("ok")
    for k, tag in ((10, "checkpoint"), (14, "review me"), (18, "retry"), (250, "works")):
        b.add("label", targetId=ids[k], label=tag)
    s = b.session()
    fig = figures.tree_lanes(s).to_dict()
    written = [t for tr in fig["data"] if tr.get("mode") == "markers+text" for t in tr["text"] if t]
    assert sorted(written) == ["checkpoint", "works"]  # "review me" and "retry" would overlap "checkpoint"
    hovers = " ".join(h for tr in fig["data"] for h in tr.get("hovertext") or [])
    assert all(f"label: {tag}" in hovers for tag in ("checkpoint", "review me", "retry", "works"))


def test_tree_rows_follow_pi_tree_order_and_indent_only_below_forks() -> None:
    s = load_session(SAMPLE)
    path = s.path(s.default_leaf)
    rows = views.tree_rows(s, path)
    assert sorted(r["entry"] for r in rows) == list(range(len(s.entries)))
    assert [r["entry"] for r in rows] == [i for i, _ in s.walk()]
    fork = s.fork_points[0]
    kids = [r for r in rows if s.parents[r["entry"]] == fork]
    assert [r["tree"][:3] for r in kids] == ["├─ "] * (len(kids) - 1) + ["└─ "]
    assert all(r["on branch"] == (r["entry"] in set(path)) for r in rows)
    assert not any(r["tree"].startswith((" ", "│", "├", "└")) for r in rows if r["entry"] <= fork)


def test_notable_steps_skip_repeated_zone_reports() -> None:
    r = replay(
        load_session(SAMPLE), ReplaySettings(strategy="turn-aware", context_window=40000, compaction="pi")
    )
    every = [s.step for s in r.steps if s.events]
    notable = narrate.notable_steps(r)
    assert set(notable) <= set(every) and len(notable) < len(every)
    assert all(any(e.type != "zone" for e in r.steps[k].events) or k in notable for k in notable)


def test_step_story_names_what_was_pruned_and_why() -> None:
    r = replay(load_session(SAMPLE), ReplaySettings(strategy="dcp"))
    k = next(s.step for s in r.steps if any(e.type == "pruned" for e in s.events))
    lines = narrate.step_story(r, k, r.step_detail(k))
    assert any("Why:" in x for x in lines) and any("newly removed" in x for x in lines)


def test_step_story_measures_a_call_against_pis_threshold_in_what_pi_compares() -> None:
    # pi compares the usage the provider reports, not the replay's count: as recorded, the
    # answer's recorded usage; in a what-if, the usage its policy compares (Replay.triggers)
    s = load_session(SAMPLE)
    rec = replay(s)
    k = 20
    line = next(x for x in narrate.step_story(rec, k) if "pi compacts when" in x)
    trig = rec.steps[k].window - rec.settings.reserve_tokens
    total = int(rec.steps[k].recorded_total)
    assert f"the answer's recorded usage is {total:,} tokens, {total / trig:.0%} of that" in line
    assert total != rec.steps[k].tokens
    what_if = replay(s, ReplaySettings(compaction="pi", context_window=40_000))
    k = len(what_if.steps) - 1
    line = next(x for x in narrate.step_story(what_if, k) if "pi compacts when" in x)
    val = int(what_if.triggers[k])
    assert f"the usage the policy compares after this answer is {val:,} tokens" in line
    assert val != what_if.steps[k].tokens


def test_step_story_speaks_of_pi_only_for_pi_sessions() -> None:
    from inspector.importers import load_any

    pi_lines = narrate.step_story(replay(load_session(SAMPLE)), 0)
    assert any("pi compacts when an agent run ends" in x for x in pi_lines)
    codex = replay(load_any(REPO / "sample_sessions" / "codex-session.jsonl"))
    lines = narrate.step_story(codex, 0)
    assert not any("pi compacts" in x for x in lines) and any("the agent recorded" in x for x in lines)
    what_if = replay(codex.session, ReplaySettings(compaction="pi"))
    assert any("pi compacts when an agent run ends" in x for x in narrate.step_story(what_if, 0))
    # at another agent's recorded compaction: its own terms, neither pi's cut rule nor pi's measure
    k = next(s.step for s in codex.steps if any(e.type == "compaction" for e in s.events))
    said = " ".join(narrate.step_story(codex, k))
    assert "Codex's cut rule is not pi's" in said and "Codex continued with 2 messages after it" in said
    assert "entry None" not in said and "pi measured" not in said and "Replaying pi's cut rule" not in said
    assert "everything before it is replaced by its summary" in said


def test_an_aborted_or_failed_call_is_told_by_the_rules_that_decide() -> None:
    """pi 0.73.1 (``_checkCompaction``) skips an aborted answer when its run ends and checks it before
    the next prompt; a failed one it checks on an estimate from the last successful answer. That is
    said where pi's rules decide (a pi session, or pi's policy), not for another agent's file
    replayed as recorded, whose own rule the file does not show."""
    import dataclasses

    from .support.builder import SessionBuilder

    b = SessionBuilder()
    b.user("a")
    b.assistant("x", usage=1_000)
    b.user("b")
    b.assistant("", usage=None, stop="aborted")
    b.user("c")
    b.assistant("", usage=None, stop="error")
    b.user("d")
    b.assistant("y", usage=1_200)
    s = b.session()

    def said(session, **kw) -> tuple[str, str]:  # type: ignore[no-untyped-def]
        r = replay(session, ReplaySettings(**kw))
        return " ".join(narrate.step_story(r, 1)), " ".join(narrate.step_story(r, 2))

    aborted, failed = said(s)
    assert (
        "This call was aborted: its answer was cut off as it streamed; pi makes no compaction check"
        in aborted
    )
    assert "checks before the next prompt, on this answer's own usage." in aborted
    assert "This call ended in an error; pi checks its threshold on an estimate" in failed
    codex = dataclasses.replace(s, format="codex")
    aborted, failed = said(codex)
    assert "This call was aborted: its answer was cut off as it streamed." in aborted
    assert "This call ended in an error." in failed
    assert "pi makes" not in aborted + failed and "pi checks" not in aborted + failed
    aborted, _ = said(codex, compaction="pi")  # pi's policy on another agent's file: pi's rules
    assert "pi makes no compaction check when an aborted run ends" in aborted
    aborted, failed = said(s, compaction="opencode")  # OpenCode checks only when a step finishes
    assert aborted.endswith("cut off as it streamed; OpenCode makes no compaction check after it.")
    assert "This call ended in an error; OpenCode makes no compaction check after it." in failed


def test_the_timeline_caption_names_the_agent_whose_compaction_compares_the_recorded_usage() -> None:
    """As recorded, the orange line is what the session's own agent compared; only pi's caption says
    pi checks the answer that ends each agent run."""
    from inspector.importers import load_any
    from inspector.ui.narrate import timeline_caption

    pi = timeline_caption(replay(load_session(SAMPLE)))
    assert "what pi's compaction compares" in pi and "pi checks the answer that ends each agent run" in pi
    codex = timeline_caption(replay(load_any(REPO / "sample_sessions" / "codex-session.jsonl")))
    assert "what Codex's compaction compares" in codex and "pi" not in codex.replace("pick", "")


def test_overflow_story_believes_the_provider_over_the_window_set() -> None:
    """A call over the window set that the provider answered was not rejected: the story says
    what the provider counted, and that its window is larger; a what-if over the window on a call
    answered under it would be rejected; a call with no usage, or one that failed, keeps the warning."""
    from types import SimpleNamespace

    from inspector.replay.results import Overflow

    r = replay(load_session(SAMPLE), ReplaySettings(context_window=9000, reserve_tokens=100))
    k = next(s.step for s in r.steps if s.recorded_input and any(e.type == "overflow" for e in s.events))
    (line,) = [x for x in narrate.step_story(r, k) if x.startswith("Overflow")]
    assert f"counted as {r.steps[k].recorded_input:,} tokens" in line
    assert "window is larger than the one set here" in line and "reject" not in line
    # the replay sends what was sent: its overflows are the calls whose recorded prompt is over the
    # window, the first of them (call 3: 11,157 recorded) under it by pi's estimate (7,126); the
    # failed call 70 records none and is sized from the answer before it
    over = [s.step for s in r.steps if any(e.type == "overflow" for e in s.events)]
    assert [k for k in over if r.steps[k].recorded_input] == [
        s.step for s in r.steps if (s.recorded_input or 0) > 9000
    ]
    assert [k for k in over if not r.steps[k].recorded_input] == [70]
    assert r.steps[over[0]].tokens <= 9000

    def said(recorded: int | None, stop: str = "stop") -> str:
        step = SimpleNamespace(recorded_input=recorded, error=stop == "error", aborted=stop == "aborted")
        return narrate._overflow_sentence(Overflow(210_000, 200_000), step)

    assert said(250_000).endswith("the model's window is larger than the one set here.")
    assert "reject this request (the one recorded, 150,000 tokens" in said(150_000)
    for quiet in (said(None), said(0), said(150_000, "error"), said(250_000, "aborted")):
        assert quiet.endswith("— a provider would reject this request.")
    assert "compacts and retries" in narrate._overflow_sentence(
        Overflow(210_000, 200_000, "compaction"), SimpleNamespace(recorded_input=1)
    )


def test_sweep_values_stay_within_bounds() -> None:
    assert views.sweep_values("prune_protect", 40000, 0, 1_000_000) == [
        10000,
        20000,
        30000,
        40000,
        60000,
        80000,
    ]
    assert views.sweep_values("protected_turns", 2, 0, 50) == [0, 1, 2, 3, 4, 6]
    assert min(views.sweep_values("context_window", 2000)) >= 1000


def test_context_bars_add_up_and_escape_hover_text() -> None:
    s = load_session(HOSTILE)
    r = replay(s, ReplaySettings())
    d = r.step_detail(len(r.steps) - 1)
    counter = session_counter(s, "pi")
    rows = views.message_rows(d, counter)
    assert any("<script>" in row["text"] for row in rows)  # plain text for dataframes
    toks = counter.count_many([m.message for m in d.before])
    fig = figures.context_bars(d.before, toks, d.after, toks, window=50_000, reserve=10_000, keep_recent=100)
    spec = fig.to_plotly_json()
    total = sum(x for tr in spec["data"] for x in tr["x"]) / 2
    assert total == sum(toks)
    hover = " ".join(h for tr in spec["data"] for h in tr["hovertext"])
    assert "<script>" not in hover and "&lt;script&gt;" in hover
    xs = {sh["x0"] for sh in spec["layout"]["shapes"]}
    assert {50_000, 40_000, sum(toks) - 100} <= xs  # window line, reserve zone, keepRecentTokens


def test_timeline_thresholds_follow_the_policy() -> None:
    r = replay(
        load_session(SAMPLE), ReplaySettings(compaction="pi", context_window=40000, reserve_tokens=5000)
    )
    spec = figures.timeline(r, current_step=3).to_plotly_json()
    ys = {sh["y0"] for sh in spec["layout"]["shapes"] if sh["yref"] == "y"}
    assert ys == {40000, 35000}
    assert figures.trigger_line(ReplaySettings(compaction="codex", context_window=100_000))[0] == 90_000
    assert figures.trigger_line(ReplaySettings(compaction="never")) is None
    # as recorded, the line is the rule of the agent that wrote the session
    rec = ReplaySettings(context_window=200_000)
    assert figures.trigger_line(rec)[0] == 200_000 - 16_384
    assert figures.trigger_line(rec, "codex") == (180_000, "90% of window (Codex)")
    assert "Claude Code, reported" in figures.trigger_line(rec, "claude-code")[1]
    assert figures.trigger_line(rec, "claude-code")[0] == 200_000 - 20_000 - 13_000


def test_a_what_if_without_a_rule_of_its_own_draws_the_size_its_overflows_compare() -> None:
    """Never compacting, or another pruning under the recorded compactions, sends what no provider
    counted: the timeline draws the size the overflow check compares, which the recorded usage
    line is not; the replay that sends what was sent, and a policy with its own line, do not."""
    s = load_session(SAMPLE)

    def line(**kw):
        r = replay(s, ReplaySettings(context_window=64_000, **kw))
        spec = figures.timeline(r, current_step=3).to_plotly_json()
        got = [t for t in spec["data"] if t.get("name") == figures.timelines.PROVIDER_LINE]
        return r, got

    for kw in ({"compaction": "never"}, {"strategy": "opencode"}):
        r, (tr,) = line(**kw)
        assert list(tr["y"]) == [st.provider_tokens for st in r.steps]
        over = [st.step for st in r.steps if any(e.type == "overflow" for e in st.events)]
        assert over and all(tr["y"][k] > 64_000 for k in over)
    for kw in ({}, {"strategy": "recorded"}, {"compaction": "pi"}):
        assert line(**kw)[1] == []
    # a session that records no usage: the size is the count already drawn
    from .support.builder import SessionBuilder

    b = SessionBuilder()
    for _ in range(4):
        b.user("u" * 40_000)
        b.assistant("ok")
    r = replay(b.session(), ReplaySettings(compaction="never", context_window=20_000))
    assert r.metrics.overflows > 0 and not figures.timelines.draws_provider_line(r)


def test_figures_module_does_not_import_streamlit() -> None:
    code = (
        "import sys; import inspector.ui.figures, inspector.ui.views, inspector.ui.narrate, "
        "inspector.ui.urlstate, inspector.ui.sources; print('streamlit' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "False"


def test_a_sweep_is_stale_only_when_other_settings_change() -> None:
    base = ReplaySettings(compaction="pi", strategy="opencode").with_strategy_settings({"prune_protect": 1})
    moved = base.model_copy(update={"keep_recent_tokens": 1}).with_strategy_settings({"prune_protect": 9})
    assert not views.sweep_is_stale(base, moved, "keep_recent_tokens", "prune_protect")
    assert views.sweep_is_stale(
        base, moved.model_copy(update={"reserve_tokens": 5}), "keep_recent_tokens", "prune_protect"
    )


def test_code_span_shows_a_path_literally_and_cannot_be_closed_early() -> None:
    from inspector.ui.urlstate import code

    assert (
        code("/root/.pi/agent_sessions") == "`/root/.pi/agent_sessions`"
    )  # no backslashes inside a code span
    assert code("a`b\nc") == "`a'b c`"


def test_the_overflow_lane_counts_the_calls_the_provider_answered_all_the_same() -> None:
    """Over a window smaller than what the sample's provider answered, the overflows lane says, per
    bucket, how many of its overflows the provider answered (those are not real rejections)."""
    r = replay(load_session(SAMPLE), ReplaySettings(context_window=9000, reserve_tokens=100))
    fig = figures.timeline(r).to_plotly_json()
    (lane,) = [t for t in fig["data"] if t.get("name") == "overflows"]
    notes = [c[2] for c in lane["customdata"]]
    answered = [
        s.step
        for s in r.steps
        if s.recorded_input and not (s.error or s.aborted) and any(e.type == "overflow" for e in s.events)
    ]
    got = sum(int(n.split(", ")[1].split(" ")[0]) for n in notes if n)
    assert got == len(answered) > 0
    unanswered = [
        s for s in r.steps if any(e.type == "overflow" for e in s.events) and s.step not in answered
    ]
    assert unanswered  # a failed call over the window is still counted, and not as answered
    assert "%{customdata[2]}" in lane["hovertemplate"]  # the note is shown on hover


def test_context_before_says_its_counter_and_the_agents_own_figure() -> None:
    """Where the cut landed quoted the agent's recorded size (227,112 tokens on the shared Codex
    rollout) above a "Context before" metric of 217,595 with nothing saying why they differ: the
    metric's help names the replay's counter and gives the agent's figure beside it."""
    from inspector.compaction_view import compaction_view
    from inspector.importers import load_any
    from inspector.ui.narrate import agent_compaction_story

    s = load_any(REPO / "sample_sessions" / "codex-session.jsonl")
    r = replay(s, ReplaySettings())
    v = compaction_view(r, 0)
    recorded = s.entries[v.entry_index].tokensBefore
    assert recorded and recorded != v.tokens_before
    help_text = views.context_before_help(r, v, "pi estimate (chars ÷ 4)")
    assert "counted by pi estimate (chars ÷ 4)" in help_text
    assert f"The agent recorded {recorded:,} tokens before it" in help_text
    assert "the replay's counter" in agent_compaction_story(s, v.entry_index, 1)[-1]
    pi = load_any(REPO / "sample_sessions" / "coding-session.jsonl")
    rp = replay(pi, ReplaySettings(compaction="pi", context_window=20_000))
    simulated = next(i for i, rec in enumerate(rp.summaries) if rec.simulated)
    assert "recorded" not in views.context_before_help(rp, compaction_view(rp, simulated), "x")
    own = replay(pi, ReplaySettings())  # pi's own compaction: its tokensBefore, a JSON number
    v = compaction_view(own, 0)
    assert (
        f"The agent recorded {pi.entries[v.entry_index].tokensBefore:,.0f} tokens"
        in views.context_before_help(own, v, "x")
    )
