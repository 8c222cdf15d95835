"""Retention benchmark: scoring every compaction of a generated 10k-call session, against
replaying it (issue 21: scoring must take less time than the replay it reads).

    python bench/retention.py [--calls 10000] [--file SESSION.jsonl] [--policy recorded,pi] [--repeat 3]

For each policy, on a freshly loaded session (nothing cached: the replay counts every message's
tokens, retention reads every entry): the replay's time, then retention's on that finished replay —
extraction (every entry of the branch read once: :func:`inspector.retention.extract.facts_for`)
and scoring (every compaction) — and warm, on further replay objects of the same session, as in
the app, where every settings change replays: with the same compactions (what each span needed
and kept is memoised per session: only the redone work is counted again), with every span scored
afresh from the facts already read, and with every token read (the app reads them in the
background) — with the compactions scored and the items found; wall and CPU time (the machine may be shared: CPU time is the steadier
figure, and ratios within one run are what to compare). Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from inspector import load_session  # noqa: E402
from inspector.replay import ReplaySettings, replay  # noqa: E402
from inspector.retention import forget_scores, retention  # noqa: E402
from inspector.retention.extract import facts_for, forget  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=10000)
    ap.add_argument("--file", help="a session file instead of a generated one")
    ap.add_argument("--policy", default="recorded,pi")
    ap.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="cold rounds per policy after the first, alternating the policies (a fresh session each)",
    )
    args = ap.parse_args()
    if args.file:
        path = Path(args.file)
    else:
        from replay import session_with_calls  # bench/replay.py: the generated session, made once

        path = session_with_calls(args.calls)
    for policy in args.policy.split(","):
        t_load, t_replay, t_extract, t_score = cold_round(path, policy)
        s = t_load.value
        if policy == args.policy.split(",")[0]:
            print(f"{path.name}: {len(s.entries):,} entries, loaded in {t_load.wall:.2f} s")
        settings = ReplaySettings(compaction=policy)
        r, rep = t_replay.value, t_score.value
        t_memo = timed(
            retention, replay(s, settings)
        )  # another replay, the same compactions: the spans' memo
        forget_scores(s)
        t_again = timed(retention, replay(s, settings))  # the facts read, every span scored afresh
        t_deep = timed(facts_for, s, None, True)  # every token read, as the app does in the background
        forget_scores(s)
        t_warm = timed(retention, replay(s, settings))
        needed = sum(len(c.needed) for c in rep.compactions)
        forgotten = sum(len(c.forgotten) for c in rep.compactions)
        cold = t_extract.cpu + t_score.cpu
        print(
            f"  {policy:<9} {len(r.steps):,} calls, {len(rep.compactions)} compactions, {needed:,} needed, "
            f"{forgotten:,} forgotten"
        )
        rows = [
            ("replay", t_replay),
            ("extraction", t_extract),
            ("scoring", t_score),
            ("another replay, same compactions", t_memo),
            ("another replay, spans scored afresh", t_again),
            ("every token read (app: background)", t_deep),
            ("scoring, tokens read", t_warm),
        ]
        for label, tm in rows:
            print(f"    {label:<36} {tm}  ({tm.cpu / t_replay.cpu:.2f}× the replay's CPU time)")
        print(
            f"    {'extraction + scoring':<36} {cold:6.2f} s CPU  ({cold / t_replay.cpu:.2f}× the replay's CPU time)"
        )
    if args.repeat > 0:
        cold_rounds(path, args.policy.split(","), args.repeat)


def cold_round(path: Path, policy: str) -> tuple[timed, timed, timed, timed]:
    """One cold measurement: the session loaded afresh (no counts, no facts cached, retention's
    per-process memos forgotten), replayed, its branch read, every compaction scored."""
    forget()
    t_load = timed(load_session, path)
    t_replay = timed(replay, t_load.value, ReplaySettings(compaction=policy))
    t_extract = timed(facts_for, t_load.value, t_replay.value.path)
    t_score = timed(retention, t_replay.value)
    return t_load, t_replay, t_extract, t_score


def cold_rounds(path: Path, policies: list[str], n: int) -> None:
    """``n`` more cold rounds of each policy, the policies alternating (a noisy machine slows them
    alike), with each round's ratio: the medians are the figures to compare with the target."""
    got: dict[str, list[tuple[float, float, float]]] = {p: [] for p in policies}
    for _ in range(n):
        for p in policies:
            _, *times = cold_round(path, p)
            got[p].append((times[0].cpu, times[1].cpu, times[2].cpu))
    print(f"  cold, {n} more rounds each (CPU time; medians, and the range of each round's ratio)")
    for p, rounds in got.items():
        rep, ext, sco = (statistics.median(col) for col in zip(*rounds, strict=True))
        ratios = sorted((e + c) / r for r, e, c in rounds)
        print(
            f"    {p:<9} replay {rep:.2f} s, extraction {ext:.2f} s, scoring {sco:.2f} s: "
            f"{statistics.median(ratios):.2f}× the replay ({ratios[0]:.2f}–{ratios[-1]:.2f}×)"
        )


class timed:
    """Run ``fn(*args)`` once: its value, wall time and this process's CPU time (the machine is shared:
    CPU time is the steadier figure)."""

    def __init__(self, fn, *args) -> None:  # type: ignore[no-untyped-def]
        w, c = time.perf_counter(), time.process_time()
        self.value = fn(*args)
        self.wall, self.cpu = time.perf_counter() - w, time.process_time() - c

    def __str__(self) -> str:
        return f"{self.wall:6.2f} s wall, {self.cpu:6.2f} s CPU"


if __name__ == "__main__":
    main()
