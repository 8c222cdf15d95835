"""What a session's own usage proves about its model's window (inspector.window)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from inspector.window import AnsweredPeak, answered_peak

from .support.builder import SessionBuilder


def test_the_largest_answered_call_bounds_the_window() -> None:
    b = SessionBuilder()
    b.user("a")
    b.assistant("x", usage=120_000)
    b.user("b")
    b.assistant("", usage=400_000, stop="error")  # failed: proves nothing
    b.user("c")
    b.assistant("", usage=500_000, stop="aborted")  # aborted: proves nothing
    b.user("d")
    peak_id = b.assistant("y", usage=312_658)
    b.user("e")
    b.assistant("z", usage=312_658)  # as large: the first stands
    s = b.session()
    peak = answered_peak(s)
    assert peak == AnsweredPeak(312_658, s.by_id[peak_id])
    assert peak.window_floor() == 313_000
    assert answered_peak(s) is peak  # memoised


def test_no_usage_no_bound() -> None:
    b = SessionBuilder()
    b.user("a")
    b.assistant("x")
    assert answered_peak(b.session()) is None
    assert AnsweredPeak(200_000, 1).window_floor() == 200_000


def test_pi_model_list_gives_a_models_window() -> None:
    from inspector.model_windows import model_window

    assert model_window("openai", "gpt-5.5") == 272_000
    assert model_window("openai", "gpt-5.2") == 400_000
    assert model_window("openai-codex", "gpt-5.2") == 272_000  # the provider decides
    assert model_window("anthropic", "claude-opus-4-5") == 200_000
    assert model_window("anthropic", "claude-opus-4-6") == 1_000_000  # a newer one of a family
    assert model_window("anthropic", "claude-sonnet-4-5-20990101") == 200_000  # a release date
    assert model_window("anthropic", "claude-sonnet-4-5:high") == 200_000  # pi's thinking level
    assert model_window("openrouter", "anthropic/claude-opus-4-6") == 1_000_000  # a router's id
    assert model_window(None, "claude-sonnet-4-5") == 200_000  # every provider agrees
    assert model_window(None, "gpt-5.2") is None  # openai and openai-codex do not
    assert model_window("anthropic", "claude-opus-5") is None  # not guessed from the family
    assert model_window("anthropic", "gpt-5.5") is None  # not looked up under another provider
    assert model_window("openai", "") is None and model_window("openai", None) is None


def test_a_sessions_window_is_recorded_else_its_models_else_the_default() -> None:
    from inspector.window import DEFAULT_WINDOW, KnownWindow, SessionModel, known_window, session_window

    def session(*models: tuple[str, str]):  # type: ignore[no-untyped-def]
        b = SessionBuilder()
        for provider, model in models:
            b.user("go")
            b.assistant("ok", provider=provider, model=model)
        return b.session()

    s = session(("openai", "gpt-5.5"))
    gpt = SessionModel("openai", "gpt-5.5", 1)
    assert known_window(s) == KnownWindow(272_000, "model", gpt)
    assert session_window(s) == 272_000 and session_window(s, 128_000) == 128_000
    assert "gpt-5.5, this session's model, in pi's model list" in known_window(s).said()
    # the model of most answers; of a tie, the later
    mixed = session(("anthropic", "claude-opus-4-6"), ("openai", "gpt-5.5"), ("openai", "gpt-5.5"))
    assert known_window(mixed) == KnownWindow(272_000, "model", SessionModel("openai", "gpt-5.5", 2))
    assert "of gpt-5.5, the model of most of its calls, in pi's model list" in known_window(mixed).said()
    tie = session(("openai", "gpt-5.5"), ("anthropic", "claude-opus-4-6"))
    assert known_window(tie).tokens == 1_000_000
    unknown = session(("anthropic", "claude-opus-5"))
    assert known_window(unknown) is None and session_window(unknown) == DEFAULT_WINDOW
    assert session_window(None) == DEFAULT_WINDOW


def test_info_says_the_window_and_where_it_comes_from() -> None:
    from inspector.info import session_info

    def text(provider: str, model: str) -> str:
        b = SessionBuilder()
        b.user("go")
        b.assistant("ok", provider=provider, model=model)
        return session_info(b.session()).to_text()

    assert "window    272,000 tokens (gpt-5.5's in pi's model list)\n" in text("openai", "gpt-5.5")
    assert "window    unknown: gpt-9 is not in pi's model list (pi-ai 0.73.1)\n" in text("openai", "gpt-9")
    info = session_info(SessionBuilder().session())
    assert (info.window, info.windowSource, info.windowModel) == (None, None, None)
    assert "window " not in info.to_text()


def test_a_claude_code_transcript_leaves_its_window_unknown() -> None:
    """Claude Code runs a model at 200k or, when set to, at 1M; its transcript does not say which:
    the window is assumed, and said to be, whatever pi's model list gives the model."""
    from inspector.importers import load_any
    from inspector.window import known_window, session_window, unknown_window_why

    from .support.paths import REPO

    s = load_any(REPO / "sample_sessions" / "claude-code-session.jsonl")
    assert s.format == "claude-code" and known_window(s) is None and session_window(s) == 200_000
    assert unknown_window_why(s) == "Claude Code does not record whether it ran with the 1M-token window"
    pi = load_any(REPO / "sample_sessions" / "coding-session.jsonl")
    assert known_window(pi) is not None and unknown_window_why(pi) is None


