"""``inspector sessions``: each agent's sessions on this machine, and OpenCode database sessions
written out as the file ``opencode export`` would print (which every command reads)."""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

from ..agents import AGENTS
from ..importers import keep_sessions
from ..importers.discover import (
    agent_dirs,
    list_local_sessions,
    opencode_db_export,
    opencode_storage_export,
)
from ..redact import redact_json
from ..safeio import WriteRefused, write_atomic
from ..visible import clip, visible
from .base import EXIT_FAILED, Command, error_text, fail, print_json
from .options import add_json, add_keep_secrets, add_output, limit


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--agent", choices=list(AGENTS), help="only this agent")
    p.add_argument("--limit", type=limit, default=50, help="newest N per agent (default 50)")
    add_json(p)
    p.add_argument(
        "--opencode-db",
        nargs=2,
        metavar=("DB", "SESSION_ID"),
        help="write one session of an OpenCode database as `opencode export` prints it",
    )
    p.add_argument(
        "--opencode-storage",
        metavar="SESSION_JSON",
        help="the same for a session in OpenCode's older JSON storage (storage/session/<project>/<id>.json)",
    )
    add_output(p, "with --opencode-db/--opencode-storage: the file to write (default: stdout)")
    add_keep_secrets(p, "with --opencode-db/--opencode-storage: ")


def run(args: argparse.Namespace) -> int:
    if args.opencode_db or args.opencode_storage:
        write_opencode(args)
    else:
        list_sessions(args)
    return 0


def write_opencode(args: argparse.Namespace) -> None:
    db = args.opencode_db[0] if args.opencode_db else args.opencode_storage
    try:
        if args.opencode_db:
            data = opencode_db_export(Path(db), args.opencode_db[1])
        elif not Path(db).is_file():
            raise OSError(f"no such session file: {db}")
        else:
            data = opencode_storage_export(Path(db))
    except (KeyError, sqlite3.Error, OSError) as e:
        fail(error_text(e), EXIT_FAILED)
    if not args.keep_secrets:
        data = redact_json(data)
    if args.output in (None, "-"):
        sys.stdout.write(data.decode("utf-8") + "\n")
        return
    try:
        write_atomic(args.output, data, inputs=(db,), keep=keep_sessions(args.force))
    except WriteRefused as e:
        fail(str(e), EXIT_FAILED)
    print(f"wrote {visible(args.output, inline=True)}", file=sys.stderr)


def list_sessions(args: argparse.Namespace) -> None:
    agents = [args.agent] if args.agent else list(AGENTS)
    found = {a: list_local_sessions(a, limit=args.limit) for a in agents}
    if args.json:
        print_json(
            {
                a: [
                    {
                        "path": str(s.path),
                        "ref": s.ref,
                        "project": s.project,
                        "title": s.title,
                        "modified": s.modified.isoformat(timespec="seconds"),
                        "size": s.size,
                    }
                    for s in xs
                ]
                for a, xs in found.items()
            },
            indent=1,
        )
        return
    for a, xs in found.items():
        where = ", ".join(str(d) for d in agent_dirs(a))
        print(f"{AGENTS[a].title}: {len(xs)} session(s) in {where}")
        for s in xs:
            name = visible(f"{s.path}#{s.ref}" if s.ref else str(s.path), inline=True)
            project, title = (
                visible(clip(s.project, 40), inline=True),
                visible(clip(s.title or "", 40), inline=True),
            )
            print(f"  {s.modified:%Y-%m-%d %H:%M}  {project:<40}  {title:<40}  {name}")


COMMAND = Command(
    "sessions", "list pi, Claude Code, Codex and OpenCode sessions on this machine", add_arguments, run
)
