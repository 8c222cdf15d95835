"""The Streamlit app through AppTest: each page's main flow, asserting what it shows."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from inspector import build_session_context, load_session
from inspector.replay import ReplaySettings, replay

from .conftest import REPO

APP = str(REPO / "app.py")
SAMPLE = REPO / "sample_sessions" / "coding-session.jsonl"


def page(at: AppTest, name: str) -> AppTest:
    return at.switch_page(f"inspector/ui/app_pages/{name}.py").run()


@pytest.fixture
def loaded() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.button(key="load_sample").click().run()
    assert not at.exception
    return at


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_load_page_summarises_the_sample(loaded: AppTest) -> None:
    s = load_session(SAMPLE)
    m = metrics(loaded)
    assert m["Entries"] == f"{len(s.entries):,}"
    assert m["Branches (leaves)"] == str(len(s.leaves))
    ctx = build_session_context(s)
    assert m["Context messages"] == f"{len(ctx.messages):,}"
    assert m["Compactions"] == "1"


def test_load_page_lists_issues_of_a_broken_file() -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.selectbox(key="sample_choice").set_value("broken.jsonl")
    at.button(key="load_sample").click().run()
    frames = [df.value for df in at.dataframe]
    issues = next(f for f in frames if "kind" in f.columns)
    assert {"malformed-json", "truncated-line", "duplicate-id"} <= set(issues["kind"])
    assert 5 in set(issues["line"])


def test_local_path_outside_roots_is_refused() -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.text_input(key="local_path").set_value("/etc/passwd")
    at.button(key="load_path").click().run()
    assert any("outside the allowed folders" in e.value for e in at.error)
    at.text_input(key="local_path").set_value("sample_sessions/../../../etc/passwd")
    at.button(key="load_path").click().run()
    assert any("outside the allowed folders" in e.value for e in at.error)


def test_replay_page_shows_the_step_tokens_and_moves_with_the_buttons(loaded: AppTest) -> None:
    at = page(loaded, "replay")
    assert not at.exception
    r = replay(load_session(SAMPLE), ReplaySettings())
    last = r.steps[-1]
    assert metrics(at)["Tokens sent"] == f"{last.tokens:,}"
    at.button(key="prev").click().run()
    assert metrics(at)["Tokens sent"] == f"{r.steps[-2].tokens:,}"
    at.slider(key="step").set_value(0).run()
    assert metrics(at)["Tokens sent"] == f"{r.steps[0].tokens:,}"
    at.button(key="next_event").click().run()
    k = at.slider(key="step").value
    assert k == r.event_steps()[0] and r.steps[k].events
    assert len(at.get("plotly_chart")) == 2  # context bars and timeline


def test_replay_page_what_if_and_pruning_change_the_numbers(loaded: AppTest) -> None:
    at = loaded
    at.selectbox(key="window_preset").set_value("Custom")
    at.run()
    at.number_input(key="window_custom").set_value(40000)
    at.selectbox(key="compaction").set_value("pi")
    at.selectbox(key="strategy").set_value("pi-context-pruning").run()
    at = page(at, "replay")
    assert not at.exception
    s = load_session(SAMPLE)
    want = replay(s, ReplaySettings(compaction="pi", context_window=40000, strategy="pi-context-pruning"))
    assert metrics(at)["Tokens sent"] == f"{want.steps[-1].tokens:,}"
    assert want.metrics.compactions >= 1


def test_tree_page_lists_the_fork_and_previews_a_branch_summary(loaded: AppTest) -> None:
    at = page(loaded, "tree")
    assert not at.exception
    code = next(c.value for c in at.code if "●" in c.value)
    s = load_session(SAMPLE)
    assert code.count("\n") + 1 == len(s.entries)
    assert any("Common ancestor: entry" in m.value for m in at.markdown)


def test_summaries_page_shows_the_recorded_summary_and_a_diff(loaded: AppTest) -> None:
    at = page(loaded, "summaries")
    assert not at.exception
    texts = [t.value for t in at.text]
    assert any(t.startswith("## Goal") for t in texts)
    assert any("recorded" in c.value and "generated" in c.value for c in at.code)


def test_compare_page_tabulates_metrics_for_each_configuration(loaded: AppTest) -> None:
    at = page(loaded, "compare")
    assert not at.exception
    table = at.dataframe[0].value
    assert len(table) == 2 and "total_input_tokens" in table.columns
    at.selectbox(key="sw_x").set_value("keep_recent_tokens")
    at.selectbox(key="sw_y").set_value("reserve_tokens")
    at.button(key="sw_run").click().run()
    assert not at.exception
    assert len(at.get("plotly_chart")) == 2  # timelines + heatmap


def test_doctor_page_counts_findings(loaded: AppTest) -> None:
    from inspector.doctor import diagnose

    at = page(loaded, "doctor")
    assert not at.exception
    counts = diagnose(load_session(SAMPLE)).counts()
    assert metrics(at)["Warnings"] == str(counts.get("warning", 0))


def test_settings_come_from_and_go_to_the_url() -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["keep"] = "12345"
    at.query_params["strategy"] = "opencode"
    at.run()
    assert at.number_input(key="keep").value == 12345
    assert at.selectbox(key="strategy").value == "opencode"
    assert at.query_params["keep"] == ["12345"] or at.query_params["keep"] == "12345"


def test_replay_page_with_the_recorded_usage_counter(loaded: AppTest) -> None:
    loaded.selectbox(key="counter").set_value("usage").run()
    at = page(loaded, "replay")
    assert not at.exception
    want = replay(load_session(SAMPLE), ReplaySettings(counter="usage")).steps[-1].tokens
    assert metrics(at)["Tokens sent"] == f"{want:,}"


def test_summaries_page_shows_the_exact_prompt_with_custom_instructions(loaded: AppTest) -> None:
    at = page(loaded, "summaries")
    at.selectbox(key="sum_style").set_value("claude-code")
    at.text_input(key="sum_instructions").set_value("focus on the lexer")
    at.run()
    prompt = next(c.value for c in at.code if c.value.startswith("[system]"))
    assert "<conversation>" in prompt and "focus on the lexer" in prompt and "<summary>" in prompt
