"""Read a pi session file (JSONL, versions 1–3) the way pi does, and say what was wrong with it.

Follows ``loadEntriesFromFile`` and the migrations in pi's ``session-manager``:

* The file is decoded as UTF-8 (invalid bytes become U+FFFD, as Node's decoder does), split on
  ``\\n``; blank lines are skipped; a line that is not JSON is skipped. pi does this silently;
  we report each such line with its number and keep everything else.
* The first JSON value must be the header ``{"type": "session", "id": <string>}``. pi treats a
  file without one as empty (and would start a new session over it); we report
  "not a pi session" and still keep the entries we can read.
* Every other object whose ``type`` is not ``"session"`` is an entry, in file order
  (``getEntries``). A second header line is ignored, as in pi.
* Migration when ``header.version ?? 1`` is below 3 — v1→v2: each entry gets an id and the
  previous entry as parent (one linear chain), and a compaction's ``firstKeptEntryIndex``
  (an index into the parsed lines, header included) becomes ``firstKeptEntryId``; v2→v3: message
  role ``hookMessage`` becomes ``custom``. pi draws the new ids at random; we number them
  ``00000001``, ``00000002``, … in file order (hex, 8 digits), exactly what pi's own migration
  assigns under the oracle's ``--deterministic-ids``, so every load gives the same ids.

The input file is only ever opened for reading.
"""

from __future__ import annotations

import dataclasses
import json
import os
from array import array
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import orjson
from pydantic import TypeAdapter, ValidationError

from ..gcpause import gc_paused
from ..safeio import open_regular
from .bigline import THRESHOLD as BIG_LINE
from .bigline import parse_big_line
from .compact import Compactor
from .compact import skeleton as skeleton_entry
from .foreign import foreign_format, foreign_issues
from .models import Entry, OpaqueEntry, SessionHeader
from .ranges import number_issues
from .tree import LoadIssue, Session

CURRENT_SESSION_VERSION = 3
DEFAULT_MAX_FILE_BYTES = 2 * 1024**3
DEFAULT_MAX_LINE_BYTES = 256 * 1024**2
_ENTRY_ADAPTER: TypeAdapter[Any] = TypeAdapter(Entry)
_MAX_LISTED = 20  # blank lines etc. are listed individually up to this many, then counted


class SessionLoadError(Exception):
    """The input cannot be read at all (missing file, too large)."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _parse_json(line: bytes | str) -> Any:
    """JSON.parse: orjson first (fast); Python's parser for what orjson refuses but JS accepts
    (lone surrogate escapes, integers beyond 64 bits). NaN/Infinity stay invalid, as in JS."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError as first:
        try:
            return json.loads(line, parse_constant=_reject_constant)
        except RecursionError:
            return _parse_deep(line, first)
        except ValueError:
            raise first from None


def _parse_deep(line: bytes | str, first: Exception) -> Any:
    """A line nested deeper than orjson (1024) and Python's parser go by default: pi reads it,
    so we parse it again with room to recurse (:mod:`inspector.deep`)."""
    from ..deep import TooDeep, deep_call

    try:
        return deep_call(json.loads, line, parse_constant=_reject_constant)
    except TooDeep as e:
        raise ValueError(str(e)) from None
    except ValueError:
        raise first from None


def _describe(value: Any, raw: str) -> str:
    if isinstance(value, dict):
        t = value.get("type")
        return f"a JSON object with type {t!r}" if t is not None else "a JSON object without a 'type'"
    snippet = raw.strip()[:60]
    return f"not a JSON object ({type(value).__name__}: {snippet!r})"


def _ms_hint(e: Exception) -> str:
    msg = str(e).split("\n")[0]
    return msg[:200]


def _env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


