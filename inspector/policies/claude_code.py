"""Claude Code's auto-compaction, as reported (**unverified**: Claude Code's source is not public).

Claude Code 2.1.x ``services/compact/autoCompact.ts`` as third-party analyses report it: before
each call, ``tokens >= effective window − 13,000`` where the effective window is the window minus
``min(max output, 20,000)`` reserved for the summary (167,000 for a 200k model). The new context is
the summary alone, as a user message ("This session is being continued from a previous
conversation…"); nothing is kept verbatim. Not reproduced: the files, plan and to-do list Claude
Code re-attaches after compacting.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..context import ContextMessage
from ..session.models import UserMessage
from .base import (
    Compacted,
    CompactionPolicy,
    CompactionRequest,
    PolicyInfo,
    TriggerState,
    prep_for,
    synthetic_text,
    text_of,
)

CLAUDE_CODE_AUTOCOMPACT_BUFFER = 13000
CLAUDE_CODE_SUMMARY_OUTPUT_MAX = 20000
CLAUDE_CODE_SUMMARY_PREFIX = (
    "This session is being continued from a previous conversation that ran out of context. The "
    "conversation is summarized below:"
)


class ClaudeCodeSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    max_output: int = Field(
        CLAUDE_CODE_SUMMARY_OUTPUT_MAX,
        ge=0,
        description="the model's output limit (capped at 20,000) reserved for the summary (reported).",
    )
    buffer: int = Field(
        CLAUDE_CODE_AUTOCOMPACT_BUFFER,
        ge=0,
        description="compact this many tokens below the effective window (reported 13,000).",
    )


def claude_code_threshold(window: int, settings: Any) -> int:
    return window - min(settings.max_output, CLAUDE_CODE_SUMMARY_OUTPUT_MAX) - settings.buffer


class ClaudeCodePolicy(CompactionPolicy):
    info = PolicyInfo(
        "claude-code",
        "Claude Code (reported)",
        "third-party analyses of Claude Code 2.1.x services/compact/autoCompact.ts (not public)",
        "At window − min(max output, 20k) − 13k (167k of 200k): the summary replaces everything.",
        unverified="Claude Code's source is not public; the threshold constants and what is kept come from "
        "third-party analyses. The files it re-attaches after compacting are not reproduced.",
    )
    Settings = ClaudeCodeSettings
    prefix = "claude_"
    summary_style = "claude-code"

    def threshold(self, window: int, settings: Any, reserve: int) -> int | None:
        return claude_code_threshold(window, settings)

    def threshold_label(self, settings: Any) -> str:
        return "window − output reserve − buffer (Claude Code, reported)"

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
        limit = claude_code_threshold(window, settings)
        if tokens >= limit:
            return True, (
                f"context {tokens:,} ≥ window − min(max output, 20k) − buffer = {limit:,} "
                "(Claude Code's auto-compact threshold, as reported)"
            )
        return False, ""

    def compact(self, req: CompactionRequest) -> Compacted | None:
        """The whole context is summarised; the summary alone continues."""
        msgs = req.context.msgs
        earlier = [
            c
            for c in msgs
            if c.entry_index is None
            and isinstance(c.message, UserMessage)
            and text_of(c.message).startswith(CLAUDE_CODE_SUMMARY_PREFIX)
        ]
        prev = text_of(earlier[-1].message)[len(CLAUDE_CODE_SUMMARY_PREFIX) + 1 :] if earlier else None
        rest = [c for c in msgs if not any(c is e for e in earlier)]
        s = req.summarize(prep_for(rest, req.compaction, prev))
        req.context.reset(
            [ContextMessage(synthetic_text(CLAUDE_CODE_SUMMARY_PREFIX + "\n" + s["text"]), None)]
        )
        story = f"Claude Code (as reported) summarised all {len(msgs)} messages; only the summary continues"
        return Compacted({**s, "story": story}, None, [c.entry_index for c in msgs], [story])
