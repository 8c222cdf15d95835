"""``inspector check``: does the rebuilt context follow the prompt each call recorded?

``--json`` prints the interface other tools read, exactly:
``{"calls", "maxRecorded", "offset": {"median", "p10", "p90"}, "spreadExcludingFlagged",
"flagged": [{"step", "entryIndex", "cause", "tokens"}]}``. Exit 0 whenever the file loads.
"""

from __future__ import annotations

import argparse
from typing import Any

from .cli import load_or_exit, print_json
from .visible import visible


def cmd_check(args: argparse.Namespace) -> int:
    from .recon import check, verdict

    session = load_or_exit(args.session)
    leaf = session.resolve(args.leaf) if args.leaf else None
    if args.leaf and leaf is None:
        raise SystemExit(f"inspector: no entry {args.leaf!r} in this session")
    c = check(session, leaf=leaf, send_rules=not args.plain)
    if args.json:
        print_json(c.as_json(), indent=2)
        return 0
    cal = c.calibration
    print(f"check: {visible(session.source, inline=True)} ({session.format}): {len(c.calls)} call(s) record their prompt")
    print(f"  {verdict(c)}")
    if c.calls:
        print(f"  offset (recorded − rebuilt; the system prompt and tools no file stores): median {c.offset_median:,}, "
              f"p10 {c.offset_p10:,}, p90 {c.offset_p90:,}; unflagged spread {c.spread_excluding_flagged:,} of the "
              f"largest prompt {c.max_recorded:,}; drift {c.drift:+,}")
        print(f"  {cal.label}; a call is flagged when the offset moves {c.threshold:,} tokens or more")
    for f in c.flags:
        print(f"  step {f.step:<5} entry {f.entry_index:<6} {f.cause:<32} {f.tokens:>+9,}  {visible(f.detail, inline=True)}")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("check", help="compare each call's recorded prompt with the rebuilt context, and say why they part")
    p.add_argument("session")
    p.add_argument("--leaf", help="check the branch ending here (id or @INDEX; default: pi's leaf)")
    p.add_argument("--plain", action="store_true", help="count the context as pi holds it (no provider sending rules)")
    p.add_argument("--json", action="store_true", help="print the JSON interface")
    p.set_defaults(func=cmd_check)
