"""``inspector export``: a new pi v3 file (optionally with pi's compaction applied), or a report."""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .cli import load_or_exit
from .export import ExportError, compacted_entries, write_session_jsonl
from .redact import redact_text, redact_value
from .safeio import write_atomic
from .visible import visible


def cmd_export(args: argparse.Namespace) -> int:
    session = load_or_exit(args.session)
    out = Path(args.output)
    redact = not args.keep_secrets
    try:
        if args.what == "session":
            entries = None
            note = ""
            if args.compact:
                res = compacted_entries(session, args.leaf or "leaf", args.keep_recent_tokens, args.reserve,
                                        summarizer=args.summarizer)
                if res is None:
                    print("inspector: pi would not compact here (empty branch, or it ends in a compaction)",
                          file=sys.stderr)
                    return 1
                entries, entry = res
                note = f" with a compaction (entry {entry.id}) keeping from {visible(entry.firstKeptEntryId, inline=True)}"
            write_session_jsonl(session, out, entries=entries, source=args.session, redact=redact)
            print(f"wrote {visible(out, inline=True)}{note}" + ("" if redact else " (secrets kept)"))
            return 0
        text = render_report(session, args, redact_text if redact else None)
        # a lone surrogate (possible in JS strings) is written as its JSON escape, \uXXXX
        write_atomic(out, text.encode("utf-8", "backslashreplace"), inputs=(args.session, session.source))
        print(f"wrote {visible(out, inline=True)}")
        return 0
    except ExportError as e:
        print(f"inspector: {e}", file=sys.stderr)
        return 1


def render_report(session: Any, args: argparse.Namespace, redact: Callable[[str], str] | None) -> str:
    """The report's text; every string from the session passes through ``redact`` if given."""
    fmt = args.format or Path(args.output).suffix.lstrip(".").lower() or "json"
    same: Callable[[str], str] = redact or (lambda x: x)
    if args.what == "doctor":
        from .doctor import diagnose

        rep = diagnose(session, args.leaf or "leaf")
        if fmt == "html":
            from .ui.report_html import doctor_html

            return doctor_html(session, rep, redact)
        if fmt == "csv":
            buf = io.StringIO()
            w = csv.writer(buf)
            w.writerow(["severity", "kind", "entries", "lines", "message"])
            for f in rep.findings:
                w.writerow([f.severity, f.kind, " ".join(map(str, f.entries)), " ".join(map(str, f.lines)),
                            same(f.message)])
            return buf.getvalue()
        return json.dumps(redact_value(rep.as_dict()) if redact else rep.as_dict(), indent=1, ensure_ascii=False)
    from .replay import replay
    from .replay_cli import settings_from_args
    from .replay_report import REPORT_FORMATS, replay_report

    return replay_report(session, replay(session, settings_from_args(args, session)),
                         fmt if fmt in REPORT_FORMATS else "json", redact=redact)


def register(sub: Any) -> None:
    from .replay_cli import _add_common

    p = sub.add_parser("export", help="write a new session file (e.g. with a compaction applied) or a report")
    p.add_argument("what", choices=["session", "replay", "doctor"], help="what to export")
    _add_common(p)
    p.add_argument("-o", "--output", required=True, help="the file to write (never the session itself)")
    p.add_argument("--format", choices=["json", "csv", "html"], help="report format (default: from the file suffix)")
    p.add_argument("--compact", action="store_true", help="session: append the compaction pi would make at the leaf")
    p.add_argument("--keep-secrets", action="store_true", help="do not redact secrets (API keys, tokens, passwords, private keys, …)")
    p.set_defaults(func=cmd_export)
