"""Differential test: random sessions through pi's own code (the oracle, run live) and ours.

Needs node and npm (the oracle is installed with ``npm ci`` into a temporary folder); skips,
saying why, without them. ``INSPECTOR_DIFF_N`` sets how many sessions (default 20; each runs
pi three times: main mode, another leaf, a branch navigation)."""

from __future__ import annotations

import importlib.util
import json
import os
import random
from pathlib import Path

import pytest

from inspector import load_session
from inspector.oracle_json import oracle_branch, oracle_main

from .conftest import SHARED, run_pi_oracle
from .randsession import random_session

N = int(os.environ.get("INSPECTOR_DIFF_N", "20"))
pytestmark = pytest.mark.oracle


def _cmp():
    spec = importlib.util.spec_from_file_location("pi_oracle_compare", SHARED / "oracle" / "compare.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _agree(want: dict, got: dict) -> tuple[bool, str]:
    cmp = _cmp()
    c = cmp.Checker(())
    got = json.loads(json.dumps(got))
    (cmp.compare_branch if want["meta"].get("mode") == "branch" else cmp.compare_main)(c, want, got)
    bad = [f"{name}: {ok}/{n} {lines[:2]}" for name, (ok, n, lines) in c.groups.items() if ok != n]
    return c.ok == c.total and c.total > 0, "\n".join(bad)


@pytest.mark.parametrize("seed", range(N))
def test_random_session_agrees_with_pi(seed: int, tmp_path: Path, pi_oracle: Path) -> None:
    rng = random.Random(seed)
    path = tmp_path / f"rand-{seed}.jsonl"
    path.write_text(random_session(rng), encoding="utf-8")
    s = load_session(path)
    want = run_pi_oracle(pi_oracle, "--deterministic-ids", str(path))
    ok, why = _agree(want, oracle_main(s))
    assert ok, f"seed {seed} ({path}):\n{why}"
    if len(s.entries) > 2:
        # pi's oracle itself cannot describe a path that ends in a compaction (its pathRef reads
        # past the end), so such leaves are not asked for
        leaves = [i for i, e in enumerate(s.entries) if e.type != "compaction"]
        leaf = rng.choice(leaves)
        want = run_pi_oracle(pi_oracle, "--deterministic-ids", "--leaf", f"@{leaf}", str(path))
        ok, why = _agree(want, oracle_main(s, leaf=f"@{leaf}"))
        assert ok, f"seed {seed} leaf @{leaf}:\n{why}"
        a, b = rng.randrange(len(s.entries)), rng.randrange(len(s.entries))
        want = run_pi_oracle(pi_oracle, "--branch", "--deterministic-ids", str(path), f"@{a}", f"@{b}")
        ok, why = _agree(want, oracle_branch(s, f"@{a}", f"@{b}"))
        assert ok, f"seed {seed} branch @{a} -> @{b}:\n{why}"
