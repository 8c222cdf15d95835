"""``inspector info``: a readable summary of a session file."""

from __future__ import annotations

import argparse
import sys

from ..info import session_info
from .base import Command, checked_leaf, load_or_exit, print_json
from .options import add_counters, add_json, add_leaf, add_session


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_session(p)
    add_leaf(p, "the entry to report on")
    add_counters(p)
    add_json(p)


def run(args: argparse.Namespace) -> int:
    session = load_or_exit(args.session)
    info = session_info(session, leaf=checked_leaf(session, args), counters=args.counters)
    if args.json:
        print_json(info.model_dump(mode="json"), indent=2)
    else:
        sys.stdout.write(info.to_text())
    return 0


COMMAND = Command("info", "a readable summary of a session file", add_arguments, run)
