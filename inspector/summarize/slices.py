"""Slice strategies from the compaction research note (``seeds/compaction-research.txt``).

Settings are the note's ``SliceConfig``: ``slice_tokens`` (20K), ``overlap_tokens`` (2K),
``compression_ratio`` (0.1: a slice's summary budget is floor(its tokens × ratio)) and
``recent_boost`` (×2 for the two most recent slices). Token counts are pi's estimate.

* ``single-shot`` — one call over everything (pi today).
* ``parallel-stitch`` — slices summarised concurrently (slice prompt: "slice i of n", start /
  most-recent markers, budget), then one stitch call merges them (and a previous summary) within
  the full budget.
* ``sequential-accumulated`` — slices in order, each summarised with the summaries of all earlier
  slices as context; the result is those summaries in order (after a previous summary, if any).
* ``sequential-rolling`` — slices in order, each call rewrites one running summary (the style's
  update prompt), with a budget that grows with the slices covered, up to the full budget.

A session that fits in one slice is summarised single-shot by every strategy. :func:`compare`
gives the note's table (input tokens, output tokens, API calls, time); for a summarizer that
reports no tokens (offline), the tokens are those of the prompts an LLM would read and of the
texts written, by pi's estimate.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from ..context import ContextMessage
from ..tokens import estimate_tokens, get_counter
from .base import SummaryRequest, SummaryResult, SummaryUsage
from .prompts import render_prompt

STRATEGIES = ("single-shot", "parallel-stitch", "sequential-accumulated", "sequential-rolling")


@dataclass(frozen=True)
class SliceSettings:
    slice_tokens: int = 20000
    overlap_tokens: int = 2000
    compression_ratio: float = 0.1
    recent_boost: float = 2.0
    max_workers: int = 4
    """Concurrent calls for parallel-stitch."""

    def __post_init__(self) -> None:
        """Settings that would slice nothing sensible are refused: an overlap as large as a slice
        moves each slice on by one message (hundreds of LLM calls on a long session; one over half a
        slice, by less than half), a ratio or
        boost that is not a positive finite number gives budgets of 1 token or none."""
        if self.slice_tokens < 1:
            raise ValueError(f"a slice holds 1 token or more, not {self.slice_tokens:,}")
        if not 0 <= self.overlap_tokens <= self.slice_tokens // 2:
            raise ValueError(
                f"the overlap is 0 or more and at most half a slice ({self.slice_tokens // 2:,} of "
                f"{self.slice_tokens:,} tokens: each slice moves on by half a slice or more), "
                f"not {self.overlap_tokens:,}"
            )
        if not (math.isfinite(self.compression_ratio) and 0 < self.compression_ratio <= 1):
            raise ValueError(f"the compression ratio is above 0 and at most 1, not {self.compression_ratio}")
        if not (math.isfinite(self.recent_boost) and self.recent_boost > 0):
            raise ValueError(f"the recent boost is a positive number, not {self.recent_boost}")
        if self.max_workers < 1:
            raise ValueError(f"max_workers is 1 or more, not {self.max_workers}")


def segment(messages: Sequence[ContextMessage], s: SliceSettings) -> list[tuple[ContextMessage, ...]]:
    """Consecutive slices of about ``slice_tokens``; each after the first starts up to
    ``overlap_tokens`` back into the one before (always at least one message further on)."""
    slices: list[tuple[ContextMessage, ...]] = []
    tokens = [estimate_tokens(m.message) for m in messages]
    start, n = 0, len(messages)
    while start < n:
        size, end = 0, start
        while end < n and (size < s.slice_tokens or end == start):
            size += tokens[end]
            end += 1
        slices.append(tuple(messages[start:end]))
        if end >= n:
            break
        back, k = 0, end
        while k > start + 1 and back + tokens[k - 1] <= s.overlap_tokens:
            k -= 1
            back += tokens[k]
        start = k
    return slices


def slice_budgets(slices: Sequence[Sequence[ContextMessage]], s: SliceSettings) -> list[int]:
    """The note's per-slice budget: floor(tokens × compression_ratio), × recent_boost for the last two."""
    out = []
    for i, sl in enumerate(slices):
        base = sum(estimate_tokens(m.message) for m in sl) * s.compression_ratio
        out.append(max(1, int(base * s.recent_boost if i >= len(slices) - 2 else base)))
    return out


