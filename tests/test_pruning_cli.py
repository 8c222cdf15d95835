"""Pruning at one point of a session (``prune_at``), the ``inspector prune`` command, and the
table of ``docs/pruning.md`` on the shared before-compaction fixture."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.replay import prune_at

from .support.builder import SessionBuilder
from .support.paths import FIXTURES, REPO


def _session_text() -> str:
    """u1 → read (30,000 tokens) → read (40,000) → answer; u2 → answer; u3 → answer; u4 → answer.
    Model calls (steps): 0 after u1, 1 and 2 after the results, 3 after u2, 4 after u3, 5 after u4."""
    b = SessionBuilder()
    b.user("u1")
    b.assistant(tools=[("read", {"path": "big.py"})])
    b.tool_result("x" * 120_000)  # entry 2
    b.assistant(tools=[("read", {"path": "bigger.py"})])
    b.tool_result("y" * 160_000)  # entry 4
    b.assistant("read both")
    for k in (2, 3, 4):
        b.user(f"u{k}")
        b.assistant(f"answer {k}")
    return b.text()


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    p = tmp_path / "s.jsonl"
    p.write_text(_session_text(), encoding="utf-8")
    return p


def _session():  # type: ignore[no-untyped-def]
    from inspector import parse_session

    return parse_session(_session_text())


def _pruned(res) -> list[int]:  # type: ignore[no-untyped-def]
    return [d.entry_index for d in res.decisions if d.action == "pruned"]


def test_prune_at_step_sees_the_context_before_that_assistant_message() -> None:
    s = _session()
    assert [d.entry_index for d in prune_at(s, "none", at_step=0).decisions] == [0]
    assert [d.entry_index for d in prune_at(s, "none", at_step=2).decisions] == [0, 1, 2, 3, 4]
    assert len(prune_at(s, "none").decisions) == len(s.entries)  # the call after the leaf


def test_prune_at_replays_earlier_calls_for_opencode() -> None:
    s = _session()
    # OpenCode's pass runs when a new prompt arrives; at u3 the two reads are still in the last
    # two turns (u2's, u1's); at u4 they are not: 40,000 fill PRUNE_PROTECT, 30,000 go
    assert _pruned(prune_at(s, "opencode", at_step=4)) == []
    assert _pruned(prune_at(s, "opencode", at_step=5)) == [2]
    # the call after the leaf: no new prompt, the pruning persists from the replayed state
    res = prune_at(s, "opencode")
    assert _pruned(res) == [2] and "earlier OpenCode prune pass" in res.decisions[2].reason
    # settings reach the replay: a higher minimum prunes nothing
    assert _pruned(prune_at(s, "opencode", {"prune_minimum": "30000"})) == []


def test_prune_at_pi_port_recomputes_at_each_call() -> None:
    s = _session()
    # before every call, from the whole context: at u2 the reads are in the last two user turns
    # (u2's, u1's); at u3 they are not — one prompt earlier than OpenCode, whose pass runs
    # before the new prompt exists
    assert _pruned(prune_at(s, "pi-context-pruning", at_step=3)) == []
    assert _pruned(prune_at(s, "pi-context-pruning", at_step=4)) == [2]


def test_prune_at_rejects_a_step_out_of_range() -> None:
    with pytest.raises(KeyError, match="out of range"):
        prune_at(_session(), "opencode", at_step=6)


def test_cli_json_lists_every_item(session_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prune", str(session_file), "--strategy", "opencode", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["strategy"] == "opencode" and out["settings"]["prune_protect"] == 40000
    assert set(out["stats"]) >= {"tokensBefore", "tokensAfter", "prunedTokens", "prunedItems"}
    assert out["stats"]["prunedItems"] == 1
    assert (
        out["stats"]["prunedTokens"]
        == out["stats"]["tokensBefore"] - out["stats"]["tokensAfter"]
        == 30000 - 9
    )
    assert len(out["items"]) == 12
    item = out["items"][2]
    assert {
        k: item[k]
        for k in ("entryIndex", "role", "toolName", "action", "tokensBefore", "tokensAfter", "marker")
    } == {
        "entryIndex": 2,
        "role": "toolResult",
        "toolName": "read",
        "action": "pruned",
        "tokensBefore": 30000,
        "tokensAfter": 9,
        "marker": "[Old tool result content cleared]",
    }


def test_cli_table_and_settings(session_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prune", str(session_file), "--strategy", "pi-context-pruning", "--at-step", "5"]) == 0
    out = capsys.readouterr().out
    assert "pi-context-pruning" in out and re.search(r"\b2 toolResult +read +pruned", out)
    assert (
        main(
            [
                "prune",
                str(session_file),
                "--strategy",
                "pi-context-pruning",
                "--at-step",
                "5",
                "--set",
                "prune_minimum=30001",
                "--json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["stats"]["prunedItems"] == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "nope=1"], "no setting 'nope'"),
        (["--set", "prune_protect=-1"], "prune_protect"),
        (["--set", "prune_protect"], "expected KEY=VALUE"),
        (["--at-step", "99"], "out of range"),
    ],
)
def test_cli_rejects_bad_input_clearly(session_file: Path, args: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as e:
        main(["prune", str(session_file), "--strategy", "opencode", *args])
    assert message in str(e.value)


# the table in docs/pruning.md: tokens pruned at the call after the fixture's leaf, pi counter
FIXTURE_TABLE = {
    "none": (139429, 139429, 0, 0),
    "opencode": (139429, 110271, 64, 0),
    "pi-context-pruning": (139429, 123653, 63, 0),
    "dcp": (139429, 139076, 16, 0),
    "context-editing": (139429, 74429, 189, 0),
    "turn-aware": (139429, 13401, 0, 438),
}


@pytest.mark.parametrize("name", sorted(FIXTURE_TABLE))
def test_before_compaction_fixture_matches_the_docs_table(name: str) -> None:
    from inspector.session.loader import load_session

    st = prune_at(load_session(FIXTURES / "before-compaction.jsonl"), name).stats
    before, after, pruned, dropped = FIXTURE_TABLE[name]
    assert (st.tokens_before, st.tokens_after, st.items_pruned, st.items_dropped) == (
        before,
        after,
        pruned,
        dropped,
    ), "the strategy changed: update FIXTURE_TABLE and the table in docs/pruning.md"
    doc = (REPO / "docs" / "pruning.md").read_text(encoding="utf-8")
    row = next(line for line in doc.splitlines() if line.startswith(f"| `{name}` | {before:,} |"))
    assert [c.strip() for c in row.split("|")[2:7]] == [
        f"{before:,}",
        f"{after:,}",
        f"{before - after:,}",
        str(pruned),
        str(dropped),
    ]
