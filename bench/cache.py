"""Prompt-cache benchmark: the time ``cache_replay`` adds to a full replay (target ≤ 20 %), on
generated pi sessions and an OpenCode export (the bundled one repeated) as recorded and under
what-ifs (pruning makes it rebuild the sent context at each prune), plus the real transcripts in
../shared when present.

    python bench/cache.py [--calls 1000,10000] [--opencode 10000] [--repeat 3] [--file SESSION ...] [--cpu]
    python bench/cache.py --check [FILE ...]   # the model against the recorded cache usage
    python bench/cache.py --dump OUT.json      # every CacheStep and replay --json, to compare
    python bench/cache.py --process [--repeat 5] [--file SESSION ...]  # the whole command, as a user runs it

``--check``: each session (the six shared real transcripts and the bundled samples that record
cache usage by default) replayed as recorded: predicted against recorded cache reads (total and
per call), billed input cost against the recorded one (over every call, and over the calls whose
read the model predicts), and the disagreeing calls by cause.

"first": the first replay of a freshly loaded session (it counts every message's tokens) and the
first cache model on it (it reads the session's usage and fits its sizes; a what-if also walks
the session's as-recorded contexts once for that fit). "again": the medians of ``--repeat`` further runs, each with its per-session memos
warm, as the app and a sweep see them; "first" is the median of ``--repeat`` sessions loaded
afresh. Prints a markdown table.

``--process``: what ``--cache model`` adds to the whole ``inspector replay SESSION`` command (start-up,
loading and the text output included), against ``--cache off`` — the cost of leaving the default on.
Each pair of runs alternates the two (so drift in the machine's speed hits both); the median of the
pairs' ratios is printed, with their range.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

from replay import session_with_calls  # noqa: E402

from inspector.cache import cache_replay  # noqa: E402
from inspector.importers import load_any  # noqa: E402
from inspector.replay import ReplaySettings, replay  # noqa: E402

CONFIGS = {
    "as recorded": ReplaySettings(strategy="recorded"),
    "what-if: pi-context-pruning": ReplaySettings(strategy="pi-context-pruning"),
    "what-if: pi compaction, 128k": ReplaySettings(compaction="pi", context_window=128_000),
    "what-if: pi compaction, own pruning": ReplaySettings(strategy="recorded", compaction="pi"),
}
"""The last is what the CLI and the app replay when a user picks pi compaction: the agent's own
pruning kept (an OpenCode file's cleared outputs, each from its mark on, in contexts that now run
across the recorded compactions set aside)."""


CLOCK = time.perf_counter
"""Wall time; ``--cpu``: this process's CPU time (``time.process_time``), steadier on a shared machine."""


def timed(session, settings: ReplaySettings) -> tuple[int, float, float]:  # type: ignore[no-untyped-def]
    t0 = CLOCK()
    r = replay(session, settings)
    t1 = CLOCK()
    cache_replay(r)
    return len(r.steps), t1 - t0, CLOCK() - t1


def measure(
    path: Path, settings: ReplaySettings, repeat: int
) -> tuple[int, tuple[float, float], tuple[float, float]]:
    """(calls, first (replay, cache model), again (replay, cache model)): medians of ``repeat``
    runs each; a first run is on a session loaded afresh (no memo of it anywhere)."""
    firsts = []
    for _ in range(max(1, repeat)):
        session = load_any(path)
        firsts.append(timed(session, settings))
    runs = [timed(session, settings) for _ in range(repeat)]
    n = firsts[0][0]
    return (
        n,
        (statistics.median(x[1] for x in firsts), statistics.median(x[2] for x in firsts)),
        (statistics.median(x[1] for x in runs), statistics.median(x[2] for x in runs)),
    )


def opencode_export(messages: int) -> Path:
    """The bundled OpenCode export repeated to ``messages`` messages, written once to bench/out."""
    from importers import scale_opencode

    path = HERE / "out" / f"import-opencode-{messages}.json"
    if not path.exists():
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(scale_opencode(messages))
    return path


def default_check_files() -> list[Path]:
    shared = REPO.parent / "shared" / "real-sessions"
    real = sorted(p for p in shared.glob("*/*") if p.suffix in (".jsonl", ".json")) if shared.is_dir() else []
    return real + sorted((REPO / "sample_sessions").glob("*.json*"))


