"""``inspector sweep CORPUS… --grid …``: a grid of settings replayed over every session of a corpus.

Prints the aggregate per setting (text, ``--json`` in the issue-20 interface, or ``--csv``); one
progress bar on stderr; a session that fails is listed in ``failed`` and the others go on. Runs
on a local process pool, or on Dask (``--engine dask``, ``--scheduler ADDR``); ``--out
FILE.duckdb`` keeps the rows and makes the sweep resumable. Called by :mod:`inspector.cli.sweep`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..replay import ReplaySettings, parse_grid
from ..session.tree import Session
from ..visible import visible
from .base import EXIT_FAILED, EXIT_USAGE, error_text, fail, print_csv, print_json
from .options import replay_settings
from .progress import ProgressBar

CSV_COLUMNS = [
    "sessions",
    "input_median",
    "input_p90",
    "input_total",
    "cost_median",
    "cost_p90",
    "cost_total",
    "compactions",
    "overflows",
    "rereads",
    "pruned_tokens",
    "worse_than_recorded",
    "billed_median",
    "billed_p90",
    "billed_total",
    "cache_hit_rate",
    "invalidations",
]


def is_corpus(args: argparse.Namespace) -> bool:
    """A corpus sweep: several sessions, one that is not a file (a folder, a glob, ``@AGENT``), or
    an option only a corpus sweep takes."""
    paths = args.session
    return (
        len(paths) > 1
        or not Path(paths[0]).is_file()
        or args.engine is not None
        or args.workers is not None
        or args.scheduler is not None
        or args.out is not None
        or bool(args.csv)
    )


def corpus_settings(args: argparse.Namespace) -> ReplaySettings:
    """The base settings of a corpus sweep (every option but ``--leaf``, which names one entry of one session)."""
    if args.leaf:
        fail("--leaf names an entry of one session; a corpus replays each session's own leaf", EXIT_USAGE)
    return replay_settings(args, Session(header=None, entries=(), lines=(), parents=()))


def run(args: argparse.Namespace) -> int:
    from ..corpus import CorpusError, resolve_corpus, run_sweep
    from ..corpus.engines import EngineUnavailable

    if args.agents:
        fail("--agents compares agents on one session; give a --grid for a corpus", EXIT_USAGE)
    if not args.grid:
        fail("give at least one --grid KEY=A,B,C or KEY=START:STOP:STEP", EXIT_USAGE)
    if args.cache != "model" or args.cache_retention != "auto":  # they had been ignored here
        fail(
            "--cache and --cache-retention set one session's sweep; a corpus sweep prices every replay "
            "both ways (cost $ blended, billed $ with the prompt cache, its retention read from each session)",
            EXIT_USAGE,
        )
    try:
        grid = dict(parse_grid(g) for g in args.grid)
        items = resolve_corpus(args.session)
    except CorpusError as e:
        fail(str(e), EXIT_FAILED)
    except ValueError as e:
        fail(str(e), EXIT_USAGE)
    base = corpus_settings(args)
    bar = ProgressBar("sweep", "session × setting pairs")
    try:
        result = run_sweep(
            items,
            base,
            grid,
            engine=args.engine or "local",
            workers=args.workers,
            scheduler=args.scheduler,
            out=args.out,
            progress=bar,
            own_window=args.window is None,
        )
    except (ValueError, TypeError) as e:
        fail(error_text(e), EXIT_USAGE)
    except (EngineUnavailable, RuntimeError, OSError) as e:
        fail(error_text(e), EXIT_FAILED)
    finally:
        bar.close()
    doc = result.as_dict()
    if args.json:
        print_json(doc, indent=1)
    elif args.csv:
        print_csv([*grid, *CSV_COLUMNS], [csv_row(a, list(grid)) for a in doc["aggregate"]])
    else:
        print_text(doc, list(grid), result.computed, args.out)
    return 0


def csv_row(a: dict[str, Any], keys: list[str]) -> list[Any]:
    i, c = a["inputTokens"], a["costUsd"]
    return [
        *(a["settings"][k] for k in keys),
        a["sessions"],
        i["median"],
        i["p90"],
        i["total"],
        c["median"],
        c["p90"],
        c["total"],
        a["compactions"],
        a["overflows"],
        a["rereads"],
        a["prunedTokens"],
        a["worseThanRecorded"],
        *(a["billedCostUsd"][k] for k in ("median", "p90", "total")),
        a["cacheHitRate"],
        a["invalidations"],
    ]


WINDOW_SAID = {
    "grid": "the window swept",
    "session": "each session against its own window (recorded, else its model's, else 200,000)",
}


def print_text(doc: dict[str, Any], keys: list[str], computed: int, out: str | None) -> None:
    w = doc["window"]
    print(
        f"{doc['sessions']} session(s), {len(doc['aggregate'])} setting(s); {computed:,} replay(s) computed"
        + (f", results in {visible(out, inline=True)}" if out else "")
        + "; "
        + (WINDOW_SAID[w] if isinstance(w, str) else f"window {w:,}")
    )
    cols = [
        *keys,
        "sessions",
        "input median",
        "input p90",
        "cost $",
        "billed $",
        "compactions",
        "overflows",
        "re-reads",
        "worse",
    ]
    widths = [max(len(c), 9) for c in cols]
    widths[len(keys) + 1 : len(keys) + 3] = [13, 13]
    print("  ".join(f"{c:>{w}}" for c, w in zip(cols, widths, strict=True)))
    for a in doc["aggregate"]:
        vals = [
            *(a["settings"][k] for k in keys),
            a["sessions"],
            a["inputTokens"]["median"],
            a["inputTokens"]["p90"],
            round(a["costUsd"]["total"], 2),
            round(a["billedCostUsd"]["total"], 2),
            a["compactions"],
            a["overflows"],
            a["rereads"],
            a["worseThanRecorded"],
        ]
        print(
            "  ".join(
                f"{v:>{w},}" if isinstance(v, int | float) and not isinstance(v, bool) else f"{v!s:>{w}}"
                for v, w in zip(vals, widths, strict=True)
            )
        )
    for a in doc["aggregate"]:
        if a["worse"]:
            names = ", ".join(Path(w["session"]).name for w in a["worse"][:3])
            print(
                f"worse than recorded under {a['settings']}: {a['worseThanRecorded']} (most: {visible(names, inline=True)})"
            )
    for f in doc["failed"]:
        print(f"failed: {visible(f['path'], inline=True)}: {visible(f['error'], inline=True)}")
