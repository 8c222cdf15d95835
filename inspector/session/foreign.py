"""Lines of one agent's format found inside another's file (a pi line in a Claude Code
transcript, say): recognised by shape, reported with their line numbers, never imported."""

from __future__ import annotations

from typing import Any

from ..agents import AGENTS
from .tree import LoadIssue

PI_TYPES = frozenset(
    {
        "session",
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    }
)
CODEX_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
CLAUDE_CODE_TYPES = frozenset({"user", "assistant", "system", "attachment"})
MAX_LISTED = 20


def foreign_format(obj: Any, host: str) -> str | None:
    """The format a JSON line belongs to if it is another agent's (``pi``, ``claude-code``,
    ``codex``), judged by its shape; None for lines of ``host`` or of no known format."""
    if not isinstance(obj, dict):
        return None
    t = obj.get("type")
    if not isinstance(t, str):
        return None
    found = None
    if t in PI_TYPES and isinstance(obj.get("id"), str) and ("parentId" in obj or t == "session"):
        found = "pi"
    elif t in CODEX_TYPES and isinstance(obj.get("payload"), dict):
        found = "codex"
    elif t in CLAUDE_CODE_TYPES and isinstance(obj.get("uuid"), str) and "parentUuid" in obj:
        found = "claude-code"
    return found if found != host else None


def _label(fmt: str) -> str:
    return AGENTS[fmt].format_label if fmt in AGENTS else fmt


def foreign_issues(found: list[tuple[int, str]], host_label: str) -> list[LoadIssue]:
    """One located warning per foreign line (the first ``MAX_LISTED``), then a count of the rest."""
    out = [
        LoadIssue(
            "foreign-line",
            "warning",
            f"a line of another format ({_label(fmt)}) inside a {host_label}; not imported",
            line=n,
        )
        for n, fmt in found[:MAX_LISTED]
    ]
    if len(found) > MAX_LISTED:
        rest = found[MAX_LISTED:]
        out.append(
            LoadIssue(
                "foreign-line",
                "warning",
                f"{len(rest)} more line(s) of another format, lines {rest[0][0]}…{rest[-1][0]}; not imported",
                line=rest[0][0],
            )
        )
    return out
