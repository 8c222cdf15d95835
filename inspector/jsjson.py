"""JavaScript's view of strings and JSON, reproduced in Python.

pi measures and prints text with JavaScript semantics, and our numbers must equal pi's:

* ``String.length`` counts **UTF-16 code units**: an astral character (emoji, some CJK) is 2.
* ``JSON.stringify`` prints compactly, keeps the key order of the parsed object, except that
  array-index keys ("0", "7", ...) come first in ascending order (JS property order); prints
  numbers the JS way (``1.0`` → ``1``, ``1e21`` → ``1e+21``, ``1e-7`` → ``1e-7``, integers beyond
  2^53 lose precision as doubles); leaves non-ASCII characters unescaped; escapes lone
  surrogates as ``\\udxxx``.
* ``Array.prototype.sort()`` with no comparator orders strings by UTF-16 code units.
* ``String.prototype.slice`` cuts at UTF-16 code units and may split a surrogate pair.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
_ARRAY_INDEX = re.compile(r"^(?:0|[1-9][0-9]*)$")
_MAX_SAFE = 2**53
_MAX_ARRAY_INDEX = 2**32 - 2


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_CHUNK = 1 << 20


def utf16_len(s: str) -> int:
    """``s.length`` in JavaScript: code points plus one per astral character (a surrogate pair),
    counted without copying a large string whole."""
    if s.isascii():
        return len(s)
    if len(s) <= _CHUNK:
        return len(s.encode("utf-16-le", "surrogatepass")) // 2
    return len(s) + sum(len(_ASTRAL.findall(s, i, i + _CHUNK)) for i in range(0, len(s), _CHUNK))


def utf16_slice(s: str, end: int) -> str:
    """``s.slice(0, end)`` in JavaScript (may leave a lone high surrogate, as JS does)."""
    if s.isascii():
        return s[:end]
    return s.encode("utf-16-le", "surrogatepass")[: 2 * end].decode("utf-16-le", "surrogatepass")


def js_sort_key(s: str) -> bytes:
    """Sort key equal to JavaScript's default string order (UTF-16 code units)."""
    return s.encode("utf-16-be", "surrogatepass")


def js_sorted(items: Any) -> list[str]:
    return sorted(items, key=js_sort_key)


def utf8_bytes(s: str) -> bytes:
    """Bytes Node's ``Buffer.from(s, "utf8")`` gives: lone surrogates become U+FFFD."""
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", s).encode("utf-8")


def js_number(x: int | float) -> str:
    """``JSON.stringify(x)`` for a number."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        if -_MAX_SAFE < x < _MAX_SAFE:
            return str(x)
        try:
            x = float(x)
        except OverflowError:
            return "null"
    if math.isnan(x) or math.isinf(x):
        return "null"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    mantissa, _, exp_s = repr(abs(x)).partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    digits = int_part + frac_part
    point = len(int_part) + (int(exp_s) if exp_s else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    s = stripped.rstrip("0") or "0"
    k, n = len(s), point
    if k <= n <= 21:
        out = s + "0" * (n - k)
    elif 0 < n <= 21:
        out = s[:n] + "." + s[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + s
    else:
        e = n - 1
        es = ("+" if e > 0 else "-") + str(abs(e))
        out = (s if k == 1 else s[0] + "." + s[1:]) + "e" + es
    return sign + out


def js_string(v: Any) -> str:
    """``String(v)`` for a JSON value (what JavaScript's sort and join make of a non-string)."""
    if isinstance(v, str):
        return v
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        text = js_number(v)  # JSON.stringify writes null where String() writes Infinity or NaN
        return text if text != "null" else ("NaN" if v != v else "Infinity" if v > 0 else "-Infinity")
    if isinstance(v, list):
        return ",".join("" if x is None else js_string(x) for x in v)
    return "[object Object]"


def _js_string(s: str) -> str:
    out = json.dumps(s, ensure_ascii=False)
    if _SURROGATE.search(out):
        out = _SURROGATE.sub(lambda m: "\\u%04x" % ord(m.group()), out)
    return out


def js_keys(obj: dict[str, Any]) -> list[str]:
    """Own-property order of a JS object parsed from JSON: array indexes first, ascending."""
    keys = list(obj)
    idx = [k for k in keys if _ARRAY_INDEX.match(k) and int(k) <= _MAX_ARRAY_INDEX]
    if not idx:
        return keys
    rest = [k for k in keys if k not in set(idx)]
    return sorted(idx, key=int) + rest


def js_stringify(v: Any) -> str:
    """``JSON.stringify(v)`` for a value parsed from JSON (no indentation).

    Recursive for speed; a value nested deeper than Python's recursion limit (tool arguments
    thousands of levels deep — V8 handles them) goes through :func:`_stringify_deep` instead."""
    try:
        return _stringify(v)
    except RecursionError:
        return _stringify_deep(v)


def _stringify(v: Any) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str):
        return _js_string(v)
    if isinstance(v, (int, float)):
        return js_number(v)
    if isinstance(v, dict):
        return "{" + ",".join(_js_string(str(k)) + ":" + _stringify(v[k]) for k in js_keys(v)) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_stringify(x) for x in v) + "]"
    # A pydantic model or other object: stringify what it dumps to.
    dump = getattr(v, "model_dump", None)
    if dump is not None:
        return _stringify(dump(mode="json", exclude_unset=True, by_alias=True))
    return "null"


