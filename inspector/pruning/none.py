"""No pruning: the model sees pi's context as built."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..context import ContextMessage
from .base import CallInfo, Plan, PruneResult, Strategy


class NoSettings(BaseModel):
    model_config = ConfigDict(frozen=True)


class NoPruning(Strategy):
    name = "none"
    title = "None"
    source = "—"
    description = "Nothing is pruned: every message is sent as pi builds the context."
    Settings = NoSettings

    def apply(
        self, messages: Sequence[ContextMessage], settings: Any, state: Any, call: CallInfo, counter: Any
    ) -> PruneResult:
        return Plan(messages, counter).finish()
