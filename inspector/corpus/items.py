"""What a corpus is: session files named by folders, globs, files, or the sessions each agent
keeps on this machine — resolved to a sorted list of :class:`CorpusItem`.

A corpus spec is one of:

* a **file** — that session (any format the importers read);
* a **folder** — every ``*.jsonl`` and ``*.json`` under it, recursively (Claude Code's
  ``subagents/`` transcripts and dot-folders left out);
* a **glob** — ``sessions/**/*.jsonl`` (``**`` recursive);
* ``@AGENT`` (``@pi``, ``@claude-code``, ``@codex``, ``@opencode``) or ``@all`` — the sessions
  ``inspector sessions`` discovers for that agent (OpenCode's database sessions included, each
  exported as ``opencode export`` prints it).

Items are deduplicated (one item per file, under the plainest of its names: a symbolic link to
a session beside it is the same session) and sorted by :attr:`CorpusItem.key`, so a corpus has one
order whatever order its specs come in, and workers get plain strings (picklable, sendable to a Dask cluster).
"""

from __future__ import annotations

import glob as _glob
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ..session.tree import Session

SESSION_SUFFIXES = (".jsonl", ".json")
DISCOVERED_LIMIT = 10_000


@dataclass(frozen=True, order=True)
class CorpusItem:
    """One session of a corpus: a file, or a session inside an OpenCode database / storage."""

    path: str
    ref: str | None = None
    """The session id inside OpenCode's database or storage, else None."""

    @property
    def key(self) -> str:
        """The item's name in results: its path, with ``#ref`` for a session inside a database."""
        return f"{self.path}#{self.ref}" if self.ref else self.path


class CorpusError(ValueError):
    """A spec that names nothing (a missing path, a glob with no match, an unknown agent)."""


def resolve_corpus(specs: list[str] | tuple[str, ...]) -> list[CorpusItem]:
    """The sessions ``specs`` name, deduplicated and sorted; :class:`CorpusError` for a spec that
    names no session."""
    found: set[CorpusItem] = set()
    for spec in specs:
        items = _resolve_one(spec)
        if not items:
            raise CorpusError(f"{spec!r}: no session files there")
        found.update(items)
    return _one_name_each(sorted(found))


def _one_name_each(items: list[CorpusItem]) -> list[CorpusItem]:
    """``items`` with one name for each file, the plainest (:func:`_plainness`): a symbolic link to
    a session beside it, or the same folder given as ``a`` and ``a/../a``, had counted that session
    twice in every total and every sweep."""
    names: dict[tuple[str, str | None], CorpusItem] = {}
    for item in sorted(items, key=_plainness):
        names.setdefault((os.path.realpath(item.path), item.ref), item)
    return sorted(names.values())


def _plainness(item: CorpusItem) -> tuple[bool, bool, str]:
    """How plain a name is, plainest first: not a link, no ``..`` in it, then by name."""
    return (os.path.islink(item.path), ".." in Path(item.path).parts, item.path)


def _resolve_one(spec: str) -> list[CorpusItem]:
    if spec.startswith("@"):
        return discovered(spec[1:])
    p = Path(spec).expanduser()
    try:
        is_file, is_dir = p.is_file(), p.is_dir()
    except OSError as e:  # a name too long for the file system, a loop of links
        raise CorpusError(f"{spec!r}: cannot read it: {e.strerror or e}") from None
    if is_file:
        return [CorpusItem(str(p))]
    if is_dir:
        return [CorpusItem(str(f)) for f in _walk(p)]
    if _glob.has_magic(spec):
        return [
            CorpusItem(f)
            for f in _glob.glob(os.path.expanduser(spec), recursive=True)
            if Path(f).is_file() and f.endswith(SESSION_SUFFIXES)
        ]
    raise CorpusError(f"{spec!r}: no such file or folder")


def _walk(folder: Path) -> list[Path]:
    out: list[Path] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "subagents")
        out.extend(Path(root) / f for f in files if f.endswith(SESSION_SUFFIXES) and not f.startswith("."))
    return out


def discovered(agent: str) -> list[CorpusItem]:
    """The sessions ``inspector sessions`` lists for ``agent`` (or ``all``), newest 10,000 each."""
    from ..agents import AGENTS
    from ..importers.discover import list_local_sessions

    if agent != "all" and agent not in AGENTS:
        raise CorpusError(
            f"@{agent}: unknown agent; choose @all or one of " + ", ".join(f"@{a}" for a in AGENTS)
        )
    agents = list(AGENTS) if agent == "all" else [agent]
    return [
        CorpusItem(str(s.path), s.ref if s.agent == "opencode" else None)
        for a in agents
        for s in list_local_sessions(a, limit=DISCOVERED_LIMIT)
    ]


def load_item(item: CorpusItem) -> Session:
    """The item's session (:class:`inspector.session.loader.SessionLoadError` when it cannot be
    read at all). A session inside OpenCode's database or storage is exported first, as
    ``opencode export`` prints it."""
    from ..importers import load_any, parse_any

    if item.ref is None:
        return load_any(item.path)
    from ..importers.discover import LocalSession, opencode_export

    data = opencode_export(LocalSession("opencode", Path(item.path), "", None, datetime.now(), 0, item.ref))
    return parse_any(data, item.key)


def load_entries(item: CorpusItem) -> Session:
    """:func:`load_item`, and a :class:`ValueError` when the session has nothing to replay: nothing
    in the file is a session (:meth:`~inspector.session.tree.Session.unread`, as the commands
    judge it), or it has no entries."""
    session = load_item(item)
    unread = session.unread()
    if unread is not None:
        raise ValueError(f"not a session: {unread.message}")
    if not session.entries:
        raise ValueError("no entries: " + "; ".join(i.message for i in session.issues[:2]))
    return session
