"""The check on the six real transcripts in ``../shared/real-sessions`` (skipped where that folder is
not beside the clone: the files are third-party data and never copied into the repository)."""

from __future__ import annotations

import json
import re

import pytest

from inspector.importers import load_any
from inspector.importers.opencode_dcp import Replay, ignored
from inspector.recon import CAUSES, check

from .support.paths import SHARED

REAL = SHARED / "real-sessions"
FILES = sorted(p for p in REAL.rglob("*") if p.suffix in (".json", ".jsonl")) if REAL.is_dir() else []
needs_real = pytest.mark.skipif(not FILES, reason="../shared/real-sessions is not beside this clone")


@needs_real
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_rebuild_tracks_each_real_session_within_five_percent(path) -> None:  # type: ignore[no-untyped-def]
    c = check(load_any(path))
    assert c.calls and c.spread_excluding_flagged <= 0.05 * c.max_recorded
    assert all(f.cause in CAUSES and f.detail for f in c.flags)


@needs_real
def test_dcp_ranges_replayed_match_what_dcp_said_it_compressed() -> None:
    doc = json.loads((REAL / "opencode" / "shaheislam-dotfiles-e9150c5ddd-0.json").read_text())
    msgs = doc["messages"]
    said = {
        p["id"]: int(re.match(r"Compressed (\d+) messages", p["state"]["output"]).group(1))
        for m in msgs
        for p in m["parts"]
        if p.get("tool") == "compress"
    }
    blocks = Replay(msgs).run()
    got = {k: sum(not ignored(msgs[i]) for i in range(b.lo, b.hi + 1)) for k, (b,) in blocks.items()}
    assert got == said and len(said) == 5


@needs_real
def test_dcps_own_notifications_account_for_where_the_rebuild_departs_at_its_compresses() -> None:
    """The export's five compress calls each took effect with the rebuilt context smaller than the
    recorded prompt; DCP's notifications in the export say its summaries were larger than the
    compress calls record, and the check gives those figures at each."""
    c = check(load_any(REAL / "opencode" / "shaheislam-dotfiles-e9150c5ddd-0.json"))
    prunes = {f.entry_index: f.detail for f in c.flags if f.cause == "prune"}
    assert sorted(prunes) == [115, 165, 193, 244, 288]
    assert all("DCP's own notification counts the summary it sent at" in d for d in prunes.values())
    assert "34.4k tokens" in prunes[165] and "21k more than the blocks it replaced had" in prunes[165]
    assert "67.3k tokens" in prunes[244] and "26k more than the blocks it replaced had" in prunes[244]


@needs_real
def test_the_codex_rollouts_fall_after_its_searches_is_said_to_be_their_results() -> None:
    """Rollout 888ba8: three web searches after its compaction add about 78k tokens the file never
    holds; the first call after the interrupted turn sends 69k fewer than the file explains."""
    c = check(load_any(REAL / "codex" / "entityprocess-agentv-888ba8f699-1.jsonl"))
    fell = {f.entry_index: f for f in c.flags}[301]
    assert (
        fell.tokens < -60_000
        and "web search results flagged at step(s) 71, 73, 74 had added (78k" in fell.detail
    )
    assert sum("web search results flagged" in f.detail for f in c.flags) == 1


@needs_real
def test_the_claude_code_fall_at_a_new_prompt_was_sent_first_by_a_request_the_file_does_not_hold() -> None:
    """entireio b0dc55, call 29: 44k fewer tokens than the file explains, yet all but 18 of its
    95,864 tokens read from the cache at a length no recorded call had cached."""
    c = check(load_any(REAL / "claude-code" / "entireio-cli-b0dc55b3a1-1.jsonl"))
    (fell,) = [f for f in c.flags if f.cause == "context change not in the file"]
    assert fell.step == 29 and fell.tokens < -40_000
    assert "read all but 18 tokens of this shorter prompt" in fell.detail
    assert "a request the file does not record" in fell.detail


@needs_real
def test_a_recent_claude_code_file_loads_with_the_attachments_it_sent() -> None:
    s = load_any(REAL / "claude-code" / "ta93abe-me-abd0788e9d-0.jsonl")
    assert s.format == "claude-code" and not [i for i in s.issues if i.severity != "info"]
    c = check(s)
    first = c.calls[0]
    assert first.sent > 20_000 and not c.flags  # the listings and hook context sent before the first call
