"""Differential test: many random pi sessions through pi's own code and through ours.

Every session from ``tests/support/randsession.py`` is analysed by pi 0.73.1, run live through the
project's harness (``tools/pi-oracle``), and by ``inspector.oracle_json``: main mode at pi's leaf,
main mode at two other leaves (``--leaf @N``) and three ``/tree`` navigations (``--branch FROM
TO``). The outputs are compared by ``support.pi_compare`` (every check must agree) and, beyond it,
field by field over everything pi's side prints (``meta`` about the program aside).

pi's pinned packages are installed with ``npm ci`` into a temporary folder (the ``pi_oracle``
fixture), or reused from ``$INSPECTOR_PI_MODULES``. Without node and npm, or when the install
fails, the tests skip and say why. Node needs about 2.5 s to import pi, so the harness's batch
mode runs every analysis in a few Node processes (one per core, at most four).

``INSPECTOR_DIFF_N`` sets the number of sessions (default 60), ``INSPECTOR_DIFF_SEED`` the first
seed (default 0). A failure names the seed and keeps the session file in pytest's temp folder.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from inspector import load_session
from inspector.oracle_json import oracle_branch, oracle_main

from .support.pi_compare import compare, strict_differences
from .support.pi_oracle import Job, PiOracle
from .support.randsession import random_session

N = int(os.environ.get("INSPECTOR_DIFF_N", "60"))
SEED0 = int(os.environ.get("INSPECTOR_DIFF_SEED", "0"))
SEEDS = list(range(SEED0, SEED0 + N))
LEAVES_PER_SESSION = 2
BRANCHES_PER_SESSION = 3

# ---------------------------------------------------------------------------------------- pi's side


@dataclass
class Run:
    """One analysis by pi's code and how to reproduce it on our side."""

    seed: int
    kind: str  # "main" | "leaf" | "branch"
    args: list[str]  # the harness's arguments
    refs: tuple[str, ...] = ()  # ("@N",) for leaf, (FROM, TO) for branch
    result: dict[str, Any] = field(default_factory=dict)  # Job.result(): {"json": ...} or {"error": ...}

    def label(self) -> str:
        return " ".join(["pi-oracle.mjs", *[Path(a).name if a.endswith(".jsonl") else a for a in self.args]])


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


# ---------------------------------------------------------------------------------------- judging


@dataclass
class Verdict:
    checks: int = 0
    agree: int = 0
    problems: list[str] = field(default_factory=list)


def _judge(run: Run, session: Any) -> Verdict:
    v = Verdict()
    if "json" not in run.result:
        # pi cannot describe a path ending in a compaction whose firstKeptEntryId is not on it
        # (findCutPoint answers a position past the end of the path): nothing to compare then.
        err = run.result.get("error", "")
        leaf = int(run.refs[0][1:]) if run.kind == "leaf" else len(session.entries) - 1
        if (
            run.kind != "branch"
            and "past the end of the path" in err
            and session.entries[leaf].type == "compaction"
        ):
            return v
        v.problems.append(f"pi's side failed: {err[-1500:]}")
        return v
    pi = json.loads(run.result["json"])
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
    c = compare(pi, ours)
    v.checks, v.agree = c.checks, c.agree
    v.problems += [f"comparison {line}" for line in c.disagreeing()]
    usage = (pi.get("contextTokens") or {}).get("agentSessionGetContextUsage")
    if isinstance(usage, dict) and "error" in usage:
        # pi's AgentSession.getContextUsage itself threw (an assistant message without usage
        # after the latest compaction): there is no answer of pi's to compare with.
        del pi["contextTokens"]["agentSessionGetContextUsage"]
        (ours.get("contextTokens") or {}).pop("agentSessionGetContextUsage", None)
    v.problems += [f"field {d}" for d in strict_differences(pi, ours)]
    if c.checks == 0:
        v.problems.append("the comparison made no checks")
    return v


