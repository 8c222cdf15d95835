"""The notebook inspector's server-side update time after a control moves, on a generated session.

    python bench/notebook.py [--entries 10000] [--moves 20] [--file SESSION.jsonl]

Times what runs in the kernel when a control moves (the widget's observer: the replay when a
setting changed, the figures rebuilt, the FigureWidgets updated in place, the story), from the
value being set to the handler returning. Not timed: the browser drawing the figures. Step-slider
moves go to calls spread over the whole run; a settings move changes the window (a new replay,
then a cached one when moved back). Target: ≤ 300 ms for a step-slider move on 10,000 entries.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from inspector.importers import load_any  # noqa: E402
from inspector.notebook import inspect  # noqa: E402


def generated(entries: int) -> Path:
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    p = out / f"big-{entries}.jsonl"
    if not p.exists():
        subprocess.run(
            [sys.executable, "-m", "tools.samples.gen_big", "--entries", str(entries), "--out", str(p)],
            check=True,
            cwd=HERE.parent,
        )
    return p


def timed(set_value) -> float:  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    set_value()
    return (time.perf_counter() - t) * 1000


def ms(xs: list[float]) -> str:
    return (
        f"median {statistics.median(xs):7.1f} ms   p90 {sorted(xs)[int(0.9 * (len(xs) - 1))]:7.1f} ms   "
        f"max {max(xs):7.1f} ms"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--entries", type=int, default=10_000)
    ap.add_argument("--moves", type=int, default=20)
    ap.add_argument("--file", type=Path)
    a = ap.parse_args()
    path = a.file or generated(a.entries)
    t = time.perf_counter()
    s = load_any(path)
    load_s = time.perf_counter() - t
    t = time.perf_counter()
    ins = inspect(s, compaction="pi", window=200_000)
    open_s = time.perf_counter() - t
    n = len(ins.replay.steps)
    print(
        f"{path.name}: {len(s.entries):,} entries, {n:,} model calls; load {load_s:.2f} s, inspect() "
        f"(replay + first draw) {open_s:.2f} s"
    )
    slider = ins.controls["step"]
    targets = [round(i * (n - 1) / max(1, a.moves - 1)) for i in range(a.moves)]
    step_ms = [timed(lambda k=k: setattr(slider, "value", k)) for k in targets]
    print(f"step slider, {len(step_ms)} moves:    {ms(step_ms)}   (target ≤ 300 ms)")
    win = ins.controls["context_window"]
    first = timed(lambda: setattr(win, "value", 128_000))
    back = timed(lambda: setattr(win, "value", 200_000))
    again = timed(lambda: setattr(win, "value", 128_000))
    print(f"window change: new replay {first:.0f} ms; back to a cached replay {back:.0f} ms, {again:.0f} ms")
    strat = ins.controls["strategy"]
    prune = timed(lambda: setattr(strat, "value", "opencode"))
    print(f"pruning strategy change (new replay): {prune:.0f} ms")


if __name__ == "__main__":
    main()
