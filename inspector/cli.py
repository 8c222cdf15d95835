"""The ``inspector`` command line. Each command: parse arguments → one engine call → print.

Exit status: 0 success, 1 the session could not be read at all, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from typing import Any

from . import __version__
from .session.loader import SessionLoadError
from .session.tree import Session
from .visible import VisibleStream, visible

# Feature packages add their own commands: each module has ``register(subparsers)`` that adds
# a subparser whose ``func(args) -> int`` runs the command.
COMMAND_MODULES = (
    "inspector.compaction_cli",
    "inspector.pruning.cli",
    "inspector.replay_cli",
    "inspector.summarize.cli",
    "inspector.doctor_cli",
    "inspector.check_cli",
    "inspector.export_cli",
    "inspector.importers.cli",
)


def _nums(s: str) -> list[int]:
    out = []
    for x in s.split(","):
        x = x.strip()
        if not x:
            continue
        try:
            out.append(int(x))
        except ValueError:
            raise argparse.ArgumentTypeError(f"bad number {x!r}") from None
    return out


def load_or_exit(path: str, args: argparse.Namespace | None = None) -> Session:
    """Load a session for a command, or print why not and exit with status 1."""
    from .importers import load_any

    try:
        return load_any(path)
    except SessionLoadError as e:
        print(f"inspector: {e}", file=sys.stderr)
        raise SystemExit(1) from None


def print_json(obj: Any, indent: int | None = 1) -> None:
    # ensure_ascii keeps lone surrogates (possible in JS strings) printable.
    sys.stdout.write(json.dumps(obj, indent=indent, ensure_ascii=True) + "\n")


# ---------------------------------------------------------------------------------------------
# oracle-json
# ---------------------------------------------------------------------------------------------


def cmd_oracle_json(args: argparse.Namespace) -> int:
    from .oracle_json import DEFAULT_KEEPS, oracle_branch, oracle_main

    pos = args.positional
    if args.branch != (len(pos) == 3) or len(pos) not in (1, 3):
        print(
            "usage: inspector oracle-json [options] SESSION.jsonl\n"
            "       inspector oracle-json --branch [options] SESSION.jsonl FROM TO",
            file=sys.stderr,
        )
        return 2
    session = load_or_exit(pos[0], args)
    if args.dump_migrated:
        from .export import ExportError, write_session_jsonl

        try:
            write_session_jsonl(session, args.dump_migrated, source=pos[0], redact=not args.keep_secrets)
        except ExportError as e:
            print(f"inspector: {e}", file=sys.stderr)
            return 1
    try:
        if args.branch:
            out = oracle_branch(session, pos[1], pos[2], budgets=args.budgets or (), max_text=args.max_text)
        else:
            out = oracle_main(
                session,
                leaf=args.leaf if args.leaf is not None else "leaf",
                keeps=args.keep or DEFAULT_KEEPS,
                reserve=args.reserve,
                context_window=args.context_window,
                max_text=args.max_text,
                pi_version=args.pi_version,
            )
    except KeyError as e:
        print(f"inspector: {e.args[0]}", file=sys.stderr)
        return 2
    from .jsjson import js_stringify_indent

    # JSON.stringify(out, null, 1), as the oracle prints it (numbers such as 1e400 → null, -0 → 0)
    text = js_stringify_indent(out, 1) + "\n"
    buf = getattr(sys.stdout, "buffer", None)
    if buf is None:
        sys.stdout.write(text)
    else:
        sys.stdout.flush()
        buf.write(text.encode("utf-8"))
        buf.flush()
    return 0


# ---------------------------------------------------------------------------------------------
# info
# ---------------------------------------------------------------------------------------------


def cmd_info(args: argparse.Namespace) -> int:
    from .info import session_info

    session = load_or_exit(args.session, args)
    try:
        info = session_info(session, leaf=args.leaf or "leaf", counters=args.counters)
    except KeyError as e:
        print(f"inspector: {e.args[0]}", file=sys.stderr)
        return 2
    if args.json:
        print_json(info.model_dump(mode="json"), indent=2)
    else:
        sys.stdout.write(info.to_text())
    return 0


# ---------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="inspector",
        description="Context Inspector: what a coding agent sends to the model, and what pruning and compaction do to it.",
    )
    p.add_argument("--version", action="version", version=f"context-inspector {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    info = sub.add_parser("info", help="a readable summary of a session file")
    info.add_argument("session")
    info.add_argument("--leaf", help="entry id, @INDEX or 'leaf' (default: pi's leaf, the last entry)")
    info.add_argument(
        "--counters", default="pi,tiktoken", type=lambda s: [x for x in s.split(",") if x],
        help="token counters to report (default pi,tiktoken)",
    )
    info.add_argument("--json", action="store_true", help="print JSON instead of text")
    info.set_defaults(func=cmd_info)

    oj = sub.add_parser(
        "oracle-json",
        help="print the JSON shape of ../shared/oracle/oracle.mjs, computed by this engine",
        description="Same flags and output shape as the pi oracle (oracle.mjs), for compare.py.",
    )
    oj.add_argument("positional", nargs="+", metavar="SESSION [FROM TO]")
    oj.add_argument("--branch", action="store_true", help="branch mode: what /tree navigation FROM → TO summarises")
    oj.add_argument("--deterministic-ids", action="store_true", help="accepted for compatibility: ids are always deterministic")
    oj.add_argument("--leaf", help="entry id, @INDEX, 'leaf' or 'null'")
    oj.add_argument("--keep", type=_nums, help="keepRecentTokens values (default 2000,5000,10000,20000,40000)")
    oj.add_argument("--reserve", type=int, default=16384)
    oj.add_argument("--context-window", type=int, default=200000)
    oj.add_argument("--budgets", type=_nums, help="extra prepareBranchEntries budgets (branch mode)")
    oj.add_argument("--dump-migrated", metavar="FILE",
                    help="write the migrated v3 session to FILE (never the input; secrets redacted)")
    oj.add_argument("--keep-secrets", action="store_true", help="--dump-migrated: do not redact secrets")
    oj.add_argument("--max-text", type=int, default=100000)
    oj.add_argument("--pi-version", choices=["0.73", "0.58"], default="0.73", help="prepareCompaction rule (default 0.73)")
    oj.set_defaults(func=cmd_oracle_json)

    for name in COMMAND_MODULES:
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name and name.startswith(e.name):  # that feature is not in this build
                continue
            raise
        mod.register(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Everything it prints passes through :func:`inspector.visible.visible`,
    so text from a session cannot drive the terminal."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = VisibleStream(out), VisibleStream(err)  # type: ignore[assignment]
    try:
        return _run(argv)
    except SystemExit as e:
        if isinstance(e.code, str):  # the message Python prints on exit
            raise SystemExit(visible(e.code)) from None
        raise
    finally:
        sys.stdout, sys.stderr = out, err


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args))
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
