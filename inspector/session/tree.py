"""A loaded session: its entries in file order and the tree their ``parentId`` links form.

Mirrors pi's ``SessionManager`` read side (``getEntries``, ``getEntry``, ``getChildren``,
``getBranch``, ``getTree``, ``getLabel``, ``getSessionName``, default leaf), as pure queries
over immutable data. Entries are addressed by **index** (position in file order, header
excluded), as pi's oracle does, because ids can repeat and legacy ids are random.

pi's quirks reproduced here:

* ``getEntry(id)`` is a ``Map`` lookup, so with duplicate ids the **last** entry wins, for
  parent links too.
* The default leaf is the last entry in file order, whichever branch it is on.
* An entry whose parent is missing is a root (pi calls it an orphan); so is one whose
  ``parentId`` is its own id.
* Children are ordered by timestamp (stable for equal ones), as in ``getTree``.
* Labels: the latest ``label`` entry in file order for a target wins; an empty label clears.
* Session name: the latest ``session_info`` entry's trimmed name (empty clears).

Beyond pi: a ``parentId`` cycle would make pi loop forever; the loader breaks it (the entry
closing the cycle becomes a root) and reports it, so here every path is finite.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from itertools import accumulate
from typing import Literal, overload

from .models import (
    AnyEntry,
    LabelEntry,
    MessageEntry,
    OpaqueEntry,
    SessionHeader,
    SessionInfoEntry,
)

Severity = Literal["error", "warning", "info"]
UNREAD_HEADLINES = (
    "empty-file",
    "compressed-file",
    "utf16-file",
    "sqlite-file",
    "format-unrecognised",
    "not-a-session",
)
"""Load issues that say at once why a file holds no session (:meth:`Session.unread`)."""


@dataclass(frozen=True)
class LoadIssue:
    """Something wrong with the input, located by 1-based line number where it has one."""

    kind: str
    severity: Severity
    message: str
    line: int | None = None
    entry_index: int | None = None

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line is not None else ""
        return f"{self.severity}: {where}{self.message}"


def iso_to_ms(ts: object) -> float | None:
    """``new Date(ts).getTime()`` for pi's ISO timestamps (None where JS would give NaN)."""
    if not isinstance(ts, str) or not ts:
        return None
    try:
        s = ts[:-1] + "+00:00" if ts.endswith("Z") else ts
        return datetime.fromisoformat(s).timestamp() * 1000.0
    except ValueError:
        return None


class Children(Sequence[tuple[int, ...]]):
    """Each entry's children as a tuple, stored as two flat arrays (8 bytes per entry, instead of a
    tuple per entry: a 2,000,000-entry session saves ~100 MB). Same-parent children are ordered
    by ``sort_key`` (stable: file order among equal keys)."""

    __slots__ = ("_flat", "_starts")

    def __init__(self, parents: Sequence[int], sort_key: Callable[[int], float]) -> None:
        n = len(parents)
        counts = [0] * (n + 1)
        for p in parents:
            if p >= 0:
                counts[p + 1] += 1
        starts = array("q", accumulate(counts))  # children of i: flat[starts[i]:starts[i + 1]]
        del counts
        flat = array("q", bytes(8 * starts[n]))
        fill = array("q", starts)
        for i, p in enumerate(parents):
            if p >= 0:
                flat[fill[p]] = i
                fill[p] += 1
        del fill
        for i in range(n):
            a, b = starts[i], starts[i + 1]
            if b - a > 1:
                flat[a:b] = array("q", sorted(flat[a:b], key=sort_key))
        self._starts = starts
        self._flat = flat

    def __len__(self) -> int:
        return len(self._starts) - 1

    @overload
    def __getitem__(self, i: int) -> tuple[int, ...]: ...
    @overload
    def __getitem__(self, i: slice) -> list[tuple[int, ...]]: ...
    def __getitem__(self, i: int | slice) -> tuple[int, ...] | list[tuple[int, ...]]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("entry index out of range")
        return tuple(self._flat[self._starts[i] : self._starts[i + 1]])

    def __iter__(self) -> Iterator[tuple[int, ...]]:
        s, f = self._starts, self._flat
        for i in range(len(s) - 1):
            yield tuple(f[s[i] : s[i + 1]])

    def sizes(self) -> Iterator[int]:
        """How many children each entry has."""
        s = self._starts
        return (s[i + 1] - s[i] for i in range(len(s) - 1))


