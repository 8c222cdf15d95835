"""Prompt-cache benchmark: the time ``cache_replay`` adds to a full replay (target ≤ 20 %), on
generated sessions as recorded and under a pruning what-if (pruning makes it rebuild the sent
context at each prune), plus the real transcripts in ../shared when present.

    python bench/cache.py [--calls 1000,10000] [--repeat 3] [--file SESSION ...]

Each figure is the median of ``--repeat`` runs in this process (replay and cache model timed
apart; the cache model's first run includes fitting the session's sizes). Prints a markdown table.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

from replay import session_with_calls  # noqa: E402

from inspector.cache import cache_replay  # noqa: E402
from inspector.cache.report import _FITS  # noqa: E402
from inspector.importers import load_any  # noqa: E402
from inspector.replay import ReplaySettings, replay  # noqa: E402

CONFIGS = {
    "as recorded": ReplaySettings(strategy="recorded"),
    "what-if: pi-context-pruning": ReplaySettings(strategy="pi-context-pruning"),
}


def measure(session, settings: ReplaySettings, repeat: int) -> tuple[int, float, float]:  # type: ignore[no-untyped-def]
    rt, ct = [], []
    for _ in range(repeat):
        _FITS.pop(session, None)  # each run pays for the size fit, as a first view does
        t0 = time.perf_counter()
        r = replay(session, settings)
        t1 = time.perf_counter()
        cache_replay(r)
        ct.append(time.perf_counter() - t1)
        rt.append(t1 - t0)
    return len(r.steps), statistics.median(rt), statistics.median(ct)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", default="1000,10000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--file", action="append", default=[])
    a = ap.parse_args()
    files = [session_with_calls(int(c)) for c in a.calls.split(",") if c]
    files += [Path(f) for f in a.file]
    shared = REPO.parent / "shared" / "real-sessions"
    if not a.file and shared.is_dir():
        files += sorted(p for p in shared.glob("*/*") if p.suffix in (".jsonl", ".json"))
    print("| session | calls | replay | config | replay time | cache model | added |")
    print("|---|---:|---|---|---:|---:|---:|")
    for f in files:
        s = load_any(f)
        for name, settings in CONFIGS.items():
            n, rt, ct = measure(s, settings, a.repeat)
            print(f"| {f.name} | {n:,} | {name} | {rt:.3f} s | {ct:.3f} s | {ct / rt:.0%} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
