"""Compaction policies for what-if replays: when each agent compacts, and what it keeps.

One module per policy, each opening with its source: :mod:`.pi` (pi, and ``early``, pi's
compaction requested sooner), :mod:`.opencode`, :mod:`.codex`, :mod:`.claude_code` (reported),
:mod:`.never`, :mod:`.recorded`. Each implements :class:`~.base.CompactionPolicy` (its info, its
own settings model, its threshold and trigger, and what it keeps and writes); :data:`POLICIES`
is the registry, as :data:`inspector.pruning.REGISTRY` is for pruning.

:class:`PolicySettings` is the flat settings model replays, URLs (``pol.<field>``) and the CLI's
``--grid`` carry: it is generated from the policies' own models, each field under its policy's
prefix (``codex_fraction`` is :class:`~.codex.CodexSettings` ``fraction``), so it is defined nowhere
else; :meth:`~.base.CompactionPolicy.own_settings` reads a policy's own settings back from it.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, create_model

from ..agents import AGENTS
from .base import (
    Compacted,
    CompactionPolicy,
    CompactionRequest,
    PolicyInfo,
    RunningContext,
    SimulatedPath,
    TriggerState,
)
from .claude_code import (
    CLAUDE_CODE_AUTOCOMPACT_BUFFER,
    CLAUDE_CODE_SUMMARY_OUTPUT_MAX,
    CLAUDE_CODE_SUMMARY_PREFIX,
    ClaudeCodePolicy,
)
from .codex import CODEX_SUMMARY_PREFIX, CODEX_USER_MESSAGE_MAX_TOKENS, CodexPolicy
from .never import NeverPolicy
from .opencode import OPENCODE_SUMMARY_QUESTION, OpenCodePolicy
from .pi import EarlyPolicy, PiPolicy
from .recorded import RecordedPolicy

POLICIES: dict[str, CompactionPolicy] = {
    p.name: p
    for p in (
        RecordedPolicy(),
        PiPolicy(),
        EarlyPolicy(),
        OpenCodePolicy(),
        CodexPolicy(),
        ClaudeCodePolicy(),
        NeverPolicy(),
    )
}

__all__ = [
    "CLAUDE_CODE_AUTOCOMPACT_BUFFER",
    "CLAUDE_CODE_SUMMARY_OUTPUT_MAX",
    "CLAUDE_CODE_SUMMARY_PREFIX",
    "CODEX_SUMMARY_PREFIX",
    "CODEX_USER_MESSAGE_MAX_TOKENS",
    "OPENCODE_SUMMARY_QUESTION",
    "POLICIES",
    "Compacted",
    "CompactionPolicy",
    "CompactionRequest",
    "PolicyInfo",
    "PolicySettings",
    "RunningContext",
    "SimulatedPath",
    "Trigger",
    "TriggerState",
    "describe",
    "get_policy",
    "policy_fields",
    "rule_policy",
    "trigger_threshold",
]


class Trigger(TriggerState):
    """A replay's trigger state, which can also ask any policy by name (tests, teaching)."""

    def after_answer(
        self,
        policy: str,
        tokens: int,
        window: int,
        reserve: int,
        settings: BaseModel,
        *,
        aborted: bool,
        needs_follow_up: bool,
    ) -> tuple[bool, str]:
        """Does ``policy`` compact after this answer? Returns (decision, plain-words reason).
        ``settings``: the flat :class:`PolicySettings`."""
        p = get_policy(policy)
        return p.after_answer(
            self,
            tokens,
            window,
            reserve,
            p.own_settings(settings),
            aborted=aborted,
            needs_follow_up=needs_follow_up,
        )


def get_policy(name: str) -> CompactionPolicy:
    try:
        return POLICIES[name]
    except KeyError:
        raise ValueError(f"unknown compaction policy {name!r}; choose one of {', '.join(POLICIES)}") from None


def _flat_fields() -> dict[str, Any]:
    """Each policy's own settings under its prefix; each help text names its policy."""
    fields: dict[str, Any] = {}
    for p in POLICIES.values():
        for k, f in p.Settings.model_fields.items():
            fi = copy.copy(f)
            fi.description = f"{p.name}: {f.description}" if f.description else None
            fields[p.prefix + k] = (f.annotation, fi)
    return fields


if TYPE_CHECKING:

    class PolicySettings(BaseModel):
        """For type checkers: the fields are generated from the policies' own settings models."""

        def __getattr__(self, name: str) -> Any: ...

else:
    PolicySettings = create_model(
        "PolicySettings",
        __config__=ConfigDict(frozen=True),
        __doc__="Settings of every policy, flat: ``<prefix><field>`` of each policy's own settings model.",
        __module__=__name__,
        **_flat_fields(),
    )


def policy_fields(name: str) -> list[str]:
    """The :class:`PolicySettings` fields a policy reads."""
    prefix = get_policy(name).prefix
    return [k for k in PolicySettings.model_fields if prefix and k.startswith(prefix)]


def trigger_threshold(policy: str, window: int, settings: BaseModel, reserve_tokens: int) -> int | None:
    """The context size at which ``policy`` compacts for this window (None: it never does on its own).
    Used to warn when a window is too small for a policy: at a threshold ≤ 0 every call compacts.
    ``settings``: the flat :class:`PolicySettings`."""
    p = get_policy(policy)
    return p.threshold(window, p.own_settings(settings), reserve_tokens)


def rule_policy(compaction: str, agent: str = "pi") -> CompactionPolicy:
    """The policy whose rule a replay under ``compaction`` draws and narrates: its own; as
    recorded, the rule of the agent that wrote the session (``agent``: the session's format; pi's
    for a format no agent owns)."""
    p = get_policy(compaction)
    if p.as_recorded:
        return get_policy(AGENTS[agent].policy if agent in AGENTS else "pi")
    return p


def describe(policy: str) -> dict[str, Any]:
    return get_policy(policy).describe()
