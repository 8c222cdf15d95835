"""Scale: large inputs through the CLI, each command in a fresh process, with its wall time and
peak memory (maximum resident set) against the file's size. The target is a peak of at most
3× the file.

Inputs (written to ``bench/out/`` on first use):

* ``line``  — one user message of ~100 MB of prose-like text (a single 100 MB line);
* ``big``   — a realistic session of ~1 GB (``python -m tools.samples.gen_big``; 470,000 entries);
* ``flood`` — 2,000,000 tiny entries (user / assistant tool call / tool result, ~285 bytes a line).

Commands: ``info`` (default counters: pi and tiktoken), ``replay`` (as recorded), ``export
session`` (secrets redacted, the default). A pi v3 file is exported one entry at a time, and one
of at least 64 MiB is summarised by ``info`` and replayed as recorded by ``replay`` from its
skeleton and a second read (none of them holds the session's messages). CPU is the command's
user + system time (less sensitive than wall time to other jobs on the machine).

    python bench/scale.py [--inputs line,big,flood] [--big-entries N] [--flood-entries N]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT = HERE / "out"
PY = sys.executable
COMMANDS = {
    "info": ["info", "{f}"],
    "replay": ["replay", "{f}"],
    "export session": ["export", "session", "{f}", "-o", "{o}", "--force"],
}
# Runs one command as its only child and reports (seconds, peak KiB, CPU seconds) of that child.
_MEASURE = (
    "import resource, subprocess, sys, time; t = time.perf_counter(); "
    "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE); "
    "u = resource.getrusage(resource.RUSAGE_CHILDREN); "
    "print(time.perf_counter() - t, u.ru_maxrss, r.returncode, u.ru_utime + u.ru_stime); "
    "sys.stderr.write(r.stderr.decode()[-400:] if r.returncode else '')"
)


def make_line(path: Path, size: int = 100_000_000) -> None:
    rng = random.Random(1)
    words = (
        "the quick brown fox jumps over a lazy dog while the function returns a value from the "
        "module and the test suite passes again after the fix"
    ).split()
    parts: list[str] = []
    n = 0
    while n < size:
        w = rng.choice(words)
        parts.append(w)
        n += len(w) + 1
    head = {
        "type": "session",
        "version": 3,
        "id": "line-100mb",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/p",
    }
    user = {
        "type": "message",
        "id": "a1",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": " ".join(parts), "timestamp": 1},
    }
    answer = {
        "type": "message",
        "id": "a2",
        "parentId": "a1",
        "timestamp": "2026-01-01T00:00:02.000Z",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "ok"}],
            "api": "x",
            "provider": "p",
            "model": "m",
            "usage": {
                "input": 25_000_000,
                "output": 1,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 25_000_001,
            },
            "stopReason": "stop",
            "timestamp": 2,
        },
    }
    with open(path, "w", encoding="utf-8") as f:
        for o in (head, user, answer):
            f.write(json.dumps(o) + "\n")


def make_flood(path: Path, entries: int) -> None:
    """Tiny entries: a user prompt, an answer with one tool call, its result — over and over."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(
            json.dumps(
                {
                    "type": "session",
                    "version": 3,
                    "id": "flood",
                    "timestamp": "2026-01-01T00:00:00.000Z",
                    "cwd": "/p",
                }
            )
            + "\n"
        )
        prev = None
        for i in range(entries):
            eid = f"{i + 1:08x}"
            k = i % 3
            if k == 0:
                m = {"role": "user", "content": "ok, go on", "timestamp": 1767225600000 + i}
            elif k == 1:
                m = {
                    "role": "assistant",
                    "content": [
                        {"type": "toolCall", "id": f"c{i}", "name": "read", "arguments": {"path": "a.py"}}
                    ],
                    "api": "anthropic-messages",
                    "provider": "anthropic",
                    "model": "claude-sonnet-4-5",
                    "usage": {
                        "input": 1000 + i,
                        "output": 10,
                        "cacheRead": 0,
                        "cacheWrite": 0,
                        "totalTokens": 1010 + i,
                    },
                    "stopReason": "toolUse",
                    "timestamp": 1767225600000 + i,
                }
            else:
                m = {
                    "role": "toolResult",
                    "toolCallId": f"c{i - 1}",
                    "toolName": "read",
                    "content": [{"type": "text", "text": "x = 1"}],
                    "isError": False,
                    "timestamp": 1767225600000 + i,
                }
            ts = (
                f"2026-01-{1 + i // 86400 % 28:02d}T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}.000Z"
            )
            f.write(
                json.dumps(
                    {"type": "message", "id": eid, "parentId": prev, "timestamp": ts, "message": m},
                    separators=(",", ":"),
                )
                + "\n"
            )
            prev = eid


def make_big(path: Path, entries: int) -> None:
    subprocess.run(
        [PY, "-m", "tools.samples.gen_big", "--entries", str(entries), "--out", str(path)],
        check=True,
        cwd=REPO,
    )


def measure(argv: list[str]) -> tuple[float, int, int, float]:
    """(wall seconds, peak bytes, exit status, CPU seconds) of one command in a fresh process."""
    r = subprocess.run([PY, "-c", _MEASURE, PY, "-m", "inspector", *argv], capture_output=True, text=True)
    secs, kib, code, cpu = r.stdout.split()
    if int(code):
        print(f"  ({' '.join(argv[:2])} exited {code}: {r.stderr.strip()[-300:]})", file=sys.stderr)
    return float(secs), int(kib) * 1024, int(code), float(cpu)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--inputs", default="line,big,flood")
    ap.add_argument("--big-entries", type=int, default=470_000)
    ap.add_argument("--flood-entries", type=int, default=2_000_000)
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    files = {
        "line": OUT / "line-100mb.jsonl",
        "big": OUT / f"big-{args.big_entries}.jsonl",
        "flood": OUT / f"flood-{args.flood_entries}.jsonl",
    }
    makers = {
        "line": make_line,
        "big": lambda p: make_big(p, args.big_entries),
        "flood": lambda p: make_flood(p, args.flood_entries),
    }
    print("| input | file | command | time | CPU | peak memory | ÷ file |")
    print("|---|---|---|---|---|---|---|")
    worst = 0.0
    for name in [x.strip() for x in args.inputs.split(",") if x.strip()]:
        f = files[name]
        if not f.exists():
            makers[name](f)
        size = f.stat().st_size
        for label, argv in COMMANDS.items():
            out = OUT / f"scale-export-{name}.jsonl"
            secs, peak, _, cpu = measure([a.format(f=f, o=out) for a in argv])
            out.unlink(missing_ok=True)
            worst = max(worst, peak / size)
            print(
                f"| {name} | {size / 1e6:,.0f} MB | {label} | {secs:,.1f} s | {cpu:,.1f} s | {peak / 1e6:,.0f} MB | "
                f"{peak / size:.2f} |",
                flush=True,
            )
    print(f"\nworst peak: {worst:.2f}× the file (target ≤ 3×)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
