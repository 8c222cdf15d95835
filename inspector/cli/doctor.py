"""``inspector doctor``: what went wrong in a session."""

from __future__ import annotations

import argparse

from ..doctor import DoctorOptions, DoctorReport, diagnose
from ..session.tree import Session
from ..visible import visible
from ..window import window_settings
from .base import Command, checked_leaf, load_or_exit, print_json
from .options import add_json, add_leaf, add_session, add_window, token_count


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_session(p)
    add_leaf(p, "check the branch ending at this entry")
    add_window(p, " for the overflow check")
    p.add_argument(
        "--giant-tokens",
        type=token_count,
        default=20000,
        help="flag single tool outputs above this many tokens",
    )
    add_json(p)


def run(args: argparse.Namespace) -> int:
    session = load_or_exit(args.session, lists_issues=True)
    opts = DoctorOptions(**window_settings(session, args.window), giant_tokens=args.giant_tokens)
    report = diagnose(session, checked_leaf(session, args), opts)
    if args.json:
        print_json(report.as_dict(), indent=2)
    else:
        print_report(session, report)
    return 0


def print_report(session: Session, report: DoctorReport) -> None:
    counts = report.counts()
    print(
        f"doctor: {visible(session.source, inline=True)}: {len(report.findings)} finding(s) "
        f"({counts.get('error', 0)} error, {counts.get('warning', 0)} warning, {counts.get('info', 0)} info)"
    )
    for f in report.findings:
        where = (
            f"entry {f.entries[0]} (line {f.lines[0]})"
            if f.entries and f.lines
            else (f"line {f.lines[0]}" if f.lines else "")
        )
        print(f"  {f.severity:<7} {f.kind:<32} {where:<24} {visible(f.message, inline=True)}")


COMMAND = Command("doctor", "find and explain what went wrong in a session", add_arguments, run)
