"""Fuzzing campaign: the loader, every CLI command and every app page on arbitrary bytes,
structure-aware mutations of a valid session, and edge values in any field (numbers JSON can write
but not hold — 1e400, 400-digit integers, two 1e308 —, lone surrogates, out-of-range dates,
terminal escapes), plus now and then a FIFO in place of the file.

Each input goes through the loader; ``--commands`` of them (on average) go through CLI commands
picked at random (``tests/test_hardening.py``'s FUZZ_COMMANDS: info, oracle-json, compact, doctor,
replay, prune, sweep, summarize, export …); one input in ``--app-every`` is opened in the app and
every page drawn (Streamlit's AppTest). A failure is an uncaught exception, an exit status other
than 0/1/2, invalid JSON from ``--json``, a raw control character reaching the terminal, or an
error shown by an app page; a hang is a command or page still running after ``--timeout`` seconds.
Failing inputs are saved under ``bench/out/fuzz-failures/``.

    python bench/fuzz.py --inputs 100000 [--seed 1] [--commands 1] [--app-every 500]
    python bench/fuzz.py --seconds 60

The test suite runs short versions of the same (tests/test_hardening.py).
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from inspector import parse_session  # noqa: E402
from tests.test_hardening import (  # noqa: E402
    FUZZ_COMMANDS,
    base_lines,
    check_app,
    check_command,
    command_argv,
    edge_mutate,
    mutate,
    rich_base_lines,
)


class Hang(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise Hang("still running")


def with_timeout(seconds: float, fn: Any, *args: Any) -> Any:
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn(*args)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def make_input(rng: random.Random, plain: list[str], rich: list[str]) -> tuple[str, bytes]:
    r = rng.random()
    if r < 0.2:
        return "bytes", bytes(rng.randrange(256) for _ in range(rng.randrange(400)))
    if r < 0.5:
        return "mutated", mutate(plain, rng).encode("utf-8", "surrogatepass")
    return "edge", edge_mutate(rich, rng).encode("utf-8", "surrogatepass")


class Campaign:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.rng = random.Random(args.seed)
        self.tried: Counter[str] = Counter()
        self.failures = 0
        self.hangs = 0
        self.work = HERE / "out" / "fuzz-work"
        self.saved = HERE / "out" / "fuzz-failures"
        self.work.mkdir(parents=True, exist_ok=True)
        os.environ["INSPECTOR_ROOTS"] = str(self.work)
        os.environ["INSPECTOR_CACHE_DIR"] = str(self.work / "cache")

    def fail(self, what: str, data: bytes, detail: str) -> None:
        self.failures += 1
        self.saved.mkdir(parents=True, exist_ok=True)
        (self.saved / f"{what.replace('/', '-').replace(' ', '_')}-{self.failures}.jsonl").write_bytes(data)
        print(f"FAILED {what}: {detail}", file=sys.stderr)

    def guarded(self, what: str, data: bytes, fn: Any, *args: Any) -> None:
        self.tried[what] += 1
        try:
            problem = with_timeout(self.args.timeout, fn, *args)
        except Hang:
            self.hangs += 1
            self.fail(what, data, "hang")
            return
        except Exception:  # noqa: BLE001 - what a fuzzer is for
            problem = traceback.format_exc(limit=-3)
        if problem:
            self.fail(what, data, problem)

    def one(self, n: int, plain: list[str], rich: list[str]) -> None:
        kind, data = make_input(self.rng, plain, rich)
        self.guarded(f"loader/{kind}", data, lambda: parse_session(data) and None)
        path = self.work / "case.jsonl"
        path.write_bytes(data)
        k = self.args.commands
        for _ in range(int(k) + (self.rng.random() < k - int(k))):
            cmd = self.rng.choice(FUZZ_COMMANDS)
            if any(a.endswith(".html") for a in cmd) and self.rng.random() < 0.9:
                cmd = FUZZ_COMMANDS[0]  # the HTML report inlines plotly.js: seldom
            argv = command_argv(cmd, str(path), str(self.work / "out"))
            self.guarded(f"cli/{cmd[0]}", data, check_command, argv)
        if self.args.app_every and n % self.args.app_every == 0:
            self.guarded(
                "app/all pages", data, check_app, str(path), self.rng.choice(["recorded", "pi", "codex"])
            )
        if n % 5000 == 4999:
            self.fifo(data)

    def fifo(self, data: bytes) -> None:
        """A FIFO named like a session: refused at once, never read (a read would block)."""
        pipe = self.work / "pipe.jsonl"
        pipe.unlink(missing_ok=True)
        os.mkfifo(pipe)
        try:
            self.guarded("cli/info on a FIFO", data, check_command, ["info", str(pipe)])
        finally:
            pipe.unlink(missing_ok=True)

    def run(self) -> int:
        a = self.args
        signal.signal(signal.SIGALRM, _alarm)
        plain, rich = base_lines(), rich_base_lines()
        deadline = time.monotonic() + a.seconds if a.seconds else None
        t0 = time.monotonic()
        n = 0
        while (a.inputs and n < a.inputs) or (deadline and time.monotonic() < deadline):
            self.one(n, plain, rich)
            n += 1
            if a.progress and n % a.progress == 0:
                print(
                    f"{n:,} inputs, {self.failures} failures, {self.hangs} hangs, "
                    f"{time.monotonic() - t0:,.0f} s",
                    file=sys.stderr,
                    flush=True,
                )
        runs = sum(self.tried.values())
        print(
            f"fuzzing (seed {a.seed}): {n:,} inputs, {runs:,} runs "
            f"({', '.join(f'{k} {v:,}' for k, v in sorted(self.tried.items()))}) in "
            f"{time.monotonic() - t0:,.0f} s; failures (tracebacks): {self.failures}; hangs: {self.hangs}"
        )
        return 1 if self.failures else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--inputs", type=int, default=0, help="number of inputs (default: run --seconds)")
    ap.add_argument("--seconds", type=float, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--commands", type=float, default=1.0, help="CLI commands per input, on average")
    ap.add_argument("--app-every", type=int, default=500, help="open one input in N in the app (0: never)")
    ap.add_argument("--timeout", type=float, default=120, help="seconds before a run counts as a hang")
    ap.add_argument("--progress", type=int, default=0, help="print a progress line every N inputs")
    args = ap.parse_args()
    if not args.inputs and not args.seconds:
        args.seconds = 120
    return Campaign(args).run()


if __name__ == "__main__":
    raise SystemExit(main())
