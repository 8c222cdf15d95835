"""Parsing one very long JSON line (a 100 MB tool output, say) without holding it twice.

A JSON parser holds the line's bytes, its own working copy and the result at the same time: three
times the line. For a line over :data:`THRESHOLD` bytes, the long string literals are decoded
here instead, in 1 MiB pieces, while the line's bytes are still there; the rest of the line (with
a placeholder for each of them) is parsed as usual; then the line is released and the pieces are
joined into the final strings. At most two copies of the line exist at any moment.

The result is exactly ``json.loads(line)``; on anything unusual (an invalid escape, invalid UTF-8,
a control character) :func:`parse_big_line` returns None and the caller parses the line the
ordinary way, which reports it as it always does.
"""

from __future__ import annotations

import json
import re
import secrets
from typing import Any

THRESHOLD = 16 << 20
PIECE = 1 << 20
MIN_LITERAL = 1 << 20
_HIGH_SURROGATE_TAIL = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}$")


def _string_spans(buf: bytearray | bytes) -> list[tuple[int, int]] | None:
    """(start, end) of the content of each string literal of at least MIN_LITERAL bytes."""
    out: list[tuple[int, int]] = []
    find = buf.find
    i = find(b'"')
    while i >= 0:
        j = i + 1
        while True:  # the closing quote: one not preceded by an odd run of backslashes
            j = find(b'"', j)
            if j < 0:
                return None
            k = j
            while buf[k - 1] == 0x5C:  # backslash
                k -= 1
            if (j - k) % 2 == 0:
                break
            j += 1
        if j - i - 1 >= MIN_LITERAL:
            out.append((i + 1, j))
        i = find(b'"', j + 1)
    return out


def _cut(buf: bytearray | bytes, start: int, end: int) -> int:
    """A place at or before ``end`` (after ``start``) that splits no escape, no UTF-8 sequence
    and no surrogate pair (ValueError if there is none)."""
    e = end
    while e > start + 16:
        if buf[e] & 0xC0 == 0x80:  # inside a UTF-8 sequence
            e -= 1
            continue
        k = e
        while buf[k - 1] == 0x5C:
            k -= 1
        window = bytes(buf[max(start, e - 12) : e])
        if (e - k) % 2 == 0 and b"\\u" not in window[-5:] and not _HIGH_SURROGATE_TAIL.search(window):
            return e
        e -= 1
    raise ValueError("no place to cut")  # the caller parses the line the ordinary way


def _decode(buf: bytearray | bytes, start: int, end: int) -> list[str]:
    parts: list[str] = []
    pos = start
    while pos < end:
        cut = end if end - pos <= PIECE else _cut(buf, pos, pos + PIECE)
        parts.append(json.loads(b'"' + bytes(buf[pos:cut]) + b'"'))
        pos = cut
    return parts


def _places(value: Any, keys: dict[str, list[str]]) -> list[tuple[Any, Any]] | None:
    """(container, index) of every placeholder, found iteratively (nesting can be deep); None
    unless each placeholder is a value exactly once (a placeholder as a key: not handled here)."""
    out: list[tuple[Any, Any]] = []
    stack = [value]
    while stack:
        node = stack.pop()
        for k, v in node.items() if isinstance(node, dict) else enumerate(node):
            if isinstance(v, str) and v in keys:
                out.append((node, k))
            elif isinstance(v, (dict, list)):
                stack.append(v)
    return out if len(out) == len(keys) else None


def parse_big_line(buf: bytearray, loads: Any) -> Any:
    """``json.loads(buf)`` for a line over THRESHOLD bytes, or None to parse it the ordinary
    way. ``buf`` is emptied (its memory released) when the line was parsed here."""
    spans = _string_spans(buf)
    if not spans:
        return None
    nonce = secrets.token_hex(8)
    strings: dict[str, list[str]] = {}
    skeleton: list[bytes] = []
    pos = 0
    try:
        for n, (a, b) in enumerate(spans):
            key = f"\x00big-{nonce}-{n}"
            strings[key] = _decode(buf, a, b)
            skeleton += (bytes(buf[pos:a]), key.encode().replace(b"\x00", b"\\u0000"))
            pos = b
        skeleton.append(bytes(buf[pos:]))
        value = loads(b"".join(skeleton))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    places = _places(value, strings) if isinstance(value, (dict, list)) else None
    if places is None:
        return None
    del buf[:]  # the line's bytes go before the strings are joined
    for node, k in places:
        node[k] = "".join(strings.pop(node[k]))
    return value
