"""Importer fuzzing at length: damaged Claude Code, Codex and OpenCode files (the bundled samples
and the hand-made preserved-segment / retained-tail files of the tests) through import, info,
doctor and replay — the same mutations as ``tests/test_import_fuzz.py``, many more of them.

    python bench/fuzz_importers.py [--cases-per-file 1200] [--first-seed 0]

Prints the number of cases and failures (with the first tracebacks); exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests import test_import_fuzz as fuzz  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases-per-file", type=int, default=1200)
    ap.add_argument(
        "--first-seed",
        type=int,
        default=0,
        help="the first mutation seed (a new campaign: past the last one run)",
    )
    args = ap.parse_args()
    cases = failures = 0
    for name in sorted(fuzz.SAMPLES):
        for seed in range(args.first_seed, args.first_seed + args.cases_per_file):
            cases += 1
            try:
                fuzz._exercise(fuzz._mutate(name, seed))
            except Exception:  # noqa: BLE001 - any exception is a finding
                failures += 1
                if failures <= 5:
                    print(f"{name} seed {seed}:")
                    traceback.print_exc(limit=6)
    print(f"{cases:,} cases over {len(fuzz.SAMPLES)} files, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
