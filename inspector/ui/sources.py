"""Where sessions come from: bundled samples, pi's sessions folder, paths under allowed roots.

Pure functions (no streamlit): the Load page calls them. Local paths are read only when they
resolve (after ``..`` and symlinks) inside one of the configured roots.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ..safeio import is_regular, open_regular, read_regular, regular_stat

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_sessions"
PI_SESSIONS = Path("~/.pi/agent/sessions").expanduser()


def roots() -> list[Path]:
    """Allowed roots: ``$INSPECTOR_ROOTS`` (os.pathsep-separated), or the folders where pi,
    Claude Code, Codex and OpenCode keep their sessions, plus the bundled samples."""
    from ..importers.discover import all_agent_dirs

    env = os.environ.get("INSPECTOR_ROOTS")
    items = (
        [Path(x).expanduser() for x in env.split(os.pathsep) if x] if env else [*all_agent_dirs(), SAMPLES]
    )
    return [p.resolve() for p in items]


class PathRefused(Exception):
    pass


def check_path(raw: str, allowed: list[Path] | None = None) -> Path:
    """The resolved path if it is a file inside an allowed root; :class:`PathRefused` otherwise."""
    allowed = roots() if allowed is None else allowed
    if not raw.strip():
        raise PathRefused("enter a path")
    p = Path(raw.strip()).expanduser()
    if not p.is_absolute():
        # relative paths: from the current folder if the file is there, else from the repo
        # (where the samples live)
        p = Path.cwd() / p if (Path.cwd() / p).exists() else REPO / p
    try:
        real = p.resolve(strict=False)
    except (OSError, RuntimeError) as e:  # symlink loops
        raise PathRefused(f"{raw!r} cannot be resolved: {e}") from None
    if not any(real == r or r in real.parents for r in allowed):
        raise PathRefused(
            f"{raw!r} is outside the allowed folders ({', '.join(str(r) for r in allowed)}). "
            "Set INSPECTOR_ROOTS to allow another folder."
        )
    if not is_regular(real):
        raise PathRefused(f"{raw!r} is not a regular file")
    return real


def sample_files() -> list[Path]:
    return sorted(p for p in [*SAMPLES.glob("*.jsonl"), *SAMPLES.glob("*.json")] if is_regular(p))


def read_file(path: Path) -> bytes:
    """A session file's bytes; only a regular file is read (``OSError`` otherwise)."""
    return read_regular(path)


def local_sessions(limit: int = 300) -> dict[str, list[Any]]:
    """Each agent's sessions on this machine (newest first), for folders inside the allowed roots."""
    from ..agents import AGENTS
    from ..importers.discover import agent_dirs, list_local_sessions

    allowed = roots()
    return {
        a: list_local_sessions(a, [d for d in agent_dirs(a) if d.is_dir() and is_allowed(d, allowed)], limit)
        for a in AGENTS
    }


@dataclass(frozen=True)
class PiSessionFile:
    path: Path
    project: str
    name: str | None
    modified: datetime
    size: int


def _name_of(path: Path, max_lines: int = 400) -> str | None:
    name = None
    try:
        with open_regular(path) as f:  # a FIFO named *.jsonl never blocks the listing
            for k, line in enumerate(f):
                if k > max_lines:
                    break
                if b'"session_info"' in line:
                    try:
                        name = json.loads(line).get("name") or name
                    except ValueError:
                        pass
    except OSError:
        return None
    return name


def is_allowed(path: Path, allowed: list[Path] | None = None) -> bool:
    allowed = roots() if allowed is None else allowed
    real = path.resolve()
    return any(real == r or r in real.parents for r in allowed)


def list_pi_sessions(base: Path | None = None, limit: int = 300) -> list[PiSessionFile]:
    """pi's sessions: one folder per project (the cwd with ``/`` as ``-``, wrapped in ``--``).
    Listed only when that folder is inside an allowed root."""
    base = base or PI_SESSIONS
    out: list[PiSessionFile] = []
    if not base.is_dir() or not is_allowed(base):
        return out
    for proj in sorted(base.iterdir()):
        if not proj.is_dir():
            continue
        project = "/" + proj.name.strip("-").replace("-", "/")
        for f in proj.glob("*.jsonl"):
            try:
                st = regular_stat(f)
            except OSError:
                continue
            out.append(PiSessionFile(f, project, None, datetime.fromtimestamp(st.st_mtime), st.st_size))
    out.sort(key=lambda s: s.modified, reverse=True)
    out = out[:limit]
    return [PiSessionFile(s.path, s.project, _name_of(s.path), s.modified, s.size) for s in out]
