"""What the doctor reports: its options, a finding (kind, severity, one-line message, the entries and
file lines involved) and the report; the helpers every check uses."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..session.models import (
    AssistantMessage,
    ToolCall,
)
from ..session.tree import Session
from ..window import DEFAULT_WINDOW, MIN_WINDOW

Severity = Literal["error", "warning", "info"]


class DoctorOptions(BaseModel):
    model_config = ConfigDict(frozen=True)

    context_window: int = Field(DEFAULT_WINDOW, ge=MIN_WINDOW, description="Window for the overflow check.")
    model_windows: tuple[tuple[str, str, int], ...] = Field(
        (),
        description="(provider, model, window) of the models whose calls are checked against their own "
        "window (:attr:`inspector.replay.ReplaySettings.model_windows`).",
    )
    giant_tokens: int = Field(
        20000, ge=0, description="A single tool output above this many tokens is giant."
    )
    read_repeat: int = Field(4, description="Reading the same file this many times is flagged.")
    loop_repeat: int = Field(3, description="The same tool call this many times in a row is a loop.")
    streak: int = Field(3, description="This many aborted/error answers in a row is a streak.")
    reread_window: int = Field(5, description="Calls after a compaction in which a re-read counts.")
    retention_min: float = Field(
        0.5,
        description="A compaction keeping less than this share of what the session "
        "needed later from its span is flagged (inspector.retention).",
    )
    retention_needed: int = Field(
        3, description="... when the session needed at least this many items from it."
    )
    cache_break_tokens: int = Field(
        10000, description="A call that lost at least this many cached tokens is a cache break."
    )


class Finding(BaseModel):
    kind: str
    severity: Severity
    message: str
    entries: list[int] = Field(default_factory=list)
    """Entry indexes involved (file order, header excluded), first the main one."""
    lines: list[int] = Field(default_factory=list)


@dataclass(frozen=True)
class DoctorReport:
    findings: tuple[Finding, ...]
    leaf: int | None
    options: DoctorOptions

    def counts(self) -> dict[str, int]:
        return dict(Counter(f.severity for f in self.findings))

    def as_dict(self) -> dict[str, object]:
        return {
            "leaf": self.leaf,
            "options": self.options.model_dump(),
            "counts": self.counts(),
            "findings": [f.model_dump() for f in self.findings],
        }


SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def finding(session: Session, kind: str, severity: Severity, message: str, entries: Sequence[int]) -> Finding:
    """A finding at ``entries`` (the main one first), with the file lines they come from."""
    return Finding(
        kind=kind,
        severity=severity,
        message=message,
        entries=list(entries),
        lines=[session.lines[i] for i in entries if 0 <= i < len(session.lines)],
    )


def tool_calls(m: object) -> list[ToolCall]:
    """The tool calls of an answer (none for any other message)."""
    return [b for b in m.content if isinstance(b, ToolCall)] if isinstance(m, AssistantMessage) else []
