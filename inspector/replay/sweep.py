"""Sweeps: a grid of settings replayed on one session, and each agent's own configuration side by side."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ..agents import AGENTS
from ..policies import PolicySettings
from ..pruning import parse_settings
from ..session.tree import Session
from .results import Metrics
from .run import replay
from .settings import ReplaySettings
from .strategies import strategy_of
from .summaries import SummaryCache


def _coerce(settings: ReplaySettings, key: str, value: Any) -> ReplaySettings:
    """``settings`` with ``key`` (a replay, policy or strategy setting) set to ``value``, validated
    as the settings' own models validate it: a ``ValueError`` in one line ("grid context_window=0:
    Input should be greater than or equal to 1000") for a value they refuse."""
    try:
        if key == "context_window":  # a window swept is every call's (not only the main model's)
            return ReplaySettings.model_validate({**dict(settings), key: value, "model_windows": ()})
        if key in ReplaySettings.model_fields and key not in ("policy", "strategy_settings"):
            return ReplaySettings.model_validate({**dict(settings), key: value})
        if key in PolicySettings.model_fields:
            policy = type(settings.policy).model_validate({**dict(settings.policy), key: value})
            return settings.model_copy(update={"policy": policy})
    except ValidationError as e:
        raise ValueError(f"grid {key}={value}: {e.errors()[0]['msg']}") from None
    strategy = strategy_of(settings)
    own = strategy.Settings.model_fields if strategy is not None else {}
    if key not in own:  # not a setting of anything: every cell would replay the same
        theirs = (
            f"the pruning strategy {strategy.name}'s: {', '.join(own) or 'none'}"
            if strategy is not None
            else "a pruning strategy's, once one is set"
        )
        raise ValueError(
            f"grid {key}: no such setting (the replay's: {', '.join(GRID_REPLAY_KEYS)}; the compaction "
            f"policies': {', '.join(PolicySettings.model_fields)}; {theirs})"
        )
    try:
        parse_settings(strategy, {**settings.strategy_dict(), key: value})
    except ValueError as e:
        raise ValueError(f"grid {key}={value}: {str(e).split(': ', 1)[-1]}") from None
    return settings.with_strategy_settings({**settings.strategy_dict(), key: value})


GRID_REPLAY_KEYS = (
    "context_window",
    "keep_recent_tokens",
    "reserve_tokens",
    "compaction",
    "counter",
    "strategy",
)
"""The replay settings a grid sweeps most (any other field of :class:`ReplaySettings` is accepted too)."""


_FIRST_KEYS = ("strategy", "compaction")
"""Applied before the other keys of a grid point: a strategy's or a policy's own setting is checked
against the strategy or policy of its cell, whichever order the grid names them in."""


def grid_point(base: ReplaySettings, values: Mapping[str, Any]) -> ReplaySettings:
    """``base`` with one grid point's ``values`` applied (each checked: :func:`_coerce`)."""
    s = base
    for k in sorted(values, key=lambda k: k not in _FIRST_KEYS):
        s = _coerce(s, k, values[k])
    return s


@dataclass(frozen=True)
class SweepCell:
    values: dict[str, Any]
    settings: ReplaySettings
    metrics: Metrics


def sweep(
    session: Session,
    base: ReplaySettings,
    grid: dict[str, Sequence[Any]],
    *,
    progress: Callable[[float], None] | None = None,
    summaries: SummaryCache | None = None,
) -> list[SweepCell]:
    """Replay every combination of ``grid`` values on top of ``base``. Token counts and
    summaries are shared by all cells (per-session counter cache; ``summaries``, or one cache for
    this sweep)."""
    check_grid_size(grid)
    summaries = SummaryCache() if summaries is None else summaries
    keys = list(grid)
    combos: list[dict[str, Any]] = [{}]
    for k in keys:
        combos = [{**c, k: v} for c in combos for v in grid[k]]
    out = []
    for i, combo in enumerate(combos):
        s = grid_point(base, combo)
        r = replay(session, s, summaries=summaries)
        out.append(SweepCell(combo, s, r.metrics))
        if progress is not None:
            progress((i + 1) / len(combos))
    return out