def _stringify_deep(v: Any) -> str:
    """The same output as :func:`_stringify`, with an explicit stack instead of recursion."""
    out: list[str] = []
    work: list[tuple[bool, Any]] = [(False, v)]  # (is literal text, payload)
    while work:
        literal, x = work.pop()
        if literal:
            out.append(x)
        elif isinstance(x, dict):
            keys = js_keys(x)
            work.append((True, "}"))
            for i in range(len(keys) - 1, -1, -1):
                work.append((False, x[keys[i]]))
                work.append((True, ("," if i else "") + _js_string(str(keys[i])) + ":"))
            out.append("{")
        elif isinstance(x, (list, tuple)):
            work.append((True, "]"))
            for i in range(len(x) - 1, -1, -1):
                work.append((False, x[i]))
                if i:
                    work.append((True, ","))
            out.append("[")
        elif x is None or x is True or x is False or isinstance(x, (str, int, float)):
            out.append(_stringify(x))
        else:
            dump = getattr(x, "model_dump", None)
            if dump is None:
                out.append("null")
            else:
                work.append((False, dump(mode="json", exclude_unset=True, by_alias=True)))
    return "".join(out)


def js_stringify_indent(v: Any, indent: int = 1) -> str:
    """``JSON.stringify(v, null, indent)``: numbers, key order and escapes as V8 prints them."""
    try:
        return _pretty(v, " " * indent, "")
    except RecursionError:
        from .deep import deep_call

        return deep_call(_pretty, v, " " * indent, "")


def _pretty(v: Any, ind: str, cur: str) -> str:
    if isinstance(v, dict):
        if not v:
            return "{}"
        inner = cur + ind
        return (
            "{\n"
            + ",\n".join(inner + _js_string(str(k)) + ": " + _pretty(v[k], ind, inner) for k in js_keys(v))
            + "\n"
            + cur
            + "}"
        )
    if isinstance(v, (list, tuple)):
        if not v:
            return "[]"
        inner = cur + ind
        return "[\n" + ",\n".join(inner + _pretty(x, ind, inner) for x in v) + "\n" + cur + "]"
    return _stringify(v)


def js_stringify_len(v: Any) -> int:
    """``JSON.stringify(v).length`` (0 for ``undefined``-like input is not reachable from JSON)."""
    return utf16_len(js_stringify(v))


_SURROGATE_ESCAPE = re.compile(rb"(?<!\\)(?:\\\\)*\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_LOW_ESCAPE = re.compile(rb"\\u[dD][c-fC-F][0-9a-fA-F]{2}")


def replace_lone_surrogate_escapes(data: bytes) -> tuple[bytes, list[int]]:
    """JSON text with every lone UTF-16 surrogate escape (``\\udc00`` not part of a pair) replaced
    by ``\\ufffd``, and the 1-based numbers of the lines that had one. JavaScript strings may hold
    lone surrogates (pi counts them), but no UTF-8 text can: a browser page cannot show them."""
    if b"\\u" not in data:
        return data, []
    out: list[bytes] = []
    lines: list[int] = []
    pos = line_pos = 0
    line = 1
    m = _SURROGATE_ESCAPE.search(data)
    while m is not None:
        esc = m.end() - 6  # the \uXXXX at the end of the match (escaped backslashes before it kept)
        if data[esc + 2 : esc + 4].lower() in (b"d8", b"d9", b"da", b"db") and _LOW_ESCAPE.match(
            data, m.end()
        ):
            m = _SURROGATE_ESCAPE.search(data, m.end() + 6)  # a proper pair
            continue
        line += data.count(b"\n", line_pos, esc)
        line_pos = esc
        if not lines or lines[-1] != line:
            lines.append(line)
        out += (data[pos:esc], b"\\ufffd")
        pos = m.end()
        m = _SURROGATE_ESCAPE.search(data, pos)
    return (b"".join((*out, data[pos:])) if out else data), lines
