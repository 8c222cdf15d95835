"""Differential test: many random pi sessions through pi's own code (the oracle) and through ours.

Every session from ``tests/randsession.py`` is analysed by ``../shared/oracle/oracle.mjs`` (pi
0.73.1, run live) and by ``inspector.oracle_json``: main mode at pi's leaf, main mode at two other
leaves (``--leaf @N``) and three ``/tree`` navigations (``--branch FROM TO``). The outputs are
compared with the logic of ``../shared/oracle/compare.py`` (every check must agree) and, beyond it,
field by field over everything the oracle prints (``meta`` aside).

pi is installed with ``npm ci`` into a temporary folder (``../shared`` is never written to), or
taken from ``$INSPECTOR_ORACLE_DIR`` when that points at an install. Without node and npm, or when
the install fails, the tests skip and say why.

Node needs about 2.5 s to import pi, so the oracle is not started once per run: a small driver
(``_BATCH_DRIVER``) evaluates the unchanged ``oracle.mjs`` once per run inside one process (a fresh
module instance each time, its ``process.argv``/``stdout``/``exit`` redirected), and one such
process per core (at most four) shares the runs.

``INSPECTOR_DIFF_N`` sets the number of sessions (default 60), ``INSPECTOR_DIFF_SEED`` the first
seed (default 0). A failure names the seed and keeps the session file in pytest's temp folder.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from inspector import load_session
from inspector.oracle_json import oracle_branch, oracle_main

from .randsession import random_session

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
ORACLE_SRC = SHARED / "oracle"
N = int(os.environ.get("INSPECTOR_DIFF_N", "60"))
SEED0 = int(os.environ.get("INSPECTOR_DIFF_SEED", "0"))
SEEDS = list(range(SEED0, SEED0 + N))
LEAVES_PER_SESSION = 2
BRANCHES_PER_SESSION = 3

# Fields of the oracle's output that describe the program, not the session.
_META_UNKNOWABLE = {"oracle", "piPackage", "node", "note", "engine"}

# Runs oracle.mjs (unchanged) once per job in one Node process, so pi is imported once. Each job
# imports the oracle under a new URL (a fresh module instance); its argv, stdout and exit are
# redirected while it runs. Results go to a file, one JSON line per job.
_BATCH_DRIVER = r"""
import fs from "node:fs";
const [oracleUrl, jobsFile, outFile] = process.argv.slice(2);
const jobs = JSON.parse(fs.readFileSync(jobsFile, "utf8"));
const fd = fs.openSync(outFile, "w");
const real = { write: process.stdout.write, exit: process.exit, argv: process.argv };
class Exit extends Error { constructor(code) { super(`exit ${code}`); this.code = code; } }
for (let k = 0; k < jobs.length; k++) {
  const buf = [];
  process.stdout.write = (s) => { buf.push(String(s)); return true; };
  process.exit = (code) => { throw new Exit(code ?? 0); };
  process.argv = [real.argv[0], "oracle.mjs", ...jobs[k]];
  let rec;
  try {
    await import(`${oracleUrl}?job=${k}`);
    rec = { code: 0, out: buf.join("") };
  } catch (e) {
    rec = e instanceof Exit ? { code: e.code, out: buf.join("") } : { code: -1, error: String((e && e.stack) || e) };
  } finally {
    process.stdout.write = real.write;
    process.exit = real.exit;
    process.argv = real.argv;
  }
  fs.writeSync(fd, JSON.stringify(rec) + "\n");
}
fs.closeSync(fd);
"""

# ---------------------------------------------------------------------------------------- the oracle


def _pi_installed(folder: Path) -> bool:
    return (folder / "oracle.mjs").is_file() and (folder / "node_modules" / "@mariozechner" / "pi-coding-agent").is_dir()


@pytest.fixture(scope="session")
def oracle_install(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding oracle.mjs with pi installed beside it (``npm ci`` in a temp copy).

    Shares the install of conftest's ``pi_oracle`` fixture when there is one (one ``npm ci`` per
    test session), else makes its own."""
    try:
        shared = request.getfixturevalue("pi_oracle")
    except pytest.FixtureLookupError:
        shared = None
    if shared is not None and _pi_installed(Path(shared)):
        return Path(shared)
    return _own_install(tmp_path_factory)