@dataclass(frozen=True, eq=False)
class Session:
    """An immutable, indexed pi session."""

    header: SessionHeader | None
    entries: tuple[AnyEntry, ...]
    lines: Sequence[int]
    """1-based line number of each entry (a tuple, or from the loader a compact ``array``)."""
    parents: tuple[int, ...]
    """Index of each entry's parent, or -1 for a root (pi's ``byId.get(parentId)``)."""
    issues: tuple[LoadIssue, ...] = ()
    source: str | None = None
    original_version: int | None = None
    migrated: bool = False
    by_id: dict[str, int] = field(default_factory=dict, repr=False)
    format: str = "pi"
    """Where the file came from: ``pi``, or an importer's ``FORMAT`` (``claude-code``, ``codex``, …)."""

    # -- basic lookups ---------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.entries)

    def index_of(self, entry_id: object) -> int | None:
        """The index of the entry with id ``entry_id`` (None: no such entry; ids are strings, and a
        field an entry kept opaque may hold any JSON value, a list among them)."""
        return self.by_id.get(entry_id) if isinstance(entry_id, str) else None

    def entry(self, ref: int | str) -> AnyEntry:
        """An entry by index or id."""
        if isinstance(ref, int):
            return self.entries[ref]
        i = self.by_id.get(ref)
        if i is None:
            raise KeyError(f"no entry with id {ref!r}")
        return self.entries[i]

    def resolve(self, ref: int | str | None) -> int | None:
        """Index for an index, an id, ``"@N"``, ``"leaf"`` or None (None stays None)."""
        if ref is None or ref == "null":
            return None
        if isinstance(ref, int):
            if not 0 <= ref < len(self.entries):
                raise KeyError(f"entry index {ref} out of range 0..{len(self.entries) - 1}")
            return ref
        if ref == "leaf":
            return self.default_leaf
        if ref.startswith("@") and ref[1:].removeprefix("-").isdigit():  # "@-1": out of range, said so
            return self.resolve(int(ref[1:]))
        i = self.by_id.get(ref)
        if i is None:
            raise KeyError(f"no entry with id {ref!r}")
        return i

    @property
    def default_leaf(self) -> int | None:
        """pi's leaf after loading: the last entry in file order."""
        return len(self.entries) - 1 if self.entries else None

    # -- tree --------------------------------------------------------------------------------

    @cached_property
    def children(self) -> Children:
        """Children of each entry (``children[i]``, a tuple), ordered by timestamp like pi's ``getTree``."""
        return Children(self.parents, lambda k: iso_to_ms(self.entries[k].timestamp) or 0.0)

    @cached_property
    def roots(self) -> tuple[int, ...]:
        return tuple(i for i, p in enumerate(self.parents) if p < 0)

    @cached_property
    def leaves(self) -> tuple[int, ...]:
        return tuple(i for i, k in enumerate(self.children.sizes()) if not k)

    @cached_property
    def fork_points(self) -> tuple[int, ...]:
        return tuple(i for i, k in enumerate(self.children.sizes()) if k > 1)

    def path(self, leaf: int | None = None) -> list[int]:
        """Indexes from the root to ``leaf`` (default leaf if None), like ``getBranch``."""
        if leaf is None:
            leaf = self.default_leaf
        if leaf is None:
            return []
        out = []
        i = leaf
        while i >= 0:
            out.append(i)
            i = self.parents[i]
        out.reverse()
        return out

    def path_entries(self, leaf: int | None = None) -> list[AnyEntry]:
        return [self.entries[i] for i in self.path(leaf)]

    def depth(self, i: int) -> int:
        d = 0
        while i >= 0:
            d += 1
            i = self.parents[i]
        return d

    def common_ancestor(self, a: int, b: int) -> int | None:
        """Deepest entry on both paths (pi's ``collectEntriesForBranchSummary`` rule)."""
        on_a = set(self.path(a))
        for i in reversed(self.path(b)):
            if i in on_a:
                return i
        return None

    def walk(self) -> Iterator[tuple[int, int]]:
        """Depth-first (index, depth) over the whole tree, roots and children in pi's order."""
        stack = [(r, 0) for r in reversed(self.roots)]
        while stack:
            i, d = stack.pop()
            yield i, d
            stack.extend((c, d + 1) for c in reversed(self.children[i]))

    # -- labels and name -------------------------------------------------------------------

    @cached_property
    def labels(self) -> dict[int, str]:
        """Current label per target entry index (latest label entry wins; empty clears)."""
        out: dict[int, str] = {}
        for e in self.entries:
            if isinstance(e, LabelEntry) and e.targetId is not None:
                t = self.by_id.get(e.targetId)
                if t is None:
                    continue
                if e.label:
                    out[t] = e.label
                else:
                    out.pop(t, None)
        return out

    @cached_property
    def name(self) -> str | None:
        for e in reversed(self.entries):
            if isinstance(e, SessionInfoEntry):
                return (e.name or "").strip() or None
        return None

    # -- summaries ---------------------------------------------------------------------------

    def counts_by_type(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for e in self.entries:
            key = str(e.type)
            if isinstance(e, MessageEntry):
                key = f"message/{e.message.role}"
            out[key] = out.get(key, 0) + 1
        return out

    def unread(self) -> LoadIssue | None:
        """Why nothing in the file could be read as a session, when that is so: its load had
        errors and no entry is of a kind pi knows (an empty file, a text, another kind of JSON, a
        compressed file). The error that says it best (:data:`UNREAD_HEADLINES`), else the first."""
        errors = [i for i in self.issues if i.severity == "error"]
        if not errors or not all(isinstance(e, OpaqueEntry) for e in self.entries):
            return None
        return next((i for k in UNREAD_HEADLINES for i in errors if i.kind == k), errors[0])

    def load_errors_said(self) -> str | None:
        """The load's errors in a few words ("2 load error(s) (lines 5, 27)"), for a command or a
        page that uses the rest of the file; None when there were none."""
        errors = [i for i in self.issues if i.severity == "error"]
        if not errors:
            return None
        lines = sorted({i.line for i in errors if i.line is not None})
        shown = ", ".join(map(str, lines[:8])) + (", …" if len(lines) > 8 else "")
        at = f" (line{'s' if len(lines) > 1 else ''} {shown})" if lines else ""
        return f"{len(errors)} load error(s){at}"

    def entries_at(self, idxs: Sequence[int]) -> list[AnyEntry]:
        return [self.entries[i] for i in idxs]
