"""Pruning strategies: a registry, settings parsing, and pruning at one point of a session.

Each strategy lives in its own module, which opens with its source and the quirks it
reproduces. ``REGISTRY`` maps names to instances; ``list_strategies()`` describes them.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ValidationError

from .base import CallInfo, Decision, PruneResult, PruneStats, Strategy
from .claude_code_microcompact import ClaudeCodeMicrocompact
from .context_editing import ContextEditing
from .dcp import Dcp
from .none import NoPruning
from .opencode import OpenCodePrune
from .pi_context_pruning import PiContextPruning
from .recorded import Recorded
from .turn_aware import TurnAware

REGISTRY: dict[str, Strategy] = {
    s.name: s
    for s in (NoPruning(), Recorded(), OpenCodePrune(), PiContextPruning(), TurnAware(), Dcp(), ContextEditing(),
              ClaudeCodeMicrocompact())
}

__all__ = ["REGISTRY", "CallInfo", "Decision", "PruneResult", "PruneStats", "Strategy", "get_strategy",
           "list_strategies", "parse_settings", "prune_at"]


def get_strategy(name: str) -> Strategy:
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown pruning strategy {name!r}; choose one of {', '.join(REGISTRY)}") from None


def list_strategies() -> list[dict[str, Any]]:
    return [s.info() for s in REGISTRY.values()]


def _coerce(field: Any, raw: str) -> Any:
    ann = str(field.annotation)
    if "tuple" in ann or "list" in ann:
        raw = raw.strip()
        if raw.startswith("["):
            return json.loads(raw)
        return [x.strip() for x in raw.split(",") if x.strip()]
    if "bool" in ann:
        low = raw.strip().lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"expected true or false, not {raw!r}")
    return raw


def parse_settings(strategy: Strategy, values: dict[str, Any]) -> BaseModel:
    """Settings from ``KEY=VALUE`` strings (or typed values); a clear error for a bad key or value."""
    fields = strategy.Settings.model_fields
    data: dict[str, Any] = {}
    for k, v in values.items():
        key = k.replace("-", "_").lower()
        if key not in fields:
            raise KeyError(f"{strategy.name} has no setting {k!r}; its settings: {', '.join(fields) or '(none)'}")
        data[key] = _coerce(fields[key], v) if isinstance(v, str) else v
    try:
        return strategy.Settings(**data)
    except ValidationError as e:
        err = e.errors()[0]
        raise ValueError(f"{strategy.name} setting {err['loc'][0]}: {err['msg']}") from None


def prune_at(
    session: Any,
    strategy_name: str,
    settings: BaseModel | dict[str, Any] | None = None,
    leaf: int | str = "leaf",
    at_step: int | None = None,
    counter: str = "pi",
    context_window: int = 200000,
) -> PruneResult:
    """Prune the context of one model call on the branch ending at ``leaf``.

    ``at_step`` N is the N-th model call (assistant message, 0-based) on that branch: its context
    is pi's ``buildSessionContext`` at the entry just before that assistant message. Without it,
    the call that would follow ``leaf`` (the whole context at the leaf). Earlier calls are
    replayed in order first (one per assistant message; ``new_prompt`` when a user message came
    since the previous one), so persistent strategies (OpenCode, turn-aware's latch) start
    from the state those calls built. The session's own compactions stand (replay "recorded")."""
    from ..context import build_session_context
    from ..replay import ReplaySettings, replay, session_counter

    strat = get_strategy(strategy_name)
    if isinstance(settings, dict):
        settings = parse_settings(strat, settings)
    settings = settings or strat.Settings()
    li = session.resolve(leaf)
    rs = ReplaySettings(strategy=strategy_name, strategy_settings=tuple(sorted(settings.model_dump().items())),
                        counter=counter, context_window=context_window, leaf=li)
    r = replay(session, rs)
    if at_step is not None:
        if not 0 <= at_step < len(r.steps):
            raise KeyError(f"step {at_step} out of range: this branch has {len(r.steps)} model calls")
        d = r.step_detail(at_step)
        if d.prune is None:  # strategy "none": the replay does not call it
            return strat.apply(d.before, settings, None, CallInfo(at_step, True, context_window, None),
                               session_counter(session, counter))
        return d.prune
    ctx = build_session_context(session, li).messages
    c = session_counter(session, counter)
    state = None
    new_prompt = True
    if r.steps:
        last = r.steps[-1]
        d = r.step_detail(last.step)
        state = d.prune.state if d.prune is not None else None
        new_prompt = any(cm.role == "user" and cm.entry_index is not None and cm.entry_index > last.entry_index
                         for cm in ctx)
    tokens = sum(c.count_many([m.message for m in ctx]))
    call = CallInfo(step=len(r.steps), new_prompt=new_prompt, context_window=context_window, context_tokens=tokens)
    return strat.apply(ctx, settings, state, call, c)
