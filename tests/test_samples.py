"""The bundled sample sessions: reproducible, loadable, and read by pi exactly as by us."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from inspector import load_session
from inspector.oracle_json import oracle_main

from .support.paths import REPO
from .support.pi_compare import compare
from .support.pi_oracle import PiOracle

SAMPLES = REPO / "sample_sessions"
NAMES = ["coding-session", "small-tutorial", "long-session", "hostile-content", "broken"]


def test_committed_samples_equal_a_fresh_generation(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "tools.samples.generate", str(tmp_path)],
        check=True,
        capture_output=True,
        cwd=REPO,
    )
    for name in [*NAMES, "claude-code-session", "codex-session", "codex-legacy"]:
        assert (tmp_path / f"{name}.jsonl").read_bytes() == (SAMPLES / f"{name}.jsonl").read_bytes(), name
    assert (tmp_path / "opencode-session.json").read_bytes() == (
        SAMPLES / "opencode-session.json"
    ).read_bytes()


def test_the_samples_folder_holds_data_only() -> None:
    """The generators live in tools/samples/ (importable, run with ``python -m``), not beside the data."""
    assert not list(SAMPLES.glob("*.py"))
    from tools.samples import gen_agents, generate, sessiongen

    assert generate.SAMPLES == SAMPLES and callable(gen_agents.codex_session) and sessiongen.Writer


def test_samples_are_small_and_cover_what_they_promise() -> None:
    for name in NAMES:
        assert (SAMPLES / f"{name}.jsonl").stat().st_size <= 1_000_000, name
    s = load_session(SAMPLES / "coding-session.jsonl")
    kinds = s.counts_by_type()
    for k in (
        "compaction",
        "branch_summary",
        "label",
        "session_info",
        "custom",
        "custom_message",
        "model_change",
        "thinking_level_change",
        "message/bashExecution",
        "message/toolResult",
    ):
        assert kinds.get(k, 0) >= 1, k
    assert s.issues == () and len(s.leaves) == 2 and s.name
    stops = {getattr(e.message, "stopReason", None) for e in s.entries if e.type == "message"}
    assert {"aborted", "error", "toolUse", "stop"} <= stops
    b = load_session(SAMPLES / "broken.jsonl")
    assert {i.kind for i in b.issues} >= {
        "malformed-json",
        "blank-lines",
        "duplicate-id",
        "dangling-parent",
        "truncated-line",
    }


@pytest.mark.oracle
@pytest.mark.parametrize("name", NAMES)
def test_pi_reads_each_sample_exactly_as_we_do(name: str, pi_oracle: PiOracle) -> None:
    want = pi_oracle.run(str(SAMPLES / f"{name}.jsonl"))
    got = json.loads(json.dumps(oracle_main(load_session(SAMPLES / f"{name}.jsonl"))))
    c = compare(want, got)
    assert c.checks > 100 and c.ok, c.report()
