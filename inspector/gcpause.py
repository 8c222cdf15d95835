"""Pausing Python's cyclic garbage collector around bulk work.

Loading and replaying build hundreds of thousands of small acyclic objects; every automatic
collection walks all objects alive, so bulk building gets slower the more it has built
(measured: a 120 MB session loads 4× faster with the collector paused). Reference counting
still frees memory meanwhile; the collector is restored on exit.

A long-lived process that keeps what it built (the app caches sessions and replays) pays again
later: each full collection walks every object it holds. :func:`settle` takes what was just built
out of the collector's reach (measured on a 50k-entry session: a rerun after a what-if replay
spent 1.0–1.6 s of 3–7 s in one full collection); :func:`thaw` gives it back, when a cache lets
go of something, so cyclic garbage frozen by mistake is still found eventually. The app settles
at the start of the rerun after the one that built a replay (:func:`settle_later`): frozen
during a rerun, the page's own objects (its namespace holds cycles) would stay frozen after it. A replay holds
no reference cycles (``tests/test_gcpause.py``): dropped from a cache, it is freed by reference
counting, frozen or not.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused(freeze: bool = False) -> Iterator[None]:
    """Pause the collector; with ``freeze``, move everything alive at the end into the permanent
    generation (``gc.freeze``), so later collections do not walk a loaded session again."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if was:
            gc.enable()


_PENDING = threading.Event()


def settle_later() -> None:
    """Ask for a :func:`settle` at the next :func:`settle_if_asked` (the app: the start of its
    next rerun, when what the page drew for the last one is garbage, not frozen with the rest)."""
    _PENDING.set()


def settle_if_asked() -> bool:
    """:func:`settle`, when :func:`settle_later` asked for it since the last time; whether it did."""
    if not _PENDING.is_set():
        return False
    _PENDING.clear()
    settle()
    return True


_SWEPT: list[int] = [0]  # the frozen count after the last full sweep (0: none since a thaw)


def settle() -> None:
    """Collect what is not frozen yet (what was built since the last call: garbage cycles are
    freed, not frozen), then move everything still alive into the permanent generation: later
    automatic collections, full ones included, no longer walk it. Objects in it are still freed
    by reference counting; a cycle that became garbage while frozen is not, so once the frozen
    count has doubled since the last full sweep, everything is thawed and swept once (a bound
    on what can be held for nothing: at most as much again as was alive then)."""
    gc.collect()
    gc.freeze()
    n = gc.get_freeze_count()
    if _SWEPT[0] and n > 2 * _SWEPT[0]:
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        n = gc.get_freeze_count()
        _SWEPT[0] = n
    elif not _SWEPT[0]:
        _SWEPT[0] = n


def thaw() -> None:
    """Undo every :func:`settle` (and load-time freeze): the next full collection walks everything
    again. Call it when a cache lets go of something."""
    gc.unfreeze()
    _SWEPT[0] = 0
