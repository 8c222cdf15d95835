"""The pruning strategy a replay applies, its settings, and what runs it at each call
(:mod:`inspector.pruning.runner`)."""

from __future__ import annotations

from typing import Any

from ..pruning import get_strategy
from ..pruning.recorded import records_pruning
from ..pruning.runner import FullRunner, PlainRunner
from ..session.tree import Session
from .settings import ReplaySettings


def strategy_of(settings: ReplaySettings) -> Any:
    """The strategy ``settings`` name (None for ``none``)."""
    if settings.strategy in ("none", ""):
        return None
    return get_strategy(settings.strategy)


_RECORDS_PRUNING: dict[int, tuple[Session, bool]] = {}


def effective_strategy(settings: ReplaySettings, session: Session) -> Any:
    """The strategy to apply. "recorded" on a session that records no pruning (every pi session)
    clears nothing: it is skipped — the same result without a pass over the context per call."""
    if settings.strategy == "recorded":
        hit = _RECORDS_PRUNING.get(id(session))
        if hit is None or hit[0] is not session:
            marked = any(records_pruning(getattr(e, "message", None)) for e in session.entries)
            if len(_RECORDS_PRUNING) > 16:
                _RECORDS_PRUNING.clear()
            hit = _RECORDS_PRUNING[id(session)] = (session, marked)
        if not hit[1]:
            return None
    return strategy_of(settings)


def strategy_settings(settings: ReplaySettings) -> Any:
    strat = strategy_of(settings)
    if strat is None:
        return None
    return strat.Settings(**settings.strategy_dict())


def make_runner(strat: Any, strat_settings: Any, counter: Any, usage_mode: bool, incremental: bool) -> Any:
    """What prunes at each call (see :mod:`inspector.pruning.runner`); None when nothing does
    and no runner's bookkeeping is needed."""
    if strat is None:
        return PlainRunner(None, None, counter) if usage_mode and incremental else None
    return (
        strat.runner(strat_settings, counter) if incremental else FullRunner(strat, strat_settings, counter)
    )
