"""Compaction policies for what-if replays: when each agent compacts, and what it keeps.

Each policy answers two questions at every model call of a replay — *does it compact now?*
and *what does the context look like afterwards?* — the way its source system does:

``pi`` (pi-coding-agent ``agent-session.ts``; code reading, the oracle checks the pieces)
    After each assistant message: ``contextTokens > contextWindow - reserveTokens`` (strict),
    skipping aborted messages. A context already over the window before a call is pi's
    overflow path: compact, then retry the call. The compaction itself is pi's
    ``prepareCompaction`` + summary + ``buildSessionContext``, run by :mod:`inspector.compaction`.
``early`` (the context-manager design in ``../shared/seeds``; **beyond pi**)
    The same pi compaction, requested as soon as the context reaches the red zone
    (``red_fraction`` of the window, ``>=``), through a latch: one request per pressure
    episode, re-armed when the context falls back below the red zone.
``opencode`` (OpenCode ``session/compaction.ts`` and ``overflow.ts``)
    Overflow when ``tokens >= usable``, ``usable = contextWindow - maxOutputTokens``
    (``maxOutputTokens = min(model output limit, 32000)``), checked before each call from the
    last finished assistant's usage. The compacted context is OpenCode's: the summary exchange
    ("What did we do so far?" + the summary) followed by the retained tail of whole recent turns
    within ``clamp(floor(usable × 0.25), 2000, 15000)`` tokens (the newer tail rule; set
    ``tail`` off for the classic behaviour: no tail).
``codex`` (Codex CLI ``codex-rs/core/src/compact.rs``)
    Auto-compaction when the tokens used reach ``auto_compact_token_limit`` (90% of the window,
    ``>=``) after a sampling request that still needs a follow-up (tool calls pending). The new
    history keeps the previous **user** messages, newest first within 20,000 tokens (the one
    that overflows is truncated), back in chronological order, then one user message with the
    summary prefix and the summary; assistant messages, tool calls and outputs are all dropped.
``claude-code`` (Claude Code 2.1.x ``services/compact/autoCompact.ts`` as third-party analyses
    report it; **unverified**, Claude Code's source is not public)
    Before each call: ``tokens >= effective window − 13,000`` where the effective window is the
    window minus ``min(max output, 20,000)`` reserved for the summary (167,000 for a 200k model).
    The new context is the summary alone, as a user message ("This session is being continued
    from a previous conversation…"); nothing is kept verbatim. Not reproduced: the files, plan and
    to-do list Claude Code re-attaches after compacting.
``never``
    No compaction: the context grows until it overflows (overflows are counted).

Token figures are the replay's own (the chosen counter over the replayed context plus the
answer), not the recorded usage: once a setting changes the context, the recorded usage no
longer describes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

OPENCODE_OUTPUT_TOKEN_MAX = 32000
OPENCODE_MIN_TAIL = 2000
OPENCODE_MAX_TAIL = 15000
CODEX_USER_MESSAGE_MAX_TOKENS = 20000
CODEX_SUMMARY_PREFIX = (
    "Another language model started to solve this problem and produced a summary of its thinking "
    "process. You also have access to the state of the tools that were used by that language model. "
    "Use this to build on the work that has already been done and avoid duplicating work. Here is "
    "the summary produced by the other language model, use the information in this summary to "
    "assist with your own analysis:"
)
OPENCODE_SUMMARY_QUESTION = "What did we do so far?"
CLAUDE_CODE_AUTOCOMPACT_BUFFER = 13000
CLAUDE_CODE_SUMMARY_OUTPUT_MAX = 20000
CLAUDE_CODE_SUMMARY_PREFIX = (
    "This session is being continued from a previous conversation that ran out of context. The "
    "conversation is summarized below:"
)


class PolicySettings(BaseModel):
    """Settings of every policy (each policy reads the ones it uses)."""

    model_config = ConfigDict(frozen=True)

    early_red_fraction: float = Field(
        0.70, gt=0, le=1.5, description="early: request compaction when context ≥ this fraction of the window (turn-aware red)."
    )
    opencode_max_output: int = Field(
        32000, ge=0, description="opencode: the model's output limit (capped at 32,000) reserved from the window."
    )
    opencode_tail: bool = Field(True, description="opencode: keep a tail of recent whole turns (newer OpenCode).")
    codex_fraction: float = Field(0.9, gt=0, le=1.5, description="codex: compact at this fraction of the window.")
    codex_user_tokens: int = Field(
        CODEX_USER_MESSAGE_MAX_TOKENS, ge=0, description="codex: recent user-message tokens kept after compaction."
    )
    claude_max_output: int = Field(
        CLAUDE_CODE_SUMMARY_OUTPUT_MAX, ge=0, description="claude-code: the model's output limit (capped at "
        "20,000) reserved for the summary (reported)."
    )
    claude_buffer: int = Field(
        CLAUDE_CODE_AUTOCOMPACT_BUFFER, ge=0, description="claude-code: compact this many tokens below the "
        "effective window (reported 13,000)."
    )


@dataclass(frozen=True)
class PolicyInfo:
    name: str
    title: str
    source: str
    description: str
    beyond_source: bool = False
    unverified: str = ""
    """Why the source cannot be checked (empty when it can)."""


POLICIES: dict[str, PolicyInfo] = {
    "recorded": PolicyInfo(
        "recorded",
        "As recorded",
        "the session file",
        "The session's own compactions and branch summaries stand; only pruning is replayed on top.",
    ),
    "pi": PolicyInfo(
        "pi",
        "pi",
        "pi-coding-agent core/agent-session.ts, core/compaction/compaction.ts",
        "Compact after an answer when context > window − reserveTokens; overflow: compact and retry.",
    ),
    "early": PolicyInfo(
        "early",
        "Early (turn-aware red zone)",
        "context-manager design (seeds/context-manager-design.md)",
        "pi's compaction, requested once per pressure episode when the context reaches the red zone.",
        beyond_source=True,
    ),
    "opencode": PolicyInfo(
        "opencode",
        "OpenCode",
        "sst/opencode packages/opencode/src/session/compaction.ts, overflow.ts",
        "Compact when tokens ≥ window − max output; keep the summary and a tail of recent turns.",
    ),
    "codex": PolicyInfo(
        "codex",
        "Codex CLI",
        "openai/codex codex-rs/core/src/compact.rs",
        "At 90% of the window: keep recent user messages (≤ 20k tokens) and a summary, drop the rest.",
    ),
    "claude-code": PolicyInfo(
        "claude-code",
        "Claude Code (reported)",
        "third-party analyses of Claude Code 2.1.x services/compact/autoCompact.ts (not public)",
        "At window − min(max output, 20k) − 13k (167k of 200k): the summary replaces everything.",
        unverified="Claude Code's source is not public; the threshold constants and what is kept come from "
                   "third-party analyses. The files it re-attaches after compacting are not reproduced.",
    ),
    "never": PolicyInfo("never", "Never", "—", "No compaction; overflows are counted."),
}


def codex_limit(window: int, settings: PolicySettings) -> int:
    """Codex's ``auto_compact_token_limit``: 90% of the window (integer arithmetic, as Codex)."""
    return window * 9 // 10 if settings.codex_fraction == 0.9 else int(window * settings.codex_fraction)


