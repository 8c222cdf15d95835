"""A long session that never compacts: replaying it under each pruning strategy.

    python bench/never.py [--entries 2200,10000,50000] [--policy never] [--window 1000000]
                          [--full-up-to 2200] [--samples 200]

With nothing compacting (policy ``never``, or a 1M-token window), the context grows to the whole
session, and applying a strategy to the whole context at every call — the path before the
incremental runners — is quadratic: switching the strategy took minutes. For each generated
session (``python -m tools.samples.gen_big``) and strategy this prints the replay time now, and the old path's:
measured in full up to ``--full-up-to`` entries, and beyond that estimated from ``--samples``
calls spread evenly over the session (``apply`` on that call's exact context, scaled to all
calls, plus the replay without pruning). The estimate is printed next to the full measurement
where both exist, to show how close it is.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from inspector import load_session  # noqa: E402
from inspector.pruning import REGISTRY  # noqa: E402
from inspector.replay import ReplaySettings, replay, session_counter  # noqa: E402
from inspector.replay.strategies import effective_strategy  # noqa: E402


def ensure(n: int) -> Path:
    p = HERE / "out" / f"big-{n}.jsonl"
    if not p.exists():
        p.parent.mkdir(exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "tools.samples.gen_big", "--entries", str(n), "--out", str(p)],
            check=True,
            cwd=REPO,
        )
    return p


def timed(f):  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    r = f()
    return r, time.perf_counter() - t


def estimate_old(session, settings: ReplaySettings, r, base_seconds: float, samples: int) -> float:  # type: ignore[no-untyped-def]
    """The old path's time: the replay without pruning plus ``apply`` at every call, the latter
    timed on ``samples`` calls (their exact contexts and states) and scaled to all calls."""
    strat = REGISTRY[settings.strategy]
    values = strat.Settings(**settings.strategy_dict())
    counter = session_counter(session, settings.counter)
    picked = list(range(0, len(r.steps), max(1, len(r.steps) // samples)))
    t = time.perf_counter()
    for k in picked:
        st = r.steps[k]
        strat.apply(tuple(st._segment[: st._length]), values, st._state, st._call, counter)
    per_call = (time.perf_counter() - t) / max(1, len(picked))
    return base_seconds + per_call * len(r.steps)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--entries", default="2200,10000,50000")
    ap.add_argument("--policy", default="never")
    ap.add_argument("--window", type=int, default=1_000_000)
    ap.add_argument(
        "--full-up-to", type=int, default=2200, help="measure the old path in full up to this size"
    )
    ap.add_argument("--samples", type=int, default=200)
    args = ap.parse_args()
    print(f"policy {args.policy}, window {args.window:,}; old = apply on the whole context at every call")
    print(
        f"{'entries':>8} {'calls':>6} {'context':>8} {'strategy':<26} {'new s':>7} {'old s':>9} {'old est. s':>11} "
        f"{'old/new':>8}"
    )
    for n in (int(x) for x in args.entries.split(",") if x):
        s = load_session(ensure(n))
        base = ReplaySettings(compaction=args.policy, context_window=args.window)
        replay(s, base)  # token counts and the path, as in the app after loading
        r0, base_seconds = timed(lambda s=s, base=base: replay(s, base))
        for name in REGISTRY:
            if name == "none":
                continue
            st = base.model_copy(update={"strategy": name})
            if effective_strategy(st, s) is None:  # "recorded": a generated pi session records no pruning
                continue
            r, new = timed(lambda s=s, st=st: replay(s, st))
            old = None
            if n <= args.full_up_to:
                _, old = timed(lambda s=s, st=st: replay(s, st, incremental=False))
            est = estimate_old(s, st, r, base_seconds, args.samples)
            ratio = (old or est) / new
            print(
                f"{n:>8,} {len(r.steps):>6,} {r.steps[-1].messages:>8,} {name:<26} {new:>7.2f} "
                f"{old if old is not None else float('nan'):>9.2f} {est:>11.1f} {ratio:>7.0f}×",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
