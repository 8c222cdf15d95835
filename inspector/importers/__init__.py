"""Sessions from other agents, imported into the same session model (chosen by content).

Today: Claude Code transcripts. A file that matches no known format loads as a pi session and
says "not a pi session: line N is …" with what it found.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..session.loader import SessionLoadError, load_session, parse_session
from ..session.tree import Session
from .claude_code import looks_like_claude_code, parse_claude_code

__all__ = ["detect_format", "load_any", "parse_any"]


def detect_format(data: bytes) -> str:
    """``pi``, ``claude-code`` or ``unknown`` from the first JSON object of the file."""
    from ..session.loader import _parse_json

    for raw in data.split(b"\n", 50)[:50]:
        if not raw.strip():
            continue
        try:
            v = _parse_json(raw.decode("utf-8", "replace").lstrip("\ufeff"))
        except (ValueError, RecursionError):
            continue
        if isinstance(v, dict):
            if v.get("type") == "session":
                return "pi"
            if looks_like_claude_code(v):
                return "claude-code"
            return "unknown"
    return "unknown"


def parse_any(data: bytes, source: str | None = None) -> Session:
    if detect_format(data) == "claude-code":
        lines = list(enumerate(data.split(b"\n"), start=1))
        return parse_claude_code(lines, source)
    return parse_session(data, source=source)


def load_any(path: str | os.PathLike[str]) -> Session:
    p = Path(path)
    try:
        with open(p, "rb") as f:
            head = f.read(65536)
    except OSError as e:
        raise SessionLoadError(f"cannot read {p}: {e.strerror or e}") from e
    if detect_format(head) == "claude-code":
        return parse_claude_code(list(enumerate(p.read_bytes().split(b"\n"), start=1)), str(p))
    return load_session(p)