def load_session(
    path: str | os.PathLike[str],
    *,
    max_bytes: int | None = None,
    max_line_bytes: int | None = None,
) -> Session:
    """Load a pi session file, streaming it line by line. Never writes to it.

    Raises :class:`SessionLoadError` only when the file cannot be read at all (missing,
    unreadable, a directory, over ``max_bytes``); everything else becomes a :class:`LoadIssue`
    on the result. Limits default to ``$INSPECTOR_MAX_BYTES`` / ``$INSPECTOR_MAX_LINE_BYTES``
    or 2 GiB / 256 MiB.
    """
    max_bytes, max_line_bytes = _limits(max_bytes, max_line_bytes)
    p = Path(path)
    try:
        with _open_checked(p, max_bytes) as f:
            return _parse_lines(_read_lines(f, max_line_bytes), source=str(p), max_line_bytes=max_line_bytes)
    except OSError as e:
        raise SessionLoadError(f"cannot read {p}: {e.strerror or e}") from e


def load_skeleton(
    path: str | os.PathLike[str],
    *,
    max_bytes: int | None = None,
    max_line_bytes: int | None = None,
    visit: Callable[[Any], None] | None = None,
    timestamps: bool = True,
) -> Session | None:
    """:func:`load_session` of a pi v3 file, each message entry kept as a skeleton (no message:
    :func:`inspector.session.compact.skeleton`): the tree, the entries' kinds, every other entry
    and all the load issues, in a fraction of the memory. For a caller that then reads the
    messages it needs with :func:`stream_session` (``inspector info`` on a large file). None for
    a file that is no pi v3 session (load it instead). Never give it where a session's messages
    are read. ``visit`` sees each entry whole, in file order, before it loses its message (what a
    caller gathers from the messages in the same read: :mod:`inspector.replay.streamed`);
    ``timestamps=False`` leaves out the message entries' timestamps too (~70 bytes an entry, for a
    caller that reads them from its own second read)."""
    max_bytes, max_line_bytes = _limits(max_bytes, max_line_bytes)
    p = Path(path)
    try:
        with _open_checked(p, max_bytes) as f:
            s = _parse_lines(
                _read_lines(f, max_line_bytes),
                source=str(p),
                max_line_bytes=max_line_bytes,
                skeleton=partial(skeleton_entry, timestamp=timestamps),
                visit=visit,
            )
    except OSError as e:
        raise SessionLoadError(f"cannot read {p}: {e.strerror or e}") from e
    return None if s.header is None or s.migrated else s


def _limits(max_bytes: int | None, max_line_bytes: int | None) -> tuple[int, int]:
    if max_bytes is None:
        max_bytes = _env_int("INSPECTOR_MAX_BYTES", DEFAULT_MAX_FILE_BYTES)
    if max_line_bytes is None:
        max_line_bytes = _env_int("INSPECTOR_MAX_LINE_BYTES", DEFAULT_MAX_LINE_BYTES)
    return max_bytes, max_line_bytes


@contextmanager
def _open_checked(p: Path, max_bytes: int) -> Iterator[Any]:
    with open_regular(p) as f:  # a FIFO or device is refused, never read (it could block)
        size = os.fstat(f.fileno()).st_size
        if size > max_bytes:
            raise SessionLoadError(
                f"{p} is {size:,} bytes, over the limit of {max_bytes:,} bytes "
                "(set INSPECTOR_MAX_BYTES to raise it)"
            )
        yield f


@dataclasses.dataclass(frozen=True)
class SessionStream:
    """A v3 pi session file read one entry at a time (:func:`stream_session`)."""

    header: SessionHeader
    entries: Generator[Any, None, None]
    """The entries in file order, each validated as :func:`load_session` validates it (an entry
    that fails validation is an :class:`OpaqueEntry`), straight from validation (not compacted:
    each is meant to be used once and dropped). The file is closed when it ends or is closed."""