def test_a_long_model_name_is_cut_where_it_is_shown() -> None:
    from inspector.info import session_info
    from inspector.window import unknown_window_why

    b = SessionBuilder()
    b.user("go")
    b.assistant("ok", provider="openai", model="m" * 5000)
    s = b.session()
    why = unknown_window_why(s)
    assert why is not None and why.startswith("m" * 79 + "… is not in pi's model list")
    line = next(x for x in session_info(s).to_text().splitlines() if x.startswith("window "))
    assert len(line) < 200


def test_a_claude_code_call_answered_over_200k_proves_its_1m_window() -> None:
    """Claude Code has two windows, 200k and 1M: a call the provider answered with more than 200k
    tokens (input and output: the API refuses more than the window) ran at 1M."""
    from inspector.cli.replay import recorded_window_note
    from inspector.importers import parse_any
    from inspector.info import session_info
    from inspector.replay import ReplaySettings
    from inspector.window import known_window, session_window, unknown_window_why

    from .support.paths import REPO

    text = (REPO / "sample_sessions" / "claude-code-session.jsonl").read_text()
    one = '"input_tokens": 3, "output_tokens": 90, "cache_read_input_tokens": 15013,'
    assert text.count(one) == 1
    for answered, window in ((150_000, 200_000), (200_000, 200_000), (200_001, 1_000_000)):
        # the call's context: input 3 + output 90 + cache read + cache write 646
        big = text.replace(one, one.replace("15013", str(answered - 739)))
        s = parse_any(big.encode(), "cc.jsonl")
        assert session_window(s) == window, answered
    known = known_window(s)
    assert known is not None and known.source == "answered" and unknown_window_why(s) is None
    assert "Claude Code's 1M mode" in known.said()
    assert "window    1,000,000 tokens (an answered call went over 200,000: Claude Code's 1M mode)" in (
        session_info(s).to_text()
    )
    note = recorded_window_note(s, ReplaySettings(context_window=1_000_000))
    assert note == " (an answered call went over 200,000: Claude Code's 1M mode)"