class _Meter:
    """Counts calls, tokens and cost of one strategy run, and keeps the prompts sent (thread-safe)."""

    def __init__(self, summarizer: Any) -> None:
        self.summarizer = summarizer
        self.calls: list[tuple[int, str, str, SummaryResult, int]] = []

    def __call__(self, req: SummaryRequest, title: str, order: int | None = None) -> str:
        res = self.summarizer.summarize(req)
        # a summarizer that reports no input tokens (offline) is charged the prompt an LLM would read
        tin = res.usage.input_tokens or get_counter("pi").count_text(render_prompt(req))
        self.calls.append((len(self.calls) if order is None else order, title, res.prompt, res, tin))
        return res.text

    def result(self, text: str, seconds: float) -> SummaryResult:
        count = get_counter("pi").count_text
        calls = sorted(self.calls, key=lambda c: c[0])
        results = [c[3] for c in calls]
        tin = sum(c[4] for c in calls)
        tout = sum(r.usage.output_tokens or count(r.text) for r in results)
        costs = [r.usage.cost_usd for r in results if r.usage.cost_usd is not None]
        errors = [r.error for r in results if r.error]
        prompt = "\n\n".join(f"----- call: {t} -----\n{p}" for _, t, p, _, _ in calls if p)
        label = results[0].summarizer if results else getattr(self.summarizer, "label", "")
        return SummaryResult(
            text,
            SummaryUsage(tin, tout, len(results), seconds, sum(costs) if costs else None),
            label,
            prompt,
            "; ".join(errors) or None,
            any(r.fell_back for r in results),
        )


def run(
    strategy: str, req: SummaryRequest, summarizer: Any, s: SliceSettings = SliceSettings()
) -> SummaryResult:
    """The history summary for ``req`` (messages, previous summary, instructions, budget, style)
    made with ``strategy``."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown slice strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    t0 = time.perf_counter()
    call = _Meter(summarizer)
    slices = segment(req.messages, s) if strategy != "single-shot" else [req.messages]
    if len(slices) <= 1:
        return call.result(call(req, "single-shot", 0), time.perf_counter() - t0)
    n, budgets = len(slices), slice_budgets(slices, s)

    def slice_req(i: int, parts: tuple[str, ...] = ()) -> SummaryRequest:
        return replace(
            req,
            messages=slices[i],
            previous_summary=None,
            max_tokens=budgets[i],
            kind="slice",
            slice_index=i,
            slice_count=n,
            parts=parts,
        )

    if strategy == "parallel-stitch":
        with ThreadPoolExecutor(max_workers=max(1, s.max_workers), thread_name_prefix="slice") as pool:
            parts = list(pool.map(lambda i: call(slice_req(i), f"slice {i + 1} of {n}", i), range(n)))
        text = call(replace(req, messages=(), kind="stitch", parts=tuple(parts)), "stitch", n)
    elif strategy == "sequential-accumulated":
        parts = []
        for i in range(n):
            context = ((req.previous_summary,) if req.previous_summary else ()) + tuple(parts)
            parts.append(call(slice_req(i, context), f"slice {i + 1} of {n}"))
        earlier = [f"--- Earlier summary ---\n{req.previous_summary}"] if req.previous_summary else []
        text = "\n\n".join(earlier + [f"--- Slice {i} ---\n{p}" for i, p in enumerate(parts, 1)])
    else:
        running, covered = req.previous_summary, 0
        for i in range(n):
            covered += budgets[i]
            step = replace(
                req, messages=slices[i], previous_summary=running, max_tokens=min(req.max_tokens, covered)
            )
            running = call(step, f"slice {i + 1} of {n}, rolling update")
        text = running or ""
    return call.result(text, time.perf_counter() - t0)


def compare(req: SummaryRequest, summarizer: Any, s: SliceSettings = SliceSettings()) -> list[dict[str, Any]]:
    """One row per strategy: the research note's comparison for these messages."""
    rows = []
    for strategy in STRATEGIES:
        r = run(strategy, req, summarizer, s)
        rows.append(
            {
                "strategy": strategy,
                "inputTokens": r.usage.input_tokens,
                "outputTokens": r.usage.output_tokens,
                "calls": r.usage.calls,
                "timeMs": round(r.usage.seconds * 1000),
                "costUsd": r.usage.cost_usd,
                "slices": len(segment(req.messages, s)) if strategy != "single-shot" else 1,
                "summarizer": r.summarizer,
                "error": r.error,
            }
        )
    return rows


def format_table(rows: Sequence[dict[str, Any]]) -> str:
    """The note's table: Strategy | Input Tokens | Output Tokens | API Calls | Time (ms)."""
    head = ("Strategy", "Input Tokens", "Output Tokens", "API Calls", "Time (ms)")
    body = [
        (r["strategy"], str(r["inputTokens"]), str(r["outputTokens"]), str(r["calls"]), str(r["timeMs"]))
        for r in rows
    ]
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]

    def line(cells: Sequence[str]) -> str:
        return (
            "| "
            + " | ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(cells, widths, strict=True))
            )
            + " |"
        )

    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(head), sep, *(line(b) for b in body)])
