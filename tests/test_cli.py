"""The command line as one package: the command table, shared options declared once, one
``fail`` with the documented exit codes (0 / 1 / 2), ``--help`` everywhere, and nothing in the
engine importing the CLI."""

from __future__ import annotations

import argparse
import ast
import contextlib
import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.cli import COMMANDS, fail, main
from inspector.cli.base import EXIT_FAILED, EXIT_USAGE
from inspector.replay_report import replay_table

from .support.paths import REPO

SAMPLE = str(REPO / "sample_sessions" / "coding-session.jsonl")
NAMES = [
    "info",
    "oracle-json",
    "compact",
    "prune",
    "replay",
    "sweep",
    "summarize",
    "doctor",
    "check",
    "retention",
    "export",
    "sessions",
    "corpus",
    "learn",
]


def run(*argv: str) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of one command run in process, as the shell would see them."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
            if isinstance(e.code, str):
                err.write(e.code)
    return code, out.getvalue(), err.getvalue()


def command_parser(name: str) -> argparse.ArgumentParser:
    (cmd,) = [c for c in COMMANDS if c.name == name]
    p = argparse.ArgumentParser(prog=f"inspector {name}")
    cmd.add_arguments(p)
    return p


# -- the table --------------------------------------------------------------------------------


def test_the_command_table_lists_every_command() -> None:
    assert [c.name for c in COMMANDS] == NAMES
    code, out, _ = run("--help")
    assert code == 0
    for name in NAMES:
        assert f"    {name}" in out
    # every command module of the package is in the table, once
    modules = sorted(
        p.stem
        for p in (REPO / "inspector" / "cli").glob("*.py")
        if re.search(r"^COMMAND = Command\(", p.read_text(encoding="utf-8"), re.M)
    )
    assert sorted(c.run.__module__.rsplit(".", 1)[1] for c in COMMANDS) == modules
    assert len(modules) == len(NAMES)


def test_no_command_prints_the_help_and_exits_2() -> None:
    code, out, _ = run()
    assert code == EXIT_USAGE and out.startswith("usage: inspector") and "Exit status" in out


@pytest.mark.parametrize("name", NAMES)
def test_each_command_has_a_help(name: str) -> None:
    code, out, err = run(name, "--help")
    assert code == 0 and err == ""
    assert out.startswith(f"usage: inspector {name}")
    (cmd,) = [c for c in COMMANDS if c.name == name]
    assert (cmd.description or cmd.help).split()[0] in out


def test_python_dash_m_inspector_runs_the_same_main() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "inspector", "--help"], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert r.returncode == 0 and all(n in r.stdout for n in NAMES)


# -- fail and the exit codes ------------------------------------------------------------------


