"""Fuzzing campaign: the loader and every CLI command on arbitrary bytes and on structure-aware
mutations of valid sessions. Prints inputs tried and failures (an uncaught exception, or an
exit status other than 0/1/2), and saves failing inputs under bench/out/fuzz-failures/.

    python bench/fuzz.py [--seconds 120] [--seed 1]

The test suite runs a short version of the same thing (tests/test_hardening.py); this script
is for the longer campaigns whose figures the README quotes.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from inspector import parse_session  # noqa: E402
from inspector.cli import main as cli_main  # noqa: E402
from tests.test_hardening import COMMANDS, base_lines, mutate  # noqa: E402


def run_cli(args: list[str]) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            return cli_main(args)
        except SystemExit as e:
            return e.code if isinstance(e.code, int) else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=120)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    out = HERE / "out" / "fuzz-failures"
    work = HERE / "out" / "fuzz-work"
    work.mkdir(parents=True, exist_ok=True)
    tried = {"bytes/loader": 0, "mutated/loader": 0, "mutated/cli": 0}
    failures = 0
    lines = base_lines()
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        kind = rng.random()
        if kind < 0.4:
            data = bytes(rng.randrange(256) for _ in range(rng.randrange(400)))
            key = "bytes/loader"
        else:
            data = mutate(lines, rng).encode("utf-8", "surrogatepass")
            key = "mutated/loader"
        try:
            parse_session(data)
            tried[key] += 1
        except Exception:
            failures += 1
            out.mkdir(parents=True, exist_ok=True)
            (out / f"loader-{failures}.jsonl").write_bytes(data)
            traceback.print_exc()
        if key == "mutated/loader" and rng.random() < 0.25:
            p = work / "case.jsonl"
            p.write_bytes(data)
            for cmd in COMMANDS:
                tried["mutated/cli"] += 1
                try:
                    code = run_cli([cmd[0], str(p), *cmd[1:]])
                    if code not in (0, 1, 2):
                        raise RuntimeError(f"exit status {code}")
                except Exception:
                    failures += 1
                    out.mkdir(parents=True, exist_ok=True)
                    (out / f"cli-{failures}.jsonl").write_bytes(data)
                    print("command:", cmd, file=sys.stderr)
                    traceback.print_exc()
    total = sum(tried.values())
    print(f"fuzzing for {args.seconds:.0f} s (seed {args.seed}): {total:,} inputs tried "
          f"({', '.join(f'{k} {v:,}' for k, v in tried.items())}); failures: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
