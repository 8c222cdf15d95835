"""The summarizer interface used by compaction, turn-prefix and branch summaries.

A :class:`SummaryRequest` carries what pi's ``generateSummary`` / ``generateTurnPrefixSummary`` /
``generateBranchSummary`` receive (messages, previous summary, custom instructions, output
budget); a :class:`Summarizer` turns it into a :class:`SummaryResult` with its usage. The slice
strategies (``slices.py``) add two kinds of their own: ``slice`` (one part of a long history) and
``stitch`` (merge slice summaries given as ``parts``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from ..context import ContextMessage

Kind = Literal["history", "turn_prefix", "branch", "slice", "stitch"]


@dataclass(frozen=True)
class SummaryRequest:
    messages: tuple[ContextMessage, ...]
    previous_summary: str | None = None
    custom_instructions: str | None = None
    max_tokens: int = 13107
    """Output budget in tokens (pi: 0.8 × reserveTokens for history, 0.5 × for a turn prefix)."""
    kind: Kind = "history"
    style: str = "pi"
    replace_instructions: bool = False
    """pi's branch ``replaceInstructions``: the custom instructions replace the whole prompt."""
    slice_index: int = 0
    slice_count: int = 1
    parts: tuple[str, ...] = ()
    """``stitch``: the slice summaries to merge; ``slice``: summaries of the earlier slices."""


@dataclass(frozen=True)
class SummaryUsage:
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    seconds: float = 0.0
    cost_usd: float | None = None

    def __add__(self, other: SummaryUsage) -> SummaryUsage:
        """Sum of two usages (seconds add up: use :meth:`wall` for calls made in parallel)."""
        cost = (
            None
            if self.cost_usd is None and other.cost_usd is None
            else (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        )
        return SummaryUsage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.calls + other.calls,
            self.seconds + other.seconds,
            cost,
        )

    def wall(self, seconds: float) -> SummaryUsage:
        return SummaryUsage(self.input_tokens, self.output_tokens, self.calls, seconds, self.cost_usd)


@dataclass(frozen=True)
class SummaryResult:
    text: str
    usage: SummaryUsage = field(default_factory=SummaryUsage)
    summarizer: str = "offline extractive"
    """Label of what wrote the text, e.g. "offline extractive", "openai:gpt-4o-mini"."""
    prompt: str = ""
    """The exact prompt(s) sent ("" when nothing was sent)."""
    error: str | None = None
    fell_back: bool = False
    """True when an LLM call failed and the text is the offline extractive summary instead."""


class Summarizer(Protocol):
    name: str
    label: str

    def summarize(self, req: SummaryRequest) -> SummaryResult: ...
