"""The Streamlit app through AppTest: each page's main flow, asserting the numbers it shows."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from inspector import build_session_context, load_session
from inspector.branch_summary import prepare_branch_summary
from inspector.replay import ReplaySettings, replay
from inspector.ui.figures import NOT_IN_FILE
from inspector.ui.narrate import notable_steps
from inspector.whatif import compaction_now

from .support.paths import REPO

APP = str(REPO / "app.py")
SAMPLES = REPO / "sample_sessions"
SAMPLE = SAMPLES / "coding-session.jsonl"


def page(at: AppTest, name: str) -> AppTest:
    return at.switch_page(f"inspector/ui/pages/{name}.py").run()


def fresh(**query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def load(at: AppTest, name: str = "coding-session.jsonl") -> AppTest:
    at.selectbox(key="sample_choice").set_value(name)
    at.button(key="load_sample").click().run()
    assert not at.exception, at.exception
    return at


@pytest.fixture
def loaded() -> AppTest:
    return load(fresh())


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def figures_of(at: AppTest) -> list[dict[str, Any]]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def bar_totals(fig: dict[str, Any], messages_only: bool = False) -> dict[str, int]:
    """Tokens per bar row of the context-bars figure, from the figure's own data (``messages_only``:
    without what the provider counted beyond the messages)."""
    out: dict[str, int] = {}
    for tr in fig["data"]:
        if tr.get("type") == "bar" and not (messages_only and tr["name"] == NOT_IN_FILE):
            for row, x in zip(tr["y"], tr["x"], strict=True):
                out[row] = out.get(row, 0) + x
    return out


def story(at: AppTest) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("- "))


# -- Load ------------------------------------------------------------------------------------------


def test_load_page_summarises_the_sample(loaded: AppTest) -> None:
    s = load_session(SAMPLE)
    m = metrics(loaded)
    assert m["Entries"] == f"{len(s.entries):,}"
    assert m["Branches (leaves)"] == str(len(s.leaves))
    assert m["Context messages"] == f"{len(build_session_context(s).messages):,}"
    assert m["Compactions"] == "1"
    assert m["Load issues"] == "0"
    by_type = next(df.value for df in loaded.dataframe if "type" in df.value.columns)
    assert dict(zip(by_type.type, by_type["count"], strict=True)) == s.counts_by_type()


def test_load_page_lists_issues_of_a_broken_file_with_line_numbers() -> None:
    at = load(fresh(), "broken.jsonl")
    issues = next(df.value for df in at.dataframe if "kind" in df.value.columns)
    s = load_session(SAMPLES / "broken.jsonl")
    assert metrics(at)["Load issues"] == str(len(s.issues))
    assert {"malformed-json", "truncated-line", "duplicate-id"} <= set(issues["kind"])
    assert sorted(int(x) for x in issues["line"] if x) == sorted(
        i.line for i in s.issues if i.line is not None
    )


def test_local_paths_outside_the_roots_are_refused_and_inside_are_loaded() -> None:
    at = fresh()
    for bad in ("/etc/passwd", "sample_sessions/../../../etc/passwd", "sample_sessions/../pyproject.toml"):
        at.text_input(key="local_path").set_value(bad)
        at.button(key="load_path").click().run()
        assert any("outside the allowed folders" in e.value for e in at.error), bad
        assert "Entries" not in metrics(at)
    at.text_input(key="local_path").set_value("a" * 300)  # a relative name too long for the file system
    at.button(key="load_path").click().run()
    assert not at.exception and any("File name too long" in e.value for e in at.error)
    at.text_input(key="local_path").set_value("sample_sessions/small-tutorial.jsonl")
    at.button(key="load_path").click().run()
    assert metrics(at)["Entries"] == f"{len(load_session(SAMPLES / 'small-tutorial.jsonl').entries):,}"


def test_session_argument_preloads_a_session_under_the_roots(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(sys, "argv", ["app.py", "--session", "sample_sessions/small-tutorial.jsonl"])
    at = fresh()
    assert not at.exception
    # the picker takes the preloaded sample from its state, with no default beside it (Streamlit warns)
    assert not [r for r in caplog.records if "created with a default value" in r.getMessage()]
    assert metrics(at)["Entries"] == f"{len(load_session(SAMPLES / 'small-tutorial.jsonl').entries):,}"
    assert at.selectbox(key="sample_choice").value == "small-tutorial.jsonl"  # the picker shows what is open
    monkeypatch.setattr(sys, "argv", ["app.py", "--session", "/etc/hostname"])
    at = fresh()
    assert any("outside the allowed folders" in e.value for e in at.error)
    assert "Entries" not in metrics(at)


# -- Replay ----------------------------------------------------------------------------------------


def test_replay_page_shows_each_step_and_moves_with_slider_and_buttons(loaded: AppTest) -> None:
    at = page(loaded, "replay")
    assert not at.exception
    r = replay(load_session(SAMPLE), ReplaySettings())
    n = len(r.steps)
    assert at.slider(key="step").max == n - 1
    first = notable_steps(r)[0]  # it opens where something happens, not on the last call
    assert at.slider(key="step").value == first and r.steps[first].events
    assert metrics(at)["Tokens sent"] == f"{r.steps[first].tokens:,}"
    assert metrics(at)["Entry"] == str(r.steps[first].entry_index)
    at.button(key="prev").click().run()
    assert metrics(at)["Tokens sent"] == f"{r.steps[first - 1].tokens:,}"
    at.slider(key="step").set_value(0).run()
    assert metrics(at)["Tokens sent"] == f"{r.steps[0].tokens:,}"
    aborted = next(k for k, s in enumerate(r.steps) if s.stop_reason == "aborted")
    at.slider(key="step").set_value(aborted).run()  # the entry whole, how the call ended under it
    entry = next(m for m in at.metric if m.label == "Entry")
    assert (entry.value, entry.delta) == (str(r.steps[aborted].entry_index), "aborted")
    assert metrics(at)["Recorded prompt"] == "—"
    at.slider(key="step").set_value(0).run()
    at.button(key="next").click().run()
    assert at.slider(key="step").value == 1
    at.button(key="next_event").click().run()
    k = at.slider(key="step").value
    assert k == next(x for x in notable_steps(r) if x > 1) and r.steps[k].events
    # the context bars are drawn from this step's messages: their widths add up to its tokens
    at.slider(key="step").set_value(k := next(x for x in notable_steps(r) if x > first)).run()
    bars, tl, *_ = figures_of(at)  # then the prompt-cache split
    assert bar_totals(bars, messages_only=True)["sent to the model"] == r.steps[k].tokens
    assert bar_totals(bars)["as built"] == r.steps[k].tokens_before_pruning
    # and the sent bar ends at the prompt the provider counted, where "Window used" puts it
    assert r.steps[k].provider_tokens > r.steps[k].tokens
    assert bar_totals(bars)["sent to the model"] == r.steps[k].provider_tokens
    assert metrics(at)["Window used"] == f"{r.steps[k].provider_tokens / r.steps[k].window:.0%}"
    # the timeline holds every step's tokens and marks the one shown
    sent = next(t for t in tl["data"] if t["name"] == "replayed (sent)")
    assert sent["y"] == [s.tokens for s in r.steps]
    assert next(t for t in tl["data"] if t["name"] == "this step")["x"] == [k]


def test_step_survives_a_visit_to_another_page(loaded: AppTest) -> None:
    at = page(loaded, "replay")
    at.slider(key="step").set_value(5).run()
    at = page(page(at, "tree"), "replay")
    assert at.slider(key="step").value == 5


def test_what_happened_explains_the_recorded_compaction_cut(loaded: AppTest) -> None:
    s = load_session(SAMPLE)
    r = replay(s, ReplaySettings())
    k = next(st.step for st in r.steps if any(e.type == "compaction" for e in st.events))
    comp = next(i for i, e in enumerate(s.entries) if e.type == "compaction")
    at = page(loaded, "replay")
    at.slider(key="step").set_value(k).run()
    text = story(at).replace("\\", "")
    assert f"compaction (entry {comp}) takes effect" in text
    assert f"before entry {s.index_of(s.entries[comp].firstKeptEntryId)}" in text
    assert "Walking back from the newest message" in text and "keepRecentTokens = 20,000" in text


def test_a_call_with_two_compactions_shows_both(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    # A threshold compaction after an answer, then an overflow before the next call (the provider
    # counts 1,250 tokens the file does not store): two compactions at one step, each drawn with
    # its bars (the zoom toggle under them drawn once: a second one had failed the page).
    from .support.builder import SessionBuilder

    b = SessionBuilder()
    for t in range(1, 7):
        b.user("u" * 2000)
        b.assistant("a" * 40, usage=1250 + t * 510)
    f = tmp_path / "two.jsonl"
    f.write_text(b.text())
    settings = ReplaySettings(
        compaction="pi", context_window=3000, reserve_tokens=500, keep_recent_tokens=600
    )
    r = replay(load_session(f), settings)
    assert [e.type for e in r.steps[3].events] == ["compaction", "overflow", "compaction"]
    monkeypatch.setenv("INSPECTOR_ROOTS", str(tmp_path))
    at = fresh(compaction="pi", window="3000", reserve="500", keep="600", session=f"path:{f}", step="3")
    at = page(at, "replay")
    assert not at.exception, at.exception
    assert at.slider(key="step").value == 3
    heads = [h.value for h in at.subheader if h.value.startswith("Compaction ")]
    assert heads[:2] == [
        f"Compaction 1 of {len(r.summaries)}, simulated by the pi policy",
        f"Compaction 2 of {len(r.summaries)}, simulated by the pi policy",
    ]
    assert len([t for t in at.toggle if t.key == "bars_zoom"]) == 1


def test_what_if_pruning_changes_the_numbers_and_is_explained(loaded: AppTest) -> None:
    at = loaded
    at.selectbox(key="window_preset").set_value("Custom").run()
    at.number_input(key="window_custom").set_value(60000)
    at.selectbox(key="compaction").set_value("pi")
    at.selectbox(key="strategy").set_value("dcp").run()
    at = page(at, "replay")
    assert not at.exception
    want = replay(load_session(SAMPLE), ReplaySettings(compaction="pi", context_window=60000, strategy="dcp"))
    assert want.metrics.compactions >= 1 and want.metrics.tokens_pruned > 0
    at.slider(key="step").set_value(len(want.steps) - 1).run()
    assert metrics(at)["Tokens sent"] == f"{want.steps[-1].tokens:,}"
    k = next(
        st.step
        for st in want.steps
        if any(e.type == "pruned" for e in st.events) and not any(e.type == "compaction" for e in st.events)
    )
    at.slider(key="step").set_value(k).run()
    assert metrics(at)["Pruned away"] == f"{want.steps[k].pruned_tokens:,}"
    text = story(at).replace("\\", "")
    assert "newly removed or shortened" in text and "Why:" in text
    table = at.dataframe(key="msg_table").value
    assert "pruned" in set(table["status"])
    assert sum(table["sent"]) == want.steps[k].tokens


def test_moving_the_slider_does_not_replay_again(loaded: AppTest, monkeypatch: pytest.MonkeyPatch) -> None:
    from inspector.ui import state

    calls: list[Any] = []
    real = state.replay
    monkeypatch.setattr(state, "replay", lambda *a, **kw: calls.append(a[1]) or real(*a, **kw))
    state.clear_caches()
    loaded.button(key="load_sample").click().run()  # re-read into the emptied cache
    at = page(loaded, "replay")
    assert len(calls) == 1
    for k in (0, 7, 20, 33, 1):  # (how long a slider rerun takes: bench/app.py)
        at.slider(key="step").set_value(k).run()
        assert metrics(at)["Entry"]
    assert len(calls) == 1, "the slider recomputed the replay"
    at.selectbox(key="counter").set_value("tiktoken").run()  # a setting that changes the replay
    assert len(calls) == 2
    at.selectbox(key="compaction").set_value("pi").run()
    assert len(calls) == 3 and not at.exception and metrics(at)["Entry"]
    at.number_input(key="keep").set_value(12000).run()  # pi's cut reads keepRecentTokens: a new replay
    assert len(calls) == 4


def test_recorded_usage_counter(loaded: AppTest) -> None:
    loaded.selectbox(key="counter").set_value("usage").run()
    at = page(loaded, "replay")
    assert not at.exception
    at.slider(key="step").set_value(at.slider(key="step").max).run()
    want = replay(load_session(SAMPLE), ReplaySettings(counter="usage")).steps[-1].tokens
    assert metrics(at)["Tokens sent"] == f"{want:,}"


def test_hostile_text_is_escaped_everywhere_it_is_drawn() -> None:
    at = load(fresh(), "hostile-content.jsonl")
    head = next(h.value for h in at.subheader if "hostile" in h.value)
    assert "\\<script\\>" in head  # shown literally, not as markup
    at = page(at, "replay")
    assert not at.exception
    r = replay(load_session(SAMPLES / "hostile-content.jsonl"), ReplaySettings())
    at.slider(key="step").set_value(len(r.steps) - 1).run()  # the last call sees every message
    bars, tl, *_ = figures_of(at)
    hover = " ".join(h for tr in bars["data"] for h in tr.get("hovertext", []))
    assert "&lt;script&gt;" in hover and "<script>" not in hover
    table = at.dataframe(key="msg_table").value
    assert any("<script>" in t for t in table["text"])  # dataframes show the raw text as text
    assert "<" not in story(at).replace("\\<", "")  # the story's markdown has every < escaped


# -- Sidebar ---------------------------------------------------------------------------------------


def test_settings_come_from_and_go_to_the_url() -> None:
    at = fresh(
        keep="12345", strategy="opencode", **{"s.prune_protect": "30000"}, compaction="pi", window="128000"
    )
    assert not at.exception
    assert at.number_input(key="keep").value == 12345
    assert at.selectbox(key="strategy").value == "opencode"
    assert at.number_input(key="set.opencode.prune_protect").value == 30000
    assert at.selectbox(key="window_preset").value == "GPT-4o (128k)"
    qp = {k: (v[-1] if isinstance(v, list) else v) for k, v in at.query_params.items()}
    assert qp["keep"] == "12345" and qp["s.prune_protect"] == "30000" and qp["window"] == "128000"
    share = next(c.value for c in at.code if c.value.startswith("?"))
    assert "keep=12345" in share and "s.prune_protect=30000" in share


def test_bad_url_values_are_reported_not_applied() -> None:
    at = fresh(keep="lots", strategy="nope", **{"s.prune_protect": "-5"})
    assert not at.exception
    assert at.number_input(key="keep").value == 20000
    warnings = " ".join(w.value for w in at.sidebar.warning)
    assert "keep" in warnings and "strategy" in warnings


def test_strategy_controls_come_from_its_settings_model_and_reset() -> None:
    from inspector.pruning import REGISTRY

    at = fresh()
    at.selectbox(key="strategy").set_value("pi-context-pruning").run()
    fields = REGISTRY["pi-context-pruning"].Settings.model_fields
    keys = {w.key for w in at.sidebar.number_input} | {w.key for w in at.sidebar.text_input}
    assert {f"set.pi-context-pruning.{k}" for k in fields} <= keys
    at.number_input(key="set.pi-context-pruning.prune_protect").set_value(1000).run()
    assert at.number_input(key="set.pi-context-pruning.prune_protect").value == 1000
    at.button(key="reset.pi-context-pruning").click().run()
    assert (
        at.number_input(key="set.pi-context-pruning.prune_protect").value == fields["prune_protect"].default
    )


def test_unverified_strategies_and_beyond_source_policies_say_so() -> None:
    at = fresh()
    at.selectbox(key="strategy").set_value("turn-aware")
    at.selectbox(key="compaction").set_value("early").run()
    warnings = " ".join(w.value for w in at.sidebar.warning)
    assert "Beyond a verified source" in warnings and "Beyond the source system" in warnings
    assert at.slider(key="pol.early_red_fraction").value == pytest.approx(0.70)


# -- Tree ------------------------------------------------------------------------------------------


def test_tree_page_lists_every_entry_and_sets_the_replayed_branch(loaded: AppTest) -> None:
    s = load_session(SAMPLE)
    at = page(loaded, "tree")
    assert not at.exception
    rows = next(df.value for df in at.dataframe if "tree" in df.value.columns)
    assert len(rows) == len(s.entries)
    fork_kids = [t for t in rows["tree"] if t.lstrip().startswith(("├─", "└─"))]
    assert len(fork_kids) == sum(len(s.children[f]) for f in s.fork_points)
    other = next(x for x in s.leaves if x != s.default_leaf)
    at.number_input(key="tree_entry").set_value(other).run()
    at.button(key="use_branch").click().run()
    at = page(at, "replay")
    want = replay(s, ReplaySettings(leaf=other))
    assert at.slider(key="step").max == len(want.steps) - 1
    at.slider(key="step").set_value(len(want.steps) - 1).run()
    assert metrics(at)["Entry"].split()[0] == str(want.steps[-1].entry_index)


def test_tree_page_previews_a_branch_summary(loaded: AppTest) -> None:
    s = load_session(SAMPLE)
    at = page(loaded, "tree")
    a, b = s.default_leaf, next(x for x in s.leaves if x != s.default_leaf)
    assert at.number_input(key="bs_from").value == a and at.number_input(key="bs_to").value == b
    col, prep = prepare_branch_summary(s, a, b, context_window=200_000)  # the sample's model's window
    text = next(m.value for m in at.markdown if "Common ancestor" in m.value)
    assert f"Common ancestor: entry {col.common_ancestor}" in text
    # pi's budget is the session's model's window less branchSummary.reserveTokens, not 128k's
    assert prep.budget == 183_616 and "within pi's budget of 183,616 tokens (the model's 200,000" in text
    assert f"{len(col.entries):,} entries" in text and f"{prep.totalTokens:,} tokens" in text
    from inspector.summarize import get_summarizer, summarize_branch

    stored = summarize_branch(prep, get_summarizer("offline")).text  # what pi would store, preamble and all
    assert stored.startswith("The user explored a different conversation branch before returning here.")
    assert stored in [t.value for t in at.text]


# -- Summaries -------------------------------------------------------------------------------------


def test_summaries_page_shows_the_recorded_summary_beside_a_generated_one(loaded: AppTest) -> None:
    s = load_session(SAMPLE)
    at = page(loaded, "summaries")
    assert not at.exception
    recorded = next(e.summary for e in s.entries if e.type == "compaction")
    texts = [t.value for t in at.text]
    assert recorded in texts and len(texts) >= 2
    assert any(c.value.startswith("--- recorded") for c in at.code)
    files = next(df.value for df in at.dataframe if "file" in df.value.columns)
    assert {"recorded", "generated"} <= set(files.columns) and len(files) > 0


@pytest.mark.parametrize(
    ("sample", "agent", "kept"),
    [
        ("codex-session.jsonl", "Codex", "its replacement"),
        ("claude-code-session.jsonl", "Claude Code", "no message verbatim"),
    ],
)
def test_summaries_of_another_agents_compaction_follow_its_own_split(
    sample: str, agent: str, kept: str
) -> None:
    at = page(load(fresh(), sample), "summaries")
    assert not at.exception
    title = next(h.value for h in at.subheader if h.value.startswith("Compaction 1 of 1"))
    assert "keeps nothing verbatim" in title and "None" not in title
    story = " ".join(m.value for m in at.markdown if "Where the cut landed" in m.value)
    assert f"{agent} compacted here" in story and kept in story and "keepRecentTokens" not in story
    generated = [t.value for t in at.text]
    assert len(generated) >= 2 and "## Goal" in generated[1] and "(none stated)" not in generated[1]
    style = {"Codex": "codex", "Claude Code": "claude-code"}[agent]
    assert at.selectbox(key="sum_style").value == style  # the prompt is first shown in the agent's style
    # the context after it, in the metric and in the table alike: with what Codex put back itself
    after = next(m.value for m in at.metric if m.label == "Context after")
    table = next(df.value for df in at.dataframe if "tokens after" in df.value.columns)
    assert f"{int(table['tokens after'].iloc[0]):,}" == after
    assert any(m.label == "Put back" for m in at.metric) == (agent == "Codex")


def test_summaries_page_shows_the_exact_prompt_with_custom_instructions(loaded: AppTest) -> None:
    loaded.selectbox(key="compaction").set_value("pi").run()
    loaded.number_input(key="keep").set_value(2000).run()
    at = page(loaded, "summaries")
    at.selectbox(key="sum_style").set_value("claude-code")
    at.text_input(key="sum_instructions").set_value("focus on the lexer")
    at.run()
    prompt = next(c.value for c in at.code if "[system]" in c.value and "focus on the lexer" in c.value)
    assert "<conversation>" in prompt and "<summary>" in prompt


@pytest.mark.parametrize(
    ("sample", "policy", "keep", "since"),
    [
        ("small-tutorial.jsonl", "recorded", 20000, "since the start of the branch"),  # no compaction on it
        ("coding-session.jsonl", "pi", 200000, "since the last compaction"),
    ],
)
def test_summaries_say_why_a_compaction_now_would_summarise_nothing(
    sample: str, policy: str, keep: int, since: str
) -> None:
    at = load(fresh(), sample)
    if policy != "recorded":
        at.selectbox(key="compaction").set_value(policy).run()
        at.number_input(key="keep").set_value(keep).run()
    at = page(at, "summaries")
    assert not at.exception
    s = load_session(SAMPLES / sample)
    walked = compaction_now(s, ReplaySettings(keep_recent_tokens=keep)).cut.walked_tokens
    note = next(i.value for i in at.info if i.value.startswith("Nothing to summarise"))
    assert since in note and f"({walked:,} tokens as pi counts them)" in note and f"{keep:,}" in note
    # the keepRecentTokens control is disabled as recorded: the note says where it can be lowered
    assert ("under the policy 'pi'" in note) == (policy == "recorded")


def test_summaries_of_simulated_compactions(loaded: AppTest) -> None:
    loaded.selectbox(key="compaction").set_value("pi")
    loaded.selectbox(key="window_preset").set_value("Custom").run()
    loaded.number_input(key="window_custom").set_value(40000).run()
    at = page(loaded, "summaries")
    assert not at.exception
    r = replay(load_session(SAMPLE), ReplaySettings(compaction="pi", context_window=40000))
    sims = [x for x in r.summaries if x.simulated]
    table = at.dataframe(key="sum_table").value  # every compaction listed; the last one shown in full
    assert sims and list(table["call"]) == [x.step for x in r.summaries]
    assert sims[-1].text in [t.value for t in at.text]
    at.session_state["sum_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert sims[0].text in [t.value for t in at.text] and sims[-1].text not in [t.value for t in at.text]


# -- Compare & tune --------------------------------------------------------------------------------


def test_compare_page_tabulates_each_configuration(loaded: AppTest) -> None:
    at = page(loaded, "compare")
    assert not at.exception
    table = next(df.value for df in at.dataframe if "metric" in df.value.columns)
    assert len(table.columns) == 3  # metric + A + B
    s = load_session(SAMPLE)
    a = replay(s, ReplaySettings())
    b = replay(s, ReplaySettings(strategy="opencode", compaction="pi"))
    row = table[table["metric"].str.startswith("total input tokens")].iloc[0]
    assert (
        row.iloc[1] == f"{a.metrics.total_input_tokens:,}"
        and row.iloc[2] == f"{b.metrics.total_input_tokens:,}"
    )
    # A (as recorded) keeps the session's own compactions: its keepRecentTokens changes nothing
    assert [at.number_input(key=f"cmp_keep_{i}").disabled for i in range(2)] == [True, False]
    (tl,) = figures_of(at)
    assert [t["y"] for t in tl["data"] if t["mode"] == "lines"] == [
        [x.tokens for x in a.steps],
        [x.tokens for x in b.steps],
    ]


def test_compare_the_agents_sets_four_configurations(
    loaded: AppTest, caplog: pytest.LogCaptureFixture
) -> None:
    at = page(loaded, "compare")
    at.button(key="cmp_agents").click().run()
    assert not at.exception
    # the widgets it sets get no default besides (Streamlit logs a warning for each that does)
    assert not [r for r in caplog.records if "created with a default value" in r.getMessage()]
    assert [at.selectbox(key=f"cmp_pol_{i}").value for i in range(4)] == [
        "pi",
        "codex",
        "opencode",
        "claude-code",
    ]
    assert at.selectbox(key="cmp_strat_3").value == "claude-code-microcompact"  # each agent's own pruning
    # keepRecentTokens is pi's: disabled under the other agents' policies, saying why, as in the sidebar
    keeps = [at.number_input(key=f"cmp_keep_{i}") for i in range(4)]
    assert [k.disabled for k in keeps] == [False, True, True, True]
    assert "keepRecentTokens is pi's" in keeps[1].help
    table = next(df.value for df in at.dataframe if "metric" in df.value.columns)
    assert len(table.columns) == 5  # metric + A..D
    s = load_session(SAMPLE)
    want = [
        replay(s, ReplaySettings(strategy=st_, compaction=pol)).metrics.total_input_tokens
        for st_, pol in (
            ("none", "pi"),
            ("none", "codex"),
            ("opencode", "opencode"),
            ("claude-code-microcompact", "claude-code"),
        )
    ]
    row = table[table["metric"].str.startswith("total input tokens")].iloc[0]
    assert list(row.iloc[1:]) == [f"{x:,}" for x in want]
    assert len(set(want)) > 1  # the agents really behave differently here


def run_sweep(at: AppTest, x: str, xs: str, y: str, ys: str) -> AppTest:
    """On the Compare page: sweep ``x`` over ``xs`` and ``y`` over ``ys`` (comma-separated)."""
    at.selectbox(key="sw_x").set_value(x)
    at.selectbox(key="sw_y").set_value(y).run()
    at.text_input(key=f"sw_vals_{x}").set_value(xs)
    at.text_input(key=f"sw_vals_{y}_y").set_value(ys).run()
    return at.button(key="sw_run").click().run()


def test_sweep_heatmap_and_applying_a_cell(loaded: AppTest) -> None:
    loaded.selectbox(key="compaction").set_value("pi")
    loaded.selectbox(key="strategy").set_value("opencode").run()
    at = run_sweep(page(loaded, "compare"), "prune_protect", "1000, 5000", "prune_minimum", "0, 2000, 20000")
    assert not at.exception
    heat = figures_of(at)[-1]["data"][0]
    assert heat["type"] == "heatmap" and len(heat["z"]) == 3 and len(heat["z"][0]) == 2
    s = load_session(SAMPLE)
    base = ReplaySettings(compaction="pi", strategy="opencode")
    want = replay(
        s,
        base.with_strategy_settings(
            {"prune_protect": 1000, "prune_minimum": 0, "protected_turns": 2, "protected_tools": ("skill",)}
        ),
    )
    assert heat["z"][0][0] == want.metrics.total_input_tokens
    at.selectbox(key="sw_pick").set_value(0)
    at.button(key="sw_apply").click().run()
    assert not at.exception
    assert at.number_input(key="set.opencode.prune_protect").value == 1000
    assert at.number_input(key="set.opencode.prune_minimum").value == 0


def test_a_sweep_value_the_settings_refuse_is_one_error_line(loaded: AppTest) -> None:
    """A window of 500 tokens (under the 1,000 every replay needs) had been swept as if valid."""
    loaded.selectbox(key="compaction").set_value("pi").run()
    at = run_sweep(page(loaded, "compare"), "context_window", "500, 100000", "keep_recent_tokens", "20000")
    assert not at.exception
    (err,) = at.error
    assert err.value.startswith("grid context\\_window=500") and "greater than or equal to 1000" in err.value
    assert "sweep" not in at.session_state and not any(
        f["data"][0]["type"] == "heatmap" for f in figures_of(at)
    )


# -- Doctor ----------------------------------------------------------------------------------------


def test_doctor_page_counts_findings_and_opens_one_in_the_replay(loaded: AppTest) -> None:
    from inspector.doctor import diagnose

    at = page(loaded, "doctor")
    assert not at.exception
    rep = diagnose(load_session(SAMPLE))
    counts = rep.counts()
    assert metrics(at)["Warnings"] == str(counts.get("warning", 0))
    assert metrics(at)["Errors"] == str(counts.get("error", 0))
    at.button(key="doc_go").click().run()
    assert not at.exception
    target = next(f for f in rep.findings if f.entries).entries[0]
    r = replay(load_session(SAMPLE), ReplaySettings())
    assert at.slider(key="step").value == next(x.step for x in r.steps if x.entry_index > target)


def test_the_doctors_overflow_check_uses_the_sidebars_window() -> None:
    from inspector.doctor import DoctorOptions, diagnose

    at = page(load(fresh()), "doctor")
    overflow = [
        f
        for f in diagnose(load_session(SAMPLE), options=DoctorOptions(context_window=32_768)).findings
        if f.kind == "context-overflow"
    ]
    assert overflow and "context-overflow" not in str(at.dataframe(key="doctor_table").value["kind"].tolist())
    at.selectbox(key="window_preset").set_value("Small local model (32k)").run()
    table = at.dataframe(key="doctor_table").value
    row = table[table["kind"] == "context-overflow"]
    assert len(row) == 1 and "32,768-token window" in row["explanation"].iloc[0]


def test_pi_sessions_are_listed_by_project_name_and_date(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    proj = tmp_path / ".pi" / "agent" / "sessions" / "--home-dev-project--"
    proj.mkdir(parents=True)
    (proj / "2026-01-01T00-00-00_abc.jsonl").write_bytes((SAMPLES / "small-tutorial.jsonl").read_bytes())
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("INSPECTOR_ROOTS", str(tmp_path / ".pi"))
    at = fresh()
    table = at.dataframe(key="pi_table").value
    assert list(table["project"]) == ["/home/dev/project"]
    assert list(table["name"]) == [load_session(SAMPLES / "small-tutorial.jsonl").name or ""]
    at.session_state["pi_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    at.button(key="load_pi").click().run()
    assert metrics(at)["Entries"] == f"{len(load_session(SAMPLES / 'small-tutorial.jsonl').entries):,}"
    monkeypatch.setenv("INSPECTOR_ROOTS", str(SAMPLES))  # pi's folder no longer allowed: not listed
    at = fresh()
    assert not [df for df in at.dataframe if df.key == "pi_table"]
    assert any("are outside the allowed folders (set INSPECTOR_ROOTS" in c.value for c in at.caption)
    monkeypatch.setenv("INSPECTOR_ROOTS", str(tmp_path))  # allowed, and nothing there
    (proj / "2026-01-01T00-00-00_abc.jsonl").unlink()
    at = fresh()
    assert any("found in their folders" in c.value and ".pi" in c.value for c in at.caption)


def test_a_listed_session_that_links_out_of_the_allowed_folders_is_not_read(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The list follows links (a glob), but loading one checks the target against the allowed
    folders, as a typed path is checked: a link in pi's folder to a file outside was read whole."""
    proj = tmp_path / "home" / ".pi" / "agent" / "sessions" / "--proj--"
    proj.mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.jsonl"
    secret.write_bytes((SAMPLES / "small-tutorial.jsonl").read_bytes())
    (proj / "2026-01-01T00-00-00_evil.jsonl").symlink_to(secret)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("INSPECTOR_ROOTS", str(tmp_path / "home" / ".pi"))
    at = load(fresh(), "codex-session.jsonl")
    at.session_state["pi_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    at.button(key="load_pi").click().run()
    assert any("is outside the allowed folders" in e.value.replace("\\", "") for e in at.error)
    assert at.session_state["session_name"] == "codex-session.jsonl"


def test_other_agents_local_sessions_are_listed_and_load(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude Code's projects folder and an OpenCode database, found under $HOME."""
    import sqlite3

    cc = tmp_path / ".claude" / "projects" / "-home-dev-lexer"
    cc.mkdir(parents=True)
    (cc / "7d1c2b3a.jsonl").write_bytes((SAMPLES / "claude-code-session.jsonl").read_bytes())
    oc = tmp_path / ".local" / "share" / "opencode"
    oc.mkdir(parents=True)
    con = sqlite3.connect(oc / "opencode.db")
    con.executescript(
        "create table session (id text primary key, project_id text, parent_id text, directory text, title text,"
        " version text, time_created integer, time_updated integer);"
        "create table message (id text primary key, session_id text, time_created integer, data text);"
        "create table part (id text primary key, message_id text, session_id text, time_created integer, data text);"
    )
    con.execute(
        "insert into session values ('ses_1', 'p1', null, '/home/dev/app', 'Fix the parser', '1.0', 1, 2)"
    )
    con.execute(
        "insert into message values ('msg_1', 'ses_1', 1, ?)",
        (json.dumps({"role": "user", "time": {"created": 1}}),),
    )
    con.execute(
        "insert into part values ('prt_1', 'msg_1', 'ses_1', 1, ?)",
        (json.dumps({"type": "text", "text": "hi"}),),
    )
    con.commit()
    con.close()
    before = (oc / "opencode.db").read_bytes()
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("INSPECTOR_ROOTS", raising=False)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("OPENCODE_DATA_DIR", raising=False)
    at = fresh()
    assert not at.exception
    assert list(at.dataframe(key="claude_code_table").value["project"]) == ["/home/dev/lexer"]
    table = at.dataframe(key="opencode_table").value
    assert list(table["name"]) == ["Fix the parser"] and list(table["file"]) == ["ses_1"]
    at.session_state["claude_code_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    at.button(key="load_claude_code").click().run()
    assert not at.exception
    assert metrics(at)["Compactions"] == "1"
    assert (oc / "opencode.db").read_bytes() == before  # read only


def test_an_uploaded_session_is_loaded() -> None:
    at = fresh()
    data = (SAMPLES / "small-tutorial.jsonl").read_bytes()
    at.file_uploader(key="upload").set_value(("mine.jsonl", data, "application/jsonl"))
    at.run()  # loaded at once: no second click
    assert not at.exception
    assert metrics(at)["Entries"] == f"{len(load_session(SAMPLES / 'small-tutorial.jsonl').entries):,}"
    assert any("mine.jsonl" in h.value.replace("\\", "") for h in at.subheader)


def test_importing_a_pi_settings_json_sets_the_sidebar() -> None:
    at = fresh()
    cfg = {
        "compaction": {"enabled": True, "reserveTokens": 8192, "keepRecentTokens": 12000},
        "contextPruning": {"enabled": True},
    }
    at.file_uploader(key="pi_settings").set_value(
        ("settings.json", json.dumps(cfg).encode(), "application/json")
    )
    at.run()  # applied at once
    assert not at.exception
    assert at.number_input(key="reserve").value == 8192
    assert at.number_input(key="keep").value == 12000
    assert at.selectbox(key="strategy").value == "pi-context-pruning"
    assert any("Applied" in s.value and "12,000" in s.value for s in at.sidebar.success)
    at.file_uploader(key="pi_settings").set_value(("settings.json", b"{oops", "application/json"))
    at.run()
    assert any("Not a readable settings.json" in e.value.replace("\\", "") for e in at.sidebar.error)
    assert at.number_input(key="keep").value == 12000


@pytest.mark.parametrize("agent", ["opencode", "codex", "claude-code", "recorded"])
def test_agent_preset_sets_pruning_and_compaction(agent: str) -> None:
    from inspector.ui.urlstate import AGENT_PRESETS

    at = fresh()
    at.selectbox(key="agent_preset").set_value(agent).run()  # applied at once
    assert not at.exception
    want = AGENT_PRESETS[agent][1]
    assert at.selectbox(key="strategy").value == want["strategy"]
    assert at.selectbox(key="compaction").value == want["compaction"]


def test_agent_preset_takes_the_window_the_session_records() -> None:
    from inspector.ui.urlstate import agent_preset_updates

    assert agent_preset_updates("codex", 272_000) == {
        "compaction": "codex",
        "strategy": "none",
        "window_preset": "Custom",
        "window_custom": 272_000,
    }
    assert agent_preset_updates("codex", 128_000)["window_preset"] == "GPT-4o (128k)"


def test_codex_preset_uses_the_window_the_rollout_records() -> None:
    at = fresh()
    at.selectbox(key="sample_choice").set_value("codex-session.jsonl").run()
    at.button(key="load_sample").click().run()
    assert not at.exception and metrics(at)["Compactions"] == "1"
    assert any("Codex CLI rollout" in c.value for c in at.caption)
    at.selectbox(key="agent_preset").set_value("codex").run()
    assert at.selectbox(key="compaction").value == "codex"
    assert (
        at.selectbox(key="window_preset").value == "Custom"
        and at.number_input(key="window_custom").value == 272000
    )


def window_of(at: AppTest) -> int | str:
    preset = at.selectbox(key="window_preset").value
    return at.number_input(key="window_custom").value if preset == "Custom" else preset


def test_the_window_follows_the_session_until_the_user_chooses_one() -> None:
    at = load(fresh(), "codex-session.jsonl")
    assert window_of(at) == 272000  # what the rollout records, not the app's 200k
    assert any("272,000-token window this session records" in c.value for c in at.sidebar.caption)
    assert not [b for b in at.sidebar.button if b.key == "use_session_window"]
    assert at.query_params["window"] in ("272000", ["272000"])
    load(at)  # a pi session records no window: back to the default
    assert window_of(at) == "Claude Sonnet / Opus (200k)"
    load(at, "codex-session.jsonl")
    assert window_of(at) == 272000
    at.selectbox(key="window_preset").set_value("GPT-5 (400k)").run()  # the user's choice
    assert any("window this session records: 272,000 tokens" in c.value for c in at.sidebar.caption)
    load(at)
    assert window_of(at) == "GPT-5 (400k)"  # stands when another session is opened
    load(at, "codex-session.jsonl")
    assert window_of(at) == "GPT-5 (400k)"
    at.button(key="use_session_window").click().run()  # offered while it differs
    assert not at.exception and window_of(at) == 272000
    assert not [b for b in at.sidebar.button if b.key == "use_session_window"]


def test_a_links_window_is_the_senders_choice() -> None:
    at = fresh(session="sample:codex-session.jsonl", window="200000")
    assert not at.exception and at.session_state["session_window"] == 272000
    assert window_of(at) == "Claude Sonnet / Opus (200k)"
    assert any("window this session records: 272,000 tokens" in c.value for c in at.sidebar.caption)
    at = fresh(session="sample:codex-session.jsonl", window="272000")
    assert window_of(at) == 272000
    load(at)  # the link's window was the one the session gave: it follows the next session
    assert window_of(at) == "Claude Sonnet / Opus (200k)"


def test_a_window_below_what_the_provider_answered_is_flagged_with_its_bound(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No window in the file, but the provider answered a 312,658-token call: the sidebar says the
    model's window is larger than the 200k set and offers the bound (rounded up to 313,000)."""
    from .support.builder import SessionBuilder

    b = SessionBuilder()
    b.user("go")
    b.assistant("x", usage=120_000)
    b.user("more")
    b.assistant("y", usage=312_658)
    f = tmp_path / "big-window.jsonl"
    f.write_text(b.text())
    monkeypatch.setenv("INSPECTOR_ROOTS", str(tmp_path))
    at = fresh()
    at.text_input(key="local_path").set_value(str(f))
    at.button(key="load_path").click().run()
    assert not at.exception
    assert any("answered a 312,658-token context" in c.value for c in at.sidebar.caption)
    at = page(at, "compare")
    assert any(
        "answered a 312,658-token context in this session (entry 3)" in c.value for c in at.main.caption
    )
    at.button(key="use_session_floor").click().run()
    assert not at.exception
    assert not any("answered a 312,658" in c.value for c in at.main.caption)  # the window now holds it
    assert (
        at.selectbox(key="window_preset").value == "Custom"
        and at.number_input(key="window_custom").value == 313_000
    )
    assert not [b for b in at.sidebar.button if b.key == "use_session_floor"]  # the window now holds it
    at.selectbox(key="window_preset").set_value("Claude Sonnet / Opus (200k)").run()
    assert [b for b in at.sidebar.button if b.key == "use_session_floor"]
    at.selectbox(key="window_preset").set_value("GPT-5 (400k)").run()
    assert not [b for b in at.sidebar.button if b.key == "use_session_floor"]


def test_issues_about_the_whole_file_have_an_empty_line_cell() -> None:
    at = fresh()
    at.selectbox(key="sample_choice").set_value("codex-session.jsonl").run()
    at.button(key="load_sample").click().run()
    df = next(d for d in at.dataframe if "severity" in d.value.columns).value
    assert list(df["line"]) == ["63", "", ""]


@pytest.mark.parametrize(
    "sample", ["codex-session.jsonl", "opencode-session.json", "claude-code-session.jsonl"]
)
def test_every_page_draws_other_agents_sessions(sample: str) -> None:
    at = fresh()
    at.selectbox(key="sample_choice").set_value(sample).run()
    at.button(key="load_sample").click().run()
    assert not at.exception and metrics(at)["Compactions"] == "1"
    for name in ("replay", "tree", "summaries", "compare", "doctor"):
        at = page(at, name)
        assert not at.exception, (sample, name)
    at = page(at, "replay")
    from inspector.importers import load_any

    assert at.slider(key="step").max == len(replay(load_any(SAMPLES / sample)).steps) - 1


def test_a_window_too_small_for_the_policy_is_flagged() -> None:
    from inspector.policies import PolicySettings, trigger_threshold

    assert trigger_threshold("claude-code", 32_000, PolicySettings(), 16_384) <= 0
    assert trigger_threshold("pi", 200_000, PolicySettings(), 16_384) == 183_616
    assert trigger_threshold("never", 200_000, PolicySettings(), 16_384) is None
    at = fresh()
    at.selectbox(key="compaction").set_value("claude-code").run()
    assert not at.sidebar.error
    at.selectbox(key="window_preset").set_value("Small local model (32k)").run()
    assert any("before every call" in e.value for e in at.sidebar.error)


def test_a_claude_code_sessions_sub_agents_are_offered_and_load(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proj = tmp_path / ".claude" / "projects" / "-home-dev-lexer"
    sub = proj / "7d1c2b3a" / "subagents"
    sub.mkdir(parents=True)
    (proj / "7d1c2b3a.jsonl").write_bytes((SAMPLES / "claude-code-session.jsonl").read_bytes())
    lines = [
        {
            "type": "user",
            "uuid": "s1",
            "parentUuid": None,
            "isSidechain": True,
            "agentId": "a7",
            "sessionId": "x",
            "timestamp": "2026-03-03T10:00:00.000Z",
            "message": {"role": "user", "content": "Find the lexer tests."},
        },
        {
            "type": "assistant",
            "uuid": "s2",
            "parentUuid": "s1",
            "isSidechain": True,
            "agentId": "a7",
            "sessionId": "x",
            "timestamp": "2026-03-03T10:00:02.000Z",
            "message": {
                "id": "m1",
                "role": "assistant",
                "model": "claude-haiku-4-5",
                "stop_reason": "end_turn",
                "content": [{"type": "text", "text": "test/lexer.test.ts"}],
                "usage": {"input_tokens": 10, "output_tokens": 5},
            },
        },
    ]
    (sub / "agent-a7.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("INSPECTOR_ROOTS", raising=False)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    at = fresh()
    at.session_state["claude_code_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    at.button(key="load_claude_code").click().run()
    pick = at.selectbox(key="subagent_pick")
    assert pick.options == ["agent-a7.jsonl"] and pick.value == str(sub / "agent-a7.jsonl")
    at.button(key="load_subagent").click().run()
    assert not at.exception and metrics(at)["Entries"] == "2"
    assert any("sub-agent's transcript" in str(v) for v in at.dataframe[-1].value["message"])


def test_a_forked_codex_session_offers_its_parent(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    day = tmp_path / ".codex" / "sessions" / "2026" / "03" / "03"
    day.mkdir(parents=True)
    parent_id = "0199a7c1-0000-7000-8000-00000000c0de"
    parent = day / f"rollout-2026-03-03T10-00-00-{parent_id}.jsonl"
    parent.write_bytes((SAMPLES / "codex-session.jsonl").read_bytes())
    rows = [json.loads(x) for x in (SAMPLES / "codex-session.jsonl").read_text().splitlines()]
    rows[0]["payload"] = {
        **rows[0]["payload"],
        "id": "0199b000-0000-7000-8000-0000000f0a4c",
        "forked_from_id": parent_id,
    }
    child = day / "rollout-2026-03-03T11-00-00-0199b000-0000-7000-8000-0000000f0a4c.jsonl"
    child.write_text("\n".join(json.dumps(r) for r in rows[:20]) + "\n")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("INSPECTOR_ROOTS", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    at = fresh()
    at.text_input(key="local_path").set_value(str(child))
    at.button(key="load_path").click().run()
    assert any("forked from session" in c.value and "c0de" in c.value for c in at.caption)
    at.button(key="load_codex_forkedFrom").click().run()
    assert not at.exception
    assert at.session_state["session_name"] == str(parent)


def test_the_window_follows_the_sessions_model(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No window in the file: the sidebar takes the model's from pi's model list and says so; a model
    the list does not hold gets the default, said to be assumed."""
    from .support.builder import SessionBuilder

    monkeypatch.setenv("INSPECTOR_ROOTS", str(tmp_path))
    at = fresh()
    for model in ("gpt-5.5", "gpt-9"):
        b = SessionBuilder()
        b.user("go")
        b.assistant("ok", provider="openai", model=model)
        (tmp_path / f"{model}.jsonl").write_text(b.text())
    at.text_input(key="local_path").set_value(str(tmp_path / "gpt-5.5.jsonl"))
    at.button(key="load_path").click().run()
    assert not at.exception and window_of(at) == 272000
    said = [c.value for c in at.sidebar.caption]
    assert any(
        r"272,000-token window of gpt\-5\.5, this session's model, in pi's model list" in c for c in said
    )
    at.text_input(key="local_path").set_value(str(tmp_path / "gpt-9.jsonl"))
    at.button(key="load_path").click().run()
    assert not at.exception and window_of(at) == "Claude Sonnet / Opus (200k)"
    assert any(
        r"The window is assumed, 200,000 tokens: gpt\-9 is not in pi's model list" in c.value
        for c in at.sidebar.caption
    )
    # a window a page sets (Learn's, a sweep cell's) is a choice: the next session does not move it
    at.session_state["window_preset"], at.session_state["window_custom"] = "Custom", 48_000
    at.run()
    at.text_input(key="local_path").set_value(str(tmp_path / "gpt-5.5.jsonl"))
    at.button(key="load_path").click().run()
    assert not at.exception and window_of(at) == 48_000


def test_each_models_calls_run_against_its_own_window(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A session that switched models: while the window follows the session, the other model's
    calls run against its own window (as pi checks them), the sidebar says so and the timeline
    draws each window over its calls; a window the user chooses is every call's."""
    from .support.builder import SessionBuilder

    monkeypatch.setenv("INSPECTOR_ROOTS", str(tmp_path))
    b = SessionBuilder()
    for model, text in [("claude-sonnet-4-5", "hello")] * 3 + [("gemini-2.5-pro", "x" * 400_000)] * 2:
        b.user(text)
        b.assistant("ok", provider="anthropic" if model.startswith("claude") else "google", model=model)
    (tmp_path / "switch.jsonl").write_text(b.text())
    at = fresh()
    at.text_input(key="local_path").set_value(str(tmp_path / "switch.jsonl"))
    at.button(key="load_path").click().run()
    assert not at.exception and window_of(at) == "Claude Sonnet / Opus (200k)"
    assert any(
        "Each call runs against the window of the model that answered it, as the agents check it: "
        "gemini\\-2\\.5\\-pro's calls against 1,048,576 (pi's model list)." in c.value
        for c in at.sidebar.caption
    )
    page(at, "replay")
    assert not at.exception
    timeline = next(
        f
        for f in figures_of(at)
        if f["layout"].get("yaxis", {}).get("title", {}).get("text") == "context tokens"
    )
    windows = [
        s
        for s in timeline["layout"]["shapes"]
        if s["line"]["color"] == "#d62728" and s["line"].get("dash") in (None, "solid")
    ]
    assert [(s["x0"], s["x1"], s["y0"]) for s in windows] == [(-0.5, 2.5, 200_000), (2.5, 4.5, 1_048_576)]
    assert metrics(at)["Window used"].endswith("%")
    at.selectbox(key="window_preset").set_value("GPT-5 (400k)").run()
    assert not at.exception
    assert not any("Each call runs against" in c.value for c in at.sidebar.caption)
    timeline = next(
        f
        for f in figures_of(at)
        if f["layout"].get("yaxis", {}).get("title", {}).get("text") == "context tokens"
    )
    assert [
        s["y0"]
        for s in timeline["layout"]["shapes"]
        if s["line"]["color"] == "#d62728" and s["line"].get("dash") in (None, "solid")
    ] == [400_000]
