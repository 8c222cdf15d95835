"""Retention on the shared real pi session with a recorded compaction, checked against pi's own
``details.readFiles``/``modifiedFiles`` (skipped where ``../shared`` is not beside the clone: the
file is third-party data and never copied into the repository)."""

from __future__ import annotations

import pytest

from inspector import load_session
from inspector.replay import ReplaySettings, replay
from inspector.retention import retention
from inspector.retention.score import file_blocks

from .support.paths import SHARED

REAL = SHARED / "real-sessions" / "pi" / "codyborders-yinshi-d04df6ef55-1.jsonl"
pytestmark = pytest.mark.skipif(not REAL.is_file(), reason="../shared/real-sessions is not beside this clone")
PI_FILE_OPS = {"read", "write", "edit"}


@pytest.fixture(scope="module")
def scored():  # type: ignore[no-untyped-def]
    s = load_session(REAL)
    (c,) = retention(replay(s, ReplaySettings())).compactions
    return s, c, s.entries[c.span.entry_index]


def test_files_pi_collects_are_in_its_own_lists(scored) -> None:  # type: ignore[no-untyped-def]
    _, c, e = scored
    read, modified = set(e.details["readFiles"]), set(e.details["modifiedFiles"])
    assert file_blocks(e.summary)[1] == read | modified  # the summary ends with the same lists
    ours = [f for f in c.files if set(f["ops"]) & PI_FILE_OPS]
    assert len(ours) == len(read | modified)  # every file pi listed, and no other, came from a file tool call
    for f in ours:
        assert "details" in f["where"]
        assert f["path"] in (modified if {"write", "edit"} & set(f["ops"]) else read | modified)


def test_kept_and_dropped_files(scored) -> None:  # type: ignore[no-untyped-def]
    _, c, e = scored
    listed = set(e.details["readFiles"]) | set(e.details["modifiedFiles"])
    prose = file_blocks(e.summary)[0]
    kept = [f for f in c.files if f["kept"]]
    dropped = [f for f in c.files if not f["kept"]]
    assert kept and dropped
    for f in dropped:  # only files named in a bash command, which pi does not collect
        assert f["ops"] == ["bash"]
        assert not any(x == f["path"] or x.endswith("/" + f["path"]) for x in listed)
        assert f["path"] not in prose
    for f in kept:
        assert ("details" in f["where"]) == any(x == f["path"] or x.endswith("/" + f["path"]) for x in listed)
    # what the session used later: every file pi's lists hold survives; only bash-named ones can be lost
    assert c.recall()["files"] is not None
    assert all(n.kind != "files" or n.item not in listed for n in c.forgotten)
    assert {n.item for n in c.needed if n.kind == "files" and n.kept} <= {f["path"] for f in kept}
