"""Whether the provider still counted replayed reasoning after a change the file cannot show.

Reasoning items (and Claude's kept thinking) are sent back by the agent's transport, not written
in the file as sent. A transport can stop sending them mid-session — a pi session through
``openai-codex`` does: from one call on, the recorded prompt falls (the cache read collapsing) and
stops growing by each answer's reasoning. After every flagged *context change not in the file*
the check therefore tests, on the calls up to the next flag, how the offset moves call to call
against the reasoning each call added: flat, the reasoning is still counted; falling by about as
much (the slope below −ratio/2), it no longer is. The test needs a segment of at least
:data:`MIN_CALLS` calls whose reasoning grows by more than the threshold; the reading then holds
until the next unexplained change. The choice is said in the flag's detail.
"""

from __future__ import annotations

from collections.abc import Sequence

from .flags import UNEXPLAINED, Flag, Observed

MIN_CALLS = 10
REASONING_PARTS = ("thinking as stored", "reasoning beyond the stored text")
NOTE = "; from here the provider counted no reasoning sent back (the transport stopped replaying it)"


def reasoning(parts: dict[str, int]) -> int:
    return sum(parts.get(k, 0) for k in REASONING_PARTS)


def _slope(kept: Sequence[float], grown: Sequence[float]) -> float:
    """How the offset moves per token of reasoning added, call to call (least squares over the
    steps that added reasoning, steps more than four median absolute deviations out left out)."""
    steps = [
        (kept[i] - kept[i - 1], grown[i] - grown[i - 1])
        for i in range(1, len(kept))
        if grown[i] > grown[i - 1]
    ]
    if not steps:
        return 0.0
    moves = sorted(d for d, _ in steps)
    med = moves[len(moves) // 2]
    mad = sorted(abs(d - med) for d, _ in steps)[len(steps) // 2]
    steps = [(d, g) for d, g in steps if abs(d - med) <= 4 * mad + 1]
    return sum(d * g for d, g in steps) / max(1.0, sum(g * g for _, g in steps))


def _segment_end(flags: Sequence[Flag | None], s: int) -> int:
    return next((j for j in range(s + 1, len(flags)) if flags[j] is not None), len(flags))


def _stops_counting(
    observed: Sequence[Observed],
    parts: Sequence[dict[str, int]],
    flags: Sequence[Flag | None],
    s: int,
    ratio: float,
    limit: int,
) -> bool | None:
    """At the unexplained change at call ``s``: does the provider stop counting reasoning (True),
    keep counting it (False), or can the calls up to the next flag not tell (None)?"""
    e = _segment_end(flags, s)
    grown = [reasoning(parts[i]) - reasoning(parts[s]) for i in range(s, e)]
    if e - s < MIN_CALLS or max(grown, default=0) <= limit / max(ratio, 1e-9):
        return None
    kept = [observed[i].recorded - observed[i].calibrated for i in range(s, e)]
    return _slope(kept, grown) <= -ratio / 2


def reasoning_dropped(
    observed: Sequence[Observed],
    parts: Sequence[dict[str, int]],
    flags: Sequence[Flag | None],
    ratio: float,
    limit: int,
) -> tuple[list[int], list[int]]:
    """Per call, the reasoning tokens (tiktoken) the provider did not count, and the calls where
    it stopped counting. From a stop on: what the context's reasoning grew by since then (what
    was there is in the carried departure); after a compaction, all of it. The reading is decided
    at each unexplained change and kept until the next one that decides."""
    out = [0] * len(observed)
    stops: list[int] = []
    counted, since = True, 0
    for i, o in enumerate(observed):
        f = flags[i]
        if f is not None and f.cause == UNEXPLAINED:
            stop = _stops_counting(observed, parts, flags, i, ratio, limit)
            if stop is not None and stop == counted:
                counted, since = not stop, reasoning(parts[i])
                if stop:
                    stops.append(i)
        elif any(e.type == "compaction" for e in o.events):
            since = 0
        if not counted:
            out[i] = max(0, reasoning(parts[i]) - since)
    return out, stops
