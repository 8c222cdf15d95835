"""How well a what-if can size a context the provider never counted, checked where a file shows it.

A what-if's trigger compares the usage the provider would report for a context the session never
sent: the recorded usage of the same call plus what the what-if changed in the context
(:meth:`inspector.replay.run.ReplayRun.provider_size`). Every recorded compaction and every
output the agent cleared itself is such a change that really happened, and the next call's
recorded prompt is what the provider reported after it. So each is a check: from the last call
before the change (its recorded prompt and its replayed context), predict the prompt of the call
after it, with the change counted as it is (unscaled) and in the provider's tokens by the
session's size fit (:func:`inspector.replay.sizes.changed_size`, what the replay does).

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
    from inspector.replay import ReplaySettings, replay
    from inspector.replay.as_sent import sent_fit
    from inspector.replay.sizes import changed_size

    s = load_any(path)
    steps = replay(s, ReplaySettings(strategy="recorded")).steps
    fit = sent_fit(s, "pi")
    out = []
    for k in range(1, len(steps)):
        now = steps[k]
        compacted = now._segment is not steps[k - 1]._segment
        cleared = not compacted and now.pruned_tokens > steps[k - 1].pruned_tokens
        if not (compacted or cleared) or not now.recorded_input:
            continue
        j = max((i for i in range(k) if steps[i].recorded_input), default=None)
        if j is None or (cleared and j != k - 1):
            continue
        before, after = int(steps[j].recorded_input or 0), int(now.recorded_input)
        change = now.tokens - steps[j].tokens
        unscaled, fitted = max(0, before + change), changed_size(before, change, fit)
        out.append(
            (
                path.name[:40],
                "compaction" if compacted else "cleared outputs",
                f"{j} → {k}",
                f"{fit.scale:.2f}",
                f"{before:,}",
                f"{change:+,}",
                f"{after:,}",
                f"{unscaled:,} ({100 * (unscaled - after) / after:+.0f} %)",
                f"{fitted:,} ({100 * (fitted - after) / after:+.0f} %)",
            )
        )
    return out


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
