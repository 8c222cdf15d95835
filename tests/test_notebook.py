"""The notebook inspector: its controls driven programmatically, the figures' data checked to
change in place; its DataFrames; the figure modules it shares with the app stay streamlit-free."""

from __future__ import annotations

import html
import subprocess
import sys

import pytest

pytest.importorskip("ipywidgets", reason="the notebook extra is not installed: pip install '.[notebook]'")

from inspector.notebook import inspect  # noqa: E402
from inspector.replay import ReplaySettings, replay  # noqa: E402

from .support.paths import REPO, SAMPLES  # noqa: E402

SAMPLE = SAMPLES / "coding-session.jsonl"


def data(fw) -> list[dict]:  # type: ignore[no-untyped-def]
    return [tr.to_plotly_json() for tr in fw.data]


def marker_x(ins) -> list[int]:  # type: ignore[no-untyped-def]
    return list(next(tr for tr in ins.timeline.data if tr.name == "this step").x)


def test_the_inspector_displays_as_a_widget_and_opens_where_something_happens() -> None:
    ins = inspect(SAMPLE)
    bundle = ins._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    r = replay(ins.session, ReplaySettings())
    assert ins.step == r.event_steps()[0] == ins.controls["step"].value
    assert ins.bars.data and ins.timeline.data and "What happened here" in ins.story.value


def test_moving_the_step_slider_updates_bars_timeline_and_story_in_place() -> None:
    ins = inspect(SAMPLE)
    bars, timeline, story = ins.bars, ins.timeline, ins.story.value
    before = data(ins.bars)
    ins.controls["step"].value = 10
    assert ins.bars is bars and ins.timeline is timeline  # the same widgets, updated
    assert data(ins.bars) != before
    assert marker_x(ins) == [10]
    assert ins.story.value != story
    assert ins.bars.layout.title.text.startswith("Context at model call 10")


def test_settings_controls_replay_and_redraw() -> None:
    ins = inspect(SAMPLE, compaction="pi", window=96_000)
    assert ins.metrics.loc[0, "compactions"] == 1
    timeline = data(ins.timeline)
    ins.controls["context_window"].value = 48_000
    assert ins.settings.context_window == 48_000
    assert ins.metrics.loc[0, "compactions"] == replay(ins.session, ins.settings).metrics.compactions >= 3
    assert data(ins.timeline) != timeline
    assert ins.timeline.layout.shapes[0].y0 == 48_000  # the window's red line moved
    keep = ins.replay
    ins.controls["keep_recent_tokens"].value = 5_000
    assert ins.replay is not keep and ins.settings.keep_recent_tokens == 5_000


def test_pruning_strategy_controls_come_from_its_settings_model() -> None:
    ins = inspect(SAMPLE)
    ins.controls["strategy"].value = "pi-context-pruning"
    names = {w.setting: w for w in ins.strategy_box.children}
    assert {"prune_protect", "prune_minimum"} <= set(names)
    pruned = ins.metrics.loc[0, "tokens_pruned"]
    bars = data(ins.bars)
    names["prune_protect"].value = 5_000
    names["prune_minimum"].value = 0
    assert dict(ins.settings.strategy_settings)["prune_protect"] == 5_000
    assert ins.metrics.loc[0, "tokens_pruned"] > pruned
    assert data(ins.bars) != bars


def test_dataframes_and_programmatic_use() -> None:
    ins = inspect(SAMPLE, strategy="opencode", strategy_settings={"prune_protect": 10_000})
    r = replay(ins.session, ins.settings)
    assert len(ins.steps) == len(r.steps)
    assert list(ins.steps["contextTokens"]) == [s.tokens for s in r.steps]
    assert ins.metrics.loc[0, "total_input_tokens"] == r.metrics.total_input_tokens
    ins.set(compaction="pi", window=64_000).goto(5)
    assert ins.controls["compaction"].value == "pi" and ins.controls["context_window"].value == 64_000
    assert ins.step == 5 and marker_x(ins) == [5]
    assert len(ins.summaries) == ins.metrics.loc[0, "compactions"]
    with pytest.raises(TypeError):
        inspect(SAMPLE, windw=1)


