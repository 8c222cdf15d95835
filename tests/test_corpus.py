"""Corpus tuning (issue 20): the generator, corpus resolution, the overview, corpus sweeps on the
local pool and on a real Dask LocalCluster, DuckDB results and resume, and the CLI interface."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import main
from inspector.corpus import CorpusError, CorpusItem, aggregate, resolve_corpus, results, run_sweep
from inspector.corpus import sweep as corpus_sweep
from inspector.corpus.generate import generate_corpus, plan, session_bytes
from inspector.corpus.overview import overview, totals
from inspector.corpus.sweep import BASELINE, SweepPlan, worse_than_recorded
from inspector.importers import parse_any
from inspector.replay import ReplaySettings

GRID = {"keep_recent_tokens": [8000, 20000], "context_window": [60000, 200000]}
BASE = ReplaySettings(compaction="pi")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Eight generated sessions of the four agents, and one file that is no session at all."""
    d = tmp_path_factory.mktemp("corpus")
    generate_corpus(d, 8, seed=3)
    (d / "zz-broken.jsonl").write_bytes(b"this is not json\n")
    return d


# -- the generator ---------------------------------------------------------------------------------


def test_the_generator_is_deterministic_and_mixes_agents(tmp_path: Path, corpus: Path) -> None:
    again = generate_corpus(tmp_path, 8, seed=3)
    assert [p.read_bytes() for p in again] == [(corpus / p.name).read_bytes() for p in again]
    assert {a for a, _, _ in plan(40, seed=3)} == {"pi", "claude-code", "codex", "opencode"}
    assert plan(40, seed=3) != plan(40, seed=4)


@pytest.mark.parametrize("agent", ["pi", "claude-code", "codex", "opencode"])
def test_each_generated_format_loads_with_its_importer(agent: str) -> None:
    s = parse_any(session_bytes(agent, 30, seed=11), f"x-{agent}")
    assert s.format == agent
    assert [i for i in s.issues if i.severity != "info"] == []
    calls = [e for e in s.entries if getattr(getattr(e, "message", None), "role", "") == "assistant"]
    assert 30 <= len(calls) <= 45  # a turn may finish its last rounds


def test_a_long_generated_pi_session_compacts_as_pi_would() -> None:
    from inspector.corpus.overview import session_figures

    s = parse_any(session_bytes("pi", 420, seed=5), "long.jsonl")
    f = session_figures(s)
    assert f["compactions"] >= 1 and all(t > 200_000 - 16_384 for t in f["tokensAtCompaction"])
    assert f["peakContext"] <= 200_000 and f["peakSource"] == "recorded"


def test_a_codex_rollout_is_checked_against_the_window_it_records() -> None:
    from inspector.corpus.overview import session_figures

    data = session_bytes("codex", 30, seed=11)
    assert b'"model_context_window":272000' in data
    s = parse_any(data.replace(b'"model_context_window":272000', b'"model_context_window":20000'), "x-codex")
    own, given = session_figures(s), session_figures(s, 20_000)
    assert (own.pop("windowSource"), given.pop("windowSource")) == ("recorded", "given")
    assert own == given  # the window it records, not 200k
    assert session_figures(s)["findings"] != session_figures(s, 200_000)["findings"]


# -- resolution ------------------------------------------------------------------------------------


def test_a_corpus_is_files_folders_and_globs_deduplicated_and_sorted(corpus: Path) -> None:
    every = resolve_corpus([str(corpus)])
    assert len(every) == 9 and every == sorted(every)
    pis = resolve_corpus([str(corpus / "*-pi.jsonl"), str(corpus / "*-pi.jsonl")])
    assert pis and all(i.path.endswith("-pi.jsonl") for i in pis)
    one = sorted(corpus.glob("*-codex.jsonl"))[0]
    assert resolve_corpus([str(one), str(corpus)]) == every
    with pytest.raises(CorpusError, match="no such file"):
        resolve_corpus([str(corpus / "missing")])
    with pytest.raises(CorpusError, match="unknown agent"):
        resolve_corpus(["@nobody"])
    for long in (
        "a" * 300,
        str(corpus / ("a" * 300)),
    ):  # the file system refuses the name: said, no traceback
        with pytest.raises(CorpusError, match="cannot read it: File name too long"):
            resolve_corpus([long])