def test_the_model_list_is_pis_own(pi_oracle) -> None:  # type: ignore[no-untyped-def]
    """inspector/model_windows.json is what the pinned pi-ai's MODELS give, every provider and
    model (tools/pi-oracle/model-windows.mjs prints it): the windows pi itself compacts against."""
    import json
    import subprocess

    from inspector import model_windows

    from .support.paths import PI_ORACLE_SRC

    out = subprocess.run(
        ["node", str(PI_ORACLE_SRC / "model-windows.mjs"), "--modules", str(pi_oracle.modules)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    assert json.loads(out) == json.loads(model_windows.TABLE.read_text(encoding="utf-8"))
    assert model_windows.READ_FROM == json.loads(out)["piAi"]
    assert model_windows.windows()["openai"]["gpt-5.5"] == 272_000


def test_pi_sessions_name_models_as_the_list_does() -> None:
    """A router's and a cloud's own ids are looked up as pi records them."""
    from inspector.model_windows import model_window, windows

    for provider in ("openrouter", "github-copilot", "amazon-bedrock", "google-vertex"):
        model, window = next(iter(windows()[provider].items()))
        assert model_window(provider, model) == window
    assert model_window("openrouter", "no-such/model") is None


def _switching_session():  # type: ignore[no-untyped-def]
    """Two small calls by claude-sonnet-4-5 (200,000 in pi's model list), then gemini-2.5-pro
    (1,048,576) answering as the context grows past 300,000 tokens (pi's estimate: chars ÷ 4)."""
    b = SessionBuilder()
    for _ in range(2):
        b.user("hello")
        b.assistant("ok", provider="anthropic", model="claude-sonnet-4-5")
    for _ in range(4):
        b.user("x" * 320_000)  # 80,000 tokens each
        b.assistant("ok", provider="google", model="gemini-2.5-pro")
    return b.session()


def test_each_call_runs_against_the_window_of_the_model_that_answered_it() -> None:
    from inspector.replay import ReplaySettings, replay
    from inspector.window import model_windows_of, model_windows_said, window_settings

    s = _switching_session()
    own = window_settings(s)
    # the model of most calls gives the headline window; the other model keeps its own
    assert own == {
        "context_window": 1_048_576,
        "model_windows": (("anthropic", "claude-sonnet-4-5", 200_000),),
    }
    assert model_windows_of(s, 200_000) == (("google", "gemini-2.5-pro", 1_048_576),)
    assert window_settings(s, 128_000) == {
        "context_window": 128_000,
        "model_windows": (),
    }  # the user's: every call's
    assert model_windows_said(model_windows_of(s, 200_000)) == "gemini-2.5-pro's calls against 1,048,576"

    # pi's policy at 200,000 for every call: the gemini calls overflow and it compacts
    flat = replay(s, ReplaySettings(compaction="pi", context_window=200_000))
    assert {st.window for st in flat.steps} == {200_000}
    assert flat.metrics.compactions >= 1
    # each model's own window (pi's this.model.contextWindow at each check): no compaction, no overflow
    per = replay(
        s, ReplaySettings(compaction="pi", context_window=200_000, model_windows=model_windows_of(s, 200_000))
    )
    assert [st.window for st in per.steps] == [200_000] * 2 + [1_048_576] * 4
    assert per.metrics.compactions == 0 and per.metrics.overflows == 0
    assert per.steps[-1].tokens > 300_000
    assert per.steps[-1].as_dict()["window"] == 1_048_576
    from inspector.ui.narrate import step_story

    assert (
        "Another model answers this call: its window is 1,048,576 tokens (the previous call's: 200,000), "
        "and pi checks the call against it." in step_story(per, 2)
    )
    assert not any("Another model" in x for x in step_story(per, 3))


def test_a_swept_or_chosen_window_is_every_calls() -> None:
    from inspector.replay import ReplaySettings
    from inspector.replay.sweep import _coerce
    from inspector.window import model_windows_of

    s = _switching_session()
    base = ReplaySettings(context_window=200_000, model_windows=model_windows_of(s, 200_000))
    assert _coerce(base, "context_window", 400_000).model_windows == ()
    assert _coerce(base, "keep_recent_tokens", 10_000).model_windows == base.model_windows


def test_the_doctor_checks_each_call_against_its_models_window() -> None:
    from inspector.doctor import DoctorOptions, diagnose
    from inspector.window import window_settings

    b = SessionBuilder()
    for model, usage in [("claude-sonnet-4-5", 150_000)] * 3 + [("gemini-2.5-pro", 300_000)] * 2:
        b.user("go")
        b.assistant(
            "ok", provider="anthropic" if model.startswith("claude") else "google", model=model, usage=usage
        )
    s = b.session()

    def overflow(o: DoctorOptions) -> list[str]:
        return [f.message for f in diagnose(s, "leaf", o).findings if f.kind == "context-overflow"]

    assert overflow(DoctorOptions(context_window=200_000)) == [
        "2 call(s) used more than the 200,000-token window set (largest 300,000 at entry 7), and the provider "
        "answered them: this session's model has a larger window; check against its own (--window, or the "
        "window in the sidebar)"
    ]
    assert overflow(DoctorOptions(**window_settings(s))) == []  # gemini's calls against its 1,048,576
    b.user("go")
    b.assistant("ok", provider="google", model="gemini-2.5-pro", usage=1_100_000)
    s = b.session()
    assert overflow(DoctorOptions(**window_settings(s))) == [
        "1 call(s) used more than the window of their model (largest "
        "1,100,000 at entry 11), and the provider answered them: this session's model has a larger window; "
        "check against its own (--window, or the window in the sidebar)"
    ]


def test_the_timeline_draws_each_window_over_its_calls_or_across_when_they_alternate_often() -> None:
    from inspector.replay import ReplaySettings, replay
    from inspector.ui.figures import MAX_WINDOW_RUNS, timeline
    from inspector.window import window_settings

    def solid_red(runs: int) -> list[tuple[object, object, int]]:
        b = SessionBuilder()
        for k in range(runs):
            b.user("go")
            b.assistant(
                "ok",
                provider="google" if k % 2 else "anthropic",
                model="gemini-2.5-pro" if k % 2 else "claude-sonnet-4-5",
            )
        fig = timeline(replay(b.session(), ReplaySettings(**window_settings(b.session()))))
        shapes = fig.to_plotly_json()["layout"]["shapes"]
        return [
            (s["x0"], s["x1"], s["y0"])
            for s in shapes
            if s["line"]["color"] == "#d62728" and s["line"]["dash"] == "solid"
        ]

    assert solid_red(3) == [(-0.5, 0.5, 200_000), (0.5, 1.5, 1_048_576), (1.5, 2.5, 200_000)]
    assert solid_red(MAX_WINDOW_RUNS + 1) == [(0, 1, 200_000), (0, 1, 1_048_576)]  # across the chart


def _opus9_session(usage: int) -> str:
    """A pi file whose model pi's list lacks (its window is assumed), one answer of ``usage``."""
    b = SessionBuilder()
    b.user("go " + "x" * 4000)
    b.assistant("ok", usage=usage, model="claude-opus-9", provider="anthropic")
    return b.text()


def test_the_window_assumed_for_an_unknown_model_is_bounded_by_what_the_provider_answered(
    tmp_path: Path,
) -> None:
    """The replay's context (~1k tokens) never overflows the 200k assumed, so no overflow note
    speaks: the header itself says the provider answered more, and which window to give (a what-if
    under pi's policy would otherwise compact at 184k a session that ran to 312k); info says the
    bound. Not with a window given, nor when the answers fit the window assumed."""
    from inspector.cli import main
    from inspector.info import session_info
    from inspector.session.loader import load_session

    f = tmp_path / "s.jsonl"
    f.write_text(_opus9_session(312_658))

    def header(*extra: str) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["replay", str(f), "--cache", "off", *extra]) == 0
        return out.getvalue().splitlines()[0]

    said = header()
    assert "(assumed: claude-opus-9 is not in pi's model list" in said
    assert (
        "the provider answered a 312,658-token context at entry 1" in said
        and "--window 313000 or more" in said
    )
    assert "provider answered" not in header("--window", "400000")

    def sweep_note(*extra: str) -> str:  # a grid sweep prints no header: the note goes to stderr
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            assert main(["sweep", str(f), "--compaction", "pi", "--cache", "off", *extra]) == 0
        return err.getvalue()

    assert "window 200,000 assumed; the provider answered a 312,658-token context" in sweep_note(
        "--grid", "keep_recent_tokens=10000,20000"
    )
    assert sweep_note("--grid", "keep_recent_tokens=10000,20000", "--window", "400000") == ""
    assert sweep_note("--grid", "context_window=200000,400000") == ""
    info = session_info(load_session(f))
    assert (info.windowAtLeast, info.windowAtLeastEntry) == (312_658, 1)
    assert "at least 312,658: the provider answered a context that large (entry 1)" in info.to_text()
    f.write_text(_opus9_session(150_000))
    said = header()
    assert "(assumed: claude-opus-9 is not in pi's model list" in said and "provider answered" not in said
    info = session_info(load_session(f))
    assert (info.windowAtLeast, info.windowAtLeastEntry) == (None, None) and "at least" not in info.to_text()


def test_a_streamed_load_finds_the_same_answered_peak(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large file is replayed and summarised from its skeleton, which holds no usage: the peak is
    found as the file is read, so the streamed header and info say what the loaded ones say."""
    import inspector.cli.base as cli_base
    from inspector.cli import main
    from inspector.info import session_info, streamed_session_info
    from inspector.session.loader import load_session, load_skeleton

    f = tmp_path / "s.jsonl"
    f.write_text(_opus9_session(312_658))

    def run(*a: str) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main([*a]) == 0
        return out.getvalue()

    loaded = run("replay", str(f), "--cache", "off"), run("info", str(f))
    k = load_skeleton(f)
    assert k is not None
    assert streamed_session_info(k).windowAtLeast == session_info(load_session(f)).windowAtLeast == 312_658
    monkeypatch.setattr(cli_base, "STREAM_BYTES", 0)
    streamed = run("replay", str(f), "--cache", "off"), run("info", str(f))
    assert streamed == loaded and "313000 or more" in streamed[0]