def stream_session(
    path: str | os.PathLike[str], *, max_bytes: int | None = None, max_line_bytes: int | None = None
) -> SessionStream | None:
    """A pi v3 session file's header, and its entries as an iterator that holds one at a time:
    what :func:`load_session` would keep, for a caller that needs each entry once (the session
    export). None when the file is not one (an older version is migrated as a whole; a file whose
    first object is no session header is no pi session): load it instead. Line handling, limits
    and errors are :func:`load_session`'s; the load issues are not collected."""
    max_bytes, max_line_bytes = _limits(max_bytes, max_line_bytes)
    p = Path(path)
    with ExitStack() as stack:  # the file stays open only when the entries are handed on
        try:
            f = stack.enter_context(_open_checked(p, max_bytes))
            objs = _Objects(max_line_bytes).scan(_read_lines(f, max_line_bytes))
            first = next(objs, None)
        except OSError as e:
            raise SessionLoadError(f"cannot read {p}: {e.strerror or e}") from e
        header, _, v3 = _read_header(first[1], first[0], []) if first is not None else (None, None, False)
        if header is None or not v3:
            return None
        return SessionStream(header, _streamed_entries(objs, stack.pop_all(), p))


def _streamed_entries(
    objs: Iterator[tuple[int, dict[str, Any]]], opened: ExitStack, p: Path
) -> Generator[Any, None, None]:
    issues: list[LoadIssue] = []  # not reported (the export does not show them); kept short
    k = 0
    try:
        for n, value in objs:
            if value.get("type") == "session":
                continue  # a second header: ignored, as pi does
            yield _to_entry(value, n, k, issues)
            issues.clear()
            k += 1
    except OSError as e:
        raise SessionLoadError(f"cannot read {p}: {e.strerror or e}") from e
    finally:
        opened.close()


_READ_BYTES = 1 << 23


class _LongLine:
    """A line over the limit, read and dropped: only its length is kept."""

    def __init__(self, length: int) -> None:
        self.length = length

    def __len__(self) -> int:
        return self.length


def _read_lines(f: Any, max_line_bytes: int) -> Iterator[bytes | bytearray | _LongLine]:
    """The file's lines. A long line grows in one buffer (no second copy of it is made), and a
    line over ``max_line_bytes`` is read past and dropped (only its length is kept)."""
    readline = f.readline
    while True:
        b = readline(_READ_BYTES)
        if len(b) < _READ_BYTES or b.endswith(b"\n"):
            if not b:
                return
            yield b
            continue
        buf: bytearray | None = bytearray(b)
        length = len(b)
        while True:
            more = readline(_READ_BYTES)
            length += len(more)
            if buf is not None and length <= max_line_bytes + 2:
                buf += more
            else:
                buf = None
            if not more or more.endswith(b"\n"):
                break
        box: list[bytearray | _LongLine] = [buf if buf is not None else _LongLine(length)]
        buf = None  # no reference to a long line stays here while the caller uses it
        yield box.pop()


