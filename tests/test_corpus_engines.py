"""Where corpus tasks run and in what order (issue 20's scaling): warmed workers, every task's
result exactly once on each engine whatever the order, early stops, and the sweep's task order
(cheapest first, then costliest first) keeping the rows identical."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Any

import pytest

from inspector.corpus import resolve_corpus, run_sweep, schedule
from inspector.corpus.engines import TIKTOKEN, run_tasks, warm_worker
from inspector.corpus.generate import generate_corpus
from inspector.replay import ReplaySettings

from .support import corpus_tasks

TASKS = [(i, 3) for i in range(23)]
PRODUCTS = sorted(i * 3 for i in range(23))


# -- engines: every result once, on each engine ---------------------------------------------------


@pytest.mark.parametrize("workers", [0, 1, 2])
def test_the_local_engine_returns_every_task_once(workers: int) -> None:
    assert sorted(run_tasks(operator.mul, TASKS, workers=workers, warm=())) == PRODUCTS


def test_dask_returns_every_task_once_from_one_batch() -> None:
    pytest.importorskip("distributed")
    got = run_tasks(operator.mul, TASKS, engine="dask", workers=2, options={"processes": False}, warm=())
    assert sorted(got) == PRODUCTS


@pytest.mark.parametrize("engine", ["local", "dask"])
def test_a_negative_number_of_workers_is_refused(engine: str) -> None:
    """A Dask LocalCluster asked for -1 workers started none and waited for them forever."""
    with pytest.raises(ValueError, match=r"^workers is 0 or more, not -1$"):
        run_tasks(operator.mul, TASKS, engine=engine, workers=-1, warm=())


@pytest.mark.parametrize("address", ["tcp://:", "foo://host:1", "[::1"])
def test_an_address_dask_cannot_read_is_an_engine_error_not_a_traceback(address: str) -> None:
    pytest.importorskip("distributed")
    from inspector.corpus.engines import EngineUnavailable

    with pytest.raises(EngineUnavailable, match=r"^not a Dask scheduler address: "):
        list(run_tasks(operator.mul, TASKS, scheduler=address, warm=()))


def test_one_worker_runs_the_tasks_in_the_given_order() -> None:
    # the order is the caller's (the sweep's schedule): the pool is first in, first out, and Dask
    # keeps the order of one ``client.map`` as the tasks' priority
    expected = [i * 3 for i in range(23)]
    assert list(run_tasks(operator.mul, TASKS, workers=1, warm=())) == expected
    pytest.importorskip("distributed")
    got = run_tasks(operator.mul, TASKS, engine="dask", workers=1, options={"processes": False}, warm=())
    assert list(got) == expected


def test_a_consumer_that_stops_early_gets_no_more_and_the_pool_closes() -> None:
    it = run_tasks(operator.mul, TASKS, workers=2, warm=())
    first = [next(it), next(it)]
    it.close()  # cancels what has not started; shuts the pool down
    assert len(first) == 2 and set(first) <= set(PRODUCTS)
    with pytest.raises(StopIteration):
        next(it)


# -- warming ------------------------------------------------------------------------------------


def test_pool_workers_import_the_warm_modules_before_their_first_task() -> None:
    (warm,) = run_tasks(corpus_tasks.loaded, [("colorsys",)], workers=1, warm=("colorsys",))
    (cold,) = run_tasks(corpus_tasks.loaded, [("colorsys",)], workers=1, warm=())
    assert warm[0] is True and cold[0] is False


def test_warm_worker_imports_and_loads_tiktoken() -> None:
    from inspector import tokens

    tokens._encoding.cache_clear()
    warm_worker(("json", TIKTOKEN))
    assert tokens._encoding.cache_info().currsize == 1


def test_a_sweep_warms_tiktoken_only_when_it_counts_with_it() -> None:
    assert TIKTOKEN not in schedule.warm_for(ReplaySettings(compaction="pi"))
    for counter in ("tiktoken", "calibrated"):
        warm = schedule.warm_for(ReplaySettings(compaction="pi", counter=counter))
        assert TIKTOKEN in warm and "inspector.corpus.sweep" in warm


# -- the sweep's task order ---------------------------------------------------------------------


def _task(path: Path, points: int) -> tuple[str, None, dict[str, Any], list[tuple[str, Any]]]:
    return (str(path), None, {}, [(f"k{i}", {}) for i in range(points)])


def test_order_is_cheapest_first_then_costliest_first(tmp_path: Path) -> None:
    sizes = {"a": 500, "b": 100, "c": 900, "d": 300, "e": 100}
    for name, size in sizes.items():
        (tmp_path / name).write_bytes(b"x" * size)
    tasks = [_task(tmp_path / n, 4) for n in sizes]
    names = [Path(t[0]).name for t in schedule.order(tasks)]
    assert names == ["b", "c", "a", "d", "e"]  # b before e: ties keep the given order
    # fewer grid points left (a resumed sweep) make a task cheaper; a missing file costs nothing
    tasks = [_task(tmp_path / "c", 1), _task(tmp_path / "a", 17), _task(tmp_path / "gone", 17)]
    assert [Path(t[0]).name for t in schedule.order(tasks)] == ["gone", "a", "c"]
    assert schedule.order(tasks[:2]) == tasks[:2]


def test_order_is_a_permutation(tmp_path: Path) -> None:
    paths = generate_corpus(tmp_path, 12, seed=5)
    tasks = [_task(p, 1 + i % 4) for i, p in enumerate(paths)]
    out = schedule.order(tasks)
    assert sorted(out) == sorted(tasks) and len(out) == len(tasks)
    costs = [schedule.task_cost(t) for t in out]
    assert costs[0] == min(costs) and costs[1:] == sorted(costs[1:], reverse=True)


def test_the_rows_do_not_depend_on_the_task_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    generate_corpus(tmp_path, 5, seed=9)
    items = resolve_corpus([str(tmp_path)])
    grid = {"keep_recent_tokens": [8000, 20000], "context_window": [60000]}
    base = ReplaySettings(compaction="pi")
    ordered = run_sweep(items, base, grid, workers=0)
    monkeypatch.setattr(schedule, "order", lambda tasks: list(reversed(tasks)))
    reversed_ = run_sweep(items, base, grid, workers=0)
    assert ordered.rows == reversed_.rows and len(ordered.rows) == 5 * 3


# -- a worker keeps no session between tasks --------------------------------------------------------


def test_a_session_task_leaves_no_message_in_the_engines_memos(tmp_path: Path) -> None:
    # the offline summarizer memoises facts per message object (holding the message): a worker
    # that sweeps hundreds of sessions would keep every one of them alive without this
    from inspector.corpus.generate import session_bytes
    from inspector.corpus.sweep import SweepPlan, session_task
    from inspector.replay import counters
    from inspector.summarize import offline

    (tmp_path / "s.jsonl").write_bytes(session_bytes("pi", 60, seed=4))
    plan = SweepPlan.make(
        resolve_corpus([str(tmp_path)]), ReplaySettings(compaction="pi"), {"context_window": [40000]}
    )
    (task,) = plan.tasks({})
    res = session_task(*task)
    assert res["error"] is None and any(r["compactions"] for r in res["rows"])  # summaries were written
    assert offline._MEMO._d == {} and counters._COUNTER_CACHE == {}
