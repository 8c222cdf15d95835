"""Background work that gives way while a page is being drawn.

The app warms caches in background threads after loading a session (the offline summarizer's
per-message facts, token counts). Python runs one thread at a time, so a rerun of the page that
starts meanwhile shares the interpreter with them and takes about twice as long (measured: a step
slider move on a 50k-entry session, 170 ms of work, took 500 ms while the facts were read). The
app marks each rerun :func:`busy`; background loops call :func:`give_way` between chunks and wait
while one runs (up to a limit, so a stream of reruns cannot starve them for good).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()
_IDLE = threading.Event()
_IDLE.set()
_BUSY = [0]


@contextmanager
def busy() -> Iterator[None]:
    """Mark foreground work (a rerun of the app's script) for its duration; nests and counts
    concurrent reruns (each browser session has its own thread)."""
    with _LOCK:
        _BUSY[0] += 1
        _IDLE.clear()
    try:
        yield
    finally:
        with _LOCK:
            _BUSY[0] -= 1
            if _BUSY[0] == 0:
                _IDLE.set()


def give_way(limit: float = 5.0) -> bool:
    """Wait while foreground work runs, at most ``limit`` seconds; whether it is idle now."""
    return _IDLE.wait(limit)