def test_figure_modules_and_the_notebook_import_no_streamlit() -> None:
    code = (
        "import sys, inspector.notebook, inspector.ui.figures, inspector.ui.learn_figures, "
        "inspector.ui.step_figures, inspector.learn; print('streamlit' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_another_agents_file_is_inspected_as_recorded() -> None:
    """As in the app and the CLI: the agent's own pruning stands unless a strategy is given."""
    ins = inspect(SAMPLES / "opencode-session.json")
    assert ins.settings.strategy == "recorded"
    assert inspect(SAMPLES / "opencode-session.json", strategy="none").settings.strategy == "none"
    assert inspect(SAMPLE).settings.strategy == "none"  # pi records no pruning


def test_as_recorded_the_story_and_timeline_carry_the_reconstruction_check_as_the_app_does() -> None:
    from inspector.recon import check, recorded_split

    ins = inspect(SAMPLE)
    c = check(ins.session)
    k = next(x.step for x in c.calls if recorded_split(c, x.step))
    ins.goto(k)
    assert html.escape(recorded_split(c, k)) in ins.story.value  # the recorded prompt, split
    names = {tr.name for tr in ins.timeline.data}
    assert any(n and n.startswith("expected prompt") for n in names)  # the check's band
    ins.set(compaction="pi")  # a what-if: no check, as on the Replay page
    assert "tokens the provider recorded for this prompt" not in ins.story.value
    assert not any(n and n.startswith("expected prompt") for n in (tr.name for tr in ins.timeline.data))


def test_a_codex_rollout_is_inspected_with_the_window_it_records() -> None:
    codex = SAMPLES / "codex-session.jsonl"
    assert inspect(codex).settings.context_window == 272_000
    assert inspect(codex, window=64_000).settings.context_window == 64_000
    assert inspect(SAMPLE).settings.context_window == 200_000


def test_a_session_that_switched_models_is_inspected_with_each_models_window() -> None:
    from .support.builder import SessionBuilder

    b = SessionBuilder()
    for model in ("claude-sonnet-4-5",) * 3 + ("gemini-2.5-pro",) * 2:
        b.user("go")
        b.assistant("ok", provider="anthropic" if model.startswith("claude") else "google", model=model)
    ins = inspect(b.session())
    assert ins.settings.context_window == 200_000
    assert ins.settings.model_windows == (("google", "gemini-2.5-pro", 1_048_576),)
    assert [s.window for s in ins.replay.steps] == [200_000] * 3 + [1_048_576] * 2
    ins.controls["context_window"].value = 128_000  # a window chosen: every call's
    assert ins.settings.model_windows == () and {s.window for s in ins.replay.steps} == {128_000}
    assert inspect(b.session(), window=64_000).settings.model_windows == ()


def test_the_status_says_when_the_window_assumed_is_proven_too_small() -> None:
    """An unknown model's window is assumed (200,000); a call the provider answered with more
    proves it larger, and the status line says which window to set, as the CLI's header does."""
    from .support.builder import SessionBuilder

    b = SessionBuilder()
    b.user("go " + "x" * 4000)
    b.assistant("ok", usage=312_658, provider="anthropic", model="claude-opus-9")
    ins = inspect(b.session())
    assert ins.settings.context_window == 200_000
    said = html.unescape(ins.status.value)
    assert "window 200,000 assumed, but the provider answered a 312,658-token context (entry 1)" in said
    assert "set window=313_000 or more" in said
    ins.controls["context_window"].value = 313_000
    assert "assumed" not in ins.status.value


def test_a_file_with_no_session_is_an_error_not_an_empty_inspector(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from inspector.session.loader import SessionLoadError

    f = tmp_path / "package.json"
    f.write_text('{"name": "x", "version": "1.0"}\n')
    with pytest.raises(
        SessionLoadError, match="nothing in it could be read as a session: the format is not recognised"
    ):
        inspect(f)
    assert inspect(SAMPLES / "broken.jsonl").replay.steps  # read in part: inspected