def check(files: list[Path]) -> int:
    from collections import Counter

    print(
        "| file | agent | calls | recorded reads | predicted | total | per call | recorded cost | billed | error "
        "| error, agreeing calls | gap on disagreeing calls | of the total: cache servers | disagreeing calls (cause) |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for f in files:
        s = load_any(f)
        c = cache_replay(replay(s, ReplaySettings(strategy="recorded")))
        m = c.metrics()
        if m["cacheReadError"] is None:
            continue
        rec = [x for x in c.steps if x.recorded_read is not None]
        causes = Counter(_short(d["cause"]) for d in c.disagreements())
        print(
            f"| {f.name} | {getattr(s, 'format', '?')} | {len(c.steps):,} | {sum(x.recorded_read or 0 for x in rec):,} | "
            f"{sum(x.read for x in rec):,} | {m['cacheReadTotalError']:+.1%} | {m['cacheReadError']:.1%} | "
            f"${m['recordedBilledCostUsd']:,.2f} | ${sum(x.cost for x in rec):,.2f} | {m['billedCostError']:+.1%} | "
            f"{_agreeing_error(c.steps)} | {_disagreeing_share(c.steps)} | "
            f"{m['cacheReadServerSideError']:+.1%} ({m['serverSideCalls']}) | "
            + (", ".join(f"{n} {k}" for k, n in causes.most_common()) or "—")
            + " |",
            flush=True,
        )
    return 0


DUMP_ARGS = {
    "as recorded": [],
    "what-if: pi-context-pruning": ["--strategy", "pi-context-pruning"],
    "what-if: pi compaction, 128k": ["--compaction", "pi", "--window", "128000"],
    "what-if: opencode pruning, opencode compaction": ["--strategy", "opencode", "--compaction", "opencode"],
}


def dump(out: Path) -> int:
    """Write, for every sample, fixture and shared session under each of :data:`DUMP_ARGS`, the
    output of ``inspector replay --cache model --json`` and every ``CacheStep`` of a first and a
    warm ``cache_replay`` (a session loaded afresh, then the same replay priced again): run it
    before and after a change to the cache model and compare the two files (they must be equal)."""
    import contextlib
    import io
    import json

    from inspector.cli import main as cli

    shared = REPO.parent / "shared" / "real-sessions"
    files = sorted((REPO / "sample_sessions").glob("*.json*")) + sorted(
        (REPO / "tests" / "fixtures").glob("*.jsonl")
    )
    files += sorted(p for p in shared.glob("*/*") if p.suffix in (".jsonl", ".json"))
    files.append(session_with_calls(1000))
    result: dict[str, object] = {}
    for f in files:
        for name, extra in DUMP_ARGS.items():
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                cli(["replay", str(f), "--cache", "model", "--json", *extra])
            session = load_any(f)
            r = replay(session, cli_settings(extra, session))
            first, again = cache_replay(r), cache_replay(r)
            result[f"{f.name} | {name}"] = {
                "json": json.loads(buf.getvalue()),
                "first": [repr(s) for s in first.steps],
                "again": [repr(s) for s in again.steps],
                "describe": repr(first.describe()),
            }
            print(f"{f.name} | {name}: {len(first.steps)} steps", file=sys.stderr, flush=True)
    out.write_text(json.dumps(result, indent=0, sort_keys=True))
    return 0


def cli_settings(extra: list[str], session) -> ReplaySettings:  # type: ignore[no-untyped-def]
    """The replay settings ``inspector replay`` makes of ``extra``."""
    from inspector.cli import build_parser
    from inspector.cli.options import replay_settings

    args = build_parser().parse_args(["replay", "x", *extra])
    return replay_settings(args, session)


def _agreeing_error(steps) -> str:  # type: ignore[no-untyped-def]
    """Billed against recorded cost over the calls whose cache read the model predicts (within the
    disagreement threshold): what is left when the listed calls are set aside."""
    ok = [x for x in steps if x.recorded_read is not None and x.recorded_cost and not x.disagreement]
    rec = sum(x.recorded_cost for x in ok)
    return f"{(sum(x.cost for x in ok) - rec) / rec:+.1%}" if rec else "—"


def _disagreeing_share(steps) -> str:  # type: ignore[no-untyped-def]
    """The share of the billed-cost gap (billed − recorded, over the calls that recorded usage) that
    the disagreeing calls carry: 100 % says the prices agree and the whole gap is in the reads."""
    rec = [x for x in steps if x.recorded_read is not None and x.recorded_cost is not None]
    gap = sum(x.cost - x.recorded_cost for x in rec)
    dis = sum(x.cost - x.recorded_cost for x in rec if x.disagreement)
    return f"{dis / gap:.0%}" if gap else "—"


def _short(cause: str) -> str:
    for key, word in (
        ("smaller than the file explains", "prompt short of the file"),
        ("kept more", "kept more"),
        ("DCP", "DCP tags"),
        ("already warm", "warm at start"),
        ("sessions share", "shared prefix short at start"),
        ("outlived", "cache lived longer"),
        ("expired sooner", "expired sooner"),
        ("user interrupted", "interrupted request"),
        ("ToolSearch", "system prefix only, after ToolSearch"),
        ("cache copy", "older cache copy"),
        ("not in this file", "request not in file"),
        ("only the system prompt", "conversation entry gone"),
        ("read less", "not in file"),
    ):
        if key in cause:
            return word
    return cause


PROCESS_ARGS = {"as recorded": [], "what-if: pi compaction": ["--compaction", "pi"]}
"""The commands ``--process`` times (each with the session's default pruning, as a user runs it)."""


def process(files: list[Path], repeat: int) -> int:
    """The whole ``inspector replay`` command with ``--cache model`` against ``--cache off``."""
    import subprocess

    def run(f: Path, extra: list[str], cache: str) -> float:
        cmd = [sys.executable, "-m", "inspector", "replay", str(f), *extra, "--cache", cache]
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=REPO, check=True, stdout=subprocess.DEVNULL)
        return time.perf_counter() - t0

    print("| session | command | --cache off | --cache model | added (median of pairs) | range |")
    print("|---|---|---:|---:|---:|---|")
    for f in files:
        for name, extra in PROCESS_ARGS.items():
            run(f, extra, "model")  # warm the disk cache and the bytecode
            pairs = [(run(f, extra, "off"), run(f, extra, "model")) for _ in range(repeat)]
            ratios = sorted(m / o for o, m in pairs)
            off = statistics.median(o for o, _ in pairs)
            on = statistics.median(m for _, m in pairs)
            print(
                f"| {f.name} | {name} | {off:.2f} s | {on:.2f} s | {statistics.median(ratios) - 1:+.0%} | "
                f"{ratios[0] - 1:+.0%} … {ratios[-1] - 1:+.0%} |",
                flush=True,
            )
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", default="1000,10000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--file", action="append", default=[])
    ap.add_argument(
        "--opencode",
        default="10000",
        help="OpenCode exports of this many messages (the bundled sample repeated: bench/importers.py); '' for none",
    )
    ap.add_argument("--check", nargs="*", default=None, metavar="FILE")
    ap.add_argument("--dump", type=Path, default=None, metavar="OUT")
    ap.add_argument("--cpu", action="store_true", help="time CPU time of this process, not wall time")
    ap.add_argument(
        "--process",
        action="store_true",
        help="time the whole `inspector replay` command (--cache model vs off)",
    )
    a = ap.parse_args()
    if a.cpu:
        global CLOCK
        CLOCK = time.process_time
    if a.dump is not None:
        return dump(a.dump)
    if a.check is not None:
        return check([Path(f) for f in a.check] or default_check_files())
    files = [session_with_calls(int(c)) for c in a.calls.split(",") if c]
    files += [opencode_export(int(n)) for n in a.opencode.split(",") if n]
    files += [Path(f) for f in a.file]
    if a.process:
        return process(files, a.repeat)
    shared = REPO.parent / "shared" / "real-sessions"
    if not a.file and shared.is_dir():
        files += sorted(p for p in shared.glob("*/*") if p.suffix in (".jsonl", ".json"))
    print(
        "| session | calls | replay | first: replay | cache model | added | again: replay | cache model | added |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for f in files:
        for name, settings in CONFIGS.items():
            n, (r0, c0), (r1, c1) = measure(f, settings, a.repeat)
            print(
                f"| {f.name} | {n:,} | {name} | {r0:.3f} s | {c0:.3f} s | {c0 / r0:.0%} | {r1:.3f} s | "
                f"{c1:.3f} s | {c1 / r1:.0%} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
