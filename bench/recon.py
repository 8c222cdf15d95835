"""Audit the reconstruction over real transcripts: does the rebuilt context follow each recorded prompt?

    python bench/recon.py [FOLDER ...] [--plain] [--markdown]

Runs :func:`inspector.recon.check` on every session file under the folders named (default: the
six shared real sessions in ``../shared/real-sessions``; any file the importers recognise) and
prints per file: the agent, calls compared, the largest recorded prompt, the session's fitted
tokenizer ratio, the offset (recorded − rebuilt) median and p10–p90, the spread of the unflagged
calls (p90 − p10, and as a share of the largest prompt: the target is ≤ 5 %), the drift, and the
flagged calls by cause. ``--plain`` counts contexts as pi holds them (no sending rules), the
baseline the rules are measured against.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from inspector.importers import load_any  # noqa: E402
from inspector.recon import check  # noqa: E402
from inspector.session.loader import SessionLoadError  # noqa: E402

DEFAULT = REPO.parent / "shared" / "real-sessions"
SHORT = {
    "mid-session start": "mid",
    "compaction": "comp",
    "prune": "prune",
    "tokenizer drift": "drift",
    "context change not in the file": "not-in-file",
}


def files(folders: list[Path]) -> list[Path]:
    out: list[Path] = []
    for f in folders:
        if f.is_file():
            out.append(f)
        else:
            out.extend(p for p in sorted(f.rglob("*")) if p.is_file() and p.suffix in (".jsonl", ".json"))
    return out


def row(path: Path, plain: bool) -> list[str]:
    t0 = time.perf_counter()
    s = load_any(path)
    c = check(s, send_rules=not plain)
    took = time.perf_counter() - t0
    causes = Counter(f.cause for f in c.flags)
    flagged = ", ".join(f"{n} {SHORT[k]}" for k, n in causes.most_common()) or "—"
    share = 100 * c.spread_excluding_flagged / c.max_recorded if c.max_recorded else 0.0
    return [
        path.name,
        s.format,
        f"{len(c.calls)}",
        f"{c.max_recorded:,}",
        f"{c.calibration.ratio:.3f}",
        f"{c.offset_median:,}",
        f"{c.offset_p10:,} – {c.offset_p90:,}",
        f"{c.spread_excluding_flagged:,} ({share:.1f} %)",
        f"{c.drift:+,}",
        flagged,
        f"{took:.1f} s",
    ]


HEAD = [
    "file",
    "agent",
    "calls",
    "max recorded",
    "ratio",
    "offset median",
    "p10 – p90",
    "spread unflagged",
    "drift",
    "flagged",
    "time",
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folders", nargs="*", type=Path)
    ap.add_argument("--plain", action="store_true", help="no sending rules: the context as pi holds it")
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = ap.parse_args(argv)
    folders = args.folders or [DEFAULT]
    missing = [f for f in folders if not f.exists()]
    if missing:
        print(f"recon: no such folder: {', '.join(map(str, missing))}", file=sys.stderr)
        return 1
    rows = []
    for p in files(folders):
        try:
            rows.append(row(p, args.plain))
        except SessionLoadError as e:
            print(f"recon: {p}: {e}", file=sys.stderr)
    if args.markdown:
        print("| " + " | ".join(HEAD) + " |")
        print("|" + "---|" * len(HEAD))
        for r in rows:
            print("| " + " | ".join(r) + " |")
        return 0
    widths = [max(len(x) for x in col) for col in zip(HEAD, *rows, strict=False)]
    for r in [HEAD, *rows]:
        print("  ".join(x.ljust(w) for x, w in zip(r, widths, strict=True)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
