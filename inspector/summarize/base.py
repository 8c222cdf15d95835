"""The summarizer interface used by compaction, turn-prefix and branch summaries."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from ..context import ContextMessage

Kind = Literal["history", "turn_prefix", "branch"]


@dataclass(frozen=True)
class SummaryRequest:
    messages: tuple[ContextMessage, ...]
    previous_summary: str | None = None
    custom_instructions: str | None = None
    max_tokens: int = 13107
    kind: Kind = "history"
    style: str = "pi"


@dataclass(frozen=True)
class SummaryUsage:
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    seconds: float = 0.0
    cost_usd: float | None = None


@dataclass(frozen=True)
class SummaryResult:
    text: str
    usage: SummaryUsage = field(default_factory=SummaryUsage)
    summarizer: str = "offline extractive"
    prompt: str = ""
    error: str | None = None
    fell_back: bool = False


class Summarizer(Protocol):
    name: str
    label: str

    def summarize(self, req: SummaryRequest) -> SummaryResult: ...