def test_fail_prints_inspector_message_to_stderr_and_exits_with_its_code(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as e:
        fail("no such thing \x1b[2J here", EXIT_USAGE)
    assert e.value.code == 2 and str(e.value) == "no such thing \x1b[2J here"
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == "inspector: no such thing \\u001b[2J here\n"
    with pytest.raises(SystemExit) as e:
        fail("cannot read it", EXIT_FAILED)
    assert e.value.code == 1 and capsys.readouterr().err == "inspector: cannot read it\n"


#: one run of every command that takes --leaf (``{o}``: an output path)
LEAF_RUNS = {
    "info": ["info", SAMPLE],
    "oracle-json": ["oracle-json", SAMPLE],
    "compact": ["compact", SAMPLE],
    "prune": ["prune", SAMPLE, "--strategy", "opencode"],
    "replay": ["replay", SAMPLE],
    "sweep": ["sweep", SAMPLE, "--grid", "keep_recent_tokens=1000,2000"],
    "summarize": ["summarize", SAMPLE],
    "doctor": ["doctor", SAMPLE],
    "check": ["check", SAMPLE],
    "retention": ["retention", SAMPLE],
    "export": ["export", "session", SAMPLE, "-o", "{o}"],
}
MORE_LEAF_RUNS = [
    ["oracle-json", "--branch", SAMPLE, "@3", "@9"],
    ["sweep", SAMPLE, "--agents"],
    ["export", "session", SAMPLE, "--compact", "-o", "{o}"],
    ["export", "replay", SAMPLE, "-o", "{o}"],
    ["export", "doctor", SAMPLE, "-o", "{o}"],
    ["info", SAMPLE, "--json"],
    ["replay", SAMPLE, "--csv"],
]


def test_every_command_that_takes_leaf_is_checked_here() -> None:
    assert {n for n in NAMES if "--leaf" in command_parser(n).format_help()} == set(LEAF_RUNS)


@pytest.mark.parametrize("argv", [*LEAF_RUNS.values(), *MORE_LEAF_RUNS], ids=lambda a: " ".join(a[:2]))
@pytest.mark.parametrize(
    ("leaf", "message"),
    [
        ("nope", "no entry with id 'nope'"),
        ("@100000", "entry index 100000 out of range"),
        ("@-1", "entry index -1 out of range 0..193"),  # had been "no entry with id '@-1'"
    ],
)
def test_a_bad_leaf_exits_2_from_every_command(
    tmp_path: Path, argv: list[str], leaf: str, message: str
) -> None:
    out = tmp_path / "out.json"
    code, stdout, err = run(*[a.replace("{o}", str(out)) for a in argv], "--leaf", leaf)
    assert code == EXIT_USAGE, err
    assert err.startswith(f"inspector: {message}") and err.count("\n") == 1
    assert stdout == "" and not out.exists()


def test_a_good_leaf_is_accepted_by_every_command(tmp_path: Path) -> None:
    for argv in LEAF_RUNS.values():
        code, _, err = run(*[a.replace("{o}", str(tmp_path / "o.json")) for a in argv], "--leaf", "@20")
        assert code == 0, (argv, err)


@pytest.mark.parametrize(
    "argv",
    [
        ["prune", SAMPLE, "--strategy", "opencode", "--set", "nope=1"],
        ["replay", SAMPLE, "--strategy", "opencode", "--set", "nope=1"],
        ["replay", SAMPLE, "--set", "prune_protect=1"],
        ["sweep", SAMPLE, "--grid", "bogus"],
        ["sweep", SAMPLE, "--agents", "pi,nope"],
        ["oracle-json", SAMPLE, "FROM"],
    ],
)
def test_bad_arguments_exit_2_with_one_line(argv: list[str]) -> None:
    code, stdout, err = run(*argv)
    assert code == EXIT_USAGE and stdout == ""
    assert err.startswith("inspector: ") and "Traceback" not in err
    assert err.splitlines()[0].count('"') == 0  # a KeyError's message, not its repr


@pytest.mark.parametrize(
    "argv",
    [
        ["replay", SAMPLE, "--strategy", "bogus"],
        ["replay", SAMPLE, "--summarizer", "bogus"],
        ["info", SAMPLE, "--counters", "pi,bogus"],
        ["prune", SAMPLE, "--strategy", "opencode", "--counter", "usage"],
        ["compact", SAMPLE, "--no-such-flag"],
        ["replay", SAMPLE, "--window", "500"],
        ["doctor", SAMPLE, "--window", "0"],
        ["compact", SAMPLE, "--keep-recent-tokens", "-5"],  # had been a traceback
        ["summarize", SAMPLE, "--reserve", "-5"],
        ["export", "session", SAMPLE, "--compact", "--reserve", "-3", "-o", "unused.jsonl"],
        ["oracle-json", SAMPLE, "--keep", "2000,-5"],
        ["corpus", SAMPLE, "--engine", "dask", "--workers", "-1"],  # a cluster of -1 workers: waited forever
        ["sweep", SAMPLE, "--grid", "prune_protect=1,2", "--workers", "-2"],
        ["prune", SAMPLE, "--strategy", "opencode", "--limit", "-1"],  # had shown all rows but the last
        ["sessions", "--limit", "-1"],  # had listed all sessions but the oldest
        ["doctor", SAMPLE, "--giant-tokens", "-1"],
        ["info", SAMPLE, "--leaf", ""],  # pi's leaf to info, compact and oracle-json; no entry to replay
        ["replay", SAMPLE, "--leaf", " "],
        ["summarize", SAMPLE, "--compression-ratio", "nan"],  # had been a traceback
        ["summarize", SAMPLE, "--recent-boost", "-3"],
        ["summarize", SAMPLE, "--timeout", "nan"],
        ["summarize", SAMPLE, "--max-retries", "-1"],
    ],
)
def test_values_argparse_refuses_exit_2(argv: list[str]) -> None:
    code, stdout, err = run(*argv)
    assert code == EXIT_USAGE and stdout == ""
    assert "error: argument" in err or "error: unrecognized arguments" in err


def test_slice_settings_refused_together_are_one_usage_line() -> None:
    code, stdout, err = run("summarize", SAMPLE, "--overlap-tokens", "19999")
    assert code == EXIT_USAGE and stdout == ""
    assert (
        err.startswith("inspector: the overlap is 0 or more and at most half a slice")
        and err.count("\n") == 1
    )


@pytest.mark.parametrize(
    ("grid", "said"),
    [
        ("context_window=0,500", "grid context_window=0: Input should be greater than or equal to 1000"),
        ("keep_recent_tokens=-5", "grid keep_recent_tokens=-5: Input should be greater than or equal to 0"),
        ("prune_protect=abc", "grid prune_protect=abc: Input should be a valid integer"),
        ("codex_fraction=2", "grid codex_fraction=2: Input should be less than or equal to 1.5"),
        ("window=5", "grid window: no such setting (the replay's: context_window, keep_recent_tokens"),
        ("prune_protect=1:0:1", "grid 'prune_protect=1:0:1': no values (STOP is below START)"),
        ("prune_protect=0:100000000:1", "grid 'prune_protect=0:100000000:1': 100,000,001 values; a sweep"),
    ],
)
def test_a_grid_value_no_replay_takes_is_refused_in_one_line(grid: str, said: str, tmp_path: Path) -> None:
    """Grid values went into the settings unchecked: a 0-token window was swept (80 'overflows'), a
    key that is no setting ('window') replayed every cell the same, and a value a model refused
    printed pydantic's four-line report, a range with no value printed an empty table, and one of
    10^8 values ran for hours. One session, and a corpus (refused before any session)."""
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "s.jsonl").write_bytes(Path(SAMPLE).read_bytes())
    for target in (SAMPLE, str(corpus)):
        code, stdout, err = run("sweep", target, "--grid", grid, "--strategy", "opencode", "--workers", "0")
        assert code == EXIT_USAGE and stdout == "", err
        assert err.startswith("inspector: " + said) and err.count("\n") == 1, err


