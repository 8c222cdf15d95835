"""Replay benchmark: steps per second of a full replay, against a naive rebuild-every-step
baseline in the same run; and a 10×10 sweep on tests/fixtures/before-compaction.jsonl.

    python bench/replay.py [--calls 1000,10000] [--file SESSION.jsonl ...] [--baseline-steps 300]

The naive baseline does what a replay without incrementality would: at every model call it
rebuilds pi's context from the session (``build_session_context`` at the entry before the
call) and re-estimates every message. It is timed on ``--baseline-steps`` calls spread evenly over the branch
and scaled to all calls (it is quadratic; running it on every one of 10,000 calls would take
many minutes).
Targets: ≥ 20× the baseline; the 10×10 sweep under 10 s.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from inspector import build_session_context, estimate_tokens, load_session  # noqa: E402
from inspector.replay import ReplaySettings, replay, sweep  # noqa: E402
from inspector.session.models import AssistantMessage, MessageEntry  # noqa: E402


def session_with_calls(calls: int) -> Path:
    """A generated session with about ``calls`` model calls (≈ 2.1 entries per call)."""
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    entries = int(calls * 2.2)
    p = out / f"big-{entries}.jsonl"
    if not p.exists():
        subprocess.run(
            [sys.executable, "-m", "tools.samples.gen_big", "--entries", str(entries), "--out", str(p)],
            check=True,
            cwd=REPO,
        )
    return p


def naive(session, samples: int) -> tuple[int, float]:  # type: ignore[no-untyped-def]
    """(calls, estimated seconds) of rebuilding the context from scratch at every call, timed on
    ``samples`` calls spread evenly over the branch and scaled to all of them."""
    calls = [
        i
        for i in session.path()
        if isinstance(session.entries[i], MessageEntry)
        and isinstance(session.entries[i].message, AssistantMessage)
    ]
    picked = calls[:: max(1, len(calls) // samples)]
    t = time.perf_counter()
    for i in picked:
        if session.parents[i] >= 0:
            ctx = build_session_context(session, session.parents[i])
            sum(estimate_tokens(m.message) for m in ctx.messages)
    dt = time.perf_counter() - t
    return len(calls), dt / max(1, len(picked)) * len(calls)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", default="1000,10000")
    ap.add_argument("--file", action="append", default=[])
    ap.add_argument("--baseline-steps", type=int, default=300)
    args = ap.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    files = [Path(f) for f in args.file] or [session_with_calls(int(c)) for c in args.calls.split(",") if c]
    hdr = f"{'session':<28} {'calls':>6} {'policy':>9} {'replay s':>9} {'steps/s':>9} {'naive steps/s':>13} {'ratio':>7}"
    print(hdr + "\n" + "-" * len(hdr))
    for f in files:
        s = load_session(f)
        n_naive, t_naive = naive(s, args.baseline_steps)
        naive_rate = n_naive / t_naive if t_naive else float("inf")
        for policy in ("recorded", "pi"):
            r = replay(s, ReplaySettings(compaction=policy))
            rate = len(r.steps) / r.seconds
            print(
                f"{f.name:<28} {len(r.steps):>6} {policy:>9} {r.seconds:>9.3f} {rate:>9,.0f} {naive_rate:>13,.0f} "
                f"{rate / naive_rate:>6.0f}×"
            )
        sys.stdout.flush()
    s = load_session(REPO / "tests" / "fixtures" / "before-compaction.jsonl")
    grid = {
        "keep_recent_tokens": list(range(5000, 50001, 5000)),
        "reserve_tokens": list(range(4000, 40001, 4000)),
    }
    t = time.perf_counter()
    cells = sweep(s, ReplaySettings(compaction="pi"), grid)
    dt = time.perf_counter() - t
    print(
        f"\n10×10 sweep (keepRecentTokens × reserveTokens, pi policy) on before-compaction.jsonl: "
        f"{len(cells)} replays in {dt:.2f} s (target < 10 s)"
    )
    import resource

    print(
        f"peak RSS of this process (sessions loaded + replays): "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
