"""How well a what-if can size a context the provider never counted, checked where a file shows it:
every recorded compaction and clearing of outputs, the prompt after it predicted from the one
before (:func:`inspector.recon.changes.sized_changes`; ``inspector check`` sums it up in a line).

    python -m tools.trigger_fit [FILE ...]   # default: ../shared/real-sessions and the before-compaction fixture

Prints a markdown table (docs/whatif-trigger.md holds its figures); nothing is asserted.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def rows(path: Path) -> list[tuple[str, ...]]:
    from inspector.importers import load_any
    from inspector.recon.changes import sized_changes
    from inspector.replay import ReplaySettings, replay

    return [
        (
            path.name[:40],
            c.kind,
            f"{c.before} → {c.after}",
            f"{c.scale:.2f}",
            f"{c.prompt_before:,}",
            f"{c.change:+,}",
            f"{c.recorded:,}",
            f"{c.unscaled:,} ({100 * c.error(c.unscaled):+.0f} %)",
            f"{c.fitted:,} ({100 * c.error(c.fitted):+.0f} %)",
        )
        for c in sized_changes(replay(load_any(path), ReplaySettings(strategy="recorded")))
    ]


def main(argv: list[str]) -> int:
    files = [Path(a) for a in argv] or sorted(SHARED.glob("real-sessions/*/*.json*")) + [
        SHARED / "fixtures" / "before-compaction.jsonl"
    ]
    files = [f for f in files if f.exists()]
    if not files:
        print("no session files (../shared is not beside this clone)", file=sys.stderr)
        return 1
    head = (
        "session",
        "change",
        "calls",
        "fitted scale",
        "prompt before",
        "context change (counted)",
        "prompt after (recorded)",
        "unscaled",
        "fitted",
    )
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for f in files:
        for row in rows(f):
            print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main(sys.argv[1:]))