_FIRST = ("pi", "codex", "opencode", "claude-code")
#: the rows of :func:`compare_agents`: the session as recorded, then each agent (:mod:`inspector.agents`)
#: in the order the comparison has always shown them, then any agent added since
COMPARED: tuple[str, ...] = (
    "recorded",
    *(a for a in _FIRST if a in AGENTS),
    *(a for a in AGENTS if a not in _FIRST),
)


def agent_config(name: str) -> tuple[str, str, str]:
    """(title, compaction policy, pruning strategy) of a row of :func:`compare_agents`. Claude Code's
    are third-party reports (unverified), as its title, the policy and the strategy say."""
    if name == "recorded":
        return "as recorded", "recorded", "recorded"
    a = AGENTS[name]
    return a.label, a.policy, a.strategy


def compare_agents(
    session: Session,
    base: ReplaySettings,
    agents: Sequence[str] | None = None,
    *,
    progress: Callable[[float], None] | None = None,
    summaries: SummaryCache | None = None,
) -> list[SweepCell]:
    """Replay the session as each agent would run it — its compaction policy and its pruning — on
    top of ``base`` (window, counter, summarizer, pi's keep/reserve). One cell per agent, in order."""
    summaries = SummaryCache() if summaries is None else summaries
    names = list(agents) if agents else list(COMPARED)
    unknown = [n for n in names if n not in COMPARED]
    if unknown:
        raise ValueError(f"unknown agent(s) {', '.join(unknown)}; known: {', '.join(COMPARED)}")
    out = []
    for i, name in enumerate(names):
        _, policy, strategy = agent_config(name)
        s = base.model_copy(update={"compaction": policy, "strategy": strategy, "strategy_settings": ()})
        out.append(SweepCell({"agent": name}, s, replay(session, s, summaries=summaries).metrics))
        if progress is not None:
            progress((i + 1) / len(names))
    return out


MAX_CELLS = 10_000
"""The most grid points a sweep replays (each is a replay of the whole session, or of every
session of a corpus): ``keep_recent_tokens=0:100000000:1`` is a slip, not a sweep."""


def check_grid_size(grid: Mapping[str, Sequence[Any]]) -> None:
    """A ``ValueError`` (one line) for a grid with a setting that has no value, or more than
    :data:`MAX_CELLS` points."""
    for k, v in grid.items():
        if not v:
            raise ValueError(f"grid {k}: no values")
    n = math.prod(len(v) for v in grid.values())
    if n > MAX_CELLS:
        raise ValueError(
            f"the grid has {n:,} points (each one a replay); a sweep takes at most {MAX_CELLS:,}"
        )


def parse_grid(spec: str) -> tuple[str, list[Any]]:
    """``key=start:stop:step`` (inclusive stop) or ``key=a,b,c``; a range with no value (STOP
    below START) or more than :data:`MAX_CELLS` is a ``ValueError``."""
    if "=" not in spec:
        raise ValueError(f"grid {spec!r}: expected KEY=START:STOP:STEP or KEY=A,B,C")
    key, _, rng = spec.partition("=")
    key = key.strip()
    if ":" in rng:
        parts = rng.split(":")
        if len(parts) != 3:
            raise ValueError(f"grid {spec!r}: expected START:STOP:STEP")
        a, b, st = (float(x) for x in parts)
        if st <= 0:
            raise ValueError(f"grid {spec!r}: STEP must be positive")
        count = int(math.floor((b - a) / st + 1e-9)) + 1
        if count < 1:
            raise ValueError(f"grid {spec!r}: no values (STOP is below START)")
        if count > MAX_CELLS:
            raise ValueError(f"grid {spec!r}: {count:,} values; a sweep takes at most {MAX_CELLS:,} points")
        vals: list[Any] = [a + i * st for i in range(count)]
        if all(float(v).is_integer() for v in (a, b, st)):
            vals = [int(v) for v in vals]
        return key, vals
    out: list[Any] = []
    for x in rng.split(","):
        x = x.strip()
        try:
            out.append(int(x))
        except ValueError:
            try:
                out.append(float(x))
            except ValueError:
                out.append({"true": True, "false": False}.get(x.lower(), x))
    return key, out
