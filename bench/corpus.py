"""Corpus sweeps: throughput on 1 and 2 local workers and on a Dask LocalCluster, with and without
start-up, time to the first row, peak memory per worker against the largest session's own load,
and the machine's own ceiling for two processes.

    python bench/corpus.py [--sessions 200] [--seed 0] [--mix realistic|small] [--repeat 1]

**The corpus.** ``--mix realistic`` (default): ``--sessions`` sessions of mixed agents (pi, Claude
Code, Codex, OpenCode, in :data:`inspector.corpus.generate.AGENT_MIX`'s shares) grown by the
corpus generator's ``session_bytes`` to the sizes of :data:`SIZES` — tens to thousands of entries,
pi sessions compacting as pi would — written once into ``bench/out/corpus-realistic-N-sSEED``.
``--mix small`` is the generator's own mix (``inspector.corpus.generate``, the tests' sizes:
runs of a few seconds, dominated by start-up). The grid is 4×4 of pi's thresholds
(keepRecentTokens × window) plus the as-recorded baseline: 17 replays per session.

**What is measured.** Each configuration runs ``run_sweep`` in a fresh Python process (its
memory figures are its own), with the engine's results observed on their way to the sweep:

* **throughput** — session × setting pairs per second, wall clock from the call to the last row
  (worker and cluster start-up included), and **without start-up**: the same pairs over the wall
  clock minus the start-up, where start-up is the time to the first row less that first task's own
  compute time (what the worker measured);
* **time to first row** — from the call to the first session's rows arriving;
* **busy** — the workers' summed compute time over workers × wall clock: 100 % is every worker
  computing from the call to the last row (start-up, idle tails and transport lower it);
* **peak memory per worker** — the largest peak RSS of the run's worker processes (``ru_maxrss``
  of the reaped child processes, Dask's nannies and workers included);
* **largest session's own load** — a fresh process that imports the engine, loads the largest
  file and replays it once: the memory one session needs, which a worker should stay close to;
* **ceiling** — the machine's own speed-up for two processes: the same replays of one session run
  in one process, then in two processes at once (each timing only its replay loop). Two workers
  cannot beat it; on a VM whose two vCPUs share a physical core it is well under 2×.

The machine's cores may be shared: every configuration prints the load average before it ran.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

GRID = {
    "keep_recent_tokens": [10000, 20000, 40000, 80000],
    "context_window": [128000, 200000, 272000, 400000],
}
PER_SESSION = len(GRID["keep_recent_tokens"]) * len(GRID["context_window"]) + 1  # and the baseline
CONFIGS = {"local-1": ("local", 1), "local-2": ("local", 2), "dask-2": ("dask", 2)}
SIZES = ((0.30, 20, 120), (0.45, 120, 500), (0.25, 500, 1500))
"""(share, min, max) target model calls of the realistic mix. pi sessions compact as pi would and
grow to thousands of entries; the other agents' sessions end before they would compact (the
generator writes no compaction records for them), a few hundred entries at most."""
CEILING_SECONDS = 3.0


def _rss_mb(kb: int) -> float:
    return kb / 1024


def _current_rss_mb() -> float:
    """This process's resident set now (Linux), or its peak so far elsewhere."""
    try:
        with open("/proc/self/status") as f:
            return next(int(x.split()[1]) for x in f if x.startswith("VmRSS:")) / 1024
    except (OSError, StopIteration):
        return _rss_mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


# -- the corpus ----------------------------------------------------------------------------------


