"""Running a recursive function on data nested deeper than Python's recursion limit.

A session line may nest JSON thousands of levels deep (pi's ``JSON.parse`` and
``JSON.stringify`` have no fixed depth limit). Functions that walk such data recursively retry
through :func:`deep_call`: the same function on a thread with a large stack and a raised
recursion limit, up to :data:`MAX_DEPTH` levels. Deeper data raises :class:`TooDeep`.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

#: nesting handled by :func:`deep_call` (each level costs a few Python frames)
MAX_DEPTH = 100_000
_STACK_BYTES = 1024 * 1024 * 1024  # reserved, not committed: only touched pages use memory
_LOCK = threading.Lock()


class TooDeep(ValueError):
    """Data nested deeper than :data:`MAX_DEPTH` levels."""


def deep_call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` with room for ~:data:`MAX_DEPTH` levels of recursion."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["v"] = fn(*args, **kwargs)
        except BaseException as e:  # noqa: BLE001 - handed back to the caller's thread
            box["e"] = e

    with _LOCK:  # the recursion limit is process-wide
        old_limit, old_stack = sys.getrecursionlimit(), threading.stack_size()
        try:
            sys.setrecursionlimit(max(old_limit, 4 * MAX_DEPTH))
            threading.stack_size(_STACK_BYTES)
            t = threading.Thread(target=run, name="inspector-deep")
            t.start()
            t.join()
        finally:
            threading.stack_size(old_stack)
            sys.setrecursionlimit(old_limit)
    if "e" in box:
        e = box["e"]
        if isinstance(e, RecursionError):
            raise TooDeep(f"nested more than about {MAX_DEPTH:,} levels deep") from None
        raise e
    return box["v"]
