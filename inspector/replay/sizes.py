"""Prompt sizes in the provider's tokens.

A session file stores neither the system prompt nor the tool definitions, and the replay counts
with its own tokenizer. So a replayed context of ``t`` tokens is sent as about
``hidden + scale × t`` provider tokens; ``hidden`` and ``scale`` are fitted per session from the
recorded prompts of the as-recorded replay (least squares, refitted without the calls more than
three median deviations off — compactions and context changes the file does not explain). A
session with no recorded usage gets ``hidden = 0, scale = 1`` (said: ``fitted=False``).

In the as-recorded replay the recorded prompt itself (input + cache read + cache write) is each
call's size: the cache model is then checked on what was really sent, not on the tokenizer. A
what-if starts from the same recorded prompt and adds ``scale ×`` what it changed in the call's
context (:func:`changed_size`): only the change is estimated. Two readers take that size: the
cache model prices the prompt (:func:`inspector.cache.fit.base_tokens`), and a what-if's
compaction trigger compares it as the usage the provider would report
(:meth:`inspector.replay.run.ReplayRun.provider_size`, with the fit of
:func:`inspector.replay.as_sent.sent_fit`).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress
from typing import Any


@dataclass(frozen=True)
class SizeFit:
    hidden: int
    """Provider tokens sent before the first message: system prompt and tools."""
    scale: float
    """Provider tokens per replayed token."""
    calls: int
    """Calls the fit used (0: not fitted)."""
    tail: tuple[tuple[str, int], ...] = ()
    """Per cache family, the end of each prompt the next call does not read from the cache
    (Anthropic: what follows the last breakpoint, the recorded uncached ``input``; OpenAI: the
    answer's priming tokens and the unfinished block), measured on the session's own calls."""

    def tail_of(self, family: str) -> int:
        return dict(self.tail).get(family, 0)

    @property
    def fitted(self) -> bool:
        return self.calls > 0

    def size(self, tokens: float) -> int:
        return max(0, int(round(self.hidden + self.scale * tokens)))


UNFITTED = SizeFit(0, 1.0, 0)


def changed_size(recorded: int, change: int, fit: SizeFit) -> int:
    """The provider's size of a prompt that was sent as ``recorded`` provider tokens and that a
    what-if changed by ``change`` replayed tokens: ``recorded + scale × change``, rounded; no less
    than the prefix every request sends (``fit.hidden``), or than ``recorded`` when that is
    smaller (a prompt the what-if shrank keeps at least what it cannot shrink)."""
    size = int(recorded) + round(fit.scale * change)
    return size if size >= fit.hidden or size >= recorded else min(fit.hidden, int(recorded))


def _ols(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    vx = sum([(x - mx) ** 2 for x in xs])
    if vx <= 0:
        return 1.0, my - mx
    scale = sum([(x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)]) / vx
    scale = min(2.5, max(0.5, scale))
    return scale, my - scale * mx


def fit_sizes(pairs: Sequence[tuple[float, float]]) -> SizeFit:
    """Fit ``recorded ≈ hidden + scale × replayed`` over (replayed, recorded) pairs."""
    return fit_columns([t for t, _ in pairs], [r for _, r in pairs])


def fit_columns(replayed: Sequence[float], recorded: Sequence[Any]) -> SizeFit:
    """:func:`fit_sizes` over the two columns (the pairs whose recorded size is positive)."""
    keep = [bool(r and r > 0) for r in recorded]
    xs = [float(t) for t in compress(replayed, keep)]
    ys = [float(r) for r in compress(recorded, keep)]
    if not xs:
        return UNFITTED
    if len(xs) < 3:
        return SizeFit(
            max(0, int(statistics.median(r - t for t, r in zip(xs, ys, strict=True)))), 1.0, len(xs)
        )
    scale, hidden = _ols(xs, ys)
    res = [r - hidden - scale * t for t, r in zip(xs, ys, strict=True)]
    lim = 3 * (statistics.median(map(abs, res)) or 1.0)
    ok = [abs(x) <= lim for x in res]
    kx, ky = list(compress(xs, ok)), list(compress(ys, ok))
    if len(kx) >= 3:
        if len(kx) < len(xs):  # refitted without the outliers (with none, the same fit)
            scale, _ = _ols(kx, ky)
        hidden = statistics.median([r - scale * t for t, r in zip(kx, ky, strict=True)])
    return SizeFit(max(0, int(round(hidden))), scale, len(kx))


def fit_tails(calls: Sequence[tuple[str, int, int | None, int | None]]) -> tuple[tuple[str, int], ...]:
    """Per family, the median tail over consecutive calls (family, prompt, recorded read,
    recorded input): Anthropic's is the recorded uncached input; OpenAI's the part of the previous
    prompt a warm next call did not read, less half a 128-token block (the rule's own rounding)."""
    return tails_of(
        [c[0] for c in calls], [c[1] for c in calls], [c[2] for c in calls], [c[3] for c in calls]
    )


def tails_of(
    families: Sequence[str], prompts: Sequence[int], reads: Sequence[int | None], inputs: Sequence[int | None]
) -> tuple[tuple[str, int], ...]:
    """:func:`fit_tails` over the calls' columns."""
    present = set(families)  # each family's calls looked for only when it has some
    by: dict[str, list[int]] = {}
    if "anthropic" in present:
        by["anthropic"] = [
            inp
            for fam, prompt, inp in zip(families, prompts, inputs, strict=True)
            if fam == "anthropic" and inp is not None and prompt > 0
        ]
    if "openai" in present:
        previous = [None, *prompts[:-1]]
        by["openai"] = [
            max(0, prev - read - 64)
            for fam, read, prev in zip(families, reads, previous, strict=True)
            if fam == "openai" and read and prev and 0 <= prev - read < 2048
        ]
    return tuple((f, int(statistics.median(v))) for f, v in sorted(by.items()) if v)
