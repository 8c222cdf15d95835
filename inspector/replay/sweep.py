"""Sweeps: a grid of settings replayed on one session, and each agent's own configuration side by side."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..agents import AGENTS
from ..policies import PolicySettings
from ..session.tree import Session
from .results import Metrics
from .run import replay
from .settings import ReplaySettings
from .summaries import SummaryCache


def _coerce(settings: ReplaySettings, key: str, value: Any) -> ReplaySettings:
    if key == "context_window":  # a window swept is every call's (not only the main model's)
        return settings.model_copy(update={key: value, "model_windows": ()})
    if key in ReplaySettings.model_fields and key not in ("policy", "strategy_settings"):
        return settings.model_copy(update={key: value})
    if key in PolicySettings.model_fields:
        return settings.model_copy(update={"policy": settings.policy.model_copy(update={key: value})})
    return settings.with_strategy_settings({**settings.strategy_dict(), key: value})


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
    summaries = SummaryCache() if summaries is None else summaries
    keys = list(grid)
    combos: list[dict[str, Any]] = [{}]
    for k in keys:
        combos = [{**c, k: v} for c in combos for v in grid[k]]
    out = []
    for i, combo in enumerate(combos):
        s = base
        for k, v in combo.items():
            s = _coerce(s, k, v)
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


def parse_grid(spec: str) -> tuple[str, list[Any]]:
    """``key=start:stop:step`` (inclusive stop) or ``key=a,b,c``."""
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
