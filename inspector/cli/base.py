"""What every command shares: the :class:`Command` record, :func:`fail` and the exit codes,
loading the session, and printing JSON and CSV.

Everything a command prints goes to ``sys.stdout`` / ``sys.stderr``, which :func:`inspector.cli.main`
wraps in :class:`inspector.visible.VisibleStream`: text from a session cannot drive the terminal.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from ..replay_report import csv_text
from ..safeio import open_regular
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


def load_or_exit(path: str, lists_issues: bool = False) -> Session:
    """The session at ``path`` (pi's format or another agent's), or :func:`fail` with status 1:
    when it cannot be opened, and when nothing in it could be read (an empty file, a text, another
    kind of JSON: load errors, and no entry of a kind pi knows). A file read in part is used, with
    a line on stderr that says which lines were skipped (:func:`say_unread`). ``lists_issues``: the
    command lists the load issues itself (``info``, ``doctor``) or prints what pi's own harness
    would (``oracle-json``: pi reads a file it cannot parse as no entries): it gets every file that
    opens, and no stderr line."""
    from ..importers import load_any

    try:
        session = load_any(path)
    except SessionLoadError as e:
        fail(str(e), EXIT_FAILED)
    if not lists_issues:
        say_unread(session, path)
    return session


def say_unread(session: Session, path: str) -> None:
    """:func:`fail` when nothing in ``session``'s file could be read (:meth:`Session.unread`);
    else, when lines of it were skipped, say so on stderr (the command goes on with the rest, as
    the app does with the valid entries of a damaged file)."""
    said = session.load_errors_said()
    if said is None:
        return
    listed = f"`inspector info {path}` lists the load issues"
    head = session.unread()
    if head is not None:
        fail(f"{path}: nothing in it could be read as a session: {head.message} ({listed})", EXIT_FAILED)
    print(f"inspector: {visible(path)}: {said}; the rest of the file is used ({listed})", file=sys.stderr)


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


STREAM_BYTES = 64 * 1024**2
"""A pi v3 file at least this large is read without holding its messages where a command can:
``info`` (:func:`~inspector.info.streamed_session_info`) and ``replay`` as recorded
(:mod:`inspector.replay.streamed`): the same output, in a fraction of the memory, for a second read
of the file."""


def large_pi_file(path: str) -> bool:
    """Is ``path`` a regular file of at least :data:`STREAM_BYTES` that looks like a pi session?
    False for anything that cannot be read (the load then says what is wrong, as for every command)."""
    from ..importers import HEAD_BYTES, detect_format

    try:
        with open_regular(Path(path)) as f:
            return os.fstat(f.fileno()).st_size >= STREAM_BYTES and detect_format(f.read(HEAD_BYTES)) == "pi"
    except (OSError, SessionLoadError):
        return False


def print_json(obj: Any, indent: int | None = 1) -> None:
    # ensure_ascii keeps lone surrogates (possible in JS strings) printable.
    sys.stdout.write(json.dumps(obj, indent=indent, ensure_ascii=True) + "\n")


def print_json_streamed(obj: dict[str, Any], indent: int = 1, chunk: int = 1000) -> None:
    """:func:`print_json` of a dict whose values may be iterators, each written as the list it
    yields, an item at a time (the same text; a replay's steps are never all in memory at once)."""

    def dumps(v: Any, depth: int) -> str:
        text = json.dumps(v, indent=indent, ensure_ascii=True)
        return text.replace("\n", "\n" + " " * (indent * depth))  # JSON text has no raw newline but these

    out = sys.stdout.write
    out("{")
    for n, (key, value) in enumerate(obj.items()):
        out(("," if n else "") + "\n" + " " * indent + json.dumps(key, ensure_ascii=True) + ": ")
        if not isinstance(value, Iterator):
            out(dumps(value, 1))
            continue
        pad, parts, empty = "\n" + " " * (indent * 2), [], True
        for item in value:
            parts.append(("[" if empty else ",") + pad + dumps(item, 2))
            empty = False
            if len(parts) >= chunk:
                out("".join(parts))
                parts = []
        out("".join(parts) + ("[]" if empty else "\n" + " " * indent + "]"))
    out("\n}\n" if obj else "}\n")


def print_csv(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """CSV on stdout, by the one CSV writer (:func:`inspector.replay_report.csv_text`), one line per row."""
    sys.stdout.write(csv_text(header, rows, lineterminator="\n"))
