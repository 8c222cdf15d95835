"""The ``inspector`` command line (``inspector …`` or ``python -m inspector …``).

One command group: :data:`COMMANDS` is the fixed table of commands, one module each in this
package, and each command is *parse arguments → one engine call → print*. Shared options are
declared once in :mod:`inspector.cli.options`; :mod:`inspector.cli.base` holds :func:`fail`,
loading, and the JSON and CSV printers. Nothing in the engine imports this package.

Adding a command: a module here that defines ``COMMAND = Command(name, help, add_arguments, run)``,
and its row in :data:`COMMANDS`.

Exit status, the same for every command:

* **0** — success.
* **1** — the command could not do its work on this input: the session (or an OpenCode database
  or storage file) could not be read at all, pi would not compact where asked (``export session
  --compact``, ``summarize``), or an output was refused (never over an input; a missing or
  read-only folder; a directory).
* **2** — bad arguments: an unknown command, option or choice, a value of the wrong type, a bad
  ``--leaf`` (every command), ``--set``, ``--grid``, ``--at-step`` or agent name, a setting out of
  range, an LLM summarizer whose extra is not installed.

Every failure prints one line, ``inspector: <message>``, on stderr (argparse prints its usage
first for an argument it cannot parse). Everything printed passes through
:func:`inspector.visible.visible`, so text from a session cannot drive the terminal.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pydantic import ValidationError

from .. import __version__
from ..visible import VisibleStream, visible
from . import (
    check,
    compact,
    corpus,
    doctor,
    export,
    info,
    learn,
    oracle_json,
    prune,
    replay,
    retention,
    sessions,
    summarize,
    sweep,
)
from .base import EXIT_USAGE, Command, fail

__all__ = ["COMMANDS", "Command", "build_parser", "fail", "main"]

COMMANDS: tuple[Command, ...] = (
    info.COMMAND,
    oracle_json.COMMAND,
    compact.COMMAND,
    prune.COMMAND,
    replay.COMMAND,
    sweep.COMMAND,
    summarize.COMMAND,
    doctor.COMMAND,
    check.COMMAND,
    retention.COMMAND,
    export.COMMAND,
    sessions.COMMAND,
    corpus.COMMAND,
    learn.COMMAND,
)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="inspector",
        description="Context Inspector: what a coding agent sends to the model, and what pruning and compaction do to it.",
        epilog="Exit status: 0 success; 1 the session could not be read, nothing to compact there (summarize, "
        "export session --compact), or an output was refused; 2 bad arguments.",
    )
    p.add_argument("--version", action="version", version=f"context-inspector {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for c in COMMANDS:
        cp = sub.add_parser(c.name, help=c.help, description=c.description or c.help)
        c.add_arguments(cp)
        cp.set_defaults(run=c.run)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit status (a failure raises ``SystemExit`` with it). Everything it
    prints passes through :func:`inspector.visible.visible`, so text from a session cannot drive
    the terminal."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = VisibleStream(out), VisibleStream(err)
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
    if not getattr(args, "run", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args.run(args))
    except ValidationError as e:  # a setting a command passed on unchecked: one line, not a traceback
        err = e.errors()[0]
        fail(f"{'.'.join(map(str, err['loc'])) or e.title}: {err['msg']}", EXIT_USAGE)
    except BrokenPipeError:
        return 0
