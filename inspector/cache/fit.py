"""A session's size fit (:mod:`.sizes`), made on the context each recorded prompt was measured
on: the as-recorded context of the replayed branch, walked once per session and counter, with
the agent's own pruning when the file records some; and that context's tokens at each call, which
a what-if's recorded prompts measure (:func:`base_tokens`)."""

from __future__ import annotations

import statistics
import weakref
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..replay.as_sent import agent_pruned, sent_as_recorded, sent_fit
from ..replay.sizes import SizeFit, fit_columns, tails_of
from ..session.tree import Session
from .facts import session_facts
from .timing import long_retention_of, milliseconds

_FITS: weakref.WeakKeyDictionary[Session, dict[tuple[str, int | None], tuple[SizeFit, frozenset[str]]]] = (
    weakref.WeakKeyDictionary()
)
_BASES: weakref.WeakKeyDictionary[Session, dict[tuple[str, int | None], dict[int, int]]] = (
    weakref.WeakKeyDictionary()
)
"""Per session, branch and counter: each call's (entry index →) as-recorded context in replayed
tokens, the context its recorded prompt was measured on (made with the fit: :func:`base_tokens`)."""


def session_fit(
    replay: Any, picked: tuple[Sequence[Any], ...] | None = None
) -> tuple[SizeFit, frozenset[str]]:
    """The session's size fit (with each family's tail), on the context each recorded prompt was
    measured on: this replay's when its compactions are the recorded ones and its pruning is the
    agent's own (or there is none: its context before pruning), else the as-recorded context of
    the same branch and counter (walked once per session, with the agent's own pruning when the
    file records some, :func:`agent_pruned`:
    :func:`~inspector.replay.as_sent.recorded_context_tokens`; replayed for the "usage" counter);
    and the families whose recorded reads show the long retention (see :func:`long_retention`).
    ``picked``: the facts of this replay's calls (:meth:`Facts.picked`), when the caller has them."""
    from ..replay import ReplaySettings
    from ..replay import replay as run

    key = (replay.settings.counter, replay.settings.leaf)
    memo = _FITS.setdefault(replay.session, {})
    if key not in memo:
        base = replay.steps
        recorded = [s.recorded_input for s in base]
        settings = replay.settings
        pruned = agent_pruned(replay.session)
        fit = None
        if settings.compaction == "recorded" and (settings.strategy == "recorded" or not pruned):
            # what was sent: the agent's own pruning, or none (then: before this replay's pruning)
            tokens = [s.tokens if settings.strategy == "recorded" else s.tokens_before_pruning for s in base]
        else:
            walked = sent_as_recorded(replay.session, settings.counter, settings.leaf)
            if walked is not None and list(walked) == [s.entry_index for s in base]:
                tokens = list(walked.values())
                # the fit the replay's trigger sized its changes with, made on these same columns
                fit = sent_fit(replay.session, settings.counter, settings.leaf)
            else:  # the usage counter: the as-recorded replay itself
                base = run(
                    replay.session,
                    ReplaySettings(strategy="recorded", counter=settings.counter, leaf=settings.leaf),
                ).steps
                recorded = [s.recorded_input for s in base]
                tokens = [s.tokens for s in base]
        if fit is None:
            fit = fit_columns(tokens, recorded)
        _BASES.setdefault(replay.session, {})[key] = dict(
            zip([s.entry_index for s in base], tokens, strict=True)
        )
        if picked is None or base is not replay.steps:
            picked = session_facts(replay.session).picked([s.entry_index for s in base])
        fams, reads, _, inputs, _, starts, ends, _ = picked
        prompts = [int(rin or 0) for rin in recorded]
        hidden = partial_reads(prompts, reads)
        fit = replace(
            fit,
            tail=tails_of(fams, prompts, reads, inputs),
            hidden=hidden if hidden is not None else fit.hidden,
        )
        memo[key] = (fit, long_retention_of(fams, prompts, reads, milliseconds(starts), milliseconds(ends)))
    return memo[key]


def base_tokens(replay: Any) -> dict[int, int]:
    """Each call's as-recorded context in replayed tokens, by entry index, on ``replay``'s branch
    and counter (what :func:`session_fit` fitted the sizes on)."""
    key = (replay.settings.counter, replay.settings.leaf)
    got = _BASES.get(replay.session, {}).get(key)
    if got is None:
        _FITS.get(replay.session, {}).pop(key, None)
        session_fit(replay)
        got = _BASES[replay.session][key]
    return got


def partial_reads(prompts: Sequence[int], reads: Sequence[int | None]) -> int | None:
    """The hidden prefix as the session's own cache saw it: the median of the recorded reads that
    stopped well short of the previous prompt (a compaction or a change kept only the system prompt
    and tools cached), when at least two calls show one; else None (the size fit's estimate). The
    calls' prompts and recorded reads, in order."""
    got = [
        r for p0, r in zip(prompts, reads[1:], strict=False) if r is not None and p0 and 1024 <= r < 0.6 * p0
    ]
    return int(statistics.median(got)) if len(got) >= 2 else None
