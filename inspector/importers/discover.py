"""Finding each agent's sessions on this machine (read only; pure, no streamlit).

Where each agent keeps them is its record's ``folders`` (:mod:`inspector.agents`). Claude Code's
sub-agent files (``subagents/``, ``agent-*.jsonl``) are not listed on their own. OpenCode's SQLite
database (``opencode.db`` or ``opencode-*.db``, one row per session) is opened read only and each
session turned into the document ``opencode export`` prints; older versions' JSON files
(``storage/session/<project>/<id>.json``, ``storage/message/<session>/<id>.json``,
``storage/part/<message>/<id>.json``) are listed and assembled the same way.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ..agents import AGENTS
from ..safeio import is_regular, open_regular, read_regular, regular_stat


@dataclass(frozen=True)
class LocalSession:
    agent: str
    path: Path
    """The session file, or the OpenCode database holding it."""
    project: str
    title: str | None
    modified: datetime
    size: int
    """Bytes of the file; for a session inside OpenCode's storage, its number of messages."""
    ref: str | None = None
    """The session id inside a database (OpenCode), else ``None``."""


def agent_dirs(agent: str, env: dict[str, str] | None = None, home: Path | None = None) -> list[Path]:
    """The folders where ``agent`` keeps its sessions (whether or not they exist)."""
    folders = AGENTS[agent].folders
    env = dict(os.environ) if env is None else env
    home = Path(env.get("HOME") or Path.home()) if home is None else home
    value = env.get(folders.env, "") if folders.env else ""
    if folders.several:
        bases = [Path(x).expanduser() for x in value.split(",") if x.strip()]
    else:
        bases = [Path(value).expanduser()] if value else []
    bases = bases or [home / d for d in folders.defaults]
    return [b / sub if sub else b for b in bases for sub in folders.subdirs]


def all_agent_dirs(env: dict[str, str] | None = None, home: Path | None = None) -> list[Path]:
    return [d for a in AGENTS for d in agent_dirs(a, env, home)]


def _stat(p: Path) -> tuple[datetime, int] | None:
    """(modified, size) of a regular file; None for anything else (a FIFO is listed never, opened never)."""
    try:
        st = regular_stat(p)
        return datetime.fromtimestamp(st.st_mtime), st.st_size
    except (OSError, ValueError, OverflowError):
        return None


def _newest(items: Iterable[LocalSession], limit: int) -> list[LocalSession]:
    return sorted(items, key=lambda s: s.modified, reverse=True)[:limit]


def _first_line(p: Path, max_bytes: int = 1 << 20) -> dict[str, Any] | None:
    try:
        with open_regular(p) as f:
            line = f.readline(max_bytes)
        v = json.loads(line)
    except (OSError, ValueError):
        return None
    return v if isinstance(v, dict) else None


def list_local_sessions(agent: str, dirs: list[Path] | None = None, limit: int = 300) -> list[LocalSession]:
    """The newest ``limit`` sessions of ``agent`` found in ``dirs`` (default: :func:`agent_dirs`)."""
    dirs = agent_dirs(agent) if dirs is None else dirs
    out: list[LocalSession] = []
    for base in dirs:
        if not base.is_dir():
            continue
        if agent == "pi":
            for f in base.glob("*/*.jsonl"):
                if (m := _stat(f)) is not None:
                    out.append(
                        LocalSession(agent, f, "/" + f.parent.name.strip("-").replace("-", "/"), None, *m)
                    )
        elif agent == "claude-code":
            for f in base.glob("*/*.jsonl"):  # sub-agents live one level deeper, or as agent-*.jsonl
                if f.name.startswith("agent-") or (m := _stat(f)) is None:
                    continue
                out.append(LocalSession(agent, f, f.parent.name.replace("-", "/"), None, *m))
        elif agent == "codex":
            for f in base.rglob("rollout-*.jsonl"):
                if (m := _stat(f)) is not None:
                    out.append(LocalSession(agent, f, "", None, *m))
        elif agent == "opencode":
            for db in sorted(base.glob("opencode*.db")):
                if is_regular(db):
                    out.extend(opencode_db_sessions(db))
            out.extend(opencode_storage_sessions(base / "storage"))
    out = _newest(out, limit)
    if agent == "codex":  # the project is the cwd in the first line (read only for those listed)
        out = [_codex_project(s) for s in out]
    return out


def claude_code_subagents(session_file: Path) -> list[Path]:
    """A Claude Code session's sub-agent transcripts: ``<session>/subagents/agent-*.jsonl`` beside
    the session file (newer builds; workflows nest them one level deeper), by name."""
    d = session_file.with_suffix("") / "subagents"
    try:
        found = {*d.glob("agent-*.jsonl"), *d.glob("*/*/agent-*.jsonl")} if d.is_dir() else set()
        return sorted(p for p in found if is_regular(p))
    except OSError:
        return []


