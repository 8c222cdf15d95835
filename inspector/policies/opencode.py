"""OpenCode's compaction (``sst/opencode`` ``packages/opencode/src/session/compaction.ts``, ``overflow.ts``).

Overflow when ``tokens >= usable``, ``usable = contextWindow - maxOutputTokens``
(``maxOutputTokens = min(model output limit, 32000)``), checked before each call from the
last finished assistant's usage. The compacted context is OpenCode's: the summary exchange
("What did we do so far?" + the summary) followed by the retained tail of whole recent turns
within ``clamp(floor(usable × 0.25), 2000, 15000)`` tokens (the newer tail rule; set
``tail`` off for the classic behaviour: no tail).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..context import ContextMessage
from ..session.models import AssistantMessage, UserMessage
from .base import (
    Compacted,
    CompactionPolicy,
    CompactionRequest,
    PolicyInfo,
    TriggerState,
    prep_for,
    synthetic_text,
)

OPENCODE_OUTPUT_TOKEN_MAX = 32000
OPENCODE_MIN_TAIL = 2000
OPENCODE_MAX_TAIL = 15000
OPENCODE_SUMMARY_QUESTION = "What did we do so far?"


class OpenCodeSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    max_output: int = Field(
        32000, ge=0, description="the model's output limit (capped at 32,000) reserved from the window."
    )
    tail: bool = Field(True, description="keep a tail of recent whole turns (newer OpenCode).")


def opencode_usable(window: int, settings: Any) -> int:
    return window - min(settings.max_output, OPENCODE_OUTPUT_TOKEN_MAX)


def opencode_tail_budget(usable: int) -> int:
    return max(OPENCODE_MIN_TAIL, min(OPENCODE_MAX_TAIL, usable * 25 // 100))


class OpenCodePolicy(CompactionPolicy):
    info = PolicyInfo(
        "opencode",
        "OpenCode",
        "sst/opencode packages/opencode/src/session/compaction.ts, overflow.ts, processor.ts",
        "Compact when a step finishes with tokens ≥ window − max output (a failed one is not checked); "
        "keep the summary and a tail of recent turns.",
    )
    Settings = OpenCodeSettings
    prefix = "opencode_"
    checks_failed = False
    """OpenCode checks ``isOverflow`` when a step finishes (``session/processor.ts``, ``finish-step``),
    which a step that failed or was interrupted never reaches."""
    summary_style = "opencode"

    def threshold(self, window: int, settings: Any, reserve: int) -> int | None:
        return opencode_usable(window, settings)

    def threshold_label(self, settings: Any) -> str:
        return "window − max output (OpenCode)"

    def after_answer(
        self,
        trigger: TriggerState,
        tokens: int,
        window: int,
        reserve: int,
        settings: Any,
        *,
        aborted: bool,
        needs_follow_up: bool,
    ) -> tuple[bool, str]:
        usable = opencode_usable(window, settings)
        if tokens >= usable:
            return True, f"context {tokens:,} ≥ usable {usable:,} = window − max output (OpenCode isOverflow)"
        return False, ""

    def _tail_start(self, req: CompactionRequest) -> int:
        """Where the tail of whole recent turns starts (``len(msgs)``: no tail)."""
        msgs = req.context.msgs
        tail_start = len(msgs)
        if not req.settings.tail:  # type: ignore[attr-defined]
            return tail_start
        budget = opencode_tail_budget(opencode_usable(req.window, req.settings))
        starts = [
            i for i, c in enumerate(msgs) if isinstance(c.message, UserMessage) and c.entry_index is not None
        ]
        used = 0
        for s in reversed(starts):
            size = sum(req.context.counter.count(c.message) for c in msgs[s:tail_start])
            if used + size > budget:
                break
            used += size
            tail_start = s
        return len(msgs) if tail_start == 0 else tail_start  # a tail starting at index 0 means no tail

    def compact(self, req: CompactionRequest) -> Compacted | None:
        msgs = req.context.msgs
        tail_start = self._tail_start(req)
        head, tail = msgs[:tail_start], msgs[tail_start:]
        prev = next(
            (
                c.message.content[0].text  # type: ignore[union-attr]
                for c in head
                if c.entry_index is None and isinstance(c.message, AssistantMessage) and c.message.content
            ),
            None,
        )
        s = req.summarize(prep_for(head, req.compaction, prev))
        req.context.reset(
            [
                ContextMessage(synthetic_text(OPENCODE_SUMMARY_QUESTION), None),
                ContextMessage(synthetic_text(s["text"], "assistant"), None),
                *tail,
            ]
        )
        how = (
            " (tail budget clamp(usable × 25%, 2k, 15k))"
            if req.settings.tail  # type: ignore[attr-defined]
            else " (classic: no tail)"
        )
        story = (
            f"OpenCode summarised the {len(head)} oldest messages and kept a tail of {len(tail)} "
            f"message(s) of whole recent turns" + how
        )
        return Compacted(
            {**s, "story": story},
            tail[0].entry_index if tail else None,
            [c.entry_index for c in head],
            [story],
        )
