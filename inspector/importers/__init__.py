"""Sessions from other agents, imported into the same session model (chosen by content).

Each importer is a module with the same small interface, listed in :data:`IMPORTERS`:

* ``FORMAT`` — its name (``claude-code``, ``codex``, ``opencode``) and ``LABEL`` for people;
* ``sniff(first, head) -> bool`` — does this file look like ours? ``first`` is the first JSON
  object of the file if its first non-blank line is one (else ``None``, e.g. pretty-printed JSON),
  ``head`` the first 64 KiB;
* ``parse(data, source) -> Session`` — the whole file's bytes into the pi session model, with
  located :class:`LoadIssue`\\ s for what it skipped (never raising on bad content).

A file that matches none loads as a pi session and says "not a pi session: line N is …".
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import shlex
from pathlib import Path
from types import ModuleType
from typing import Any

from ..agents import AGENTS
from ..gcpause import gc_paused
from ..safeio import Keep, open_regular, read_regular
from ..session.loader import SessionLoadError, load_session, parse_session
from ..session.tree import LoadIssue, Session

__all__ = [
    "IMPORTERS",
    "FORMAT_LABELS",
    "detect_format",
    "load_any",
    "parse_any",
    "session_held",
    "keep_sessions",
]

#: importer modules, tried in this order after pi's own format
IMPORTERS: tuple[str, ...] = ("claude_code", "codex", "opencode")

FORMAT_LABELS: dict[str, str] = {"pi": AGENTS["pi"].format_label}

HEAD_BYTES = 65536
SQLITE_MAGIC = b"SQLite format 3\x00"
COMPRESSED_MAGIC = (
    (b"\x1f\x8b", "gzip", "gunzip -k"),
    (b"\x28\xb5\x2f\xfd", "zstd", "zstd -d"),
    (b"\xfd7zXZ\x00", "xz", "unxz -k"),
    (b"BZh", "bzip2", "bunzip2 -k"),
    (b"PK\x03\x04", "zip", "unzip"),
)
"""The first bytes of a compressed file or archive, its kind and the command that opens it: a
session kept compressed is named as such, not read as hundreds of lines of invalid text."""


def compressed_kind(head: bytes) -> tuple[str, str] | None:
    """(kind, the command that decompresses it) when ``head`` starts a compressed file, else None.
    (``BZh`` is also how a text may start: a bzip2 header has a block size digit and a block magic.)"""
    for magic, kind, cmd in COMPRESSED_MAGIC:
        if head.startswith(magic) and (kind != "bzip2" or head[3:4].isdigit() and head[4:10] == b"1AY&SY"):
            return kind, cmd
    return None


def _utf16(head: bytes) -> str | None:
    """The encoding to convert from when ``head`` starts a UTF-16 text (a byte-order mark, or a
    JSON text's first character beside a NUL byte, as PowerShell's ``>`` writes a file), else None."""
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return "UTF-16"  # iconv reads the mark
    if head[:2] in (b"{\x00", b"[\x00"):
        return "UTF-16LE"
    if head[:2] in (b"\x00{", b"\x00["):
        return "UTF-16BE"
    return None


def foreign_file(name: str, head: bytes) -> tuple[str, str] | None:
    """(issue kind, what to say) of a file given as a session that is compressed, or UTF-16 text
    (the agents write sessions in UTF-8, and pi reads no other); None when ``head`` starts neither."""
    enc = _utf16(head)
    if enc is not None:
        return "utf16-file", (
            f"{name} is UTF-16 text, and sessions are UTF-8: convert it first "
            f"(iconv -f {enc} -t UTF-8 {shlex.quote(name)} > utf8.jsonl)"
        )
    got = compressed_kind(head)
    if got is None:
        return None
    kind, cmd = got
    return (
        "compressed-file",
        f"{name} is {kind}-compressed, not a session file: decompress it first ({cmd} {shlex.quote(name)})",
    )


def _modules() -> list[ModuleType]:
    mods = []
    for name in IMPORTERS:
        try:
            mods.append(importlib.import_module(f"{__name__}.{name}"))
        except ModuleNotFoundError:  # an importer not written yet
            continue
    for m in mods:
        FORMAT_LABELS.setdefault(m.FORMAT, m.LABEL)
    return mods


def _first_object(head: bytes) -> dict[str, Any] | None:
    from ..session.loader import _parse_json

    for raw in head.split(b"\n", 50)[:50]:
        if not raw.strip():
            continue
        try:
            v = _parse_json(raw.decode("utf-8", "replace").lstrip("\ufeff"))
        except (ValueError, RecursionError):
            return None
        return v if isinstance(v, dict) else None
    return None


def _detect(head: bytes) -> tuple[str, ModuleType | None]:
    first = _first_object(head)
    if first is not None and first.get("type") == "session":
        return "pi", None
    for m in _modules():
        try:
            if m.sniff(first, head):
                return m.FORMAT, m
        except Exception:  # noqa: BLE001 - a sniffer must never stop a load
            continue
    return "unknown", None


def detect_format(data: bytes) -> str:
    """``pi``, one of the importers' ``FORMAT`` names, or ``unknown``."""
    return _detect(data[:HEAD_BYTES])[0]


