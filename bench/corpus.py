"""Corpus sweeps: throughput on 1 and 2 local workers and on a Dask LocalCluster, peak memory per
worker against the largest session's own load, and time to the first result row.

    python bench/corpus.py [--sessions 60] [--seed 0] [--repeat 1]

A generated corpus (``inspector.corpus.generate``, mixed agents, written once into
``bench/out/corpus-N-sSEED``) is swept under a 4×4 grid of pi's thresholds (keepRecentTokens ×
window; with the as-recorded baseline, 17 replays per session). Each configuration runs in a
fresh Python process, so its peak memory figures are its own:

* **throughput** — session × setting pairs per second, wall clock from the call to the last row
  (worker start-up included), and after the first row (start-up left out);
* **time to first row** — from the call to the first session's rows arriving;
* **peak memory per worker** — the largest peak RSS of the worker processes (``ru_maxrss`` of the
  run's child processes; for Dask, the workers report their own);
* **largest session's own load** — a fresh process that imports the engine, loads the largest
  file and replays it once: the memory one session needs, which a worker should stay close to.

The machine's cores are shared (``os.sched_getaffinity``): figures from a busy machine say so.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

GRID = {
    "keep_recent_tokens": [10000, 20000, 40000, 80000],
    "context_window": [128000, 200000, 272000, 400000],
}
PER_SESSION = (
    len(GRID["keep_recent_tokens"]) * len(GRID["context_window"]) + 1
)  # and the as-recorded baseline
CONFIGS = {"local-1": ("local", 1), "local-2": ("local", 2), "dask-2": ("dask", 2)}


def _rss_mb(kb: int) -> float:
    return kb / 1024


def one(folder: str, config: str) -> dict[str, float]:
    """Run one configuration in this process; its figures."""
    from inspector.corpus import resolve_corpus, run_sweep
    from inspector.replay import ReplaySettings

    engine, workers = CONFIGS[config]
    items = resolve_corpus([folder])
    first: list[float] = []
    t0 = time.perf_counter()

    def progress(done: int, total: int) -> None:
        if done and not first:
            first.extend((time.perf_counter() - t0, done))

    worker_peak = 0.0
    if engine == "dask":
        worker_peak = _dask_run(items, progress)
    else:
        run_sweep(
            items, ReplaySettings(compaction="pi"), GRID, engine=engine, workers=workers, progress=progress
        )
        worker_peak = _rss_mb(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    secs = time.perf_counter() - t0
    pairs = len(items) * PER_SESSION
    t1, d1 = first if first else (secs, pairs)
    return {
        "pairs": pairs,
        "seconds": secs,
        "throughput": pairs / secs,
        "first_row": t1,
        "steady": (pairs - d1) / (secs - t1) if secs > t1 and pairs > d1 else 0.0,
        "worker_peak_mb": worker_peak,
    }


def _dask_run(items: list, progress) -> float:  # type: ignore[no-untyped-def, type-arg]
    """The same sweep on a LocalCluster of 2 single-threaded worker processes; the workers' peak RSS."""
    from distributed import Client, LocalCluster

    from inspector.corpus import run_sweep
    from inspector.replay import ReplaySettings

    # the engine starts its own LocalCluster; this one only lends its scheduler address, so the
    # workers' peak memory can be asked of them afterwards
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster,
        Client(cluster) as c,
    ):
        run_sweep(
            items,
            ReplaySettings(compaction="pi"),
            GRID,
            engine="dask",
            scheduler=cluster.scheduler_address,
            progress=progress,
        )
        peaks = c.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    return _rss_mb(max(peaks.values()))


def own_load(path: str) -> dict[str, float]:
    """Peak RSS of a process that imports the engine, then loads ``path`` and replays it once."""
    from inspector.corpus.items import CorpusItem, load_item
    from inspector.replay import ReplaySettings, replay

    base = _rss_mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    s = load_item(CorpusItem(path))
    replay(s, ReplaySettings(compaction="pi"))
    return {"imports_mb": base, "peak_mb": _rss_mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)}


def _child(*args: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, *args], capture_output=True, text=True, check=True, cwd=REPO
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=1, help="runs per configuration (the best is kept)")
    ap.add_argument("--one", nargs=2, metavar=("FOLDER", "CONFIG"), help=argparse.SUPPRESS)
    ap.add_argument("--own-load", metavar="FILE", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(*args.one)))
        return 0
    if args.own_load:
        print(json.dumps(own_load(args.own_load)))
        return 0

    from inspector.corpus.generate import generate_corpus

    folder = REPO / "bench" / "out" / f"corpus-{args.sessions}-s{args.seed}"
    paths = generate_corpus(folder, args.sessions, args.seed)
    largest = max(paths, key=lambda p: p.stat().st_size)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"corpus: {len(paths)} sessions, {sum(p.stat().st_size for p in paths) / 1e6:.1f} MB, largest "
        f"{largest.name} {largest.stat().st_size / 1e6:.1f} MB; grid 4×4 + baseline = {PER_SESSION} replays per session; "
        f"{cores} core(s), load average {os.getloadavg()[0]:.1f}"
    )
    res: dict[str, dict[str, float]] = {}
    for name in CONFIGS:
        runs = [_child("--one", str(folder), name) for _ in range(args.repeat)]
        res[name] = min(runs, key=lambda r: r["seconds"])
        r = res[name]
        print(
            f"{name:<8} {r['pairs']:>5} pairs in {r['seconds']:6.1f} s: {r['throughput']:6.1f} pairs/s "
            f"({r['steady']:6.1f} after the first row); first row after {r['first_row']:5.2f} s; "
            f"peak memory per worker {r['worker_peak_mb']:4.0f} MB"
        )
    own = _child("--own-load", str(largest))
    print(
        f"largest session's own load: {own['peak_mb']:.0f} MB peak ({own['imports_mb']:.0f} MB of it the engine's "
        f"imports)"
    )
    for what in ("throughput", "steady"):
        speedup = res["local-2"][what] / max(1e-9, res["local-1"][what])
        overhead = res["local-2"][what] / max(1e-9, res["dask-2"][what]) - 1
        print(
            f"{'wall clock' if what == 'throughput' else 'after the first row'}: 2 local workers {speedup:.2f}× one "
            f"worker (target ≥ 1.7×); Dask LocalCluster overhead over the local pool {overhead:+.0%} (target ≤ 15%)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