def realistic_corpus(folder: Path, n: int, seed: int) -> list[Path]:
    """``n`` sessions of the realistic mix in ``folder`` (kept: the same seed writes the same bytes)."""
    from inspector.corpus.generate import AGENT_MIX, EXTENSIONS, session_bytes

    def pick(r: random.Random, mix: tuple[tuple[Any, float], ...]) -> Any:
        x, acc = r.random(), 0.0
        for value, share in mix:
            acc += share
            if x < acc:
                return value
        return mix[-1][0]

    r = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        agent = pick(r, AGENT_MIX)
        lo, hi = pick(r, tuple(((lo, hi), share) for share, lo, hi in SIZES))
        calls, s = r.randint(lo, hi), r.randrange(1 << 30)
        p = folder / f"{i:04d}-{agent}{EXTENSIONS[agent]}"
        if not p.exists():
            p.write_bytes(session_bytes(agent, calls, s))
        paths.append(p)
    return paths


def describe(paths: list[Path]) -> str:
    from inspector.corpus.items import CorpusItem, load_item

    agents: dict[str, int] = {}
    entries = []
    for p in paths:
        s = load_item(CorpusItem(str(p)))
        agents[s.format] = agents.get(s.format, 0) + 1
        entries.append(len(s.entries))
    entries.sort()
    mix = ", ".join(f"{a} {k}" for a, k in sorted(agents.items(), key=lambda x: -x[1]))
    return f"{mix}; entries per session: median {entries[len(entries) // 2]:,}, max {entries[-1]:,}"


# -- one configuration, in a fresh process -------------------------------------------------------


def one(folder: str, config: str) -> dict[str, float]:
    """Run one configuration in this process; its figures."""
    import inspector.corpus.engines as engines
    from inspector.corpus import resolve_corpus, run_sweep
    from inspector.replay import ReplaySettings

    engine, workers = CONFIGS[config]
    items = resolve_corpus([folder])
    load = os.getloadavg()[0]
    seen: list[tuple[float, float]] = []  # (arrival, the task's own compute seconds)
    real = engines.run_tasks

    def observed(*a: Any, **k: Any) -> Any:
        for res in real(*a, **k):
            seen.append((time.perf_counter(), res["seconds"]))
            yield res

    engines.run_tasks = observed  # type: ignore[assignment]  # run_sweep looks it up at call time
    t0 = time.perf_counter()
    run_sweep(items, ReplaySettings(compaction="pi"), GRID, engine=engine, workers=workers)
    secs = time.perf_counter() - t0
    worker_peak = _rss_mb(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    pairs = len(items) * PER_SESSION
    first = seen[0][0] - t0 if seen else secs
    startup = max(0.0, first - seen[0][1]) if seen else 0.0
    return {
        "pairs": pairs,
        "seconds": secs,
        "throughput": pairs / secs,
        "first_row": first,
        "startup": startup,
        "warm": pairs / (secs - startup) if secs > startup else 0.0,
        "busy": sum(s for _, s in seen) / (workers * secs),
        "worker_peak_mb": worker_peak,
        "load": load,
    }


def own_load(path: str) -> dict[str, float]:
    """Peak RSS of a process that imports the engine, then loads ``path`` and replays it once."""
    from inspector.corpus.items import CorpusItem, load_item
    from inspector.replay import ReplaySettings, replay

    base = _current_rss_mb()
    s = load_item(CorpusItem(path))
    replay(s, ReplaySettings(compaction="pi"))
    return {"imports_mb": base, "peak_mb": _rss_mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)}


def spin(path: str, reps: int) -> dict[str, float]:
    """Replays of ``path`` (the ceiling probe): ``reps`` of them, or as many as fit in
    :data:`CEILING_SECONDS` when ``reps`` is 0; the count and the replay loop's own time."""
    from inspector.corpus.items import CorpusItem, load_item
    from inspector.replay import ReplaySettings, replay

    s = load_item(CorpusItem(path))
    settings = ReplaySettings(compaction="pi", keep_recent_tokens=20000)
    replay(s, settings)  # token counts primed: the loop below is the steady state
    done, t0 = 0, time.perf_counter()
    while (done < reps) if reps else (time.perf_counter() - t0 < CEILING_SECONDS):
        replay(s, settings)
        done += 1
    return {"reps": done, "seconds": time.perf_counter() - t0}


