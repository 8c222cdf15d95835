"""pi's own code, run by the project's harness (``tools/pi-oracle``), and the fixture runs it made.

``install(dest)`` runs ``npm ci`` of the harness's ``package.json``/``package-lock.json`` in
``dest`` (a temporary folder: nothing is written into the repository or ``../shared``) and returns
a ``PiOracle``; the harness script itself is run from the repository with ``--modules``. An
install made before can be reused with ``$INSPECTOR_PI_MODULES`` (a ``node_modules`` folder made
by ``npm ci`` from the same lock), and ``tools/pi-oracle/node_modules`` is used when it is there;
either only when it holds the pinned pi versions. Without node or npm, or when the install fails,
``Unavailable`` says why.

``FIXTURE_RUNS`` lists how each expected output in ``tests/fixtures/oracle/`` was made
(``tests/fixtures/oracle/runs.json``, which ``tools/pi-oracle/regenerate.mjs`` reads too).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .paths import FIXTURES, PI_EXPECTED, PI_ORACLE_SRC

SCRIPT = PI_ORACLE_SRC / "pi-oracle.mjs"


class Unavailable(Exception):
    """pi's code cannot run here; the message says why (tests skip with it)."""


def pinned_versions() -> dict[str, str]:
    """Install folder (``node_modules/<folder>``) → version, for each pi package the lock pins."""
    lock = json.loads((PI_ORACLE_SRC / "package-lock.json").read_text(encoding="utf-8"))
    deps = lock["packages"][""]["dependencies"]
    return {folder: lock["packages"][f"node_modules/{folder}"]["version"] for folder in deps}


def matches_lock(modules: Path) -> bool:
    """``modules`` holds every pinned pi package at its pinned version (their own dependencies
    are not checked: ``npm ci`` installs them from the same lock)."""
    for folder, version in pinned_versions().items():
        pkg = modules / folder / "package.json"
        if not pkg.is_file() or json.loads(pkg.read_text(encoding="utf-8")).get("version") != version:
            return False
    return True


@dataclass(frozen=True)
class Job:
    """One run of the harness: its arguments and where its JSON goes."""

    args: tuple[str, ...]
    out: Path

    def result(self) -> dict[str, Any]:
        """``{"json": text}`` for a report, ``{"error": text}`` for a run that failed."""
        if self.out.is_file():
            return {"json": self.out.read_text(encoding="utf-8")}
        err = Path(f"{self.out}.err")
        return {
            "error": err.read_text(encoding="utf-8")
            if err.is_file()
            else "the harness stopped before this run"
        }


