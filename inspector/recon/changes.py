"""How well a what-if can size a context the provider never counted, checked on the changes the
session itself made.

A what-if's trigger compares the usage the provider would report for a context it changed: the
recorded usage of the same call plus the change, in the provider's tokens by the session's size
fit (:meth:`inspector.replay.run.ReplayRun.provider_size`, :func:`inspector.replay.sizes.changed_size`).
Every recorded compaction and every output the agent cleared itself is such a change that really
happened, and the next recorded prompt is what the provider reported after it. So each one checks
the estimate: from the last call before the change that records its prompt (that prompt, and its
context as rebuilt), predict the prompt of the call after it; with the change counted as it is
(``unscaled``), and as the replay sizes it (``fitted``). A DCP compress is told apart and kept out
of the summary line: an OpenCode export does not hold what DCP sent in place of the range, so the
change the file shows is not the one made.

An analysis over the as-recorded replay, like the rest of :mod:`inspector.recon`. ``inspector
check`` sums it up in a line; ``python -m tools.trigger_fit`` prints every change
(docs/whatif-trigger.md holds the shared sessions' table).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..pruning.recorded import dcp_blocks
from ..replay import Replay
from ..replay.as_sent import sent_fit
from ..replay.sizes import changed_size

COMPACTION, CLEARED, COMPRESS = "compaction", "cleared outputs", "DCP compress"


@dataclass(frozen=True)
class SizedChange:
    """One change the session made to its context, and the prompt after it predicted two ways."""

    kind: str
    """:data:`COMPACTION` (the context was rebuilt), :data:`CLEARED` (outputs the agent cleared:
    OpenCode's ``time.compacted``, Claude Code's microcompact) or :data:`COMPRESS` (a DCP compress
    left a range out)."""
    before: int
    """The step whose recorded prompt the prediction starts from (the last one before the change)."""
    after: int
    """The step after the change."""
    scale: float
    """The session's fitted provider tokens per counted token."""
    prompt_before: int
    change: int
    """The rebuilt context's change between the two steps, counted (what the call after added too)."""
    recorded: int
    """The prompt the step after recorded."""
    unscaled: int
    fitted: int

    def error(self, predicted: int) -> float:
        return (predicted - self.recorded) / self.recorded


def sized_changes(r: Replay) -> tuple[SizedChange, ...]:
    """Every recorded compaction and clearing of outputs in ``r``, the replay as recorded (its
    compactions and pruning the session's own; any other replay has none: ()), that a recorded
    prompt follows (the first one after it, with no other change between) and one comes before
    (a clearing: the step right before), in order."""
    s = r.settings
    if s.counter == "usage" or s.compaction != "recorded" or s.strategy != "recorded":
        return ()
    steps = r.steps
    fit = sent_fit(r.session, s.counter, s.leaf)
    out = []
    last: int | None = None  # the last step that recorded its prompt
    pending: tuple[str, int] | None = None  # a change no recorded prompt has followed yet: (kind, from)
    for k, now in enumerate(steps):
        prev = steps[k - 1] if k else None
        compacted = prev is not None and now._segment is not prev._segment
        cleared = prev is not None and not compacted and now.pruned_tokens > prev.pruned_tokens
        if prev is not None and (compacted or cleared):
            kind = COMPACTION if compacted else _pruning_kind(prev, now)
            ok = last is not None and (compacted or last == k - 1)
            pending = (kind, last) if ok and last is not None else None
        if not now.recorded_input:
            continue
        if pending is not None:
            kind, j = pending
            before, after = int(steps[j].recorded_input or 0), int(now.recorded_input)
            change = now.tokens - steps[j].tokens
            out.append(
                SizedChange(
                    kind,
                    j,
                    k,
                    fit.scale,
                    before,
                    change,
                    after,
                    max(0, before + change),
                    changed_size(before, change, fit),
                )
            )
            pending = None
        last = k
    return tuple(out)


def _pruning_kind(prev: Any, now: Any) -> str:
    """What the agent's own pruning between two steps of one context was: a DCP compress when one
    of the messages the later step added is a compress call's result, else cleared outputs."""
    added = now._segment[prev._length : now._length]
    return COMPRESS if any(dcp_blocks(cm.message) for cm in added) else CLEARED


def sizing_words(changes: Sequence[SizedChange]) -> str | None:
    """One line on how a what-if's sizing of its changes did on the session's own (None: none).
    DCP compresses are left out of the figures: an OpenCode export does not hold what DCP sent in
    place of a range (``inspector check`` flags each with DCP's own count), so the change the file
    shows is not the one made."""
    checked = [c for c in changes if c.kind != COMPRESS]
    d = len(changes) - len(checked)
    left = f"{d} DCP compress{'es' if d > 1 else ''}" if d else ""
    if not checked:
        return (
            f"what-if sizing: the session's own changes are {left}, whose replacement the export does not "
            "record (see each one's flag): nothing to check it on"
            if d
            else None
        )
    n, m = sum(c.kind == COMPACTION for c in checked), sum(c.kind == CLEARED for c in checked)
    kinds = " and ".join(
        x
        for x in (
            f"{n} compaction{'s' if n > 1 else ''}" if n else "",
            f"{m} clearing{'s' if m > 1 else ''} of tool outputs" if m else "",
        )
        if x
    )
    fitted = statistics.median(abs(c.error(c.fitted)) for c in checked)
    unscaled = statistics.median(abs(c.error(c.unscaled)) for c in checked)
    return (
        f"what-if sizing, checked on the changes this session made itself ({kinds}): the prompt after "
        f"each, predicted from the prompt before it plus the change × {checked[0].scale:.2f} provider "
        f"tokens per counted token (fitted; how a what-if's trigger and cache model size a change), is "
        f"off by {fitted:.0%} (median; the change as counted: {unscaled:.0%})"
        + (f"; {left} left out, whose replacement the export does not record" if d else "")
    )
