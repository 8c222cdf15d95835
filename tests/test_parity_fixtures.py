"""Our engine against pi's own output for the fixtures (``tests/fixtures/oracle``, made by
``tools/pi-oracle``; ``runs.json`` says how), compared by ``support.pi_compare``.

These run on a fresh clone: the fixtures and pi's outputs are in the repository. The last test
runs pi's code live (where node and npm are) to show the committed outputs are what pi prints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector import load_session

from .support.paths import FIXTURES, PI_EXPECTED
from .support.pi_compare import PROGRAM_META, compare, strict_differences
from .support.pi_oracle import FIXTURE_RUNS, FixtureRun, Job, PiOracle

MAIN = [r for r in FIXTURE_RUNS if not r.branch]
BRANCH = [r for r in FIXTURE_RUNS if r.branch]
MIGRATED = [r for r in FIXTURE_RUNS if r.migrated]
# meta that differs by design: the program, the path given, and our ids (always the deterministic
# ones; pi gives v3 files their own ids whatever its id mode)
NOT_THE_SESSION = PROGRAM_META | {"sessionFile", "idMode"}


def _ids(runs: list[FixtureRun]) -> list[str]:
    return [r.expected for r in runs]


def test_the_fixture_runs_cover_every_expected_output() -> None:
    outputs = {
        p.relative_to(PI_EXPECTED).as_posix() for p in PI_EXPECTED.rglob("*.json") if p.name != "runs.json"
    }
    assert outputs == {r.expected for r in FIXTURE_RUNS}
    assert {r.migrated for r in MIGRATED} == {p.name for p in PI_EXPECTED.glob("*.migrated.jsonl")}
    assert len(MAIN) == 11 and len(BRANCH) == 5
    assert {r.option("--pi") for r in FIXTURE_RUNS} == {None, "0.58.3"}


@pytest.mark.parametrize("run", MAIN, ids=_ids(MAIN))
def test_main_mode_agrees_with_pi(run: FixtureRun) -> None:
    c = compare(run.want(), run.ours())
    assert c.checks > 150, c.report()
    assert c.ok, c.report()


@pytest.mark.parametrize("run", BRANCH, ids=_ids(BRANCH))
def test_branch_mode_agrees_with_pi(run: FixtureRun) -> None:
    c = compare(run.want(), run.ours())
    assert c.checks > 50, c.report()
    assert c.ok, c.report()


@pytest.mark.parametrize("run", FIXTURE_RUNS, ids=_ids(list(FIXTURE_RUNS)))
def test_every_field_pi_prints_agrees(run: FixtureRun) -> None:
    """Beyond the comparison: every field pi printed, the same, and nothing else."""
    diffs = strict_differences(run.want(), run.ours(), skip_meta=NOT_THE_SESSION)
    assert not diffs, "\n".join(diffs)


def test_a_wrong_answer_is_caught_by_the_comparison() -> None:
    run = next(r for r in MAIN if r.expected == "synth-tree.json")
    want, got = run.want(), run.ours()
    got["compaction"][0]["findCutPoint"]["firstKeptEntryIndex"] += 1
    c = compare(want, got)
    assert not c.ok and "BAD compaction[keep=2000].findCutPoint: 3/4" in c.report()
    diffs = strict_differences(want, got, skip_meta=NOT_THE_SESSION)
    assert [d.split(":")[0] for d in diffs] == ["compaction[0].findCutPoint.firstKeptEntryIndex"]


def test_the_comparison_tells_false_from_0_and_a_missing_message() -> None:
    run = next(r for r in MAIN if r.expected == "synth-tree.json")
    want, got = run.want(), run.ours()
    entry = next(e for e in got["entries"] if e.get("isError") is False)
    entry["isError"] = 0
    assert "BAD entries" in compare(want, got).report()
    got = run.ours()
    got["context"]["messages"].pop()
    assert "BAD context.messages" in compare(want, got).report()


@pytest.mark.parametrize("run", MIGRATED, ids=_ids(MIGRATED))
def test_migration_equals_pis_rewritten_file(run: FixtureRun) -> None:
    """v1/v2 files: our in-memory migration gives exactly the entries pi wrote back (same ids
    as pi's --deterministic-ids run, same fields and values)."""
    from inspector.export import session_lines

    assert run.migrated
    s = load_session(run.session_path)
    ours = [json.loads(x) for x in session_lines(s.header, s.entries)]
    pis = [json.loads(x) for x in (PI_EXPECTED / run.migrated).read_text().splitlines() if x.strip()]
    assert ours == pis


@pytest.mark.oracle
def test_the_harness_reproduces_every_committed_output(pi_oracle: PiOracle, tmp_path: Path) -> None:
    """pi's code, run now through tools/pi-oracle, prints exactly the committed expected outputs
    (the file name and node's version aside) and rewrites migrated files byte for byte."""
    jobs = []
    for k, run in enumerate(FIXTURE_RUNS):
        args = list(run.harness_args())
        if run.migrated:
            args[:0] = ["--dump-migrated", str(tmp_path / f"{k}.migrated.jsonl")]
        jobs.append(Job(tuple(args), tmp_path / f"{k}.json"))
    results = pi_oracle.run_jobs(jobs, tmp_path)
    problems = []
    for k, (run, res) in enumerate(zip(FIXTURE_RUNS, results, strict=True)):
        if "error" in res:
            problems.append(f"{run.expected}: the harness failed: {res['error'][-800:]}")
            continue
        diffs = strict_differences(
            run.want(), json.loads(res["json"]), skip_meta=frozenset({"node", "note", "sessionFile"})
        )
        problems += [f"{run.expected}: {d}" for d in diffs]
        if (
            run.migrated
            and (tmp_path / f"{k}.migrated.jsonl").read_bytes() != (PI_EXPECTED / run.migrated).read_bytes()
        ):
            problems.append(f"{run.migrated}: pi's rewritten file differs")
    assert not problems, "\n".join(problems)
    assert all(r.session_path.parent == FIXTURES for r in FIXTURE_RUNS)
