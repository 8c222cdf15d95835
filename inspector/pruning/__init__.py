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
    for s in (
        NoPruning(),
        Recorded(),
        OpenCodePrune(),
        PiContextPruning(),
        TurnAware(),
        Dcp(),
        ContextEditing(),
        ClaudeCodeMicrocompact(),
    )
}

__all__ = [
    "REGISTRY",
    "CallInfo",
    "Decision",
    "PruneResult",
    "PruneStats",
    "Strategy",
    "get_strategy",
    "list_strategies",
    "parse_settings",
]


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
            raise KeyError(
                f"{strategy.name} has no setting {k!r}; its settings: {', '.join(fields) or '(none)'}"
            )
        data[key] = _coerce(fields[key], v) if isinstance(v, str) else v
    try:
        return strategy.Settings(**data)
    except ValidationError as e:
        err = e.errors()[0]
        raise ValueError(f"{strategy.name} setting {err['loc'][0]}: {err['msg']}") from None
