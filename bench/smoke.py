"""Every benchmark run once at a small size, to see that each still runs (not to time anything).

    python bench/smoke.py [--only NAME,…]

The test suite never runs the benchmarks (they take minutes), so a change to the engine can break
one silently: three were found broken this way (``notebook.py`` called a generator that had moved,
``never.py`` replayed the "recorded" strategy on a session that records no pruning, and
``summarize_llm.py`` sent a key to a base URL it had not configured). Prints each script's exit
status and last lines; exits 1 when any failed. Writes only under ``bench/out/`` (the generated
sessions, as the benchmarks do). Takes about three and a half minutes on two cores.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: each benchmark with the arguments that make it small
RUNS: dict[str, list[str]] = {
    "app.py": ["--entries", "2000", "--repeat", "1"],
    "cache.py": ["--calls", "200", "--repeat", "1"],
    "corpus.py": ["--sessions", "6", "--mix", "small"],
    "dcp.py": ["--exchanges", "100", "--baseline-max", "100"],
    "fuzz.py": ["--inputs", "30", "--seed", "99"],
    "fuzz_cli.py": ["--runs", "30", "--seed", "99"],
    "fuzz_importers.py": ["--cases-per-file", "5", "--first-seed", "9000"],
    "importers.py": ["--lines", "500"],
    "load.py": ["--sizes", "1000", "--repeat", "1"],
    "monkey_app.py": ["--moves", "40", "--seed", "99"],
    "never.py": ["--entries", "2200", "--samples", "20", "--full-up-to", "0"],
    "notebook.py": ["--entries", "2000", "--moves", "3"],
    "recon.py": [],
    "replay.py": ["--calls", "200"],
    "retention.py": ["--calls", "300"],
    "scale.py": ["--inputs", "line"],
    "summarize_llm.py": ["--repeat", "1"],
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="", help="comma-separated script names (default: all)")
    args = ap.parse_args()
    only = {x if x.endswith(".py") else x + ".py" for x in args.only.split(",") if x}
    scripts = sorted(p.name for p in HERE.glob("*.py") if p.name != "smoke.py")
    missing = [s for s in scripts if s not in RUNS]
    failed = []
    for name in scripts:
        if only and name not in only:
            continue
        t = time.perf_counter()
        run = subprocess.run(
            [sys.executable, str(HERE / name), *RUNS.get(name, ["--help"])],
            capture_output=True,
            text=True,
            cwd=HERE.parent,
        )
        status = "ok" if run.returncode == 0 else f"FAILED (exit {run.returncode})"
        print(f"{name:<20} {status:<18} {time.perf_counter() - t:6.1f} s", flush=True)
        if run.returncode:
            failed.append(name)
            for line in (run.stdout + run.stderr).strip().splitlines()[-6:]:
                print(f"    {line}")
    if missing:
        print(f"no small size known for {', '.join(missing)} (only --help was run): add it to RUNS")
    print(f"{len(failed)} failed" + (f": {', '.join(failed)}" if failed else ""))
    return 1 if failed or missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