def codex_rollout(session_id: str, dirs: list[Path] | None = None) -> Path | None:
    """The rollout file of a Codex session id (its name ends with the id), in Codex's folders."""
    if not session_id or any(c in session_id for c in "/\\*?[]"):
        return None
    for base in agent_dirs("codex") if dirs is None else dirs:
        try:
            hits = sorted(base.rglob(f"rollout-*{session_id}.jsonl")) if base.is_dir() else []
            hit = next((p for p in hits if is_regular(p)), None)
        except OSError:
            hit = None
        if hit is not None:
            return hit
    return None


def _codex_project(s: LocalSession) -> LocalSession:
    first = _first_line(s.path) or {}
    payload = first.get("payload") if isinstance(first.get("payload"), dict) else first
    cwd = payload.get("cwd") if isinstance(payload, dict) else None
    return LocalSession(
        s.agent, s.path, cwd if isinstance(cwd, str) else "", s.title, s.modified, s.size, s.ref
    )


# --------------------------------------------------------------------------------------------
# OpenCode's database (session / message / part tables, each row's JSON in ``data``)
# --------------------------------------------------------------------------------------------


def _connect_ro(db: Path) -> sqlite3.Connection:
    """Read only: never creates, locks for writing, or changes the user's database. Only a
    regular file is opened (``NotRegularFile``, an ``OSError``, otherwise)."""
    regular_stat(db)
    uri = db.resolve().as_uri() + "?mode=ro"
    try:
        con = sqlite3.connect(uri, uri=True, timeout=2)
        con.execute("select 1 from sqlite_master limit 1")
        return con
    except sqlite3.Error:
        # a WAL database in a folder we may not write to: read the main file as a snapshot
        return sqlite3.connect(db.resolve().as_uri() + "?mode=ro&immutable=1", uri=True, timeout=2)


class NotOpenCodeDatabase(sqlite3.DatabaseError):
    """An SQLite file without OpenCode's tables."""


def require_opencode(con: sqlite3.Connection, db: Path) -> None:
    """Raise :class:`NotOpenCodeDatabase` unless the database has OpenCode's ``session`` and
    ``message`` tables."""
    tables = {r[0] for r in con.execute("select name from sqlite_master where type = 'table'")}
    if not {"session", "message"} <= tables:
        raise NotOpenCodeDatabase(f"{db} is not an OpenCode database (no `session`/`message` tables)")


def is_opencode_db(db: Path) -> bool:
    """Is ``db`` a regular SQLite file with OpenCode's tables (opened read only)?"""
    try:
        con = _connect_ro(db)
    except (sqlite3.Error, OSError):
        return False
    try:
        require_opencode(con, db)
        return True
    except sqlite3.Error:
        return False
    finally:
        con.close()


def _columns(con: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in con.execute(f"pragma table_info({table})")]  # table names are ours


def _quoted(columns: Sequence[str]) -> str:
    """``columns`` for a ``select``: each an SQL identifier in double quotes (the file names its
    columns: one called ``x from session; --`` had made the query fail)."""
    return ", ".join('"' + str(c).replace('"', '""') + '"' for c in columns)


def opencode_db_sessions(db: Path) -> list[LocalSession]:
    try:
        con = _connect_ro(db)
    except (sqlite3.Error, OSError):
        return []
    try:
        cols = _columns(con, "session")
        if "id" not in cols:
            return []
        want = [
            c for c in ("id", "directory", "title", "time_updated", "time_created", "parent_id") if c in cols
        ]
        rows = con.execute(f"select {_quoted(want)} from session").fetchall()
        counts = (
            dict(con.execute("select session_id, count(*) from message group by session_id").fetchall())
            if "session_id" in _columns(con, "message")
            else {}
        )
    except sqlite3.Error:
        return []
    finally:
        con.close()
    out = []
    for r in rows:
        d = dict(zip(want, r, strict=True))
        ms = d.get("time_updated") or d.get("time_created") or 0
        try:
            when = datetime.fromtimestamp(float(ms) / 1000)
        except (TypeError, ValueError, OverflowError, OSError):
            when = datetime.fromtimestamp(0)
        title = d.get("title") if isinstance(d.get("title"), str) else None
        if d.get("parent_id"):
            title = f"{title or ''} (sub-agent)".strip()
        out.append(
            LocalSession(
                "opencode",
                db,
                str(d.get("directory") or ""),
                title,
                when,
                int(counts.get(d["id"], 0)),
                ref=str(d["id"]),
            )
        )
    return out


