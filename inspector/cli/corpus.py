"""``inspector corpus CORPUS…``: the sessions overview, one row per session of a corpus
(:mod:`inspector.corpus.overview`), with totals; ``--json`` / ``--csv``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..visible import clip, visible
from .base import EXIT_FAILED, Command, error_text, fail, print_csv, print_json
from .options import add_corpus, add_engine, add_json, add_window
from .progress import ProgressBar

CSV_COLUMNS = [
    "path",
    "agent",
    "model",
    "window",
    "windowSource",
    "size",
    "calls",
    "peakContext",
    "peakSource",
    "compactions",
    "prunes",
    "recordedCost",
    "cacheHitRate",
    "errors",
    "warnings",
    "infos",
    "loadIssues",
    "error",
    "windowAtLeast",  # last: the columns before keep their places
]


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_corpus(p)
    add_window(p, " for the doctor's overflow check")
    add_engine(p)
    add_json(p, csv="session")


def run(args: argparse.Namespace) -> int:
    from ..corpus import CorpusError, overview, resolve_corpus, totals
    from ..corpus.engines import EngineUnavailable

    try:
        items = resolve_corpus(args.session)
    except CorpusError as e:
        fail(str(e), EXIT_FAILED)
    bar = ProgressBar("corpus", "sessions")
    try:
        rows = overview(
            items,
            engine=args.engine or "local",
            workers=args.workers,
            scheduler=args.scheduler,
            window=args.window,
            progress=bar,
        )
    except (EngineUnavailable, OSError) as e:
        fail(error_text(e), EXIT_FAILED)
    finally:
        bar.close()
    if args.json:
        print_json({"sessions": rows, "totals": totals(rows)}, indent=1)
    elif args.csv:
        print_csv(CSV_COLUMNS, [csv_row(r) for r in rows])
    else:
        print_text(rows, totals(rows))
    return 0


def csv_row(r: dict[str, Any]) -> list[Any]:
    f = r["findings"] or {}
    flat = {**r, "errors": f.get("error", 0), "warnings": f.get("warning", 0), "infos": f.get("info", 0)}
    return [flat[c] for c in CSV_COLUMNS]


def print_text(rows: list[dict[str, Any]], t: dict[str, Any]) -> None:
    print(
        f"{'session':<36} {'agent':<12} {'calls':>6} {'peak ctx':>9} {'window':>11} {'compact':>7} {'prunes':>6} {'cost $':>8} "
        f"{'cache':>6} {'findings (e/w/i)':>16}"
    )
    assumed = above = False
    for r in rows:
        name = visible(clip(Path(r["path"]).name, 36), inline=True)
        if r["error"]:
            print(f"{name:<36} failed: {visible(r['error'], inline=True)}")
            continue
        f = r["findings"]
        cost = f"{r['recordedCost']:.2f}" if r["recordedCost"] is not None else "–"
        cache = f"{r['cacheHitRate']:.0%}" if r["cacheHitRate"] is not None else "–"
        window = f"{r['window']:,}" + ("*" if r["windowSource"] == "assumed" else "")
        window += "!" if r["windowAtLeast"] else ""
        assumed = assumed or r["windowSource"] == "assumed"
        above = above or bool(r["windowAtLeast"])
        print(
            f"{name:<36} {r['agent']:<12} {r['calls']:>6,} {r['peakContext']:>9,} {window:>11} {r['compactions']:>7} "
            f"{r['prunes']:>6} {cost:>8} {cache:>6} "
            f"{f.get('error', 0):>8}/{f.get('warning', 0)}/{f.get('info', 0)}"
        )
    agents = ", ".join(f"{n} {a}" for a, n in sorted(t["agents"].items()))
    print(
        f"{t['sessions']} session(s) ({agents}; {t['failed']} failed): {t['calls']:,} calls, "
        f"{t['compactions']} compactions, {t['prunes']} prunes, recorded cost ${t['recordedCost']:,.2f}, "
        f"median peak context {t['medianPeakContext'] or 0:,}"
    )
    if assumed:
        print(
            "* window assumed: the session records none and its model is not in pi's model list (or its "
            "agent runs it at several windows); --window sets one"
        )
    if above:
        print(
            "! a call the provider answered held more than this window: the model's is larger (at least "
            "the peak context), and the overflows among the findings are ones the provider did not see"
        )


COMMAND = Command(
    "corpus", "an overview of many sessions: one row per session, with totals", add_arguments, run
)
