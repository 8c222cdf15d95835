"""Our engine against pi's own output (../shared/fixtures/oracle), through the oracle's own compare.py."""

from __future__ import annotations

import importlib.util
import io
import json
from contextlib import redirect_stdout

import pytest

from inspector import load_session
from inspector.oracle_json import oracle_branch, oracle_main

from .conftest import FIXTURES, ORACLE_OUT, SHARED, need_shared

B = [12, 50, 300, 1300, 2100, 20000]
# (oracle output, fixture, kwargs) exactly as ../shared/oracle/run-all.sh produced them
MAIN = [
    ("before-compaction.json", "before-compaction", {}),
    ("synth-tree.json", "synth-tree", {}),
    ("synth-compacted.json", "synth-compacted", {}),
    ("synth-giant-turn.json", "synth-giant-turn", {}),
    ("synth-v2-hookmessage.json", "synth-v2-hookmessage", {}),
    ("synth-trailing-toolresult.json", "synth-trailing-toolresult", {"keeps": [2000, 5000, 10000, 12000, 20000, 40000]}),
    ("synth-compacted.leaf-c000000c.json", "synth-compacted", {"leaf": "c000000c"}),
    ("synth-tree.leaf-branchA.json", "synth-tree", {"leaf": "a000000c"}),
    ("pi-0.58.3/before-compaction.json", "before-compaction", {"pi_version": "0.58"}),
    ("pi-0.58.3/synth-compacted.json", "synth-compacted", {"pi_version": "0.58"}),
    ("pi-0.58.3/synth-compacted.leaf-c000000c.json", "synth-compacted", {"pi_version": "0.58", "leaf": "c000000c"}),
]
BRANCH = [
    ("branch.synth-tree.leaf-to-a000000b.json", "synth-tree", "leaf", "a000000b"),
    ("branch.synth-tree.a000000c-to-a0000017.json", "synth-tree", "a000000c", "a0000017"),
    ("branch.synth-tree.leaf-to-a0000002.json", "synth-tree", "leaf", "a0000002"),
    ("branch.synth-tree.a000000e-to-a000000b.json", "synth-tree", "a000000e", "a000000b"),
    ("branch.before-compaction.leaf-to-500.json", "before-compaction", "leaf", "@500"),
]


def _compare_module():
    spec = importlib.util.spec_from_file_location("pi_oracle_compare", SHARED / "oracle" / "compare.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _check(want: dict, got: dict) -> tuple[bool, str, int]:
    cmp = _compare_module()
    c = cmp.Checker(())
    got = json.loads(json.dumps(got))
    (cmp.compare_branch if want["meta"].get("mode") == "branch" else cmp.compare_main)(c, want, got)
    buf = io.StringIO()
    with redirect_stdout(buf):
        ok = c.report()
    return ok, buf.getvalue(), c.total


@pytest.mark.parametrize("out,fixture,kw", MAIN, ids=[m[0] for m in MAIN])
def test_main_mode_agrees_with_pi(out: str, fixture: str, kw: dict) -> None:
    need_shared()
    want = json.loads((ORACLE_OUT / out).read_text())
    got = oracle_main(load_session(FIXTURES / f"{fixture}.jsonl"), **kw)
    ok, report, total = _check(want, got)
    assert total > 150, report
    assert ok, report


@pytest.mark.parametrize("out,fixture,src,dst", BRANCH, ids=[b[0] for b in BRANCH])
def test_branch_mode_agrees_with_pi(out: str, fixture: str, src: str, dst: str) -> None:
    need_shared()
    want = json.loads((ORACLE_OUT / out).read_text())
    got = oracle_branch(load_session(FIXTURES / f"{fixture}.jsonl"), src, dst, budgets=B)
    ok, report, total = _check(want, got)
    assert total > 50, report
    assert ok, report


def test_a_wrong_answer_is_caught_by_the_comparison() -> None:
    need_shared()
    want = json.loads((ORACLE_OUT / "synth-tree.json").read_text())
    got = oracle_main(load_session(FIXTURES / "synth-tree.jsonl"))
    got["compaction"][0]["findCutPoint"]["firstKeptEntryIndex"] += 1
    ok, report, _ = _check(want, got)
    assert not ok and "BAD compaction[keep=2000].findCutPoint" in report


@pytest.mark.parametrize("name", ["before-compaction", "synth-v2-hookmessage"])
def test_migration_equals_pis_rewritten_file(name: str) -> None:
    """v1/v2 files: our in-memory migration gives exactly the entries pi wrote back (same ids
    as pi's --deterministic-ids run, same fields and values)."""
    need_shared()
    from inspector.export import session_lines

    s = load_session(FIXTURES / f"{name}.jsonl")
    ours = [json.loads(x) for x in session_lines(s.header, s.entries)]
    pis = [json.loads(x) for x in (ORACLE_OUT / f"{name}.migrated.jsonl").read_text().splitlines() if x.strip()]
    assert ours == pis