def parse_session(
    data: bytes | str, *, source: str | None = None, max_line_bytes: int | None = None
) -> Session:
    """Parse session text (bytes or str) into a :class:`Session`. Never raises on bad input."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    lines = data.splitlines(keepends=True) if b"\r" not in data else _split_keep_lf(data)
    return _parse_lines(lines, source=source, max_line_bytes=max_line_bytes or DEFAULT_MAX_LINE_BYTES)


def _split_keep_lf(data: bytes) -> list[bytes]:
    # bytes.splitlines also splits on a lone \r; pi splits on \n only.
    parts = data.split(b"\n")
    out = [x + b"\n" for x in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def _parse_lines(
    raw_lines: Iterable[bytes | bytearray | _LongLine],
    *,
    source: str | None,
    max_line_bytes: int,
    skeleton: Callable[[Any], Any] | None = None,
    visit: Callable[[Any], None] | None = None,
) -> Session:
    with gc_paused(freeze=True):
        return _parse_lines_inner(
            raw_lines, source=source, max_line_bytes=max_line_bytes, skeleton=skeleton, visit=visit
        )


_SKIP = object()
_UNSET = object()


def _read_header(
    obj: dict[str, Any], line: int, issues: list[LoadIssue]
) -> tuple[SessionHeader | None, int | None, bool]:
    """(header, version, stream) from the first JSON object of the file."""
    if not (obj.get("type") == "session" and isinstance(obj.get("id"), str)):
        issues.append(
            LoadIssue(
                "not-a-session",
                "error",
                f"not a pi session: line {line} is {_describe(obj, '')}, not a session header "
                '{"type": "session", "id": ...}; pi would treat this file as empty. '
                "Entries that look like pi entries are kept below.",
                line=line,
            )
        )
        return None, None, True
    try:
        header = SessionHeader.model_validate(obj)
    except ValidationError as e:
        issues.append(LoadIssue("invalid-header", "warning", f"header fields: {_ms_hint(e)}", line=line))
        bad = {str(err["loc"][0]) for err in e.errors() if err.get("loc")}
        header = SessionHeader.model_validate({k: v for k, v in obj.items() if k not in bad})
    v = obj.get("version", 1)
    ok = isinstance(v, int) and not isinstance(v, bool)
    if not ok:
        issues.append(LoadIssue("bad-version", "warning", f"header version {v!r} read as 1", line=line))
    version = v if ok else 1
    return header, version, version >= CURRENT_SESSION_VERSION


def _to_entry(o: dict[str, Any], line: int, idx: int, issues: list[LoadIssue]) -> Any:
    try:
        return _ENTRY_ADAPTER.validate_python(o)
    except ValidationError as err:
        issues.append(
            LoadIssue(
                "invalid-entry",
                "warning",
                f"{o.get('type')!r} entry does not match pi's format ({_first_error(err)}); kept as an opaque entry",
                line=line,
                entry_index=idx,
            )
        )
        return OpaqueEntry.model_validate(o)


def _slow_line(b: bytes | bytearray, n: int, issues: list[LoadIssue], blank: list[int]) -> Any:
    """A line orjson refused: blank, CR-only ending, invalid UTF-8, JS-only JSON, or broken."""
    has_newline = b.endswith(b"\n")
    if has_newline:
        b = b[:-1]
    if b.endswith(b"\r"):
        b = b[:-1]
    if not b.strip():
        blank.append(n)
        return _SKIP
    try:
        text = b.decode("utf-8")
    except UnicodeDecodeError as e:
        text = b.decode("utf-8", "replace")
        issues.append(
            LoadIssue(
                "invalid-utf8",
                "warning",
                f"invalid UTF-8 at byte {e.start} of the line; read with U+FFFD as pi does",
                line=n,
            )
        )
    try:
        return _parse_json(text)
    except (ValueError, RecursionError) as e:
        if not has_newline:  # only the last line can lack its newline
            issues.append(
                LoadIssue(
                    "truncated-line",
                    "error",
                    "the last line is cut off mid-JSON (was the file being written, or did a "
                    f"write crash?); skipped ({_ms_hint(e)})",
                    line=n,
                )
            )
        else:
            issues.append(
                LoadIssue("malformed-json", "error", f"not valid JSON, skipped: {_ms_hint(e)}", line=n)
            )
        return _SKIP


class _Objects:
    """The JSON objects of a file's lines, in order, with what was wrong with the other lines.

    One pass over the lines (:meth:`scan`); the issues found so far are in ``issues``, and
    :meth:`finish` adds the per-file notes (CRLF endings, blank lines) once the lines are read.
    Both the full load and the streaming export (:func:`stream_session`) read lines through it."""

    def __init__(self, max_line_bytes: int) -> None:
        self.max_line_bytes = max_line_bytes
        self.issues: list[LoadIssue] = []
        self.blank: list[int] = []
        self.crlf = 0
        self.seen_any = False

    def scan(
        self, raw_lines: Iterable[bytes | bytearray | _LongLine]
    ) -> Iterator[tuple[int, dict[str, Any]]]:
        """(line number, object) for each line holding a JSON object."""
        issues, max_line_bytes = self.issues, self.max_line_bytes
        loads = orjson.loads
        for n, b in enumerate(raw_lines, start=1):
            self.seen_any = True
            if (
                isinstance(b, _LongLine) or len(b) > max_line_bytes + 2
            ):  # a _LongLine is always over the limit
                issues.append(
                    LoadIssue(
                        "line-too-long",
                        "error",
                        f"line is {len(b):,} bytes, over the limit of {max_line_bytes:,} "
                        "(set INSPECTOR_MAX_LINE_BYTES to raise it); skipped",
                        line=n,
                    )
                )
                continue
            if n == 1 and b.startswith(b"\xef\xbb\xbf"):
                b = b[3:]
                issues.append(LoadIssue("bom", "info", "byte-order mark at the start ignored", line=1))
            try:
                value = _UNSET
                if len(b) > BIG_LINE and type(b) is bytearray:  # long strings decoded piecewise (bigline.py)
                    value = parse_big_line(b, loads)
                if value is None or value is _UNSET:
                    value = loads(b)  # fast path: valid UTF-8 and JSON (a trailing \r\n is JSON whitespace)
            except orjson.JSONDecodeError:
                value = _slow_line(b, n, issues, self.blank)
                if value is _SKIP:
                    continue
            if b.endswith(b"\r\n") or b.endswith(b"\r"):
                self.crlf += 1
            if type(value) is not dict:
                issues.append(
                    LoadIssue(
                        "not-an-object",
                        "error",
                        f"skipped: {_describe(value, b.decode('utf-8', 'replace'))}",
                        line=n,
                    )
                )
                continue
            del b  # hold no reference to the line while its object is used
            yield n, value

    def finish(self) -> None:
        """The per-file notes, once every line is read."""
        blank = self.blank
        if self.crlf:
            self.issues.append(
                LoadIssue("crlf", "info", f"{self.crlf} line(s) end with CRLF; the CR is ignored")
            )
        if blank:
            listed = ", ".join(str(x) for x in blank[:_MAX_LISTED])
            more = f" and {len(blank) - _MAX_LISTED} more" if len(blank) > _MAX_LISTED else ""
            self.issues.append(
                LoadIssue(
                    "blank-lines",
                    "info",
                    f"{len(blank)} blank line(s) skipped: {listed}{more}",
                    line=blank[0],
                )
            )


def _extra_header(n: int) -> LoadIssue:
    return LoadIssue("extra-header", "warning", "a second session header, ignored (as pi does)", line=n)


def _parse_lines_inner(
    raw_lines: Iterable[bytes | bytearray | _LongLine],
    *,
    source: str | None,
    max_line_bytes: int,
    skeleton: Callable[[Any], Any] | None = None,
    visit: Callable[[Any], None] | None = None,
) -> Session:
    reader = _Objects(max_line_bytes)
    issues = reader.issues
    parsed: list[tuple[int, dict[str, Any]]] = []  # (line number, object) in file order
    first: tuple[int, dict[str, Any]] | None = None
    header: SessionHeader | None = None
    version: int | None = None
    stream = True  # v3 (or not a session): validate each line as it comes, keep no raw dicts
    entries: list[Any] = []
    lines = array("q")  # 8 bytes a line number, not an int object each
    compact = Compactor()  # each entry stored without per-model dicts, as soon as it is validated
    numbers: list[LoadIssue] | None = None
    if skeleton is not None:  # messages dropped: their out-of-range numbers are noted first
        compact, numbers = skeleton, []  # type: ignore[assignment]
    for n, value in reader.scan(raw_lines):
        if first is None:
            first = (n, value)
            header, version, stream = _read_header(value, n, issues)
            if header is not None:
                continue
        if stream:
            if value.get("type") == "session":
                issues.append(_extra_header(n))
                continue
            e = _to_entry(value, n, len(entries), issues)
            if visit is not None:
                visit(e)
            if numbers is not None:
                k = len(entries)
                numbers += [dataclasses.replace(i, entry_index=k) for i in number_issues((e,), (n,))]
            entries.append(compact(e))
            lines.append(n)
        else:
            parsed.append((n, value))
    reader.finish()

    if not reader.seen_any:
        issues.append(LoadIssue("empty-file", "error", "the file is empty: not a pi session"))
        return _build(None, [], [], issues, source, None, False)
    if first is None:
        if not any(i.kind in ("malformed-json", "truncated-line", "not-an-object") for i in issues):
            issues.append(LoadIssue("empty-file", "error", "the file has no entries: not a pi session"))
        else:
            issues.append(LoadIssue("not-a-session", "error", "not a pi session: no line is a JSON object"))
        return _build(None, [], [], issues, source, None, False)

    # -- migration (v1/v2: on plain dicts, before validation, exactly as pi mutates its objects) --
    migrated = False
    if not stream:
        migrated = True
        objs = [first[1], *(dict(o) for _, o in parsed)]  # migration edits them, as pi does
        if version is not None and version < 2:
            _migrate_v1_to_v2(objs, [first[0], *(ln for ln, _ in parsed)], issues)
        _migrate_v2_to_v3(objs)
        for o, (ln, _) in zip(objs[1:], parsed, strict=True):
            if o.get("type") == "session":
                issues.append(_extra_header(ln))
                continue
            entries.append(compact(_to_entry(o, ln, len(entries), issues)))
            lines.append(ln)
    if header is not None:
        issues.extend(_foreign_lines(entries, lines))
    return _build(header, entries, lines, issues, source, version, migrated, numbers=numbers)


def _foreign_lines(entries: list[Any], lines: Sequence[int]) -> list[LoadIssue]:
    """Other agents' lines in a pi file (kept as opaque entries, as pi keeps them), located."""
    found: list[tuple[int, str]] = []
    for e, n in zip(entries, lines, strict=True):
        if isinstance(e, OpaqueEntry):
            fmt = foreign_format(e.raw(), "pi")
            if fmt is not None:
                found.append((n, fmt))
    if not found:
        return []
    return [
        dataclasses.replace(
            i, message=i.message.replace("not imported", "kept as an opaque entry, as pi keeps it")
        )
        for i in foreign_issues(found, "pi session")
    ]


