"""``inspector export``: a new pi v3 file (optionally with pi's compaction applied), or a report
(replay or doctor; HTML, JSON or CSV). Nothing is ever written over an input."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..doctor import DoctorOptions, diagnose
from ..export import ExportError, compacted_entries, stream_session_jsonl, write_session_jsonl
from ..importers import HEAD_BYTES, detect_format, keep_sessions
from ..redact import redact_text
from ..replay import replay
from ..replay_report import REPORT_FORMATS, doctor_report, replay_report
from ..safeio import open_regular, write_atomic
from ..session.loader import SessionLoadError
from ..session.tree import Session
from ..visible import visible
from ..window import window_settings
from .base import EXIT_FAILED, Command, checked_leaf, fail, load_or_exit
from .options import add_keep_secrets, add_output, add_replay, replay_settings


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("what", choices=["session", "replay", "doctor"], help="what to export")
    add_replay(p)
    add_output(p, "the file to write (never the session itself)", required=True)
    p.add_argument(
        "--format", choices=list(REPORT_FORMATS), help="report format (default: from the file suffix)"
    )
    p.add_argument(
        "--compact", action="store_true", help="session: append the compaction pi would make at the leaf"
    )
    add_keep_secrets(p)


def run(args: argparse.Namespace) -> int:
    if args.what == "session" and not args.compact and args.leaf in (None, "leaf") and _streamed(args):
        return 0
    session = load_or_exit(args.session, lists_issues=args.what == "doctor")
    leaf = checked_leaf(session, args)
    try:
        if args.what == "session":
            export_session(args, session, leaf)
        else:
            text = report_text(args, session, leaf)
            # a lone surrogate (possible in JS strings) is written as its JSON escape, \uXXXX
            out = Path(args.output)
            write_atomic(
                out,
                text.encode("utf-8", "backslashreplace"),
                inputs=(args.session, session.source),
                keep=keep_sessions(args.force),
            )
            print(f"wrote {visible(out, inline=True)}")
    except ExportError as e:
        fail(str(e), EXIT_FAILED)
    return 0


def _streamed(args: argparse.Namespace) -> bool:
    """A plain export of a pi v3 file, one entry at a time (:func:`stream_session_jsonl`): the same
    file as through a loaded session, without holding the session. False: not such a file."""
    try:
        with open_regular(Path(args.session)) as f:
            if detect_format(f.read(HEAD_BYTES)) != "pi":
                return False
    except (OSError, SessionLoadError):
        return False  # the load says what is wrong, as for every command
    redact, out = not args.keep_secrets, Path(args.output)
    try:
        if stream_session_jsonl(args.session, out, redact=redact, replace_session=args.force) is None:
            return False
    except (SessionLoadError, ExportError) as e:
        fail(str(e), EXIT_FAILED)
    print(f"wrote {visible(out, inline=True)}" + ("" if redact else " (secrets kept)"))
    return True


def export_session(args: argparse.Namespace, session: Session, leaf: str) -> None:
    entries, note = None, ""
    if args.compact:
        res = compacted_entries(
            session, leaf, args.keep_recent_tokens, args.reserve, settings=replay_settings(args, session)
        )
        if res is None:
            fail("pi would not compact here (empty branch, or it ends in a compaction)", EXIT_FAILED)
        entries, entry = res
        note = f" with a compaction (entry {entry.id}) keeping from {visible(entry.firstKeptEntryId, inline=True)}"
    redact, out = not args.keep_secrets, Path(args.output)
    write_session_jsonl(
        session, out, entries=entries, source=args.session, redact=redact, replace_session=args.force
    )
    print(f"wrote {visible(out, inline=True)}{note}" + ("" if redact else " (secrets kept)"))


def report_text(args: argparse.Namespace, session: Session, leaf: str) -> str:
    """The report's text (its format from ``--format``, else the file's suffix, else JSON)."""
    fmt = args.format or Path(args.output).suffix.lstrip(".").lower()
    fmt = fmt if fmt in REPORT_FORMATS else "json"
    redact = None if args.keep_secrets else redact_text
    if args.what == "doctor":  # checked as `inspector doctor` checks it: against the session's own window
        opts = DoctorOptions(**window_settings(session, args.window))
        return doctor_report(session, diagnose(session, leaf, opts), fmt, redact=redact)
    return replay_report(session, replay(session, replay_settings(args, session)), fmt, redact=redact)


COMMAND = Command(
    "export", "write a new session file (e.g. with a compaction applied) or a report", add_arguments, run
)
