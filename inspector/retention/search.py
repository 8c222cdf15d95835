"""Where a text first mentions each of many names, in one multi-pattern scan (pure).

Scoring asks a long text (the joined tool outputs of a span, of a horizon; the kept messages) where
it first mentions each of the names the later session used. One ``str.find`` pass per name costs
the whole text for every name that is not there; here one Aho-Corasick automaton (the
``ahocorasick_rs`` library: Rust's ``aho-corasick`` crate, with its prefilters) scans the text
once for all of them. Every occurrence is reported, overlapping ones included (the
``str.find``-from-the-next-character loops of :mod:`inspector.retention.extract` see those too),
and the caller's ``accept`` judges each one as those loops do, so the positions found are the
same.

The text is scanned in blocks that grow four-fold (:data:`FIRST_BLOCK` first): a name found is
dropped from the automaton, so a common name is reported a few times rather than at each of its
thousands of occurrences, and only the rare names are looked for through the rest of the text.
The cost is then about one pass over the text for all the names (against one per name missing);
what it cannot avoid is reading the text: a name that is not there is known to be absent only
at the end. A caller whose text is many parts (the entries of a span) gives it already encoded,
each part on its own (:class:`Encoded`, :func:`first_hits_in`): joining parts one of which has a
non-ASCII character widens every character, and encoding that costs as much again.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import TypeVar

from ahocorasick_rs import (
    MATCHKIND_LEFTMOST_LONGEST,
    MATCHKIND_STANDARD,
    AhoCorasick,
    BytesAhoCorasick,
    Implementation,
)

NFA = Implementation.ContiguousNFA
"""The automaton: quick to build (it is built again as names are found); a DFA scans faster but
takes longer to build than these scans take."""
K = TypeVar("K", bound=Hashable)

FIRST_BLOCK = 1 << 14
"""Characters of the first block scanned."""
GROWTH = 4
"""Each next block is this many times as long."""


def first_hits(
    text: str,
    patterns: Mapping[str, Iterable[K]],
    accept: Callable[[K, int], bool],
    start: int = 0,
    end: int | None = None,
    until: Mapping[K, int] | None = None,
    names: bool = False,
) -> dict[K, int]:
    """For each key, the first position ``p`` in ``text[start:end]`` where one of the patterns that
    lead to it (``patterns``: pattern string → keys) occurs, wholly inside ``[start, end)``, with
    ``accept(key, p)``; keys with none are left out. ``until``: a key's occurrences at or after
    ``until[key]`` do not matter (the key is dropped there; one found there may still be given).

    The text is searched as bytes, one byte per character: an ASCII text as it is; any other with
    each other character replaced by a ``?`` (the ``replace`` error handler), which no ASCII pattern
    without a ``?`` can match, so those patterns match where they match in the text. The other
    patterns (rare: a name with a non-ASCII character) are looked for in the text itself.

    ``names``: the patterns are identifiers and ``accept`` is :func:`inspector.retention.extract.ident_at`
    (the token around an occurrence yields the name). Then the scan reports no overlapping matches
    (the automaton's fast leftmost-longest search, several times as fast with dozens of names) and
    a key's position is an occurrence of its name in the first token that yields it — not always
    the first occurrence in that token (:func:`_hidden`); callers read positions by the entry or
    the token that holds them."""
    ascii_text = text.isascii()
    return first_hits_in(
        Encoded(
            lambda: text.encode("ascii") if ascii_text else text.encode("ascii", "replace"), ascii_text, text
        ),
        patterns,
        accept,
        start,
        len(text) if end is None else min(end, len(text)),
        until,
        names,
    )


class Encoded:
    """A text as :func:`first_hits` searches it: its characters as bytes (an ASCII character as it
    is, any other a ``?``), made on first use (``raw``, a function), whether it is all ASCII, and
    the text itself (``text``: the text, or a function giving its characters from ``a`` to ``b``,
    asked only for the rare patterns searched in it)."""

    def __init__(
        self,
        raw: Callable[[], bytes],
        ascii_text: bool,
        text: str | Callable[[int, int], str],
    ) -> None:
        self._raw = raw
        self._hay: memoryview | None = None
        self.ascii = ascii_text
        self.text = text

    @property
    def hay(self) -> memoryview:
        if self._hay is None:
            self._hay = memoryview(self._raw())
        return self._hay

    def chars(self, a: int, b: int) -> str:
        """The text's characters from ``a`` to ``b``."""
        return self.text[a:b] if isinstance(self.text, str) else self.text(a, b)


def first_hits_in(
    text: Encoded,
    patterns: Mapping[str, Iterable[K]],
    accept: Callable[[K, int], bool],
    start: int,
    end: int,
    until: Mapping[K, int] | None = None,
    names: bool = False,
) -> dict[K, int]:
    """:func:`first_hits` in ``text[start:end]`` (``end`` within the text), already encoded."""
    keys_of = {p: tuple(ks) for p, ks in patterns.items() if p}
    if text.ascii:  # a pattern with another character cannot occur
        as_bytes, as_text = {p: ks for p, ks in keys_of.items() if p.isascii()}, {}
    else:
        as_bytes = {p: ks for p, ks in keys_of.items() if p.isascii() and "?" not in p}
        as_text = {p: ks for p, ks in keys_of.items() if p not in as_bytes}
    found: dict[K, int] = {}
    if start >= end:
        return found
    if as_bytes:
        found = _scan(text.hay, as_bytes, accept, start, end, until, names)
    if as_text:  # searched in the characters from start to end, positions shifted back
        sub = text.chars(start, end)
        shifted = None if until is None else {k: q - start for k, q in until.items()}
        hits = _scan(sub, as_text, lambda k, q: accept(k, q + start), 0, len(sub), shifted, names)
        for k, q in hits.items():
            if q + start < found.get(k, end):
                found[k] = q + start
    return found


def _scan(
    hay: memoryview | str,
    keys_of: Mapping[str, tuple[K, ...]],
    accept: Callable[[K, int], bool],
    start: int,
    end: int,
    until: Mapping[K, int] | None,
    names: bool = False,
) -> dict[K, int]:
    """:func:`first_hits` over ``hay`` (ASCII bytes, or the text), block by block."""
    pending = {k for ks in keys_of.values() for k in ks}
    found: dict[K, int] = {}
    pos, size, live, ac = start, FIRST_BLOCK, None, None
    hidden = _hidden(list(keys_of)) if names else {}
    as_bytes = isinstance(hay, memoryview)
    while pending and pos < end:
        if until is not None:
            pending = {k for k in pending if until.get(k, end) > pos}
        pats = [p for p, ks in keys_of.items() if not pending.isdisjoint(ks)]
        if not pats:
            break
        stop = min(end, pos + size)
        if pats != live:
            live = pats
            ac = _automaton(pats, as_bytes, names)
        window = hay[pos : min(end, stop + max(map(len, live)) - 1)]
        best: dict[K, int] = {}
        for i, s, _ in ac.find_matches_as_indexes(window, overlapping=not names):  # type: ignore[union-attr,arg-type]
            p = pos + s
            if p >= stop:
                continue
            for k in keys_of[live[i]]:
                if k in pending and p < best.get(k, stop) and accept(k, p):
                    best[k] = p
            for off, name in hidden.get(live[i], ()):  # a name the match may hide (see _hidden)
                q = p + off
                if q < stop and hay[q : q + len(name)] == (name.encode("ascii") if as_bytes else name):
                    for k in keys_of[name]:
                        if k in pending and q < best.get(k, stop) and accept(k, q):
                            best[k] = q
        found.update(best)
        pending.difference_update(best)
        pos, size = stop, size * GROWTH
    return found


def _automaton(pats: list[str], ascii_bytes: bool, names: bool) -> AhoCorasick | BytesAhoCorasick:
    mk = MATCHKIND_LEFTMOST_LONGEST if names else MATCHKIND_STANDARD
    if ascii_bytes:
        return BytesAhoCorasick([p.encode("ascii") for p in pats], matchkind=mk, implementation=NFA)
    return AhoCorasick(pats, matchkind=mk, implementation=NFA)


def _hidden(pats: list[str]) -> dict[str, list[tuple[int, str]]]:
    """Pattern → (offset, another pattern) where a match of the first may hide an
    occurrence of the other that the non-overlapping search must still look at.

    An identifier that a token yields is a whole part of it (:func:`inspector.retention.extract.identifiers_in`):
    it starts at the token's start, after a ``~@+-``, or after a ``.`` (``self.`` dropped, or dots
    stripped), and it ends at the token's end, before such a character, a ``(`` or a ``.``. Names
    hold none of these characters but ``.``, so a match of a longer name can cover that whole
    occurrence only where it starts right after one of its own dots, or at the match's start when
    it begins with the shorter name and a dot. Those places are looked at (any other occurrence of
    a name in that token is a later one)."""
    ordered = sorted(pats)
    known = set(pats)
    out: dict[str, list[tuple[int, str]]] = {}
    for a in pats:
        if "." not in a:
            continue
        for off in [0] + [d + 1 for d, ch in enumerate(a) if ch == "." and d + 1 < len(a)]:
            rest = a[off:]
            lo = bisect.bisect_left(ordered, rest)  # the patterns that start with rest
            hi = lo
            while hi < len(ordered) and ordered[hi].startswith(rest):
                hi += 1
            shorter = [rest[:n] for n in range(1, len(rest)) if rest[:n] in known]  # those rest starts with
            for b in (*ordered[lo:hi], *shorter):
                if b != a:
                    out.setdefault(a, []).append((off, b))
    return out
