"""Token counts per session: one cached, primed counter per (session, counter name), and warming
those caches in the background after a session's first replay."""

from __future__ import annotations

import threading
import time
import weakref
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from typing import Any

from ..session.models import MessageEntry
from ..session.tree import Session
from ..tokens import TokenCounter, get_counter


class CachedCounter:
    """A counter that remembers each message object's count (messages are immutable)."""

    def __init__(self, base: TokenCounter) -> None:
        self.base = base
        self.name = base.name
        self.label = base.label
        self._cache: dict[int, tuple[Any, int]] = {}
        self._owned: dict[int, int] | _IdCounts = {}  # the primed session's messages (alive with it)
        self._lock = threading.Lock()
        self._primed: Session | None = None

    def count(self, message: Any) -> int:
        owned = self._owned.get(id(message))
        if owned is not None:
            return owned
        hit = self._cache.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        n = self.base.count(message)
        self._cache[id(message)] = (message, n)
        return n

    def counts(self, messages: Sequence[Any]) -> list[int]:
        """:meth:`count` of each message; the primed session's own messages looked up at once."""
        got = list(map(self._owned.get, map(id, messages)))
        if None in got:
            return [n if n is not None else self.count(m) for n, m in zip(got, messages, strict=True)]
        return got  # type: ignore[return-value]

    def count_many(self, messages: Sequence[Any]) -> list[int]:
        missing = [m for m in messages if id(m) not in self._cache and id(m) not in self._owned]
        if missing:
            for m, n in zip(missing, self.base.count_many(missing), strict=True):
                self._cache[id(m)] = (m, n)
        return [self.count(m) for m in messages]

    def count_text(self, text: str) -> int:
        return self.base.count_text(text)

    def prime(self, messages: Iterable[Any]) -> None:
        self.count_many(list(messages))

    def prime_session(self, session: Session) -> None:
        """Count every message of ``session`` in one batch, once (a second caller, in another
        thread, waits for the first)."""
        with self._lock:
            if self._primed is not session:
                msgs = [e.message for e in session.entries if isinstance(e, MessageEntry)]
                counts = [
                    n for k in range(0, len(msgs), 10_000) for n in self.base.count_many(msgs[k : k + 10_000])
                ]
                ids = list(map(id, msgs))
                self._owned = (
                    dict(zip(ids, counts, strict=True)) if len(ids) < _BIG else _IdCounts(ids, counts)
                )
                self._primed = session  # keeps the messages alive, so their ids stay theirs


_BIG = 100_000


class _IdCounts:
    """Counts by object id for a large session: two sorted arrays (16 bytes a message, a dict
    takes ~84), looked up by bisection. ``get`` and ``in`` as on the dict it stands for."""

    __slots__ = ("_counts", "_ids")

    def __init__(self, ids: list[int], counts: list[int]) -> None:
        order = sorted(range(len(ids)), key=ids.__getitem__)
        self._ids = array("Q", [ids[k] for k in order])
        self._counts = array("q", [counts[k] for k in order])

    def get(self, key: int, default: int | None = None) -> int | None:
        k = bisect_left(self._ids, key)
        return self._counts[k] if k < len(self._ids) and self._ids[k] == key else default

    def __contains__(self, key: object) -> bool:
        return isinstance(key, int) and self.get(key) is not None


_COUNTER_CACHE: dict[tuple[int, str], tuple[Session, CachedCounter]] = {}
_COUNTER_LOCK = threading.Lock()


def session_counter(session: Session, name: str) -> CachedCounter:
    """One cached counter per (session, counter name), primed with every message in one batch.
    ``usage`` (a per-call figure, not a per-message one) counts messages with pi's estimate."""
    name = "pi" if name == "usage" else name
    key = (id(session), name)
    with _COUNTER_LOCK:
        hit = _COUNTER_CACHE.get(key)
    if hit is None or hit[0] is not session:
        base = _session_counter_base(session, name)  # not under the lock: calibrated asks for tiktoken's
        with _COUNTER_LOCK:
            hit = _COUNTER_CACHE.get(key)
            if hit is None or hit[0] is not session:  # not made by another thread meanwhile
                hit = (session, CachedCounter(base))
                if len(_COUNTER_CACHE) > 16:
                    _COUNTER_CACHE.clear()
                _COUNTER_CACHE[key] = hit
    c = hit[1]
    c.prime_session(session)
    return c


def skeleton_counter(skeleton: Session, name: str) -> CachedCounter:
    """The counter :func:`session_counter` gives for ``skeleton`` (a session whose messages are
    absent: :func:`~inspector.session.loader.load_skeleton`), never primed with its stand-ins.
    Its messages' counts are the streamed replay's (:mod:`.streamed`), by entry index."""
    c = CachedCounter(_session_counter_base(skeleton, name))
    c._primed = skeleton
    with _COUNTER_LOCK:
        if len(_COUNTER_CACHE) > 16:
            _COUNTER_CACHE.clear()
        _COUNTER_CACHE[(id(skeleton), name)] = (skeleton, c)
    return c


_WARMING: dict[tuple[int, str], weakref.ref[Session]] = {}  # weak: a warmed session is not kept alive


def warm_session(
    session: Session, what: Sequence[str] = ("facts", "tiktoken"), delay: float = 1.0
) -> threading.Thread | None:
    """Fill the per-message caches later replays of ``session`` read, in a background thread,
    once per session, starting after ``delay`` seconds (the page being drawn keeps the CPU):
    ``facts``, what the offline summarizer extracts from each message (a first what-if policy
    then only writes its summaries), and a counter's name (``tiktoken``: a switch of the counter
    finds the counts ready; its BPE runs outside the GIL). Asked for sooner, a replay computes
    what it needs and the thread finds it done. Failures are left to show where the cache is
    used. The app calls this after a session's first replay. Returns the thread, or None when
    there is nothing left to do."""
    with _COUNTER_LOCK:
        todo = [n for n in what if (ref := _WARMING.get((id(session), n))) is None or ref() is not session]
        if len(_WARMING) > 64:
            _WARMING.clear()
        for n in todo:
            _WARMING[(id(session), n)] = weakref.ref(session)
    if not todo:
        return None

    def work() -> None:
        time.sleep(delay)
        for name in todo:
            try:
                if name == "facts":
                    from ..foreground import give_way
                    from ..summarize.offline import remember_facts

                    remember_facts(
                        (e.message for e in session.entries if isinstance(e, MessageEntry)), pause=give_way
                    )
                else:
                    session_counter(session, name)
            except Exception:  # noqa: BLE001 - reported where the cache is used
                pass

    t = threading.Thread(target=work, name="inspector-warm-session", daemon=True)
    t.start()
    return t


def _session_counter_base(session: Session, name: str) -> TokenCounter:
    """``calibrated`` is tiktoken × the session's own fitted ratio (:mod:`inspector.calibration`),
    fitted and counted with the session's tiktoken counter: each message is encoded once, for the
    three (the fit, the calibrated counts, and tiktoken's own)."""
    if name == "calibrated":
        from ..calibration import session_calibration
        from ..tokens import CalibratedCounter

        tiktoken = session_counter(session, "tiktoken")
        cal = session_calibration(session, counter=tiktoken)
        return CalibratedCounter(cal.ratio, cal.overhead, cal.label, source=tiktoken)
    return get_counter(name)
