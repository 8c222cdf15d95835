"""Terminal-safe text: control and escape characters from a session shown, never obeyed.

A session file can hold any character: an ``ESC ]0;`` title change, ``ESC [2J`` (clear the
screen), a hidden OSC-8 hyperlink, a carriage return that overwrites the line, bidirectional
overrides that reorder what is shown, lone surrogates a terminal cannot even encode. Every string
the CLI prints goes through :func:`visible`: C0 and C1 control characters, DEL, the bidi
controls and lone surrogates become ``\\uXXXX`` (readable, and the same JSON value inside a JSON
string). :class:`VisibleStream` applies it to everything a command writes (``inspector.cli``
installs it on stdout and stderr); fields printed inline (names, paths, ids, labels) call
:func:`visible` with ``inline=True`` so that newlines and tabs show too; a long one is cut by
:func:`clip`, which says that it was.
"""

from __future__ import annotations

import re
from typing import Any, TextIO

_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_UNSAFE = re.compile(f"[{_CONTROLS}]")
_UNSAFE_INLINE = re.compile(f"[{_CONTROLS}\t\n]")


def _escape(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


def visible(text: Any, *, inline: bool = False) -> str:
    """``text`` (any value, as ``str``) with unsafe characters shown as ``\\uXXXX``; with
    ``inline``, newlines and tabs too (for one field on one line)."""
    s = text if isinstance(text, str) else str(text)
    return (_UNSAFE_INLINE if inline else _UNSAFE).sub(_escape, s)


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, its last one an ellipsis where it was cut (a field a
    session may fill with anything: a path, a model's name, an error line)."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


class VisibleStream:
    """A text stream that passes everything written through :func:`visible` (lines kept)."""

    def __init__(self, raw: TextIO) -> None:
        self._raw = raw

    def write(self, s: str) -> int:
        self._raw.write(visible(s))
        return len(s)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        if name == "buffer":  # bytes would bypass the escaping: writers fall back to text
            raise AttributeError(name)
        return getattr(self._raw, name)