def _first_error(err: ValidationError) -> str:
    e = err.errors()[0]
    # pydantic's location mixes field names with union tags and type names; keep field names.
    noise = {"str", "int", "float", "bool", "dict", "function-after", "tagged-union"}
    loc = [str(x) for x in e.get("loc", ()) if str(x) not in noise and "[" not in str(x)]
    field = next((x for x in reversed(loc) if not x.isdigit()), "")
    return f"{field}: {e.get('msg')}" if field else str(e.get("msg"))


def _migrate_v1_to_v2(objs: list[dict[str, Any]], lines: list[int], issues: list[LoadIssue]) -> None:
    counter = 0
    prev: str | None = None
    for o in objs:
        if o.get("type") == "session":
            o["version"] = 2
            continue
        counter += 1
        o["id"] = f"{counter:08x}"
        o["parentId"] = prev
        prev = o["id"]
    # Second pass: pi assigns ids in the same loop, but the target of firstKeptEntryIndex is
    # always earlier in the file in practice; a forward reference would get the id the target
    # already had in pi's loop (none yet, or a stale v1 id). Resolve against the final ids
    # only for backward references, as pi effectively does.
    for k, o in enumerate(objs):
        if o.get("type") != "compaction" or "firstKeptEntryIndex" not in o:
            continue
        fk = o["firstKeptEntryIndex"]
        if isinstance(fk, (int, float)) and not isinstance(fk, bool):
            if float(fk).is_integer() and 0 <= int(fk) < len(objs) and int(fk) <= k:
                target = objs[int(fk)]
                if target.get("type") != "session":
                    o["firstKeptEntryId"] = target.get("id")
            else:
                issues.append(
                    LoadIssue(
                        "bad-first-kept",
                        "warning",
                        f"compaction's firstKeptEntryIndex {fk!r} points at no earlier entry",
                        line=lines[k],
                    )
                )
            del o["firstKeptEntryIndex"]


