"""Queries on the replay layer: pruning at one point of a session (``inspector prune``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ..context import build_session_context
from ..pruning import get_strategy, parse_settings
from ..pruning.base import CallInfo, PruneResult
from ..window import DEFAULT_WINDOW
from .counters import session_counter
from .run import replay
from .settings import ReplaySettings


def prune_at(
    session: Any,
    strategy_name: str,
    settings: BaseModel | dict[str, Any] | None = None,
    leaf: int | str = "leaf",
    at_step: int | None = None,
    counter: str = "pi",
    context_window: int = DEFAULT_WINDOW,
) -> PruneResult:
    """Prune the context of one model call on the branch ending at ``leaf``.

    ``at_step`` N is the N-th model call (assistant message, 0-based) on that branch: its context
    is pi's ``buildSessionContext`` at the entry just before that assistant message. Without it,
    the call that would follow ``leaf`` (the whole context at the leaf). Earlier calls are
    replayed in order first (one per assistant message; ``new_prompt`` when a user message came
    since the previous one), so persistent strategies (OpenCode, turn-aware's latch) start
    from the state those calls built. The session's own compactions stand (replay "recorded")."""
    strat = get_strategy(strategy_name)
    if isinstance(settings, dict):
        settings = parse_settings(strat, settings)
    settings = settings or strat.Settings()
    li = session.resolve(leaf)
    rs = ReplaySettings(
        strategy=strategy_name,
        strategy_settings=tuple(sorted(settings.model_dump().items())),
        counter=counter,
        context_window=context_window,
        leaf=li,
    )
    r = replay(session, rs)
    if at_step is not None:
        if not 0 <= at_step < len(r.steps):
            raise KeyError(f"step {at_step} out of range: this branch has {len(r.steps)} model calls")
        d = r.step_detail(at_step)
        if d.prune is None:  # strategy "none": the replay does not call it
            return strat.apply(
                d.before,
                settings,
                None,
                CallInfo(at_step, True, context_window, None),
                session_counter(session, counter),
            )
        return d.prune
    ctx = build_session_context(session, li).messages
    c = session_counter(session, counter)
    state = None
    new_prompt = True
    if r.steps:
        last = r.steps[-1]
        d = r.step_detail(last.step)
        state = d.prune.state if d.prune is not None else None
        new_prompt = any(
            cm.role == "user" and cm.entry_index is not None and cm.entry_index > last.entry_index
            for cm in ctx
        )
    tokens = sum(c.count_many([m.message for m in ctx]))
    call = CallInfo(
        step=len(r.steps), new_prompt=new_prompt, context_window=context_window, context_tokens=tokens
    )
    return strat.apply(ctx, settings, state, call, c)
