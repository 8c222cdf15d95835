"""Which cache rule a call follows: the provider family of the answer (by provider, API and model
name) and that family's rule (:mod:`.anthropic`, :mod:`.openai`, or no cache model)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..session.models import AssistantMessage
from .anthropic import rule as anthropic_rule
from .openai import REASONING_SOURCE, drops_earlier_reasoning
from .openai import rule as openai_rule
from .prices import openai_read_multiplier
from .rule import NO_CACHE, CacheRule


def family_of(m: Any) -> str:
    """The cache family of the provider that answered ``m``: by provider, API and model name."""
    if not isinstance(m, AssistantMessage):
        return "none"
    return family_named(m.provider, m.api, m.model)


def family_named(provider: Any, api: Any, name: Any) -> str:
    """:func:`family_of` an answer by its provider, API and model name."""
    text = " ".join(x.lower() for x in (provider, api, name) if isinstance(x, str))
    if "anthropic" in text or "claude" in text:
        return "anthropic"
    model = (name or "").lower()
    if "openai" in text or "codex" in text or model.startswith(("gpt", "o1", "o3", "o4")):
        return "openai"
    return "none"


def rule_for(m: Any, model: str, retention: str, long: frozenset[str] = frozenset()) -> CacheRule:
    fam = family_of(m) if model == "auto" else model
    if retention == "auto":
        retention = "long" if fam in long else "short"
    name = getattr(m, "model", None)
    if fam == "anthropic":
        return anthropic_rule(name, retention)
    if fam == "openai":
        rule = openai_rule(openai_read_multiplier(name), retention, name)
        if drops_earlier_reasoning(name, getattr(m, "api", None)):  # REASONING: said in the rule's source
            rule = replace(rule, source=f"{rule.source}; at a new turn: {REASONING_SOURCE}")
        return rule
    return NO_CACHE
