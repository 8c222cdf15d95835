"""Tune on a whole corpus: many sessions of any agent, an overview of them, and sweeps of settings
replayed over all of them — locally on a process pool, or on a Dask distributed cluster — with
results kept in a DuckDB file that a sweep resumes from.

* :mod:`.items` — what a corpus is (files, folders, globs, ``@agent``), :func:`resolve_corpus`;
* :mod:`.overview` — one row per session (:func:`overview`, :func:`totals`);
* :mod:`.sweep` — :func:`run_sweep` and the aggregate per setting (:func:`aggregate`);
* :mod:`.engines` — where tasks run (``local`` process pool, ``dask``);
* :mod:`.schedule` — the order a sweep's tasks go out in, what workers load first;
* :mod:`.store` — the DuckDB results file, :func:`results` (a DataFrame);
* :mod:`.generate` — a deterministic mixed-agent corpus for tests and benchmarks.
"""

from __future__ import annotations

from typing import Any

from .items import CorpusError, CorpusItem, load_item, resolve_corpus
from .overview import overview, totals
from .sweep import SweepPlan, SweepResult, aggregate, grid_points, run_sweep

__all__ = [
    "CorpusError",
    "CorpusItem",
    "SweepPlan",
    "SweepResult",
    "aggregate",
    "generate_corpus",
    "grid_points",
    "load_item",
    "overview",
    "resolve_corpus",
    "results",
    "run_sweep",
    "totals",
]


def results(path: str) -> Any:
    """The rows of a sweep's results file (``--out FILE.duckdb``) as a pandas DataFrame."""
    from .store import results as _results

    return _results(path)


def generate_corpus(folder: str, n: int, seed: int = 0) -> list[Any]:
    """Write ``n`` generated sessions of mixed agents into ``folder`` (:mod:`.generate`)."""
    from .generate import generate_corpus as _generate

    return _generate(folder, n, seed)
