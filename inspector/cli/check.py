"""``inspector check``: does the rebuilt context follow the prompt each call recorded?

``--json`` prints the interface other tools read, exactly:
``{"calls", "maxRecorded", "offset": {"median", "p10", "p90"}, "spreadExcludingFlagged",
"flagged": [{"step", "entryIndex", "cause", "tokens"}]}``. Exit 0 whenever the file loads.
"""

from __future__ import annotations

import argparse

from ..recon import check, verdict
from ..recon.changes import sized_changes, sizing_words
from ..replay import ReplaySettings, replay
from ..visible import visible
from .base import Command, load_or_exit, print_json, resolve_leaf
from .options import add_json, add_leaf, add_session


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_session(p)
    add_leaf(p, "check the branch ending at this entry")
    p.add_argument(
        "--plain", action="store_true", help="count the context as pi holds it (no provider sending rules)"
    )
    add_json(p)


def run(args: argparse.Namespace) -> int:
    session = load_or_exit(args.session)
    c = check(session, leaf=resolve_leaf(session, args.leaf), send_rules=not args.plain)
    if args.json:
        print_json(c.as_json(), indent=2)
        return 0
    cal = c.calibration
    print(
        f"check: {visible(session.source, inline=True)} ({session.format}): {len(c.calls)} call(s) record their prompt"
    )
    print(f"  {verdict(c)}")
    if c.calls:
        print(
            f"  offset (recorded − rebuilt; the system prompt and tools no file stores): median {c.offset_median:,}, "
            f"p10 {c.offset_p10:,}, p90 {c.offset_p90:,}; unflagged spread {c.spread_excluding_flagged:,} of the "
            f"largest prompt {c.max_recorded:,}; drift {c.drift:+,}"
        )
        print(f"  {cal.label}; a call is flagged when the offset moves {c.threshold:,} tokens or more")
    for f in c.flags:
        print(
            f"  step {f.step:<5} entry {f.entry_index:<6} {f.cause:<32} {f.tokens:>+9,}  {visible(f.detail, inline=True)}"
        )
    as_recorded = replay(session, ReplaySettings(strategy="recorded", leaf=resolve_leaf(session, args.leaf)))
    sizing = sizing_words(sized_changes(as_recorded))
    if sizing is not None:
        print(f"  {sizing}")
    return 0


COMMAND = Command(
    "check",
    "compare each call's recorded prompt with the rebuilt context, and say why they part",
    add_arguments,
    run,
)