def opencode_usable(window: int, settings: PolicySettings) -> int:
    return window - min(settings.opencode_max_output, OPENCODE_OUTPUT_TOKEN_MAX)


def claude_code_threshold(window: int, settings: PolicySettings) -> int:
    return window - min(settings.claude_max_output, CLAUDE_CODE_SUMMARY_OUTPUT_MAX) - settings.claude_buffer


def opencode_tail_budget(usable: int) -> int:
    return max(OPENCODE_MIN_TAIL, min(OPENCODE_MAX_TAIL, usable * 25 // 100))


@dataclass
class Trigger:
    """Mutable per-replay trigger state (the early policy's latch)."""

    latched: bool = False

    def after_answer(
        self,
        policy: str,
        tokens: int,
        window: int,
        reserve: int,
        settings: PolicySettings,
        *,
        aborted: bool,
        needs_follow_up: bool,
    ) -> tuple[bool, str]:
        """Does ``policy`` compact after this answer? Returns (decision, plain-words reason)."""
        if policy == "pi":
            if aborted:
                return False, "aborted answers never trigger pi's compaction"
            limit = window - reserve
            if tokens > limit:
                return True, f"context {tokens:,} > window − reserve = {limit:,} (pi's shouldCompact)"
            return False, ""
        if policy == "early":
            red = int(settings.early_red_fraction * window)
            if tokens < red:
                if self.latched:
                    self.latched = False  # pressure fell: re-arm
                return False, ""
            if self.latched:
                return False, "red zone, but a request was already made in this pressure episode"
            self.latched = True
            return True, f"context {tokens:,} ≥ red zone {red:,} ({settings.early_red_fraction:.0%} of the window)"
        if policy == "opencode":
            usable = opencode_usable(window, settings)
            if tokens >= usable:
                return True, f"context {tokens:,} ≥ usable {usable:,} = window − max output (OpenCode isOverflow)"
            return False, ""
        if policy == "claude-code":
            limit = claude_code_threshold(window, settings)
            if tokens >= limit:
                return True, (f"context {tokens:,} ≥ window − min(max output, 20k) − buffer = {limit:,} "
                              "(Claude Code's auto-compact threshold, as reported)")
            return False, ""
        if policy == "codex":
            limit = codex_limit(window, settings)
            if tokens >= limit and needs_follow_up:
                return True, f"context {tokens:,} ≥ auto-compact limit {limit:,} with tool calls pending (Codex)"
            return False, ""
        return False, ""

    def compacted(self) -> None:
        """The design clears the latch after a successful compaction (and when pressure falls)."""
        self.latched = False


def trigger_threshold(policy: str, window: int, settings: PolicySettings, reserve_tokens: int) -> int | None:
    """The context size at which ``policy`` compacts for this window (None: it never does on its own).
    Used to warn when a window is too small for a policy: at a threshold ≤ 0 every call compacts."""
    if policy == "pi":
        return window - reserve_tokens
    if policy == "early":
        return int(settings.early_red_fraction * window)
    if policy == "opencode":
        return opencode_usable(window, settings)
    if policy == "claude-code":
        return claude_code_threshold(window, settings)
    if policy == "codex":
        return codex_limit(window, settings)
    return None


def describe(policy: str) -> dict[str, Any]:
    p = POLICIES[policy]
    return {"name": p.name, "title": p.title, "source": p.source, "description": p.description,
            "beyondSource": p.beyond_source, "unverified": p.unverified}
