"""``inspector oracle-json``: this engine's answers in the exact JSON shape pi's harness
(``tools/pi-oracle``) prints, for the parity comparison."""

from __future__ import annotations

import argparse
import sys

from ..export import ExportError, write_session_jsonl
from ..jsjson import js_stringify_indent
from ..oracle_json import DEFAULT_KEEPS, oracle_branch, oracle_main
from .base import EXIT_FAILED, EXIT_USAGE, Command, error_text, fail, load_or_exit, resolve_leaf
from .options import add_force, add_keep_secrets, add_leaf, add_pi_version, add_reserve, numbers

USAGE = (
    "expected SESSION, or --branch SESSION FROM TO\n"
    "usage: inspector oracle-json [options] SESSION.jsonl\n"
    "       inspector oracle-json --branch [options] SESSION.jsonl FROM TO"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("positional", nargs="+", metavar="SESSION [FROM TO]")
    p.add_argument(
        "--branch", action="store_true", help="branch mode: what /tree navigation FROM → TO summarises"
    )
    p.add_argument(
        "--deterministic-ids",
        action="store_true",
        help="accepted for compatibility: ids are always deterministic",
    )
    add_leaf(p, "the oracle's leaf ('null': none)")
    p.add_argument(
        "--keep", type=numbers, help="keepRecentTokens values (default 2000,5000,10000,20000,40000)"
    )
    add_reserve(p)
    p.add_argument("--context-window", type=int, default=200000)
    p.add_argument("--budgets", type=numbers, help="extra prepareBranchEntries budgets (branch mode)")
    p.add_argument(
        "--dump-migrated",
        metavar="FILE",
        help="write the migrated v3 session to FILE (never the input; secrets redacted)",
    )
    add_keep_secrets(p, "--dump-migrated: ")
    add_force(p)
    p.add_argument("--max-text", type=int, default=100000)
    add_pi_version(p)


def run(args: argparse.Namespace) -> int:
    pos = args.positional
    if args.branch != (len(pos) == 3) or len(pos) not in (1, 3):
        fail(USAGE, EXIT_USAGE)
    session = load_or_exit(pos[0], lists_issues=True)  # pi's harness reads any file: an empty one is [] to it
    leaf = resolve_leaf(session, args.leaf or "leaf")
    if args.dump_migrated:
        try:
            write_session_jsonl(
                session,
                args.dump_migrated,
                source=pos[0],
                redact=not args.keep_secrets,
                replace_session=args.force,
            )
        except ExportError as e:
            fail(str(e), EXIT_FAILED)
    try:
        if args.branch:
            out = oracle_branch(session, pos[1], pos[2], budgets=args.budgets or (), max_text=args.max_text)
        else:
            out = oracle_main(
                session,
                leaf=leaf,
                keeps=args.keep or DEFAULT_KEEPS,
                reserve=args.reserve,
                context_window=args.context_window,
                max_text=args.max_text,
                pi_version=args.pi_version,
            )
    except KeyError as e:
        fail(error_text(e), EXIT_USAGE)
    # JSON.stringify(out, null, 1), as the oracle prints it (numbers such as 1e400 → null, -0 → 0)
    _write(js_stringify_indent(out, 1) + "\n")
    return 0


def _write(text: str) -> None:
    """``text`` as UTF-8 bytes where stdout has them (a lone surrogate passes), else as text."""
    buf = getattr(sys.stdout, "buffer", None)
    if buf is None:
        sys.stdout.write(text)
    else:
        sys.stdout.flush()
        buf.write(text.encode("utf-8"))
        buf.flush()


COMMAND = Command(
    "oracle-json",
    "print the JSON shape of pi's harness (tools/pi-oracle), computed by this engine",
    add_arguments,
    run,
    description="Same flags and output shape as pi's oracle harness (tools/pi-oracle), for the comparison.",
)