def _migrate_v2_to_v3(objs: list[dict[str, Any]]) -> None:
    for k, o in enumerate(objs):
        if o.get("type") == "session":
            o["version"] = 3
            continue
        if o.get("type") == "message":
            m = o.get("message")
            if isinstance(m, dict) and m.get("role") == "hookMessage":
                objs[k]["message"] = {**m, "role": "custom"}


def _build(
    header: SessionHeader | None,
    entries: list[Any],
    lines: Sequence[int],
    issues: list[LoadIssue],
    source: str | None,
    version: int | None,
    migrated: bool,
    *,
    numbers: list[LoadIssue] | None = None,
) -> Session:
    """The session of ``entries``: ids indexed, parents linked (pi's rules for duplicates and
    dangling links; cycles cut), issues sorted by line. ``numbers``: the out-of-range number
    issues, when they were found before the entries lost their messages (a skeleton load)."""
    by_id = _index_ids(entries, lines, issues)
    parents = _link_parents(entries, by_id, lines, issues)
    _cut_cycles(parents, lines, issues)
    issues.extend(number_issues(entries, lines) if numbers is None else numbers)
    issues.sort(key=lambda x: (x.line is None, x.line or 0))
    return Session(
        header=header,
        entries=tuple(entries),
        lines=lines if isinstance(lines, array) else array("q", lines),  # no int object per entry
        parents=tuple(parents),
        issues=tuple(issues),
        source=source,
        original_version=version,
        migrated=migrated,
        by_id=by_id,
    )