def session_held(path: str | os.PathLike[str]) -> str | None:
    """What session ``path`` holds, by its content ("a pi session (JSONL tree)", "a Claude Code
    transcript (JSONL)", "an SQLite database"), or None: not a session, or not a regular file that
    can be read. The exports never replace such a file without ``--force``
    (:func:`inspector.safeio.write_atomic`'s ``keep``)."""
    try:
        head = read_regular(path, HEAD_BYTES)
    except (OSError, ValueError):
        return None
    if head.startswith(SQLITE_MAGIC):
        return "an SQLite database"
    fmt = detect_format(head)
    if fmt == "unknown":
        return None
    label = FORMAT_LABELS.get(fmt, fmt)
    return ("an " if label[:1] in "AEIOU" else "a ") + label


def keep_sessions(replace: bool) -> Keep | None:
    """The ``keep`` of :func:`inspector.safeio.write_atomic` for an output: :func:`session_held`,
    or none when the user asked to ``replace`` (``--force``)."""
    return None if replace else session_held


def _imported(session: Session, mod: ModuleType) -> Session:
    return dataclasses.replace(session, format=mod.FORMAT)


def _unrecognised(session: Session) -> Session:
    """A file no importer claimed and pi's loader calls not a session: say which formats were tried."""
    if not any(i.kind == "not-a-session" for i in session.issues):
        return session
    _modules()
    tried = ", ".join(FORMAT_LABELS.values())
    note = LoadIssue("format-unrecognised", "error", f"the format is not recognised: tried {tried}")
    return dataclasses.replace(session, issues=(note, *session.issues))


def parse_any(data: bytes, source: str | None = None) -> Session:
    if data.startswith(SQLITE_MAGIC):
        note = LoadIssue(
            "sqlite-file",
            "error",
            "an SQLite database, not a session file: OpenCode's database is "
            "read from the Load page's list of local sessions (or `inspector sessions --opencode-db`)",
        )
        return Session(header=None, entries=(), lines=(), parents=(), issues=(note,), source=source)
    foreign = foreign_file(Path(source).name if source else "the file", data[:HEAD_BYTES])
    if foreign is not None:
        note = LoadIssue(foreign[0], "error", foreign[1])
        return Session(header=None, entries=(), lines=(), parents=(), issues=(note,), source=source)
    _, mod = _detect(data[:HEAD_BYTES])
    if mod is not None:
        return _imported(_parse(mod, data, source), mod)
    return _unrecognised(parse_session(data, source=source))


def _parse(mod: Any, data: bytes, source: str | None) -> Session:
    """``mod.parse`` with the cyclic garbage collector paused, what it built frozen after, as pi's
    own loader does (:mod:`inspector.gcpause`: each automatic collection walks everything built so
    far; a 50,000-line Claude Code transcript imported in 2.27 s with it running, 1.36 s paused)."""
    with gc_paused(freeze=True):
        return mod.parse(data, source)


def _sqlite_message(p: Path) -> str:
    from .discover import is_opencode_db

    if is_opencode_db(p):
        return (
            f"{p} is OpenCode's database, not a session file: write one of its sessions with "
            f"`inspector sessions --opencode-db {p} SESSION_ID -o session.json` (list them with "
            "`inspector sessions --agent opencode`)"
        )
    return f"{p} is an SQLite file, but not an OpenCode database (no `session`/`message` tables)"


def load_any(path: str | os.PathLike[str]) -> Session:
    """Load a session file of any recognised format. Only a regular file is opened (a FIFO,
    device or directory is a :class:`SessionLoadError` at once, never a read that blocks)."""
    from ..session.loader import DEFAULT_MAX_FILE_BYTES, _env_int

    p = Path(path)
    try:
        with open_regular(p) as f:
            head = f.read(HEAD_BYTES)
            if head.startswith(SQLITE_MAGIC):
                raise SessionLoadError(_sqlite_message(p))
            foreign = foreign_file(str(p), head)
            if foreign is not None:
                raise SessionLoadError(foreign[1])
            _, mod = _detect(head)
            if mod is None:
                return _unrecognised(load_session(p))
            limit = _env_int("INSPECTOR_MAX_BYTES", DEFAULT_MAX_FILE_BYTES)
            size = os.fstat(f.fileno()).st_size
            if size > limit:
                raise SessionLoadError(
                    f"{p} is {size:,} bytes, over the limit of {limit:,} bytes "
                    "(set INSPECTOR_MAX_BYTES to raise it)"
                )
            data = head + f.read()
    except OSError as e:
        raise SessionLoadError(f"cannot read {p}: {e.strerror or e}") from e
    return _imported(_parse(mod, data, str(p)), mod)