def test_a_grid_of_more_points_than_a_sweep_takes_is_refused_before_it_starts() -> None:
    from inspector import load_session
    from inspector.replay import ReplaySettings, sweep
    from inspector.replay.sweep import MAX_CELLS

    grid = {"keep_recent_tokens": list(range(MAX_CELLS // 10 + 1)), "reserve_tokens": list(range(10))}
    with pytest.raises(ValueError, match=r"^the grid has 10,010 points \(each one a replay\)"):
        sweep(load_session(SAMPLE), ReplaySettings(compaction="pi"), grid)


def test_a_strategys_setting_is_checked_against_its_cells_strategy_in_any_grid_order() -> None:
    from inspector import load_session
    from inspector.replay import ReplaySettings, sweep

    s, base = load_session(SAMPLE), ReplaySettings()
    cells = sweep(s, base, {"prune_protect": [1000], "strategy": ["opencode"]})
    assert (
        cells[0].settings.strategy == "opencode"
        and cells[0].settings.strategy_dict()["prune_protect"] == 1000
    )
    assert cells[0].metrics == sweep(s, base, {"strategy": ["opencode"], "prune_protect": [1000]})[0].metrics


def test_a_setting_a_command_passes_on_unchecked_is_one_line_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The net under every command: a pydantic model that refuses a value the arguments let through."""
    from pydantic import BaseModel, Field

    import inspector.cli.compact as compact

    class Strict(BaseModel):
        keepRecentTokens: int = Field(ge=10**9)
        reserveTokens: int = 0

    monkeypatch.setattr(compact, "CompactionSettings", Strict)
    code, stdout, err = run("compact", SAMPLE)
    assert code == EXIT_USAGE and stdout == ""
    assert err == "inspector: keepRecentTokens: Input should be greater than or equal to 1000000000\n"


def test_an_unreadable_session_or_a_refused_output_exits_1(tmp_path: Path) -> None:
    for cmd in ("info", "replay", "doctor", "summarize"):
        code, _, err = run(cmd, str(tmp_path / "missing.jsonl"))
        assert code == EXIT_FAILED and err.startswith("inspector: cannot read"), cmd
    code, _, err = run("export", "session", SAMPLE, "-o", SAMPLE)
    assert code == EXIT_FAILED and err.startswith("inspector: refusing to write")
    # the sample's compaction entry as the leaf: pi does not compact a branch that ends in one
    code, _, err = run(
        "export", "session", SAMPLE, "--compact", "--leaf", "c0000094", "-o", str(tmp_path / "c.jsonl")
    )
    assert code == EXIT_FAILED and "pi would not compact here" in err and not (tmp_path / "c.jsonl").exists()


# -- output -----------------------------------------------------------------------------------


def test_info_says_what_each_compaction_keeps() -> None:
    code, out, _ = run("info", SAMPLE)
    assert code == 0 and "entry 147: keeps from entry 122," in out
    code, out, _ = run("info", str(REPO / "sample_sessions" / "codex-session.jsonl"))
    assert code == 0 and "entry 17: keeps nothing verbatim, tokensBefore" in out and "None" not in out


def test_info_says_why_the_recorded_context_is_far_above_the_counted_one() -> None:
    note = "(the recorded usage also counts what the file does not hold: the system prompt, the tools"
    code, out, _ = run("info", str(REPO / "sample_sessions" / "claude-code-session.jsonl"))
    lines = out.splitlines()
    footer = next(i for i, x in enumerate(lines) if "by recorded usage" in x)
    recorded = int(lines[footer].split()[0].replace(",", ""))
    counted = max(int(x.split()[0].replace(",", "")) for x in lines[footer - 2 : footer])
    assert code == 0 and recorded > 1.5 * counted and lines[footer + 1].strip().startswith(note)
    code, out, _ = run("info", SAMPLE)  # a long pi session: the two are close, nothing to explain
    assert code == 0 and note not in out
    # the replay's totals say it too, as recorded only (a what-if's totals differ for its own reasons)
    cc = str(REPO / "sample_sessions" / "claude-code-session.jsonl")
    assert note in run("replay", cc, "--cache", "off")[1]
    assert note not in run("replay", cc, "--cache", "off", "--compaction", "pi", "--window", "30000")[1]
    assert note not in run("replay", SAMPLE, "--cache", "off")[1]


def test_replay_csv_is_the_reports_table_with_messages_one_line_per_call() -> None:
    from inspector import load_session
    from inspector.replay import ReplaySettings, replay

    code, out, _ = run("replay", SAMPLE, "--csv")
    assert code == 0 and "\\u000d" not in out and "\r" not in out
    rows = list(csv.reader(io.StringIO(out)))
    header, expected = replay_table(replay(load_session(SAMPLE), ReplaySettings()), messages=True)
    assert rows[0] == header and header[6] == "messages"
    assert rows[1:] == [[str(v) if v is not None else "" for v in r] for r in expected]


# -- the shape --------------------------------------------------------------------------------

SHARED_FLAGS = [
    "--leaf",
    "--json",
    "--csv",
    "--window",
    "--reserve",
    "--keep-recent-tokens",
    "--pi-version",
    "--counter",
    "--counters",
    "--strategy",
    "--set",
    "--compaction",
    "--summarizer",
    "--model",
    "--base-url",
    "--send-secrets",
    "--keep-secrets",
    "--output",
]


def test_each_option_is_declared_once() -> None:
    source = "".join(p.read_text(encoding="utf-8") for p in (REPO / "inspector" / "cli").glob("*.py"))
    for flag in SHARED_FLAGS:
        assert source.count(f'"{flag}"') == 1, flag
    # and the flags are still there, where they were
    assert "--leaf" in command_parser("doctor").format_help()
    assert "--keep-secrets" in command_parser("sessions").format_help()
    assert "--send-secrets" in command_parser("summarize").format_help()


def _imported_modules(path: Path) -> set[str]:
    package = ".".join(path.relative_to(REPO).with_suffix("").parts[:-1])
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            mod = ".".join([*base, *([node.module] if node.module else [])])
            found.add(mod)
            found.update(f"{mod}.{a.name}" for a in node.names)
    return found


def test_nothing_in_the_engine_imports_the_cli() -> None:
    engine = [
        p
        for p in (REPO / "inspector").rglob("*.py")
        if "cli" not in p.relative_to(REPO / "inspector").parts and p.name != "__main__.py"
    ]
    assert len(engine) > 40
    offenders = {
        str(p.relative_to(REPO))
        for p in engine
        if any(m == "inspector.cli" or m.startswith("inspector.cli.") for m in _imported_modules(p))
    }
    assert offenders == set()
    # the helper sees a relative import of the CLI (so the check above can fail)
    assert "inspector.cli.base" in _imported_modules(REPO / "inspector" / "cli" / "info.py")


def test_the_feature_packages_have_no_cli_modules() -> None:
    stray = [
        p.relative_to(REPO)
        for p in (REPO / "inspector").rglob("*.py")
        if (p.name == "cli.py" or p.name.endswith("_cli.py")) and p.parent.name != "cli"
    ]
    assert stray == []


def test_replay_says_when_the_provider_answered_more_than_the_window(tmp_path: Path) -> None:
    """Overflows counted against a window smaller than a context the provider answered are the
    window's, not the session's: the text says so beside the count (not with a window that holds it)."""
    from .support.builder import SessionBuilder

    b = SessionBuilder()
    b.user("go " + "x" * 1_400_000)  # ~350k tokens by pi's estimate
    b.assistant("ok", usage=312_658)
    f = tmp_path / "s.jsonl"
    f.write_text(b.text())

    def overflows(*extra: str) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["replay", str(f), "--cache", "off", *extra]) == 0
        return next(line for line in out.getvalue().splitlines() if "overflows" in line)

    said = overflows()
    assert said.split()[1] == "1"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["replay", str(f), "--cache", "off"]) == 0
    line = next(x for x in out.getvalue().splitlines() if "): overflow" in x)
    assert line.endswith("overflow 312,658 tokens, as the provider counts the prompt, > window 200,000")
    assert "the provider answered a 312,658-token context at entry" in said and "give --window" in said
    assert overflows("--window", "400000").split() == ["overflows", "0"]
    # pi's estimate is still over (~350k), but the provider counted the request at 312,658: it fits
    assert overflows("--window", "320000").split() == ["overflows", "0"]
    assert overflows("--window", "312000").split()[:2] == ["overflows", "1"]


def test_replay_names_the_window_a_codex_session_records() -> None:
    codex = str(REPO / "sample_sessions" / "codex-session.jsonl")

    def first_line(*extra: str) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["replay", codex, "--cache", "off", *extra]) == 0
        return out.getvalue().splitlines()[0]

    assert "window 272,000 (the one the session records), counter" in first_line()  # the default
    assert "window 272,000 (the one the session records), counter" in first_line("--window", "272000")
    assert "window 200,000 (the session records 272,000: --window 272000)," in first_line(
        "--window", "200000"
    )
    pi = str(REPO / "sample_sessions" / "coding-session.jsonl")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["replay", pi, "--cache", "off"]) == 0
    # pi records no window, but its model: claude-sonnet-4-5's in pi's model list
    assert "window 200,000 (claude-sonnet-4-5's window in pi's model list), counter" in out.getvalue()


def test_replay_names_the_window_of_the_sessions_model(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """No window in the file: the model's in pi's model list, or the default, said to be assumed."""
    from .support.builder import SessionBuilder

    def first_line(model: str, *extra: str) -> str:
        b = SessionBuilder()
        b.user("go")
        b.assistant("ok", provider="openai", model=model)
        f = tmp_path / f"{model}.jsonl"
        f.write_text(b.text())
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["replay", str(f), "--cache", "off", *extra]) == 0
        return out.getvalue().splitlines()[0]

    assert "window 272,000 (gpt-5.5's window in pi's model list), counter" in first_line("gpt-5.5")
    assert "window 200,000 (gpt-5.5 has 272,000 in pi's model list: --window 272000), counter" in first_line(
        "gpt-5.5", "--window", "200000"
    )
    assert "window 200,000 (assumed: gpt-9 is not in pi's model list (pi-ai 0.73.1)), counter" in first_line(
        "gpt-9"
    )
    assert "window 128,000, counter" in first_line("gpt-9", "--window", "128000")


def test_the_window_a_codex_session_records_is_every_commands_default(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A Codex rollout's own window (272,000 here) is the default of replay, doctor, prune and the
    corpus overview: an overflow against 200k the session never had is not reported."""
    import json

    codex = str(REPO / "sample_sessions" / "codex-session.jsonl")
    got = json.loads(run("replay", codex, "--json", "--cache", "off")[1])
    assert got["settings"]["context_window"] == 272000
    small = json.loads(run("replay", codex, "--json", "--cache", "off", "--window", "50000")[1])
    assert small["settings"]["context_window"] == 50000
    doctor = json.loads(run("doctor", codex, "--json")[1])
    assert doctor == json.loads(run("doctor", codex, "--json", "--window", "272000")[1])
    assert doctor != json.loads(run("doctor", codex, "--json", "--window", "20000")[1])
    # the exported doctor report is the same report (it had been checked against 200,000)
    for window in ([], ["--window", "20000"]):
        run("export", "doctor", codex, "-o", str(tmp_path / "d.json"), *window)
        exported = json.loads((tmp_path / "d.json").read_text())
        assert exported == json.loads(run("doctor", codex, "--json", *window)[1])


def test_a_replay_without_strategy_is_as_recorded_for_every_agent() -> None:
    """The CLI's default pruning is the app's: as recorded. OpenCode's own pruning stands in the
    replay of its export (no overflow it never had); pi's file records none (strategy none)."""
    import json

    oc = str(REPO / "sample_sessions" / "opencode-session.json")
    code, out, _ = run("replay", oc, "--json", "--cache", "off")
    explicit = json.loads(run("replay", oc, "--json", "--cache", "off", "--strategy", "recorded")[1])
    got = json.loads(out)
    assert code == 0 and got["settings"]["strategy"] == "recorded" and got["metrics"] == explicit["metrics"]
    assert got["metrics"]["tokens_pruned"] > 0
    got = json.loads(run("replay", SAMPLE, "--json", "--cache", "off")[1])
    assert got["settings"]["strategy"] == "none"
    code, _, err = run("replay", oc, "--set", "prune_protect=1")
    assert code == EXIT_USAGE and "--set needs a --strategy" in err
    out = run("replay", oc, "--cache", "off")[1]
    assert "compaction: As recorded, pruning: As recorded (the agent's own pruning)," in out.splitlines()[0]


def test_info_counts_calibrated_with_the_sessions_own_fit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`info --counters calibrated` had printed tiktoken's plain count (an unfitted counter); it is
    tiktoken × the ratio `check` fits on the session, loaded or (a large file) not streamed."""
    from inspector.calibration import session_calibration
    from inspector.importers import load_any
    from inspector.info import session_info

    src = REPO / "sample_sessions" / "coding-session.jsonl"
    info = session_info(load_any(src), counters=("tiktoken", "calibrated"))
    ratio = session_calibration(load_any(src)).ratio
    assert 0.85 < ratio < 0.95
    assert info.contextTokens["calibrated"] == pytest.approx(
        info.contextTokens["tiktoken"] * ratio, rel=0.002
    )
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["info", str(src), "--counters", "tiktoken,calibrated", "--json"]) == 0
    said = json.loads(out.getvalue())["contextTokens"]
    import inspector.cli.base as cli_base

    monkeypatch.setattr(cli_base, "STREAM_BYTES", 0)  # a "large" file: calibrated still loads it
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["info", str(src), "--counters", "tiktoken,calibrated", "--json"]) == 0
    assert json.loads(out.getvalue())["contextTokens"] == said == info.contextTokens


def test_a_corpus_sweep_refuses_cache_options_it_cannot_honour(tmp_path: Path) -> None:
    """--cache off and --cache-retention had been ignored by a corpus sweep (billed cost printed
    all the same, with auto retention): they are refused there, and still set a one-session sweep."""
    samples = REPO / "sample_sessions"
    corpus = [str(samples / "coding-session.jsonl"), str(samples / "small-tutorial.jsonl")]
    grid = ["--grid", "keep_recent_tokens=10000,20000", "--workers", "0"]
    for extra in (["--cache", "off"], ["--cache-retention", "none"]):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as e:
            main(["sweep", *corpus, *grid, *extra])
        assert e.value.code == EXIT_USAGE and "a corpus sweep prices every replay both ways" in err.getvalue()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["sweep", corpus[0], "--grid", "keep_recent_tokens=10000,20000", "--cache", "off"]) == 0
    assert "billedCostUsd" not in out.getvalue()
