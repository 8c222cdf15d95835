"""Codex CLI's compaction (``openai/codex`` ``codex-rs/core/src/compact.rs``).

Auto-compaction when the tokens used reach ``auto_compact_token_limit`` (90% of the window,
``>=``) after a sampling request that still needs a follow-up (tool calls pending). The new
history keeps the previous **user** messages, newest first within 20,000 tokens (the one
that overflows is truncated), back in chronological order, then one user message with the
summary prefix and the summary; assistant messages, tool calls and outputs are all dropped.
The prefix and the 20,000 are Codex's own; its rollouts record them, so the importer
(:mod:`inspector.importers.codex`) holds them and recognises them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..context import ContextMessage
from ..importers.codex import CODEX_SUMMARY_PREFIX, CODEX_USER_MESSAGE_MAX_TOKENS
from ..session.models import TextContent, UserMessage
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

__all__ = [
    "CODEX_SUMMARY_PREFIX",
    "CODEX_USER_MESSAGE_MAX_TOKENS",
    "CodexPolicy",
    "CodexSettings",
    "codex_limit",
]


class CodexSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    fraction: float = Field(0.9, gt=0, le=1.5, description="compact at this fraction of the window.")
    user_tokens: int = Field(
        CODEX_USER_MESSAGE_MAX_TOKENS, ge=0, description="recent user-message tokens kept after compaction."
    )


def codex_limit(window: int, settings: Any) -> int:
    """Codex's ``auto_compact_token_limit``: 90% of the window (integer arithmetic, as Codex)."""
    return window * 9 // 10 if settings.fraction == 0.9 else int(window * settings.fraction)


def _is_codex_summary(m: UserMessage) -> bool:
    return text_of(m).startswith(CODEX_SUMMARY_PREFIX)


class CodexPolicy(CompactionPolicy):
    info = PolicyInfo(
        "codex",
        "Codex CLI",
        "openai/codex codex-rs/core/src/compact.rs",
        "At 90% of the window: keep recent user messages (≤ 20k tokens) and a summary, drop the rest.",
    )
    Settings = CodexSettings
    prefix = "codex_"
    summary_style = "codex"

    def threshold(self, window: int, settings: Any, reserve: int) -> int | None:
        return codex_limit(window, settings)

    def threshold_label(self, settings: Any) -> str:
        return f"{settings.fraction:.0%} of window (Codex)"

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
        limit = codex_limit(window, settings)
        if tokens >= limit and needs_follow_up:
            return True, f"context {tokens:,} ≥ auto-compact limit {limit:,} with tool calls pending (Codex)"
        return False, ""

    @staticmethod
    def _kept_user_messages(req: CompactionRequest, budget: int) -> list[ContextMessage]:
        """The recent user messages within ``budget`` tokens, newest first (the one that
        overflows truncated), back in chronological order."""
        kept: list[ContextMessage] = []
        used = 0
        for c in reversed(req.context.msgs):
            if (
                not isinstance(c.message, UserMessage)
                or c.entry_index is None
                or _is_codex_summary(c.message)
            ):
                continue
            t = req.context.counter.count(c.message)
            if used + t <= budget:
                kept.append(c)
                used += t
                continue
            remaining = budget - used
            if remaining > 0:
                text = (
                    "".join(b.text for b in c.message.content if isinstance(b, TextContent))
                    if not isinstance(c.message.content, str)
                    else c.message.content
                )
                cut = text[: remaining * 4]
                kept.append(
                    ContextMessage(
                        synthetic_text(cut + f"\n…{max(0, t - remaining)} tokens truncated…"), c.entry_index
                    )
                )
            break
        kept.reverse()
        return kept

    def compact(self, req: CompactionRequest) -> Compacted | None:
        msgs = req.context.msgs
        s = req.summarize(prep_for(msgs, req.compaction, None))
        budget = req.settings.user_tokens  # type: ignore[attr-defined]
        kept = self._kept_user_messages(req, budget)
        req.context.reset(
            [*kept, ContextMessage(synthetic_text(CODEX_SUMMARY_PREFIX + "\n" + s["text"]), None)]
        )
        story = (
            f"Codex kept {len(kept)} recent user message(s) (≤ {budget:,} tokens) and a summary; the "
            f"other {len(msgs) - len(kept)} messages (answers, tool calls and outputs) were dropped"
        )
        return Compacted(
            {**s, "story": story},
            kept[0].entry_index if kept else None,
            [c.entry_index for c in msgs],
            [story],
        )
