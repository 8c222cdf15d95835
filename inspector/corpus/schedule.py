"""The order a corpus sweep's session tasks go out in, and what its workers load before the first.

A sweep's tasks (:meth:`inspector.corpus.sweep.SweepPlan.tasks`: one per session, all its grid
points left to do) take very different times: a session of thousands of entries costs hundreds
of times one of twenty. Two goals pull apart:

* **no idle tail** — handing out the costliest tasks first (longest-processing-time first, LPT)
  lets the workers finish together: the last tasks to start are the short ones;
* **a first row soon** — the progress bar (and ``bench/corpus.py``'s time to first row) wait for
  the first finished task, which under pure LPT is the longest one.

:func:`order` does both: the cheapest task first, then the rest costliest first. A task's cost is
estimated from its file's size times the replays it runs, plus loading the session, which costs
about as much as :data:`LOAD_REPLAYS` replays (measured on the generated corpus: loading is a
fifth of a 17-replay task).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..replay import ReplaySettings
from .engines import TIKTOKEN

LOAD_REPLAYS = 4
"""Loading a session (read, parse, validate, count tokens) costs about this many replays of it."""

SWEEP_MODULES = ("inspector.corpus.sweep",)
"""What a sweep worker imports before its first task (the task's module pulls in the importers,
the replay engine, the policies and the pruning strategies)."""


def task_cost(task: Sequence[Any]) -> float:
    """Estimated cost of a session task ``(path, ref, base_json, points, …)``: the file's size × (its
    replays + :data:`LOAD_REPLAYS`). A file that cannot be read costs nothing (it fails fast)."""
    try:
        size = os.stat(task[0]).st_size
    except OSError:
        return 0.0
    return float(size) * (len(task[3]) + LOAD_REPLAYS)


def order(tasks: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The cheapest task first (a first row soon), then the others costliest first (LPT: no
    worker idles at the end while another runs a long task). Ties keep the given order."""
    if len(tasks) < 3:
        return list(tasks)
    costs = [task_cost(t) for t in tasks]
    cheapest = min(range(len(tasks)), key=lambda i: (costs[i], i))
    rest = sorted((i for i in range(len(tasks)) if i != cheapest), key=lambda i: (-costs[i], i))
    return [tasks[cheapest], *(tasks[i] for i in rest)]


def warm_for(base: ReplaySettings) -> tuple[str, ...]:
    """What a sweep worker loads before its first task: the engine's modules, and tiktoken's
    encoding when the sweep counts with it."""
    return SWEEP_MODULES + ((TIKTOKEN,) if base.counter in ("tiktoken", "calibrated") else ())
