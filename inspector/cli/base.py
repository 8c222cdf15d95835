"""What every command shares: the :class:`Command` record, :func:`fail` and the exit codes,
loading the session, and printing JSON and CSV.

Everything a command prints goes to ``sys.stdout`` / ``sys.stderr``, which :func:`inspector.cli.main`
wraps in :class:`inspector.visible.VisibleStream`: text from a session cannot drive the terminal.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from ..replay_report import csv_text
from ..session.loader import SessionLoadError
from ..session.tree import Session
from ..visible import visible

EXIT_OK = 0
"""The command did its work."""
EXIT_FAILED = 1
"""The command could not do its work: the session (or an OpenCode database) could not be read at
all, pi would not compact where asked, or an output was refused."""
EXIT_USAGE = 2
"""Bad arguments: an unknown option or value, a bad ``--leaf``, ``--set``, ``--grid``, ``--at-step``…"""


@dataclass(frozen=True)
class Command:
    """One ``inspector`` command: its name and help, its arguments, and what it runs."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    description: str | None = None


class CommandFailed(SystemExit):
    """Raised by :func:`fail`: exits with ``code``; ``str()`` is the message (already printed)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(code)
        self.message = message

    def __str__(self) -> str:
        return self.message


def fail(message: str, code: int) -> NoReturn:
    """Print ``inspector: message`` to stderr and exit with ``code`` (:data:`EXIT_FAILED` or
    :data:`EXIT_USAGE`). The one way a command fails."""
    print(f"inspector: {visible(message)}", file=sys.stderr)
    raise CommandFailed(message, code)


def error_text(e: BaseException) -> str:
    """An exception's message (a ``KeyError``'s without the quotes ``str()`` adds)."""
    return str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)


def load_or_exit(path: str) -> Session:
    """The session at ``path`` (pi's format or another agent's), or :func:`fail` with status 1."""
    from ..importers import load_any

    try:
        return load_any(path)
    except SessionLoadError as e:
        fail(str(e), EXIT_FAILED)


def resolve_leaf(session: Session, ref: str | None) -> int | None:
    """The entry index ``--leaf`` names (an id, ``@INDEX``, ``leaf``; None for None or ``null``),
    or :func:`fail` with status 2: a bad ``--leaf`` is a bad argument for every command."""
    try:
        return session.resolve(ref)
    except KeyError as e:
        fail(error_text(e), EXIT_USAGE)


def checked_leaf(session: Session, args: argparse.Namespace) -> str:
    """``--leaf`` (default ``leaf``: pi's leaf), checked by :func:`resolve_leaf`, for engine calls
    that take a reference."""
    ref: str = args.leaf or "leaf"
    resolve_leaf(session, ref)
    return ref


def print_json(obj: Any, indent: int | None = 1) -> None:
    # ensure_ascii keeps lone surrogates (possible in JS strings) printable.
    sys.stdout.write(json.dumps(obj, indent=indent, ensure_ascii=True) + "\n")


def print_csv(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """CSV on stdout, by the one CSV writer (:func:`inspector.replay_report.csv_text`), one line per row."""
    sys.stdout.write(csv_text(header, rows, lineterminator="\n"))