def test_a_session_reached_under_two_names_is_one_item(corpus: Path, tmp_path: Path) -> None:
    """A symbolic link to a session beside it, and the same folder spelled twice, counted it twice."""
    d = tmp_path / "c"
    d.mkdir()
    for f in corpus.iterdir():
        (d / f.name).write_bytes(f.read_bytes())
    every = resolve_corpus([str(d)])
    (d / "00-link.jsonl").symlink_to(sorted(d.glob("*-codex.jsonl"))[0])
    assert resolve_corpus([str(d)]) == every  # the file under its own name, not the link's
    assert resolve_corpus([f"{d}/../{d.name}", str(d)]) == every


# -- the overview ----------------------------------------------------------------------------------


def test_the_overview_has_a_row_per_session_and_reports_a_broken_one(corpus: Path) -> None:
    items = resolve_corpus([str(corpus)])
    rows = overview(items, workers=0)
    assert [r["path"] for r in rows] == [i.key for i in items]
    bad = [r for r in rows if r["error"]]
    assert [Path(r["path"]).name for r in bad] == ["zz-broken.jsonl"]
    good = [r for r in rows if not r["error"]]
    assert {r["agent"] for r in good} <= {"pi", "claude-code", "codex", "opencode"}
    for r in good:
        assert r["calls"] > 0 and r["peakContext"] > 0 and r["cacheHitRate"] is not None
    t = totals(rows)
    assert t["sessions"] == 9 and t["failed"] == 1 and t["calls"] == sum(r["calls"] for r in good)


# -- aggregation (pure) ----------------------------------------------------------------------------


def _row(session: str, setting: str, tokens: int, overflows: int = 0, **kw: Any) -> dict[str, Any]:
    m = {
        "steps": 1,
        "total_input_tokens": tokens,
        "cost_usd": tokens / 1e6,
        "peak_context": 1,
        "compactions": 0,
        "overflows": overflows,
        "rereads": 0,
        "tokens_pruned": 0,
        "summary_tokens": 0,
        **kw,
    }
    return {"session": session, "setting": setting, "values": {}, **m}


def test_aggregate_median_p90_total_and_the_sessions_made_worse() -> None:
    p = SweepPlan.make([CorpusItem(f"s{i}") for i in range(4)], BASE, {"keep_recent_tokens": [1000]})
    (k,), b = p.keys, p.baseline_key
    rows = [_row(f"s{i}", b, 100) for i in range(4)]
    rows += [_row("s0", k, 50), _row("s1", k, 100), _row("s2", k, 150), _row("s3", k, 90, overflows=1)]
    (a,) = aggregate(p, rows)
    assert a["settings"] == {"keep_recent_tokens": 1000} and a["sessions"] == 4
    assert a["inputTokens"] == {"median": 95.0, "p90": 135.0, "total": 390}
    assert a["overflows"] == 1 and a["worseThanRecorded"] == 2
    assert [w["session"] for w in a["worse"]] == ["s3", "s2"]  # an overflow first, then the largest increase
    assert worse_than_recorded(rows[-3], rows[1]) is None  # equal is not worse


def test_aggregate_skips_sessions_without_a_baseline() -> None:
    p = SweepPlan.make([CorpusItem("a"), CorpusItem("b")], BASE, {"keep_recent_tokens": [1000]})
    (k,) = p.keys
    (a,) = aggregate(p, [_row("a", p.baseline_key, 10), _row("a", k, 20), _row("b", k, 5)])
    assert a["sessions"] == 1 and a["inputTokens"]["total"] == 20


# -- sweeps: the local pool, Dask, failures --------------------------------------------------------


@pytest.fixture(scope="module")
def in_process(corpus: Path) -> Any:
    return run_sweep(resolve_corpus([str(corpus)]), BASE, GRID, workers=0)


def test_a_corpus_sweep_goes_on_past_a_failing_session(in_process: Any) -> None:
    r = in_process
    assert [Path(k).name for k, _ in r.failed] == [
        "zz-broken.jsonl"
    ] and "not a session: the format is not recognised" in r.failed[0][1]
    assert r.computed == len(r.rows) == 8 * (len(r.plan.points) + 1)
    agg = r.aggregate()
    assert [a["settings"] for a in agg] == [
        {"keep_recent_tokens": k, "context_window": w} for k in (8000, 20000) for w in (60000, 200000)
    ]
    assert all(a["sessions"] == 8 for a in agg)
    small = [a for a in agg if a["settings"]["context_window"] == 60000]
    big = [a for a in agg if a["settings"]["context_window"] == 200000]
    assert all(s["compactions"] > b["compactions"] for s, b in zip(small, big, strict=True))


