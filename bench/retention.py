"""Retention benchmark: scoring every compaction of a generated 10k-call session, against
replaying it (issue 21: scoring must take less time than the replay it reads).

    python bench/retention.py [--calls 10000] [--file SESSION.jsonl] [--policy recorded,pi]

For each policy: the replay's time, then retention's on that finished replay — cold (the
per-session facts computed: every entry of the branch read once) and warm (a second replay object
of the same session: the facts memo is reused, as in the app, where every settings change
replays) — with the compactions scored and the items found. Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from inspector import load_session  # noqa: E402
from inspector.replay import ReplaySettings, replay  # noqa: E402
from inspector.retention import retention  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=10000)
    ap.add_argument("--file", help="a session file instead of a generated one")
    ap.add_argument("--policy", default="recorded,pi")
    args = ap.parse_args()
    if args.file:
        path = Path(args.file)
    else:
        from replay import session_with_calls  # bench/replay.py: the generated session, made once

        path = session_with_calls(args.calls)
    t = time.perf_counter()
    s = load_session(path)
    print(f"{path.name}: {len(s.entries):,} entries, loaded in {time.perf_counter() - t:.2f} s")
    for policy in args.policy.split(","):
        settings = ReplaySettings(compaction=policy)
        t = time.perf_counter()
        r = replay(s, settings)
        t_replay = time.perf_counter() - t
        t = time.perf_counter()
        rep = retention(r)
        t_cold = time.perf_counter() - t
        r2 = replay(s, settings)  # another replay object: retention's per-replay memo misses, the facts hit
        t = time.perf_counter()
        retention(r2)
        t_warm = time.perf_counter() - t
        needed = sum(len(c.needed) for c in rep.compactions)
        forgotten = sum(len(c.forgotten) for c in rep.compactions)
        print(f"  {policy:<9} {len(r.steps):,} calls, {len(rep.compactions)} compactions: replay {t_replay:6.2f} s · "
              f"retention cold {t_cold:6.2f} s ({t_cold / t_replay:.2f}× the replay), warm {t_warm:6.2f} s "
              f"({t_warm / t_replay:.2f}×) · {needed:,} needed, {forgotten:,} forgotten")


if __name__ == "__main__":
    main()
