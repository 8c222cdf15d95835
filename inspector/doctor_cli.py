"""``inspector doctor``: what went wrong in a session."""

from __future__ import annotations

import argparse
from typing import Any

from .cli import load_or_exit, print_json
from .doctor import DoctorOptions, diagnose
from .visible import visible


def cmd_doctor(args: argparse.Namespace) -> int:
    session = load_or_exit(args.session)
    opts = DoctorOptions(context_window=args.window, giant_tokens=args.giant_tokens)
    try:
        report = diagnose(session, args.leaf or "leaf", opts)
    except KeyError as e:
        raise SystemExit(f"inspector: {e.args[0]}") from None
    if args.json:
        print_json(report.as_dict(), indent=2)
        return 0
    counts = report.counts()
    print(f"doctor: {visible(session.source, inline=True)}: {len(report.findings)} finding(s) "
          f"({counts.get('error', 0)} error, {counts.get('warning', 0)} warning, {counts.get('info', 0)} info)")
    for f in report.findings:
        where = f"entry {f.entries[0]} (line {f.lines[0]})" if f.entries and f.lines else (
            f"line {f.lines[0]}" if f.lines else "")
        print(f"  {f.severity:<7} {f.kind:<32} {where:<24} {visible(f.message, inline=True)}")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("doctor", help="find and explain what went wrong in a session")
    p.add_argument("session")
    p.add_argument("--leaf", help="check the branch ending here (id or @INDEX; default: pi's leaf)")
    p.add_argument("--window", type=int, default=200000, help="context window for the overflow check")
    p.add_argument("--giant-tokens", type=int, default=20000, help="flag single tool outputs above this")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_doctor)
