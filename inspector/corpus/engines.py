"""Where corpus tasks run: this process, a local process pool, or a Dask distributed cluster.

:func:`run_tasks` calls ``fn(*task)`` for every task and yields each result as it arrives (in
completion order). The task function must be a module-level function with plain arguments and
a plain result (it is pickled to the workers), and must not raise: it reports its own errors.
Tasks are handed out in the order given (the caller orders them: :mod:`.schedule`).

* ``local`` — ``workers=0``: in this process, one task after another; otherwise a
  :class:`concurrent.futures.ProcessPoolExecutor` of ``workers`` processes (default: the
  machine's cores), started with ``spawn`` (safe from a process that runs threads, like the app).
  Every task is queued at once, so a worker never waits for the consumer of the results to ask
  for more; each worker is warmed by the pool's initializer as it starts (:func:`warm_worker`).
* ``dask`` — `Dask distributed <https://distributed.dask.org>`_: ``scheduler="tcp://HOST:PORT"``
  submits to a running cluster (its workers need this package installed); without it a
  :class:`distributed.LocalCluster` of ``workers`` single-threaded worker processes is started
  for the sweep and closed after it (``options={"processes": False}``: threads in this process,
  for tests). The workers are warmed with ``client.run`` before the tasks go out, and the tasks
  go in one ``client.map`` call (``pure=False``: every task runs; the scheduler keeps the given
  order as their priority). Needs the ``dask`` extra: ``pip install 'context-inspector[dask]'``.

**Warming** (``warm``): module names each worker imports before its first task, so the first
task pays no import; :data:`TIKTOKEN` in the list also loads tiktoken's encoding. The default is
the task function's own module. Warming moves start-up cost, it does not remove it: the imports
happen once per worker either way, but no longer inside the first task's time.

Stopping early (an exception in the consumer, or closing the generator) cancels what has not
started; no result of a cancelled task is yielded.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

ENGINES = ("local", "dask")
TIKTOKEN = "tiktoken:encoding"
"""In a ``warm`` list: load tiktoken's encoding (for the ``tiktoken`` and ``calibrated`` counters)."""


class EngineUnavailable(RuntimeError):
    """The engine cannot run here (Dask not installed, the scheduler unreachable)."""


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def warm_worker(names: Sequence[str]) -> int:
    """Import each module of ``names`` (and load tiktoken's encoding for :data:`TIKTOKEN`) in
    this worker; the process id (what ``client.run`` reports back)."""
    for name in names:
        if name == TIKTOKEN:
            from ..tokens import _encoding

            _encoding()
        else:
            importlib.import_module(name)
    return os.getpid()


def run_tasks(
    fn: Callable[..., Any],
    tasks: Sequence[tuple[Any, ...]],
    *,
    engine: str = "local",
    workers: int | None = None,
    scheduler: str | None = None,
    options: Mapping[str, Any] | None = None,
    warm: Sequence[str] | None = None,
) -> Iterator[Any]:
    """``fn(*task)`` for every task, on ``engine``; results as they complete. ``warm``: what
    each worker imports as it starts (default: ``fn``'s module)."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; choose from {', '.join(ENGINES)}")
    if workers is not None and workers < 0:  # a Dask LocalCluster of -1 workers would wait forever
        raise ValueError(f"workers is 0 or more, not {workers}")
    if not tasks:
        return iter(())
    names = tuple(warm) if warm is not None else (fn.__module__,)
    if engine == "dask" or scheduler:
        return _dask(fn, tasks, workers, scheduler, dict(options or {}), names)
    n = default_workers() if workers is None else workers
    if n <= 0:
        return (fn(*t) for t in tasks)
    return _pool(fn, tasks, min(n, len(tasks)), names)


def _pool(
    fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]], n: int, warm: tuple[str, ...]
) -> Iterator[Any]:
    ex = ProcessPoolExecutor(
        max_workers=n,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=warm_worker,
        initargs=(warm,),
    )
    try:
        # every task queued now (a few hundred small tuples): the workers take the next one the
        # moment they finish, whatever the consumer is doing; a stop cancels those not started
        index: dict[Future[Any], int] = {ex.submit(fn, *t): i for i, t in enumerate(tasks)}
        pending = set(index)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in sorted(done, key=index.__getitem__):  # finished together: in the given order
                yield f.result()
    finally:
        ex.shutdown(wait=True, cancel_futures=True)


def _dask(
    fn: Callable[..., Any],
    tasks: Sequence[tuple[Any, ...]],
    workers: int | None,
    scheduler: str | None,
    options: dict[str, Any],
    warm: tuple[str, ...],
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
            try:
                client = Client(scheduler, timeout=options.pop("timeout", 10))
            except ValueError as e:  # Dask could not read the address ("tcp://:", "foo://bar:1")
                raise EngineUnavailable(f"not a Dask scheduler address: {scheduler!r} ({e})") from e
        else:
            n = min(workers or default_workers(), len(tasks))  # no more workers than tasks
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
    futures: list[Any] = []
    try:
        if warm:
            client.run(
                warm_worker, warm
            )  # every worker there now; one that joins later warms on its first task
        # one call for all tasks: one graph update, the given order kept as the tasks' priority
        futures = client.map(fn, *zip(*tasks, strict=True), pure=False)
        for f in as_completed(futures):
            yield f.result()
    finally:
        client.cancel([f for f in futures if not f.done()])
        client.close()
        if cluster is not None:
            cluster.close()
