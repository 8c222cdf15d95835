"""Slice strategies from the compaction research note (seeds/compaction-research.txt).

* ``single-shot`` — one call over everything (pi today).
* ``parallel-stitch`` — cut into slices of ``slice_tokens`` with ``overlap_tokens``, summarise each
  with a budget of ``compression_ratio`` × its size (× ``recent_boost`` for the last two), then one
  call stitches them.
* ``sequential-accumulated`` — slices in order, each summarised with all earlier slice summaries
  as context.
* ``sequential-rolling`` — slices in order, each call rewrites one running summary.

:func:`compare` prints the note's table (input tokens, output tokens, calls, time) for a session.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..context import ContextMessage
from ..tokens import estimate_tokens
from .base import SummaryRequest, SummaryResult, SummaryUsage
from .prompts import build_prompt

STRATEGIES = ("single-shot", "parallel-stitch", "sequential-accumulated", "sequential-rolling")


@dataclass(frozen=True)
class SliceSettings:
    slice_tokens: int = 20000
    overlap_tokens: int = 2000
    compression_ratio: float = 0.1
    recent_boost: float = 2.0


def segment(messages: Sequence[ContextMessage], s: SliceSettings) -> list[tuple[ContextMessage, ...]]:
    slices: list[tuple[ContextMessage, ...]] = []
    start = 0
    n = len(messages)
    while start < n:
        size = 0
        end = start
        while end < n and (size < s.slice_tokens or end == start):
            size += estimate_tokens(messages[end].message)
            end += 1
        slices.append(tuple(messages[start:end]))
        if end >= n:
            break
        back, k = 0, end
        while k > start + 1 and back < s.overlap_tokens:
            k -= 1
            back += estimate_tokens(messages[k].message)
        start = max(start + 1, k)
    return slices


def _prompt_tokens(req: SummaryRequest) -> int:
    system, user = build_prompt(req)
    return (len(system) + len(user) + 3) // 4


def run(strategy: str, messages: Sequence[ContextMessage], summarizer, budget: int,  # type: ignore[no-untyped-def]
        s: SliceSettings = SliceSettings(), style: str = "pi") -> SummaryResult:
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown slice strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    t0 = time.perf_counter()
    tin = tout = calls = 0

    def call(req: SummaryRequest) -> str:
        nonlocal tin, tout, calls
        r = summarizer.summarize(req)
        tin += r.usage.input_tokens or _prompt_tokens(req)
        tout += r.usage.output_tokens or (len(r.text) + 3) // 4
        calls += 1
        return r.text

    msgs = tuple(messages)
    if strategy == "single-shot":
        text = call(SummaryRequest(msgs, None, None, budget, "history", style))
    else:
        slices = segment(msgs, s)
        budgets = []
        for i, sl in enumerate(slices):
            base = sum(estimate_tokens(m.message) for m in sl) * s.compression_ratio
            budgets.append(max(1, int(base * s.recent_boost if i >= len(slices) - 2 else base)))
        if strategy == "parallel-stitch":
            parts = [call(SummaryRequest(sl, None, None, b, "history", style)) for sl, b in zip(slices, budgets, strict=True)]
            stitched = "\n\n".join(f"--- Slice {i + 1} ---\n{p}" for i, p in enumerate(parts))
            text = call(SummaryRequest((), stitched, None, budget, "history", style)) if len(parts) > 1 else parts[0]
        elif strategy == "sequential-accumulated":
            acc: list[str] = []
            for sl, b in zip(slices, budgets, strict=True):
                acc.append(call(SummaryRequest(sl, "\n\n".join(acc) or None, None, b, "history", style)))
            text = "\n\n".join(acc)
        else:
            running: str | None = None
            for sl, b in zip(slices, budgets, strict=True):
                running = call(SummaryRequest(sl, running, None, max(b, budget // 2), "history", style))
            text = running or ""
    return SummaryResult(text, SummaryUsage(tin, tout, calls, time.perf_counter() - t0, None),
                         getattr(summarizer, "label", "summarizer"))


def compare(messages: Sequence[ContextMessage], summarizer, budget: int,  # type: ignore[no-untyped-def]
            s: SliceSettings = SliceSettings(), style: str = "pi") -> list[dict[str, object]]:
    rows = []
    for strat in STRATEGIES:
        r = run(strat, messages, summarizer, budget, s, style)
        rows.append({"strategy": strat, "inputTokens": r.usage.input_tokens, "outputTokens": r.usage.output_tokens,
                     "calls": r.usage.calls, "timeMs": round(r.usage.seconds * 1000)})
    return rows
