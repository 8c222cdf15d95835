"""App benchmark: server-side time of one rerun of the Replay page, through Streamlit's AppTest.

    python bench/app.py [--entries 10000,50000] [--repeat 5]

For each generated session: the first Replay render (parse + replay, cached afterwards), a rerun
after moving the step slider, and a rerun after changing a threshold (keepRecentTokens with the
pi what-if policy: a new replay). Targets: slider ≤ 200 ms at 10k entries and ≤ 500 ms at 50k;
threshold change ≤ 1 s at 10k. Peak RSS of the process is printed too.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def ensure(n: int) -> Path:
    p = HERE / "out" / f"big-{n}.jsonl"
    if not p.exists():
        p.parent.mkdir(exist_ok=True)
        subprocess.run([sys.executable, str(HERE / "gen_big.py"), "--entries", str(n), "--out", str(p)], check=True)
    return p


def timed(at, action) -> float:  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    action(at)
    at.run()
    if at.exception:
        raise RuntimeError(at.exception[0].value)
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--entries", default="10000,50000")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    from streamlit.testing.v1 import AppTest

    print(f"{'entries':>8} {'first render s':>15} {'slider rerun ms':>16} {'threshold change ms':>20} {'peak RSS MB':>12}")
    for n in (int(x) for x in args.entries.split(",") if x):
        p = ensure(n)
        os.environ["INSPECTOR_ROOTS"] = str(p.parent)
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=600)
        at.run()
        at.text_input(key="local_path").set_value(str(p))
        at.button(key="load_path").click()
        at.run()
        first = timed(at, lambda a: a.switch_page("inspector/ui/app_pages/replay.py"))
        steps = at.slider(key="step").max
        slider = []
        for k in range(args.repeat):
            target = (k * 7919) % max(1, steps)
            slider.append(timed(at, lambda a, t=target: a.slider(key="step").set_value(t)))
        at.selectbox(key="compaction").set_value("pi")
        at.run()
        thresh = []
        for k in range(args.repeat):
            thresh.append(timed(at, lambda a, v=15000 + 1000 * k: a.number_input(key="keep").set_value(v)))
        slider.sort()
        thresh.sort()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{n:>8} {first:>15.2f} {slider[len(slider) // 2] * 1000:>16.0f} {thresh[len(thresh) // 2] * 1000:>20.0f} "
              f"{peak:>12.0f}")
        sys.stdout.flush()
    print("(medians; AppTest runs the app's own code path in-process, without a browser)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
