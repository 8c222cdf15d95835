"""Write a session (possibly edited in memory) as a new pi v3 JSONL file — never over its source."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from .session.models import AnyEntry, SessionHeader
from .session.tree import Session


class ExportError(Exception):
    pass


def _same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(a).resolve() == Path(b).resolve()


def dumps_line(obj: Any) -> bytes:
    """Compact JSON; values orjson refuses (lone surrogates, huge ints) go through ``json``."""
    try:
        return orjson.dumps(obj)
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(obj, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def session_lines(header: SessionHeader | None, entries: Iterable[AnyEntry]) -> Iterable[bytes]:
    """One JSON line per object, header first (version 3), as pi writes them."""
    if header is not None:
        h: dict[str, Any] = header.raw()
        h["version"] = 3
        yield dumps_line(h)
    for e in entries:
        yield dumps_line(e.raw())


def write_session_jsonl(
    session: Session,
    target: str | os.PathLike[str],
    *,
    entries: Iterable[AnyEntry] | None = None,
    source: str | os.PathLike[str] | None = None,
) -> Path:
    """Write ``session`` (or ``entries`` in its place) to ``target``. Refuses to write over the
    session's own file or ``source``, and over any existing file that is the same inode."""
    t = Path(target)
    for src in (session.source, source):
        if src and t.exists() and _same_file(src, t):
            raise ExportError(f"refusing to write over the session file itself: {t}")
    tmp = t.with_name(t.name + ".tmp")
    with open(tmp, "wb") as f:
        for line in session_lines(session.header, session.entries if entries is None else entries):
            f.write(line)
            f.write(b"\n")
    os.replace(tmp, t)
    return t