def _own_install(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not shutil.which("node"):
        pytest.skip("node is not installed: the differential test runs pi's own code (../shared/oracle)")
    pre = os.environ.get("INSPECTOR_ORACLE_DIR")
    if pre and _pi_installed(Path(pre)):
        return Path(pre)
    if not shutil.which("npm"):
        pytest.skip("npm is not installed: it is needed to install pi's package for the oracle (../shared/oracle)")
    if not (ORACLE_SRC / "package-lock.json").is_file() or not (ORACLE_SRC / "oracle.mjs").is_file():
        pytest.skip(f"no oracle at {ORACLE_SRC} (the shared folder goes beside the repo)")
    dst = tmp_path_factory.mktemp("pi-oracle")
    for name in ("oracle.mjs", "package.json", "package-lock.json"):
        shutil.copy(ORACLE_SRC / name, dst / name)
    try:
        r = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=dst, capture_output=True, text=True,
                           timeout=600)
    except subprocess.TimeoutExpired:
        pytest.skip("npm ci of the oracle took over 10 minutes")
    if r.returncode != 0:
        pytest.skip("npm ci of the oracle failed: " + ((r.stderr or "") + (r.stdout or "")).strip()[-600:])
    if not _pi_installed(dst):
        pytest.skip("npm ci of the oracle did not install @mariozechner/pi-coding-agent")
    return dst


@dataclass
class Run:
    """One oracle run and how to reproduce it on our side."""

    seed: int
    kind: str  # "main" | "leaf" | "branch"
    args: list[str]  # oracle.mjs arguments
    refs: tuple[str, ...] = ()  # ("@N",) for leaf, (FROM, TO) for branch
    result: dict[str, Any] = field(default_factory=dict)  # the batch driver's record

    def label(self) -> str:
        return " ".join(["oracle.mjs", *[Path(a).name if a.endswith(".jsonl") else a for a in self.args]])


def _plan(seed: int, path: Path, n_entries: int) -> list[Run]:
    rng = random.Random(f"runs-{seed}")
    f = str(path)
    runs = [Run(seed, "main", ["--deterministic-ids", f])]
    if n_entries > 1:
        for i in rng.sample(range(n_entries), min(LEAVES_PER_SESSION, n_entries)):
            runs.append(Run(seed, "leaf", ["--deterministic-ids", "--leaf", f"@{i}", f], (f"@{i}",)))
    for k in range(BRANCHES_PER_SESSION):
        src = "leaf" if k == 0 else f"@{rng.randrange(n_entries)}"
        dst = f"@{rng.randrange(n_entries)}"
        runs.append(Run(seed, "branch", ["--branch", "--deterministic-ids", f, src, dst], (src, dst)))
    return runs


def _run_batches(oracle_dir: Path, runs: list[Run], work: Path) -> None:
    driver = work / "batch.mjs"
    driver.write_text(_BATCH_DRIVER, encoding="utf-8")
    oracle_url = (oracle_dir / "oracle.mjs").resolve().as_uri()
    workers = max(1, min(os.cpu_count() or 1, 4, len(runs)))
    chunks = [runs[w::workers] for w in range(workers)]
    procs = []
    for w, chunk in enumerate(chunks):
        jobs, out = work / f"jobs{w}.json", work / f"out{w}.jsonl"
        jobs.write_text(json.dumps([r.args for r in chunk]), encoding="utf-8")
        err = open(work / f"err{w}.txt", "w+", encoding="utf-8")
        p = subprocess.Popen(["node", str(driver), oracle_url, str(jobs), str(out)], stdout=subprocess.DEVNULL,
                             stderr=err, cwd=work)
        procs.append((p, chunk, out, err))
    for p, chunk, out, err in procs:
        try:
            p.wait(timeout=400)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        err.seek(0)
        tail = err.read()[-2000:]
        err.close()
        lines = out.read_text(encoding="utf-8").split("\n")[:-1] if out.exists() else []
        for k, run in enumerate(chunk):
            if k < len(lines):
                run.result = json.loads(lines[k])
            else:
                run.result = {"code": -2, "error": f"the batch driver stopped (exit {p.returncode}): {tail}"}


@pytest.fixture(scope="module")
def oracle_runs(oracle_install: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[Run]]:
    """Every random session written out and run through pi's code, grouped by seed."""
    work = tmp_path_factory.mktemp("differential")
    by_seed: dict[int, list[Run]] = {}
    for seed in SEEDS:
        text = random_session(random.Random(seed))
        path = work / f"rand-{seed}.jsonl"
        path.write_text(text, encoding="utf-8")
        by_seed[seed] = _plan(seed, path, text.count("\n") - 1)
    t0 = time.perf_counter()
    _run_batches(oracle_install, [r for runs in by_seed.values() for r in runs], work)
    sys.stderr.write(f"\n[differential] pi ran {sum(map(len, by_seed.values()))} analyses of {len(SEEDS)} sessions "
                     f"in {time.perf_counter() - t0:.1f} s\n")
    return by_seed


# ---------------------------------------------------------------------------------------- comparing


