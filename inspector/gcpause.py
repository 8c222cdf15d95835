"""Pausing Python's cyclic garbage collector around bulk work.

Loading and replaying build hundreds of thousands of small acyclic objects; every automatic
collection walks all objects alive, so bulk building gets slower the more it has built
(measured: a 120 MB session loads 4× faster with the collector paused). Reference counting
still frees memory meanwhile; the collector is restored on exit.

A long-lived process that keeps what it built (the app caches sessions and replays) pays again
later: each full collection walks every object it holds. :func:`settle` takes what was just built
out of the collector's reach (measured on a 50k-entry session: a rerun after a what-if replay
spent 1.0–1.6 s of 3–7 s in one full collection); :func:`thaw` gives it back, when a cache lets
go of something, so cyclic garbage frozen by mistake is still found eventually. The app builds
each replay :func:`settled`: what is not frozen yet is collected first, so what gets frozen is
the replay and the little the page holds at that point (not the garbage of earlier reruns). A replay holds
no reference cycles (``tests/test_gcpause.py``): dropped from a cache, it is freed by reference
counting, frozen or not.
"""

from __future__ import annotations

import gc
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


_SWEPT: list[int] = [0]  # the frozen count after the last full sweep (0: none since a thaw)


@contextmanager
def settled() -> Iterator[None]:
    """Build something a cache will keep (a replay) out of the collector's reach: collect what
    is not frozen yet first (garbage is freed, not frozen: all that is left alive then is what
    the caller holds), build with the collector paused, and freeze what was built before the
    collector runs again (it would walk all of it once more, in the youngest generation: 0.24 s
    after a 50k-entry replay). The build must leave no garbage cycles behind (a replay leaves
    none: ``tests/test_gcpause.py``)."""
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        yield
        settle(collect=False)
    finally:
        if was:
            gc.enable()


def settle(collect: bool = True) -> None:
    """Collect the youngest generation (unless ``collect`` is false), then move everything still
    alive into the permanent generation: later automatic collections, full ones included, no
    longer walk it. Objects in it are still freed by reference counting; a cycle that became
    garbage while frozen is not, so once the frozen count has doubled since the last full sweep,
    everything is thawed and swept once (a bound on what can be held for nothing: at most as
    much again as was alive then)."""
    if collect:
        gc.collect(0)
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