def _index_ids(entries: list[Any], lines: Sequence[int], issues: list[LoadIssue]) -> dict[str, int]:
    """Id → entry index; a missing id or a repeated one is an issue (pi's index keeps the last)."""
    by_id: dict[str, int] = {}
    first_seen: dict[str, int] = {}  # only ids that repeat (by_id still holds the first one then)
    for i, e in enumerate(entries):
        eid = e.id
        if not isinstance(eid, str):
            issues.append(
                LoadIssue(
                    "missing-id",
                    "warning",
                    "entry has no string id; nothing can point at it",
                    line=lines[i],
                    entry_index=i,
                )
            )
            continue
        if eid in by_id:
            j = first_seen.setdefault(eid, by_id[eid])
            issues.append(
                LoadIssue(
                    "duplicate-id",
                    "warning",
                    f"id {eid!r} repeats the entry on line {lines[j]}; links to it reach this later "
                    "entry (pi keeps the last one in its index)",
                    line=lines[i],
                    entry_index=i,
                )
            )
        by_id[eid] = i
    return by_id


def _link_parents(
    entries: list[Any], by_id: dict[str, int], lines: Sequence[int], issues: list[LoadIssue]
) -> list[int]:
    """Each entry's parent index (-1: a root); a parentId that points at no entry is an issue, and
    that entry starts its own tree."""
    parents: list[int] = []
    for i, e in enumerate(entries):
        pid = e.parentId
        if pid is None:
            parents.append(-1)
            continue
        p = by_id.get(pid) if isinstance(pid, str) else None
        if p is None:
            issues.append(
                LoadIssue(
                    "dangling-parent",
                    "warning",
                    f"parentId {pid!r} points at no entry; this entry starts its own tree (as in pi's /tree)",
                    line=lines[i],
                    entry_index=i,
                )
            )
            parents.append(-1)
        else:
            parents.append(p)
            if pid is not entries[p].id:  # one string object for an id and the links to it
                object.__setattr__(e, "parentId", entries[p].id)
    return parents


def _cut_cycles(parents: list[int], lines: Sequence[int], issues: list[LoadIssue]) -> None:
    """Break parentId cycles in place (pi would loop forever walking them): the link that closes
    each cycle is cut, and the cycle is an issue."""
    state = [0] * len(parents)  # 0 new, 1 on current walk, 2 done
    for start in range(len(parents)):
        if state[start]:
            continue
        walk = []
        i = start
        while i >= 0 and state[i] == 0:
            state[i] = 1
            walk.append(i)
            i = parents[i]
        if i >= 0 and state[i] == 1:  # closed a cycle at i; cut the link that closed it
            closer = walk[-1]
            cyc = walk[walk.index(i) :]
            parents[closer] = -1
            issues.append(
                LoadIssue(
                    "parent-cycle",
                    "error",
                    f"parentId links form a cycle of {len(cyc)} entr{'y' if len(cyc) == 1 else 'ies'} "
                    f"(lines {', '.join(str(lines[c]) for c in cyc[:8])}{'…' if len(cyc) > 8 else ''}); "
                    "pi would hang on it. The link from this entry was cut: it is shown as a root",
                    line=lines[closer],
                    entry_index=closer,
                )
            )
        for w in walk:
            state[w] = 2
