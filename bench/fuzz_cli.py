"""Command-line fuzzing: every command of ``inspector`` with random arguments, checking what a user
must be able to rely on whatever they type.

    python bench/fuzz_cli.py [--runs 500] [--seed 0] [--command NAME] [--timeout 60]

The session fuzzers (``fuzz.py``, ``fuzz_importers.py``) vary the files; this one varies the
arguments: each option gets values of its own kind and the odd ones (negative, zero, huge, NaN,
infinite, not a number, empty), settings keys that exist and some that do not, grids, leaves,
output paths onto other sessions, scheduler addresses Dask cannot read. Each run is checked for:

* an exit status of 0, 1 or 2 (success, the session or an output refused, bad arguments), and no
  traceback, in the output or raised;
* no hang (``--timeout`` seconds);
* no file it was given as input changed, and no other session changed unless ``--force`` was given.

Runs in a temporary folder with copies of the bundled samples; no API key is passed on, and the
only base URL offered is a closed local port, so nothing leaves the machine. Prints each finding
with its arguments; exits 1 when there was one. Found, on its first campaigns: a ``--scheduler``
address Dask cannot read ended in a traceback, and ``--engine dask --workers -1`` waited forever.
Names longer than the file system takes (for a corpus spec among the sessions, and an output), added
after ``bench/monkey_app.py --seed 9`` found one on the Corpus page: ``--seed 10`` finds the
traceback ``inspector corpus`` gave for it before that fix.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import os
import random
import shutil
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

for _key in [k for k in os.environ if k.endswith("_API_KEY")]:  # nothing may be sent anywhere
    del os.environ[_key]

from inspector.cli import build_parser, main  # noqa: E402
from inspector.policies import PolicySettings  # noqa: E402
from inspector.pruning import REGISTRY  # noqa: E402
from inspector.replay import ReplaySettings  # noqa: E402

INTS = ["0", "1", "3", "1000", "20000", "64000", "128000"]
ODD_INTS = ["-1", "999", "10000000000000", "abc", "1.5", "nan", "-0", ""]
FLOATS = ["0.1", "0.5", "1", "2", "30"]
ODD_FLOATS = ["-1", "0", "nan", "inf", "-inf", "1e308", "abc", ""]
ODD = 0.2
"""How often a number is an odd one."""
LONG = "n" * 300
"""A name longer than the file system takes (ENAMETOOLONG: a corpus spec, a results file)."""
TEXTS = ["", "x", "=", ":::", "-", "../x", "\x1b[31mred", "1,2,3", "a=b", "recorded", "pi", "none", LONG]
LEAVES = ["@0", "@1", "@-1", "@99999", "@abc", "leaf", "", "nope"]
URLS = ["http://127.0.0.1:9/v1", "", "ftp://127.0.0.1:9", "not a url"]
SCHEDULERS = ["tcp://:", "foo://host:1", "[::1", "127.0.0.1:0"]
INT_TYPES = {"int", "token_count", "window_tokens", "limit", "worker_count", "retries", "numbers"}
FLOAT_TYPES = {"float", "positive_number", "ratio"}
OUTPUTS = {"-o", "--output", "--out", "--dump-migrated"}


class Hang(Exception):
    pass


def _alarm(*_: Any) -> None:
    raise Hang


def setting_keys() -> list[str]:
    """Every key ``--set`` and ``--grid`` may name (the replay's, the policies', each strategy's),
    and two that no setting has."""
    keys = set(ReplaySettings.model_fields) | set(PolicySettings.model_fields) | {"window", "bogus"}
    for s in REGISTRY.values():
        keys |= set(s.Settings.model_fields)
    return sorted(keys)


class Fuzzer:
    def __init__(self, work: Path, rng: random.Random) -> None:
        self.work, self.rng = work, rng
        self.out = work / "out"
        sessions = work / "sessions"
        sessions.mkdir()
        for p in sorted((REPO / "sample_sessions").iterdir()):
            if p.suffix in (".jsonl", ".json"):
                shutil.copy(p, sessions / p.name)
        (sessions / "empty.jsonl").write_bytes(b"")
        (sessions / "binary.jsonl").write_bytes(bytes(rng.randrange(256) for _ in range(3000)))
        (sessions / "folder").mkdir()
        self.sessions = sorted(str(p) for p in sessions.iterdir())
        self.originals = {p: Path(p).read_bytes() for p in self.sessions if Path(p).is_file()}
        self.held = {p for p in self.originals if not p.endswith(("empty.jsonl", "binary.jsonl"))}
        """The files that hold a session: an output may replace the others without ``--force``."""
        self.files = self.sessions + [str(work / "missing.jsonl"), "/dev/null"]
        self.keys = setting_keys()
        p = build_parser()
        sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
        self.commands: dict[str, argparse.ArgumentParser] = dict(sub.choices)
        self.codes: dict[Any, int] = {}
        """How many runs ended with each exit status (0 ran, 1 refused the session or output, 2 usage)."""

    def value(self, a: argparse.Action, opt: str) -> str:
        rng = self.rng
        kind = getattr(a.type, "__name__", "")
        if a.choices:
            return str(rng.choice(list(a.choices))) if rng.random() < 0.85 else rng.choice(TEXTS)
        if opt in OUTPUTS:
            if rng.random() < 0.3:
                return rng.choice(self.sessions)  # onto another session: refused without --force
            return str(
                self.out
                / rng.choice(
                    ["a.json", "b.csv", "c.jsonl", "d.html", "sub/e.json", "", LONG, "gone/f.duckdb"]
                )
            )
        if opt == "--set":
            return f"{rng.choice(self.keys)}={rng.choice(INTS + ODD_INTS + FLOATS + ODD_FLOATS + TEXTS)}"
        if opt == "--grid":
            vals = rng.choice(
                ["1,2", "0:40000:20000", "1:0:1", "abc", "", "0:100000000:1", "-5", "opencode,pi"]
            )
            return f"{rng.choice(self.keys)}={vals}"
        if opt == "--leaf":
            return rng.choice(LEAVES)
        if opt == "--base-url":
            return rng.choice(URLS)
        if opt == "--scheduler":
            return rng.choice(SCHEDULERS)
        if kind in INT_TYPES:
            return rng.choice(ODD_INTS if rng.random() < ODD else INTS)
        if kind in FLOAT_TYPES:
            return rng.choice(ODD_FLOATS if rng.random() < ODD else FLOATS)
        return rng.choice(TEXTS + self.files[:3])

    def argv(self, name: str) -> list[str]:
        rng, out = self.rng, [name]
        for a in self.commands[name]._actions:
            if isinstance(a, argparse._HelpAction):
                continue
            if not a.option_strings:  # a positional
                if a.choices:
                    out.append(str(rng.choice(list(a.choices))))
                elif a.nargs in ("*", "+"):
                    out += rng.sample(self.files, rng.randint(1, 3))
                    if rng.random() < 0.05:  # a spec that names nothing readable, among them
                        out.append(rng.choice(TEXTS))
                else:
                    out.append(rng.choice(self.files) if rng.random() < 0.95 else rng.choice(TEXTS))
                continue
            if rng.random() > 0.3:
                continue
            opt = rng.choice(a.option_strings)
            if a.nargs == 0:
                out.append(opt)
                continue
            for _ in range(rng.randint(1, 2) if isinstance(a, argparse._AppendAction) else 1):
                out += [opt, self.value(a, opt)]
        return out

    def digests(self) -> dict[str, str]:
        return {
            p: hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in self.sessions if Path(p).is_file()
        }

    def run(self, argv: list[str], timeout: int) -> str | None:
        """The finding of one run (None: none)."""
        shutil.rmtree(self.out, ignore_errors=True)
        self.out.mkdir()
        before = self.digests()
        o, e = io.StringIO(), io.StringIO()
        signal.alarm(timeout)
        try:
            with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
                code: Any = main(argv)
        except SystemExit as x:
            code = x.code
        except Hang:
            return f"hang (over {timeout} s)"
        except BaseException:  # noqa: BLE001 - anything raised is a finding
            return "raised:\n" + traceback.format_exc()[-1500:]
        finally:
            signal.alarm(0)
        self.codes[code] = self.codes.get(code, 0) + 1
        text = o.getvalue() + e.getvalue()
        if "Traceback (most recent call last)" in text:
            return "traceback printed:\n" + text[-1500:]
        if code not in (0, 1, 2, None):
            return f"exit status {code!r}: {e.getvalue()[-300:]}"
        after = self.digests()
        changed = [p for p in before if after.get(p) != before[p]]
        inputs = {a for k, a in enumerate(argv) if k == 0 or argv[k - 1] not in OUTPUTS}  # not the outputs
        if [p for p in changed if p in inputs]:
            for p in changed:
                Path(p).write_bytes(self.originals[p])
            return f"an input changed: {[p for p in changed if p in inputs]}"
        for p in changed:  # put it back for the next runs
            Path(p).write_bytes(self.originals[p])
        if [p for p in changed if p in self.held] and "--force" not in argv:
            return f"a session changed without --force: {[p for p in changed if p in self.held]}"
        return None


def main_() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--command", default=None, help="fuzz this command only")
    ap.add_argument("--timeout", type=int, default=60, help="seconds before a run counts as a hang")
    args = ap.parse_args()
    signal.signal(signal.SIGALRM, _alarm)
    rng = random.Random(args.seed)
    findings = 0
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fuzz-cli-") as tmp:
        fz = Fuzzer(Path(tmp), rng)
        names = sorted(fz.commands) if args.command is None else [args.command]
        for k in range(args.runs):
            argv = fz.argv(rng.choice(names))
            found = fz.run(argv, args.timeout)
            if found is not None:
                findings += 1
                print(f"run {k}: {argv!r}\n  {found}", flush=True)
        codes = ", ".join(f"{n} exit {c}" for c, n in sorted(fz.codes.items(), key=lambda x: str(x[0])))
    print(
        f"{args.runs} runs (seed {args.seed}): {codes}; {findings} finding(s), {time.perf_counter() - t0:.0f} s"
    )
    return 1 if findings else 0


if __name__ == "__main__":  # the corpus engines start worker processes that import this module
    raise SystemExit(main_())