def test_the_process_pool_sends_back_the_same_rows(corpus: Path, in_process: Any) -> None:
    r = run_sweep(resolve_corpus([str(corpus)]), BASE, GRID, workers=2)
    assert r.rows == in_process.rows and r.failed == in_process.failed


def test_a_dask_local_cluster_sends_back_the_same_rows(corpus: Path, in_process: Any) -> None:
    pytest.importorskip("distributed")
    r = run_sweep(
        resolve_corpus([str(corpus)]),
        BASE,
        GRID,
        engine="dask",
        workers=2,
        engine_options={"processes": False},
    )
    assert r.rows == in_process.rows and r.failed == in_process.failed


# -- results that last: DuckDB, resume -------------------------------------------------------------


class Stop(Exception):
    pass


def test_an_interrupted_sweep_resumes_without_recomputing(
    corpus: Path, tmp_path: Path, in_process: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("duckdb")
    items = resolve_corpus([str(corpus)])
    out = str(tmp_path / "results.duckdb")
    replays: list[int] = []
    real = corpus_sweep.replay
    monkeypatch.setattr(corpus_sweep, "replay", lambda *a, **k: replays.append(1) or real(*a, **k))

    def stop_halfway(done: int, total: int) -> None:
        if done >= total // 2:
            raise Stop

    with pytest.raises(Stop):
        run_sweep(items, BASE, GRID, workers=0, out=out, progress=stop_halfway)
    first = len(replays)
    kept = results(out)
    assert 0 < len(kept) < len(in_process.rows)
    replays.clear()
    r = run_sweep(items, BASE, GRID, workers=0, out=out)
    assert r.computed == len(in_process.rows) - len(kept)  # only what was missing
    assert len(replays) == r.computed  # one replay per pair: its metrics and its billed cost
    assert first + len(replays) == len(in_process.rows)  # no pair replayed twice
    assert r.rows == in_process.rows
    again = run_sweep(items, BASE, GRID, workers=0, out=out)
    assert again.computed == 0 and again.rows == in_process.rows  # the broken file alone is retried


def test_each_row_carries_the_billed_cost_of_its_own_replay(corpus: Path, in_process: Any) -> None:
    from inspector.cache import cache_replay
    from inspector.corpus import load_item
    from inspector.replay import replay

    item = resolve_corpus([str(corpus / "*-pi.jsonl")])[0]
    s = load_item(item)
    for row in (r for r in in_process.rows if r["session"] == item.key):
        c = cache_replay(replay(s, corpus_sweep.point_settings(in_process.plan.base, row["values"])))
        assert row["billed_cost_usd"] == round(c.billed_cost, 6)
        assert row["invalidations"] == len(c.invalidations)
        assert row["billed_cost_usd"] > 0
    for a in in_process.aggregate():
        cells = [r for r in in_process.rows if r["values"] == a["settings"]]
        assert a["billedSessions"] == 8
        assert a["billedCostUsd"]["total"] == pytest.approx(
            sum(r["billed_cost_usd"] for r in cells), abs=1e-3
        )
        assert a["invalidations"] == sum(r["invalidations"] for r in cells)
        assert 0 < a["cacheHitRate"] < 1


def test_a_results_file_without_billed_cost_gets_it(corpus: Path, tmp_path: Path, in_process: Any) -> None:
    duckdb = pytest.importorskip("duckdb")
    items = resolve_corpus([str(corpus)])
    out = str(tmp_path / "old.duckdb")
    run_sweep(items, BASE, GRID, workers=0, out=out)
    con = duckdb.connect(out)
    for col in ("billed_cost_usd", "cache_hit_rate", "invalidations"):
        con.execute(f"ALTER TABLE rows DROP COLUMN {col}")  # as issue 20's sweeps wrote it
    con.close()
    r = run_sweep(items, BASE, GRID, workers=0, out=out)
    assert r.computed == len(in_process.rows) and r.rows == in_process.rows


def test_results_is_a_dataframe_of_every_pair(corpus: Path, tmp_path: Path, in_process: Any) -> None:
    pytest.importorskip("duckdb")
    out = str(tmp_path / "r.duckdb")
    run_sweep(resolve_corpus([str(corpus)]), BASE, GRID, workers=0, out=out)
    df = results(out)
    assert len(df) == len(in_process.rows)
    assert {
        "session",
        "setting",
        "agent",
        "setting_values",
        "total_input_tokens",
        "overflows",
        "rereads",
    } <= set(df)
    assert (df["setting_values"] == json.dumps(BASELINE)).sum() == 8
    with pytest.raises(FileNotFoundError):
        results(str(tmp_path / "none.duckdb"))


# -- the command line ------------------------------------------------------------------------------


def test_sweep_on_a_corpus_prints_the_interface_json(corpus: Path) -> None:
    code, out, err = run(
        "sweep",
        str(corpus),
        "--compaction",
        "pi",
        "--grid",
        "keep_recent_tokens=8000,20000",
        "--workers",
        "0",
        "--json",
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["sessions"] == 9
    assert [set(f) for f in doc["failed"]] == [{"path", "error"}]
    assert len(doc["aggregate"]) == 2
    for a in doc["aggregate"]:
        assert {
            "settings",
            "sessions",
            "inputTokens",
            "compactions",
            "overflows",
            "rereads",
            "worseThanRecorded",
        } <= set(a)
        assert set(a["inputTokens"]) == {"median", "p90", "total"}
        assert set(a["billedCostUsd"]) == {"median", "p90", "total"} and a["billedCostUsd"]["total"] > 0
        assert isinstance(a["sessions"], int) and isinstance(a["worseThanRecorded"], int)
    assert "pairs" in err  # the progress bar, on stderr


def test_sweep_on_a_corpus_as_csv_and_text(corpus: Path) -> None:
    code, out, _ = run(
        "sweep",
        str(corpus / "*-pi.jsonl"),
        "--compaction",
        "pi",
        "--grid",
        "context_window=60000,200000",
        "--workers",
        "0",
        "--csv",
    )
    lines = out.strip().splitlines()
    assert code == 0 and lines[0].startswith("context_window,sessions,input_median") and len(lines) == 3
    assert lines[0].endswith(",billed_median,billed_p90,billed_total,cache_hit_rate,invalidations")
    code, out, _ = run(
        "sweep", str(corpus), "--compaction", "pi", "--grid", "context_window=60000", "--workers", "0"
    )
    assert code == 0 and "failed: " in out and "zz-broken.jsonl" in out and "billed $" in out


def test_corpus_prints_the_interface_json(corpus: Path) -> None:
    code, out, err = run("corpus", str(corpus), "--workers", "0", "--json")
    assert code == 0, err
    rows = json.loads(out)["sessions"]
    assert len(rows) == 9
    for r in rows:
        assert {"path", "agent", "calls", "peakContext", "compactions", "findings"} <= set(r)


def test_corpus_command_errors(corpus: Path) -> None:
    assert run("corpus", "/no/such/folder")[0] == 1
    assert run("sweep", "/no/such/folder", "--grid", "keep_recent_tokens=1")[0] == 1
    code, _, err = run("sweep", str(corpus), "--leaf", "x", "--grid", "keep_recent_tokens=1")
    assert code == 2 and "--leaf" in err
    code, _, err = run("sweep", str(corpus), "--compaction", "pi")
    assert code == 2 and "--grid" in err


def test_a_sweep_without_a_window_gives_each_session_its_own(tmp_path: Path) -> None:
    """A gpt-5.5 session whose context reaches 225k tokens overflows a 200k window, not its model's
    272k (pi's model list): unless the sweep gives a window, each session has its own."""
    from .support.builder import SessionBuilder

    b = SessionBuilder()
    b.user("x" * 900_000)  # 225,000 tokens by pi's estimate
    b.assistant("ok", provider="openai", model="gpt-5.5")
    (tmp_path / "gpt.jsonl").write_text(b.text())
    items = resolve_corpus([str(tmp_path)])
    base = ReplaySettings(compaction="never", context_window=200_000)
    grid = {"keep_recent_tokens": [20_000]}
    own = run_sweep(items, base, grid, workers=0, own_window=True)
    given = run_sweep(items, base, grid, workers=0)
    assert [r["overflows"] for r in own.rows] == [0, 0]
    assert [r["overflows"] for r in given.rows] == [1, 1]
    assert own.as_dict()["window"] == "session" and given.as_dict()["window"] == 200_000
    assert set(own.plan.keys).isdisjoint(given.plan.keys)  # a results file keeps them apart
    swept = run_sweep(items, base, {"context_window": [300_000]}, workers=0, own_window=True)
    assert swept.as_dict()["window"] == "grid" and [r["overflows"] for r in swept.rows] == [0, 0]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["sweep", str(tmp_path), "--grid", "keep_recent_tokens=20000", "--workers", "0"]) == 0
    assert "each session against its own window" in out.getvalue().splitlines()[0]
    # the overview says which window each session's findings were checked against
    assert [r["window"] for r in overview(items, workers=0)] == [272_000]
    assert [r["window"] for r in overview(items, workers=0, window=200_000)] == [200_000]


def test_the_overview_says_where_each_window_comes_from(tmp_path: Path) -> None:
    """A model outside pi's model list gets 200,000, assumed: the row says so (its peak may be past
    it), and the text table marks it; a known model's window, a recorded one, or --window, say theirs."""
    from .support.builder import SessionBuilder

    for name, model in (("known.jsonl", "gpt-5.5"), ("unknown.jsonl", "some-model-9")):
        b = SessionBuilder()
        b.user("x" * 4_000)
        b.assistant("ok", provider="openai", model=model)
        (tmp_path / name).write_text(b.text())
    (tmp_path / "codex.jsonl").write_bytes(session_bytes("codex", 3, seed=11))
    items = resolve_corpus([str(tmp_path)])
    rows = {Path(r["path"]).name: r for r in overview(items, workers=0)}
    assert {n: (r["window"], r["windowSource"]) for n, r in rows.items()} == {
        "codex.jsonl": (272_000, "recorded"),
        "known.jsonl": (272_000, "model"),
        "unknown.jsonl": (200_000, "assumed"),
    }
    assert {r["windowSource"] for r in overview(items, workers=0, window=100_000)} == {"given"}
    code, out, err = run("corpus", str(tmp_path), "--workers", "0")
    assert code == 0, err
    marked = [line.split()[0] for line in out.splitlines() if "200,000*" in line]
    assert marked == ["unknown.jsonl"] and out.splitlines()[-1].startswith("* window assumed")
    code, out, _ = run("corpus", str(tmp_path), "--workers", "0", "--window", "200000")
    assert "*" not in out


def test_the_overview_says_when_an_answered_call_held_more_than_its_window(tmp_path: Path) -> None:
    """A model outside pi's model list is checked against an assumed 200,000; a call the provider
    answered with 250,400 tokens in context proves its window is at least 251,000: the row says so
    (``windowAtLeast``), the text table marks it ``!``; a window that holds the call has none."""
    from .support.builder import SessionBuilder

    b = SessionBuilder()
    b.user("x" * 4_000)
    b.assistant("ok", provider="acme", model="some-model-9", usage=250_400)
    (tmp_path / "big.jsonl").write_text(b.text())
    items = resolve_corpus([str(tmp_path)])
    [row] = overview(items, workers=0)
    assert (row["window"], row["windowSource"], row["windowAtLeast"]) == (200_000, "assumed", 251_000)
    assert [r["windowAtLeast"] for r in overview(items, workers=0, window=300_000)] == [None]
    code, out, err = run("corpus", str(tmp_path), "--workers", "0")
    assert code == 0, err
    assert "200,000*!" in out.splitlines()[1] and out.splitlines()[-1].startswith("! a call the provider")
    code, out, _ = run("corpus", str(tmp_path), "--workers", "0", "--window", "300000")
    assert "!" not in out


def test_histograms_count_in_whole_numbers_and_say_what_they_count() -> None:
    """Four compactions drew ticks at 0.2 steps under "sessions"; counts are whole, and of compactions."""
    from inspector.corpus.figures import histogram

    few = histogram(
        [20_000, 85_000, 90_000, 160_000], "Tokens at compaction", "tokens before", y_title="compactions"
    )
    y = few.layout.yaxis
    assert y.title.text == "compactions" and y.dtick == 1 and y.tickformat == ",d"
    many = histogram(list(range(50)), "Peak context per session", "tokens")
    assert many.layout.yaxis.title.text == "sessions" and many.layout.yaxis.dtick is None


def test_a_results_file_that_cannot_be_opened_is_said_and_left_as_it_is(corpus: Path, tmp_path: Path) -> None:
    # A missing folder, and a file that is not a DuckDB database: DuckDB's error had been a
    # traceback; the file is never touched.
    text = tmp_path / "notes.txt"
    text.write_text("my notes\n")
    for out, why in (
        (tmp_path / "no" / "r.duckdb", "No such file or directory"),
        (text, "not a valid DuckDB"),
    ):
        err = io.StringIO()
        argv = [
            "sweep",
            str(corpus),
            "--grid",
            "keep_recent_tokens=8000",
            "--workers",
            "0",
            "--out",
            str(out),
        ]
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            with pytest.raises(SystemExit) as ex:
                main(argv)
        assert (
            ex.value.code == 1 and "cannot open the results file" in err.getvalue() and why in err.getvalue()
        )
    assert text.read_text() == "my notes\n"
    with pytest.raises(OSError, match="cannot open the results file"):
        results(text)