@dataclass
class Judged:
    """Every seed's runs and verdicts, judged once for the module (tests only read them)."""

    runs: dict[int, list[Run]]
    verdicts: dict[int, list[Verdict]]

    def totals(self) -> Counter[str]:
        t: Counter[str] = Counter()
        for vs in self.verdicts.values():
            t["runs"] += len(vs)
            t["checks"] += sum(v.checks for v in vs)
            t["agree"] += sum(v.agree for v in vs)
        return t


@pytest.fixture(scope="module")
def judged(pi_oracle: PiOracle, tmp_path_factory: pytest.TempPathFactory) -> Judged:
    """Every random session written out, run through pi's code and through ours, and judged."""
    work = tmp_path_factory.mktemp("differential")
    by_seed: dict[int, list[Run]] = {}
    for seed in SEEDS:
        text = random_session(random.Random(seed))
        path = work / f"rand-{seed}.jsonl"
        path.write_text(text, encoding="utf-8")
        by_seed[seed] = _plan(seed, path, text.count("\n") - 1)
    runs = [r for rs in by_seed.values() for r in rs]
    t0 = time.perf_counter()
    results = pi_oracle.run_jobs(
        [Job(tuple(r.args), work / f"run-{k}.json") for k, r in enumerate(runs)], work
    )
    for r, res in zip(runs, results, strict=True):
        r.result = res
    sys.stderr.write(
        f"\n[differential] pi ran {len(runs)} analyses of {len(SEEDS)} sessions "
        f"in {time.perf_counter() - t0:.1f} s\n"
    )
    verdicts = {}
    for seed, rs in by_seed.items():
        session = load_session(Path(rs[0].args[-1]))
        verdicts[seed] = [_judge(r, session) for r in rs]
    return Judged(by_seed, verdicts)


@pytest.mark.oracle
@pytest.mark.parametrize("seed", SEEDS)
def test_random_session_agrees_with_pi(seed: int, judged: Judged, tmp_path: Path) -> None:
    runs, verdicts = judged.runs[seed], judged.verdicts[seed]
    failures = [
        f"  {run.label()}:\n" + "\n".join(f"    {p}" for p in v.problems[:15])
        for run, v in zip(runs, verdicts, strict=True)
        if v.problems
    ]
    if failures:
        session_file = Path(runs[0].args[-1])
        keep = tmp_path / session_file.name
        shutil.copy(session_file, keep)
        pytest.fail(
            f"seed {seed}: ours disagrees with pi on {len(failures)} of {len(runs)} runs "
            f"(session kept at {keep}; regenerate with random_session(random.Random({seed})))\n"
            + "\n".join(failures),
            pytrace=False,
        )


@pytest.mark.oracle
def test_totals(judged: Judged) -> None:
    """How much was compared, whatever order the tests run in (pytest -s prints it)."""
    t = judged.totals()
    sys.stderr.write(
        f"\n[differential] {len(judged.runs)} sessions, {t['runs']} runs, "
        f"{t['agree']}/{t['checks']} comparison checks agree\n"
    )
    assert t["runs"] == sum(map(len, judged.runs.values())) and (t["checks"] > 0 or not SEEDS)


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
    need = [
        "version 1",
        "version 3",
        "compactions>=2",
        "tree",
        "fromHook",
        "details",
        "firstKeptEntryIndex",
        "firstKept unknown",
        "empty branch summary",
        "custom_message blocks",
        "model_change",
        "thinking_level_change",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
        "role user",
        "role assistant",
        "role toolResult",
        "role bashExecution",
        "role custom",
        "stop stop",
        "stop toolUse",
        "stop aborted",
        "stop error",
        "stop length",
        "usage without totalTokens",
        "block text",
        "block thinking",
        "block toolCall",
        "file tool with path",
        "toolResult isError",
        "bash excludeFromContext",
        "bash cancelled",
        "bash truncated",
        "image in user",
        "image in toolResult",
        "astral",
        "float literal",
        "big int",
        "integer-like keys",
        "long text",
    ]
    missing = [k for k in need if not seen[k]]
    assert not missing, f"never generated: {missing}"
