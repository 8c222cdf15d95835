"""Write a session (possibly edited in memory) as a new pi v3 JSONL file — never over its source.

Files are written by :func:`inspector.safeio.write_atomic` (refuses any input file, hard links
included; temporary file in the target's folder, then an atomic replace)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from .importers import keep_sessions
from .jsjson import js_stringify
from .redact import redact_value
from .safeio import WriteRefused
from .safeio import write_atomic as _write_atomic
from .session.loader import stream_session
from .session.models import AnyEntry, CompactionEntry, SessionHeader
from .session.tree import Session, iso_to_ms

_MAX_ISO_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z
ExportError = WriteRefused
"""An output that must not or cannot be written (one-line message)."""


def dumps_line(obj: Any) -> bytes:
    """Compact JSON; values orjson refuses (lone surrogates, huge ints) go through ``json``."""
    try:
        return orjson.dumps(obj)
    except (TypeError, orjson.JSONEncodeError):
        try:
            return json.dumps(obj, ensure_ascii=True, separators=(",", ":")).encode("ascii")
        except RecursionError:  # nested deeper than both encoders go: JSON.stringify's own text
            return js_stringify(obj).encode("utf-8")


def session_lines(
    header: SessionHeader | None, entries: Iterable[AnyEntry], *, redact: bool = False, fresh: bool = False
) -> Iterable[bytes]:
    """One JSON line per object, header first (version 3), as pi writes them (``fresh``: the
    entries come straight from validation, see :meth:`~inspector.session.models._Model.raw`)."""
    if header is not None:
        h: dict[str, Any] = header.raw()
        h["version"] = 3
        yield dumps_line(redact_value(h) if redact else h)  # its cwd, parentSession… are the user's text too
    for e in entries:
        raw = e.raw(fresh=fresh)
        yield dumps_line(redact_value(raw) if redact else raw)


def write_session_jsonl(
    session: Session,
    target: str | os.PathLike[str],
    *,
    entries: Iterable[AnyEntry] | None = None,
    source: str | os.PathLike[str] | None = None,
    redact: bool = False,
    replace_session: bool = False,
) -> Path:
    """Write ``session`` (or ``entries`` in its place) to ``target``, strings redacted with
    ``redact``. Raises :class:`ExportError` (one line) for a target that is the session's own
    file or ``source`` (hard links included), a directory, or in a missing or read-only folder,
    and for an existing file that holds a session unless ``replace_session``."""
    lines = session_lines(session.header, session.entries if entries is None else entries, redact=redact)
    return _write_atomic(
        target, _with_newlines(lines), inputs=(session.source, source), keep=keep_sessions(replace_session)
    )


def stream_session_jsonl(
    source: str | os.PathLike[str],
    target: str | os.PathLike[str],
    *,
    redact: bool = False,
    replace_session: bool = False,
) -> Path | None:
    """:func:`write_session_jsonl` of the pi v3 file ``source`` as loaded, one entry at a time:
    the same bytes, in memory for one entry instead of the whole session (a 2,000,000-entry file
    is never held). None, with nothing written, when ``source`` is not a pi v3 session file (load
    it and use :func:`write_session_jsonl`). Raises what those two raise."""
    stream = stream_session(source)
    if stream is None:
        return None
    lines = session_lines(stream.header, stream.entries, redact=redact, fresh=True)
    try:
        return _write_atomic(
            target, _with_newlines(lines), inputs=(source,), keep=keep_sessions(replace_session)
        )
    finally:
        stream.entries.close()  # closes the file


def _with_newlines(lines: Iterable[bytes]) -> Iterable[bytes]:
    for line in lines:  # written apart: a 100 MB line is never copied to add its newline
        yield line
        yield b"\n"


def compacted_entries(
    session: Session,
    leaf: int | str = "leaf",
    keep_recent_tokens: int = 20000,
    reserve_tokens: int = 16384,
    *,
    settings: Any = None,
) -> tuple[list[AnyEntry], CompactionEntry] | None:
    """All entries plus the compaction pi would append at ``leaf``, cut by ``settings``' pi version
    and summarised by its summarizer (a :class:`~inspector.replay.ReplaySettings`: the CLI's, with
    every option given; default: pi 0.73, the offline summarizer); ``keep_recent_tokens`` and
    ``reserve_tokens`` are this compaction's.

    The new entry gets an 8-hex-digit id like pi's (derived from its content, checked against
    existing ids), ``parentId`` = the leaf, and a timestamp just after the newest entry, so the
    file opens in pi with the compaction as its leaf. Returns None when pi would not compact."""
    from .compaction import CompactionSettings, make_compaction_entry, prepare_compaction
    from .replay import ReplaySettings, default_summary

    li = session.resolve(leaf)
    if li is None:
        return None
    path = session.path(li)
    rs = (settings if settings is not None else ReplaySettings()).model_copy(
        update={"reserve_tokens": reserve_tokens, "keep_recent_tokens": keep_recent_tokens}
    )
    cs = CompactionSettings(keepRecentTokens=keep_recent_tokens, reserveTokens=reserve_tokens)
    prep = prepare_compaction(session.entries_at(path), cs, path_indexes=path, pi_version=rs.pi_version)
    if prep is None:
        return None
    text = default_summary(prep, rs, session=session)["text"]
    digest = hashlib.sha256(f"{session.entries[li].id}|{text}".encode("utf-8", "surrogatepass")).hexdigest()
    new_id = next(digest[k : k + 8] for k in range(0, 56) if digest[k : k + 8] not in session.by_id)
    stamps = [ms for e in session.entries if (ms := iso_to_ms(e.timestamp)) is not None]
    # clamped to what a 4-digit-year ISO timestamp can say (a file may hold 9999-12-31T23:59:59.999-14:00)
    ms = int(min(max(max(stamps) + 1 if stamps else 0, 0), _MAX_ISO_MS))
    when = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
    ts = when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
    entry = make_compaction_entry(prep, text, parent_id=session.entries[li].id, timestamp=ts, entry_id=new_id)
    return [*session.entries, entry], entry