@functools.cache
def _compare_module() -> Any:
    """``../shared/oracle/compare.py``, imported from where it lies."""
    spec = importlib.util.spec_from_file_location("pi_oracle_compare", ORACLE_SRC / "compare.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _strict_diff(pi: Any, ours: Any, where: str, out: list[str]) -> None:
    """Every field pi printed must be in ours with the same value, and ours prints no other field."""
    if len(out) >= 12:
        return
    if isinstance(pi, dict) and isinstance(ours, dict):
        for k in [*pi, *(k for k in ours if k not in pi)]:
            if where == "meta" and k in _META_UNKNOWABLE:
                continue
            if k not in ours:
                out.append(f"{where}.{k}: missing in ours (pi={_short(pi[k])})")
            elif k not in pi:
                out.append(f"{where}.{k}: not printed by pi (ours={_short(ours[k])})")
            else:
                _strict_diff(pi[k], ours[k], f"{where}.{k}" if where else k, out)
    elif isinstance(pi, list) and isinstance(ours, list):
        if len(pi) != len(ours):
            out.append(f"{where}: {len(pi)} items in pi, {len(ours)} in ours")
        for i, (a, b) in enumerate(zip(pi, ours, strict=False)):
            _strict_diff(a, b, f"{where}[{i}]", out)
    elif not _same(pi, ours):
        out.append(f"{where}: pi={_short(pi)} ours={_short(ours)}")


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        # pi prints doubles: its 123456789012345680000 is the double ours may hold as a float
        try:
            return a == b or float(a) == float(b)
        except OverflowError:
            return False
    return a == b


def _short(v: Any) -> str:
    s = json.dumps(v, ensure_ascii=False)
    return s if len(s) <= 200 else s[:197] + "..."


@dataclass
class Verdict:
    checks: int = 0
    agree: int = 0
    problems: list[str] = field(default_factory=list)


def _judge(cmp: Any, run: Run, session: Any) -> Verdict:
    v = Verdict()
    rec = run.result
    if rec.get("code") != 0 or "out" not in rec:
        # pi's oracle cannot describe a path ending in a compaction whose firstKeptEntryId is not
        # on it (its pathRef reads past the end of the path): nothing to compare then.
        err = rec.get("error", "")
        leaf = int(run.refs[0][1:]) if run.kind == "leaf" else len(session.entries) - 1
        if run.kind != "branch" and "reading 'id'" in err and session.entries[leaf].type == "compaction":
            return v
        v.problems.append(f"the oracle failed (code {rec.get('code')}): {err[-1500:]}")
        return v
    pi = json.loads(rec["out"])
    try:
        if run.kind == "branch":
            ours = oracle_branch(session, *run.refs)
        elif run.kind == "leaf":
            ours = oracle_main(session, leaf=run.refs[0])
        else:
            ours = oracle_main(session)
        ours = json.loads(json.dumps(ours))
    except Exception as e:  # a crash is a disagreement like any other
        v.problems.append(f"ours raised {type(e).__name__}: {e}")
        return v
    c = cmp.Checker(())
    (cmp.compare_branch if run.kind == "branch" else cmp.compare_main)(c, pi, ours)
    v.checks, v.agree = c.total, c.ok
    for name, (ok, n, lines) in c.groups.items():
        if ok != n:
            v.problems.append(f"compare.py {name}: {ok}/{n} agree; " + "; ".join(lines[:3]))
    strict: list[str] = []
    usage = (pi.get("contextTokens") or {}).get("agentSessionGetContextUsage")
    if isinstance(usage, dict) and "error" in usage:
        # pi's AgentSession.getContextUsage itself threw (an assistant message without usage
        # after the latest compaction): there is no answer of pi's to compare with.
        del pi["contextTokens"]["agentSessionGetContextUsage"]
        (ours.get("contextTokens") or {}).pop("agentSessionGetContextUsage", None)
    _strict_diff(pi, ours, "", strict)
    v.problems += [f"field {d}" for d in strict]
    if c.total == 0:
        v.problems.append("compare.py made no checks")
    return v


TOTALS: Counter[str] = Counter()


@pytest.mark.oracle
@pytest.mark.parametrize("seed", SEEDS)
def test_random_session_agrees_with_pi(seed: int, oracle_runs: dict[int, list[Run]], tmp_path: Path) -> None:
    cmp = _compare_module()
    runs = oracle_runs[seed]
    session_file = Path(runs[0].args[-1])
    session = load_session(session_file)
    failures = []
    for run in runs:
        v = _judge(cmp, run, session)
        TOTALS["runs"] += 1
        TOTALS["checks"] += v.checks
        TOTALS["agree"] += v.agree
        if v.problems:
            failures.append(f"  {run.label()}:\n" + "\n".join(f"    {p}" for p in v.problems[:15]))
    if failures:
        keep = tmp_path / session_file.name
        shutil.copy(session_file, keep)
        pytest.fail(f"seed {seed}: ours disagrees with pi on {len(failures)} of {len(runs)} runs "
                    f"(session kept at {keep}; regenerate with random_session(random.Random({seed})))\n"
                    + "\n".join(failures), pytrace=False)


@pytest.mark.oracle
def test_totals(oracle_runs: dict[int, list[Run]]) -> None:
    """Runs last in this file: prints how much was compared (pytest -s shows it)."""
    sys.stderr.write(f"\n[differential] {len(oracle_runs)} sessions, {TOTALS['runs']} runs, "
                     f"{TOTALS['agree']}/{TOTALS['checks']} compare.py checks agree\n")
    assert TOTALS["runs"] > 0 or not oracle_runs


# ---------------------------------------------------------------------------------------- the generator


def test_generator_covers_what_the_issue_asks() -> None:
    """The random sessions contain every entry type, role, stop reason and edge case asked for."""
    seen: Counter[str] = Counter()
    for seed in range(max(N, 60)):
        text = random_session(random.Random(seed))
        lines = text.split("\n")[:-1]
        header = json.loads(lines[0])
        seen[f"version {header.get('version', 1)}"] += 1
        entries = [json.loads(x) for x in lines[1:]]
        assert 5 <= len(entries) <= 150
        seen["compactions>=2"] += sum(e["type"] == "compaction" for e in entries) >= 2
        ids = {e.get("id") for e in entries}
        parents = Counter(e.get("parentId") for e in entries if "id" in e)
        seen["tree"] += any(c > 1 for p, c in parents.items() if p is not None)
        stamps = [e["timestamp"] for e in entries]
        assert stamps == sorted(stamps), seed
        for e in entries:
            seen[e["type"]] += 1
            if e["type"] == "compaction":
                seen["fromHook"] += e.get("fromHook") is True
                seen["details"] += "details" in e
                seen["firstKeptEntryIndex"] += "firstKeptEntryIndex" in e
                seen["firstKept unknown"] += "firstKeptEntryId" in e and e["firstKeptEntryId"] not in ids
            if e["type"] == "branch_summary":
                seen["empty branch summary"] += e["summary"] == ""
            if e["type"] == "custom_message":
                seen["custom_message blocks"] += isinstance(e["content"], list)
            if e["type"] != "message":
                continue
            m = e["message"]
            seen["role " + m["role"]] += 1
            if m["role"] == "assistant":
                seen["stop " + m["stopReason"]] += 1
                seen["usage without totalTokens"] += "usage" in m and "totalTokens" not in m["usage"]
                for b in m["content"]:
                    seen["block " + b["type"]] += 1
                    if b["type"] == "toolCall" and b["name"] in ("read", "write", "edit"):
                        seen["file tool with path"] += isinstance(b["arguments"].get("path"), str)
            if m["role"] == "toolResult":
                seen["toolResult isError"] += m.get("isError") is True
            if m["role"] == "bashExecution":
                for k in ("excludeFromContext", "cancelled", "truncated"):
                    seen["bash " + k] += m.get(k) is True
            content = m.get("content")
            if isinstance(content, list) and any(b.get("type") == "image" for b in content):
                seen[f"image in {m['role']}"] += 1
        seen["astral"] += any(ord(ch) > 0xFFFF for ch in json.loads(json.dumps(text)))
        seen["float literal"] += any(lit in text for lit in ("1e21", "2.5e-7", "1.0,", "1.0}", "-0.0"))
        seen["big int"] += "123456789012345678901" in text or "9007199254740993" in text
        seen["integer-like keys"] += '"2":' in text or '"2": ' in text
        seen["long text"] += max(map(len, lines)) > 15000
    need = ["version 1", "version 3", "compactions>=2", "tree", "fromHook", "details", "firstKeptEntryIndex",
            "firstKept unknown", "empty branch summary", "custom_message blocks", "model_change",
            "thinking_level_change", "branch_summary", "custom", "custom_message", "label", "session_info",
            "role user", "role assistant", "role toolResult", "role bashExecution", "role custom",
            "stop stop", "stop toolUse", "stop aborted", "stop error", "stop length", "usage without totalTokens",
            "block text", "block thinking", "block toolCall", "file tool with path", "toolResult isError",
            "bash excludeFromContext", "bash cancelled", "bash truncated", "image in user", "image in toolResult",
            "astral", "float literal", "big int", "integer-like keys", "long text"]
    missing = [k for k in need if not seen[k]]
    assert not missing, f"never generated: {missing}"

