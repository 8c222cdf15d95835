"""``inspector info``: a readable summary of a session file."""

from __future__ import annotations

import argparse
import sys

from ..info import SessionInfo, session_info, streamed_session_info
from ..session.loader import SessionLoadError, load_skeleton
from .base import EXIT_FAILED, Command, checked_leaf, fail, large_pi_file, load_or_exit, print_json
from .options import add_counters, add_json, add_leaf, add_session


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_session(p)
    add_leaf(p, "the entry to report on")
    add_counters(p)
    add_json(p)


def run(args: argparse.Namespace) -> int:
    info = _streamed(args)
    if info is None:
        session = load_or_exit(args.session, lists_issues=True)
        info = session_info(session, leaf=checked_leaf(session, args), counters=args.counters)
    if args.json:
        print_json(info.model_dump(mode="json"), indent=2)
    else:
        sys.stdout.write(info.to_text())
    return 0


def _streamed(args: argparse.Namespace) -> SessionInfo | None:
    """The summary of a large pi v3 file from its skeleton and a second read; None for any other file."""
    if not large_pi_file(args.session) or "calibrated" in args.counters:  # its fit reads every message
        return None
    try:
        skeleton = load_skeleton(args.session)
        if skeleton is None:
            return None
        return streamed_session_info(skeleton, leaf=checked_leaf(skeleton, args), counters=args.counters)
    except SessionLoadError as e:
        fail(str(e), EXIT_FAILED)


COMMAND = Command("info", "a readable summary of a session file", add_arguments, run)