def _child(*args: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, *args], capture_output=True, text=True, check=True, cwd=REPO
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def ceiling(path: Path) -> tuple[float, float]:
    """(speed-up of two processes over one on the same replays, load average before)."""
    load = os.getloadavg()[0]
    solo = _child("--spin", str(path), "0")
    cmd = [sys.executable, __file__, "--spin", str(path), str(int(solo["reps"]))]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=REPO) for _ in range(2)]
    pair = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
    return 2 * solo["seconds"] / max(r["seconds"] for r in pair), load


# -- the report ----------------------------------------------------------------------------------


def _line(name: str, r: dict[str, float]) -> str:
    return (
        f"{name:<8} {r['pairs']:>5.0f} pairs in {r['seconds']:6.1f} s: {r['throughput']:6.1f} pairs/s, "
        f"{r['warm']:6.1f} without start-up ({r['startup']:4.2f} s); first row {r['first_row']:5.2f} s; "
        f"busy {r['busy']:4.0%}; peak memory per worker {r['worker_peak_mb']:4.0f} MB; load {r['load']:.1f}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mix", choices=("realistic", "small"), default="realistic")
    ap.add_argument("--repeat", type=int, default=1, help="runs per configuration (the best is kept)")
    ap.add_argument("--one", nargs=2, metavar=("FOLDER", "CONFIG"), help=argparse.SUPPRESS)
    ap.add_argument("--own-load", metavar="FILE", help=argparse.SUPPRESS)
    ap.add_argument("--spin", nargs=2, metavar=("FILE", "REPS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(*args.one)))
        return 0
    if args.own_load:
        print(json.dumps(own_load(args.own_load)))
        return 0
    if args.spin:
        print(json.dumps(spin(args.spin[0], int(args.spin[1]))))
        return 0

    from inspector.corpus.generate import generate_corpus

    t = time.perf_counter()
    if args.mix == "realistic":
        folder = REPO / "bench" / "out" / f"corpus-realistic-{args.sessions}-s{args.seed}"
        paths = realistic_corpus(folder, args.sessions, args.seed)
    else:
        folder = REPO / "bench" / "out" / f"corpus-{args.sessions}-s{args.seed}"
        paths = generate_corpus(folder, args.sessions, args.seed)
    made = time.perf_counter() - t
    largest = max(paths, key=lambda p: p.stat().st_size)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"corpus ({args.mix}, ready in {made:.0f} s): {len(paths)} sessions, "
        f"{sum(p.stat().st_size for p in paths) / 1e6:.1f} MB, largest {largest.name} "
        f"{largest.stat().st_size / 1e6:.1f} MB; {describe(paths)}"
    )
    print(
        f"grid 4×4 + baseline = {PER_SESSION} replays per session; {cores} core(s), "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    ratio, load = ceiling(sorted(paths, key=lambda p: p.stat().st_size)[len(paths) // 2])
    print(f"ceiling: two processes replay {ratio:.2f}× as fast as one on this machine (load {load:.1f})")
    res: dict[str, dict[str, float]] = {}
    for name in CONFIGS:
        runs = [_child("--one", str(folder), name) for _ in range(args.repeat)]
        res[name] = min(runs, key=lambda r: r["seconds"])
        print(_line(name, res[name]))
    own = _child("--own-load", str(largest))
    print(
        f"largest session's own load: {own['peak_mb']:.0f} MB peak ({own['imports_mb']:.0f} MB of it "
        f"the engine's imports)"
    )
    for what, label in (("throughput", "wall clock"), ("warm", "without start-up")):
        speedup = res["local-2"][what] / max(1e-9, res["local-1"][what])
        overhead = res["local-2"][what] / max(1e-9, res["dask-2"][what]) - 1
        print(
            f"{label}: 2 local workers {speedup:.2f}× one worker (target ≥ 1.7×; machine ceiling "
            f"{ratio:.2f}×); Dask LocalCluster overhead over the local pool {overhead:+.0%} (target ≤ 15%)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