_SESSION_TIME = {
    "time_created": "created",
    "time_updated": "updated",
    "time_compacting": "compacting",
    "time_archived": "archived",
}
_SESSION_NAMES = {"project_id": "projectID", "parent_id": "parentID"}


def opencode_db_export(db: Path, session_id: str) -> bytes:
    """The document ``opencode export <session>`` prints, built from the database rows:
    ``{"info": session, "messages": [{"info": message, "parts": [part, …]}, …]}``, messages and
    parts ordered by id (OpenCode's ids sort by time)."""
    con = _connect_ro(db)
    try:
        require_opencode(con, db)
        scols = _columns(con, "session")
        row = con.execute(f"select {_quoted(scols)} from session where id = ?", (session_id,)).fetchone()
        if row is None:
            raise KeyError(f"no session {session_id!r} in {db}")
        info: dict[str, Any] = {"time": {}}
        for c, v in zip(scols, row, strict=True):
            if v is None:
                continue
            if c in _SESSION_TIME:
                info["time"][_SESSION_TIME[c]] = v
            elif c in ("revert", "summary", "share", "permission") and isinstance(v, str):
                try:
                    info[c] = json.loads(v)
                except ValueError:
                    info[c] = v
            else:
                info[_SESSION_NAMES.get(c, c)] = v
        messages = []
        parts: dict[str, list[dict[str, Any]]] = {}
        for pid, mid, data in con.execute(
            "select id, message_id, data from part where session_id = ? order by id", (session_id,)
        ):
            p = _json_obj(data)
            parts.setdefault(mid, []).append({"id": pid, "sessionID": session_id, "messageID": mid, **p})
        for mid, data in con.execute(
            "select id, data from message where session_id = ? order by id", (session_id,)
        ):
            m = _json_obj(data)
            info_of: dict[str, Any] = {"id": mid, "sessionID": session_id, **m}
            messages.append({"info": info_of, "parts": parts.get(mid, [])})
    finally:
        con.close()
    return json.dumps({"info": info, "messages": messages}, indent=2, ensure_ascii=False).encode("utf-8")


# --------------------------------------------------------------------------------------------
# OpenCode's older JSON storage (one file per session, message and part)
# --------------------------------------------------------------------------------------------


def _read_json(p: Path) -> dict[str, Any]:
    try:
        return _json_obj(read_regular(p))
    except OSError:
        return {"_unreadable": str(p)}


class NotOpenCodeStorage(OSError):
    """A file given as a session of OpenCode's JSON storage that is none."""


def opencode_storage_sessions(storage: Path) -> list[LocalSession]:
    out = []
    for f in sorted(storage.glob("session/*/*.json")):
        info = _read_json(f)
        st = _stat(f)
        if st is None or not isinstance(info.get("id"), str):
            continue
        title = info.get("title") if isinstance(info.get("title"), str) else None
        if info.get("parentID"):
            title = f"{title or ''} (sub-agent)".strip()
        n_msgs = len(list((storage / "message" / info["id"]).glob("*.json")))
        out.append(
            LocalSession(
                "opencode", f, str(info.get("directory") or ""), title, st[0], n_msgs, ref=info["id"]
            )
        )
    return out


def opencode_storage_export(session_file: Path) -> bytes:
    """The ``opencode export`` document of a session kept in OpenCode's older JSON storage
    (``session_file`` is ``storage/session/<project>/<id>.json``)."""
    storage = session_file.parent.parent.parent
    info = _read_json(session_file)
    if not isinstance(info.get("id"), str):  # as the listing skips it: no session record
        raise NotOpenCodeStorage(
            f"{session_file} is not a session of OpenCode's JSON storage "
            "(storage/session/<project>/<id>.json: a JSON object with its id)"
        )
    sid = info["id"]
    messages = []
    for mf in sorted((storage / "message" / sid).glob("*.json")):
        mi = _read_json(mf)
        mid = str(mi.get("id") or mf.stem)
        parts = [_read_json(pf) for pf in sorted((storage / "part" / mid).glob("*.json"))]
        messages.append({"info": mi, "parts": parts})
    return json.dumps({"info": info, "messages": messages}, indent=2, ensure_ascii=False).encode("utf-8")


def opencode_export(item: LocalSession) -> bytes:
    """An OpenCode session found by :func:`list_local_sessions`, as ``opencode export`` prints it."""
    if item.path.suffix == ".db":
        return opencode_db_export(item.path, item.ref or "")
    return opencode_storage_export(item.path)


def _json_obj(data: Any) -> dict[str, Any]:
    try:
        v = json.loads(data) if isinstance(data, (str, bytes)) else None
    except ValueError:
        v = None
    return v if isinstance(v, dict) else {"_unreadable": str(data)[:200]}