@dataclass(frozen=True)
class PiOracle:
    """The harness with a ``node_modules`` folder holding the pinned pi packages."""

    modules: Path

    def run_text(self, *args: str) -> str:
        """The JSON text pi's code prints for these arguments (see ``pi-oracle.mjs --help``)."""
        with tempfile.TemporaryDirectory(prefix="pi-oracle-run-") as tmp:
            out = Path(tmp) / "out.json"
            r = subprocess.run(
                ["node", str(SCRIPT), "--modules", str(self.modules), "--out", str(out), *args],
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert r.returncode == 0, f"pi-oracle {' '.join(args)} failed:\n{r.stderr[-3000:]}"
            return out.read_text(encoding="utf-8")

    def run(self, *args: str) -> dict[str, Any]:
        return json.loads(self.run_text(*args))

    def run_jobs(self, jobs: Sequence[Job], work: Path, processes: int | None = None) -> list[dict[str, Any]]:
        """Every job, shared among a few Node processes (pi is imported once per process); the
        results in the order of ``jobs`` (``Job.result``)."""
        n = max(1, min(processes or os.cpu_count() or 1, 4, len(jobs)))
        procs = []
        for k in range(n):
            batch = work / f"jobs-{k}.json"
            batch.write_text(
                json.dumps([{"args": list(j.args), "out": str(j.out)} for j in jobs[k::n]]), encoding="utf-8"
            )
            log = open(work / f"jobs-{k}.log", "w+", encoding="utf-8")  # closed below
            procs.append(
                (
                    subprocess.Popen(
                        ["node", str(SCRIPT), "--modules", str(self.modules), "--batch", str(batch)],
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        cwd=work,
                    ),
                    log,
                )
            )
        for p, log in procs:
            try:
                p.wait(timeout=900)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            log.close()
        return [j.result() for j in jobs]


def install(dest: Path) -> PiOracle:
    """The pinned pi packages, ready to run: reused when an install matching the lock exists,
    else ``npm ci`` into ``dest``. Raises ``Unavailable`` with the reason."""
    if not shutil.which("node"):
        raise Unavailable("node is not installed: this test runs pi's own code (tools/pi-oracle)")
    for pre in (os.environ.get("INSPECTOR_PI_MODULES"), str(PI_ORACLE_SRC / "node_modules")):
        if pre and matches_lock(Path(pre)):
            return PiOracle(Path(pre))
    if not shutil.which("npm"):
        raise Unavailable("npm is not installed: it installs pi's pinned package for tools/pi-oracle")
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy(PI_ORACLE_SRC / name, dest / name)
    try:
        r = subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=dest,
            capture_output=True,
            text=True,
            timeout=600,
        )
    except subprocess.TimeoutExpired as e:
        raise Unavailable("npm ci of tools/pi-oracle took over 10 minutes") from e
    if r.returncode != 0:
        raise Unavailable(
            "npm ci of tools/pi-oracle failed: " + ((r.stderr or "") + (r.stdout or "")).strip()[-600:]
        )
    if not matches_lock(dest / "node_modules"):
        raise Unavailable("npm ci of tools/pi-oracle did not install the pinned pi packages")
    return PiOracle(dest / "node_modules")


# ---------------------------------------------------------------------------------- fixture runs


@dataclass(frozen=True)
class FixtureRun:
    """How one expected output in ``tests/fixtures/oracle`` was made (a line of ``runs.json``)."""

    expected: str  # relative to tests/fixtures/oracle
    session: str  # relative to tests/fixtures
    args: tuple[str, ...]
    refs: tuple[str, ...] = ()  # (FROM, TO) in branch mode
    migrated: str | None = None  # pi's rewritten file (--dump-migrated), relative to tests/fixtures/oracle

    @property
    def branch(self) -> bool:
        return "--branch" in self.args

    @property
    def session_path(self) -> Path:
        return FIXTURES / self.session

    def want(self) -> dict[str, Any]:
        return json.loads((PI_EXPECTED / self.expected).read_text(encoding="utf-8"))

    def option(self, flag: str) -> str | None:
        return self.args[self.args.index(flag) + 1] if flag in self.args else None

    def harness_args(self) -> list[str]:
        return [*self.args, str(self.session_path), *self.refs]

    def ours(self) -> dict[str, Any]:
        """Our engine's answer to the same question, in the same shape (JSON round-tripped; a
        fresh copy each time, computed once per test session)."""
        return json.loads(_ours_text(self))

    def compute_ours(self) -> dict[str, Any]:
        from inspector import load_session
        from inspector.oracle_json import oracle_branch, oracle_main

        s = load_session(self.session_path)
        budgets = [int(x) for x in (self.option("--budgets") or "").split(",") if x]
        if self.branch:
            got = oracle_branch(s, *self.refs, budgets=budgets)
        else:
            kw: dict[str, Any] = {}
            if self.option("--leaf"):
                kw["leaf"] = self.option("--leaf")
            if self.option("--keep"):
                kw["keeps"] = [int(x) for x in (self.option("--keep") or "").split(",")]
            if self.option("--pi"):
                kw["pi_version"] = ".".join((self.option("--pi") or "").split(".")[:2])
            got = oracle_main(s, **kw)
        return got


@functools.cache
def _ours_text(run: FixtureRun) -> str:
    return json.dumps(run.compute_ours())


def _fixture_runs() -> tuple[FixtureRun, ...]:
    rows = json.loads((PI_EXPECTED / "runs.json").read_text(encoding="utf-8"))
    return tuple(
        FixtureRun(r["expected"], r["session"], tuple(r["args"]), tuple(r.get("refs", ())), r.get("migrated"))
        for r in rows
    )


FIXTURE_RUNS = _fixture_runs()
