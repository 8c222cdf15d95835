"""Where corpus tasks run: this process, a local process pool, or a Dask distributed cluster.

:func:`run_tasks` calls ``fn(*task)`` for every task and yields each result as it arrives (in
completion order). The task function must be a module-level function with plain arguments and
a plain result (it is pickled to the workers), and must not raise: it reports its own errors.

* ``local`` — ``workers=0``: in this process, one task after another; otherwise a
  :class:`concurrent.futures.ProcessPoolExecutor` of ``workers`` processes (default: the
  machine's cores), started with ``spawn`` (safe from a process that runs threads, like the app).
* ``dask`` — `Dask distributed <https://distributed.dask.org>`_: ``scheduler="tcp://HOST:PORT"``
  submits to a running cluster (its workers need this package installed); without it a
  :class:`distributed.LocalCluster` of ``workers`` single-threaded worker processes is started
  for the sweep and closed after it (``options={"processes": False}``: threads in this process,
  for tests). Needs the ``dask`` extra: ``pip install 'context-inspector[dask]'``.

Stopping early (an exception in the consumer, or closing the generator) cancels what has not
started; no result of a cancelled task is yielded.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

ENGINES = ("local", "dask")


class EngineUnavailable(RuntimeError):
    """The engine cannot run here (Dask not installed, the scheduler unreachable)."""


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def run_tasks(
    fn: Callable[..., Any],
    tasks: Sequence[tuple[Any, ...]],
    *,
    engine: str = "local",
    workers: int | None = None,
    scheduler: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> Iterator[Any]:
    """``fn(*task)`` for every task, on ``engine``; results as they complete."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; choose from {', '.join(ENGINES)}")
    if not tasks:
        return iter(())
    if engine == "dask" or scheduler:
        return _dask(fn, tasks, workers, scheduler, dict(options or {}))
    n = default_workers() if workers is None else workers
    if n <= 0:
        return (fn(*t) for t in tasks)
    return _pool(fn, tasks, min(n, len(tasks)))


def _pool(fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]], n: int) -> Iterator[Any]:
    ex = ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn"))
    try:
        # at most two tasks queued per worker: a stop leaves little to cancel
        pending: set[Future[Any]] = set()
        it = iter(tasks)
        for t in it:
            pending.add(ex.submit(fn, *t))
            if len(pending) >= 2 * n:
                break
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in done:
                yield f.result()
                nxt = next(it, None)
                if nxt is not None:
                    pending.add(ex.submit(fn, *nxt))
    finally:
        ex.shutdown(wait=True, cancel_futures=True)


def _dask(
    fn: Callable[..., Any],
    tasks: Sequence[tuple[Any, ...]],
    workers: int | None,
    scheduler: str | None,
    options: dict[str, Any],
) -> Iterator[Any]:
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError as e:
        raise EngineUnavailable(
            "the dask engine needs Dask distributed: pip install 'context-inspector[dask]'"
        ) from e
    cluster = None
    try:
        if scheduler:
            client = Client(scheduler, timeout=options.pop("timeout", 10))
        else:
            n = workers or default_workers()
            cluster = LocalCluster(
                n_workers=n,
                threads_per_worker=1,
                dashboard_address=None,
                processes=options.pop("processes", True),
                **options,
            )
            client = Client(cluster)
    except OSError as e:
        raise EngineUnavailable(f"cannot reach the Dask scheduler {scheduler}: {e}") from e
    futures = [client.submit(fn, *t, pure=False) for t in tasks]
    try:
        for f in as_completed(futures):
            yield f.result()
    finally:
        client.cancel([f for f in futures if not f.done()])
        client.close()
        if cluster is not None:
            cluster.close()
