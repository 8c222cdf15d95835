"""Retention scoring of one compaction: what the session needed later from the summarised span,
where each item survives, recall per category, and the work redone after the cut (pure).

A compaction is read from a finished :class:`inspector.replay.Replay` (recorded or simulated, the
same way): its :class:`inspector.replay.CompactionRecord` pins the context just before
(``before()``) and just after (``after()``) it. Then

* **span** — the messages of the context before that do not survive verbatim (the entries not in
  the context after; an earlier summary is not part of it);
* **kept** — the entries of the context after, kept verbatim;
* **horizon** — the entries of the branch after the compaction, up to the next compaction of the
  replay (from there on the next summary is the model's memory, and it is scored on its own).

Needed items (ids ``files``, ``identifiers``, ``errors``, ``instructions`` and ``task``; the rules
are in :mod:`inspector.retention.extract` and ``docs/retention.md``):

* a file touched in the span (read, written, edited; named in a bash command) and touched or
  mentioned by the user or the assistant in the horizon;
* an identifier seen anywhere in the span and used by the user or the assistant in the horizon
  before any tool output of the horizon shows it again (used from memory, not from a new read);
* an error line of a span tool output that recurs in a horizon tool output, or whose message the
  user or the assistant quotes there;
* a user instruction given in the span: it stands for every later call, so it is needed at the
  first call of the horizon;
* the open task: the last user request before the cut, when it lies in the span and the agent is
  still working on it (the horizon does not start with a new user request). A message that only
  says to carry on ("go", "continue", "ok", …: :func:`continuation`) is no request: it neither
  starts a new task nor is one.

An item survives (``where``) in the summary's prose, in the compaction's file lists
(``details.readFiles``/``modifiedFiles`` of a recorded pi compaction, else the ``<read-files>`` /
``<modified-files>`` blocks the summary ends with), or in the kept messages. A file, identifier or
error survives where it is named; an instruction or a task where most of its content words are
(:data:`PHRASE_SHARE`).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from .extract import (
    Facts,
    facts_for,
    find_ident,
    find_path,
    ident_at,
    norm,
    path_at,
    path_suffixes,
    per_process,
    read_prose,
    words,
)
from .search import Encoded, first_hits, first_hits_in

CATEGORIES = ("files", "identifiers", "errors", "instructions")
"""The categories with a recall (the Interface's ``recall`` keys)."""
KINDS = (*CATEGORIES, "task")
PHRASE_SHARE = 0.6
"""Share of an instruction's (or a task's, an error's) content words a text must hold to keep it."""
SUMMARY, DETAILS, KEPT = "summary", "details", "kept"

_CONTINUE = re.compile(
    r"(?:please\s+)?(?:go|go on|go ahead|continue|carry on|keep going|proceed|resume|ok|okay|yes|yep|sure|do it)"
    r"(?:\s+please)?[\s.!…]*",
    re.I,
)


def continuation(text: str) -> bool:
    """Is this user message only a prompt to carry on ("go", "continue", "ok", "yes", "keep
    going", …)? It is no new request: the task before it stays open, and it is not itself a task."""
    return _CONTINUE.fullmatch(text.strip()) is not None


_FILE_BLOCK = re.compile(r"<(read-files|modified-files)>\s*(.*?)\s*</\1>", re.S)


@dataclass(frozen=True)
class Needed:
    """One item the session needed after the cut that came from the summarised span."""

    kind: str
    item: str
    introduced_at: int
    """Entry index where the span first shows it."""
    needed_at: int
    """Entry index of its first use after the cut."""
    evidence: str
    where: tuple[str, ...] = ()
    """Where it survives (``summary``, ``details``, ``kept``); empty: forgotten."""

    @property
    def kept(self) -> bool:
        return bool(self.where)

    def as_dict(self, details: bool = False) -> dict[str, Any]:
        d: dict[str, Any] = {
            "kind": self.kind,
            "item": self.item,
            "introducedAt": self.introduced_at,
            "neededAt": self.needed_at,
        }
        if details:
            d |= {"evidence": self.evidence, "where": list(self.where)}
        return d


@dataclass(frozen=True)
class Redo:
    """Work done again in the horizon that the span had already done."""

    rereads: int
    """The replay's re-reads (a file read again whose earlier read the model no longer saw) of
    reads made in the span."""
    reruns: int
    """Bash commands run again exactly as in the span."""
    failing_reruns: int
    """Of those, commands that failed in the span and failed again."""
    items: tuple[dict[str, Any], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "rereads": self.rereads,
            "reruns": self.reruns,
            "failingReruns": self.failing_reruns,
            "items": list(self.items),
        }


@dataclass(frozen=True)
class Span:
    """One compaction as retention reads it (see the module docstring); entry indexes."""

    index: int
    entry_index: int
    source: str
    step: int
    summarised: tuple[int, ...]
    kept: tuple[int, ...]
    horizon: tuple[int, ...]
    last_user: int | None
    """The last user message on the branch before the cut."""
    file_lists: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    """A recorded compaction's ``details`` (readFiles, modifiedFiles), when it has them."""
    attached: tuple[str, ...] = ()
    """Files the agent attaches again after the cut (Claude Code re-reads the most recently read
    files): in the context after it, as the kept messages are."""
    unread: str | None = None
    """Why a recorded compaction's summary cannot be read from the file (None: it can): then only
    what was kept verbatim or put back counts as kept, and what the summary held is not judged."""


class Said:
    """The normalised texts (:attr:`Facts.text`) of some entries, joined by newlines, as phrases are
    looked for in them (``phrase in said``), without normalising them all: only the texts whose
    lower-cased text holds the phrase's longest word are. Lower-casing maps each character on its
    own, so a word of a normalised text lies in its text lower-cased; the texts are lower-cased
    joined by NULs, at once — as bytes for an ASCII word (each other character a ``?``: only ``İ``
    and the Kelvin sign lower-case into an ASCII letter, and texts with one go the other way), else
    as characters."""

    def __init__(self, facts: Iterable[Facts]) -> None:
        self.facts = list(facts)
        self.texts = [f.source[: f.source_limit] for f in self.facts]
        self.starts, n = [], 0
        for t in self.texts:
            self.starts.append(n)
            n += len(t) + 1
        self._bytes: bytes | None = None
        self._chars: tuple[str, list[int]] | None = None

    def _as_bytes(self) -> bytes | None:
        """The texts lower-cased as bytes (None: a text lower-cases into an ASCII letter otherwise)."""
        if self._bytes is None:
            if any("\u0130" in t or "\u212a" in t for t in self.texts):
                return None
            self._bytes = b"\x00".join([t.encode("ascii", "replace") for t in self.texts]).lower()
        return self._bytes

    def _as_chars(self) -> tuple[str, list[int]]:
        if self._chars is None:
            texts = self.texts
            low = "\x00".join(texts).lower()
            if len(low) == sum(map(len, texts)) + len(texts) - 1:
                self._chars = low, self.starts
            else:  # a character lower-cased into two (İ)
                starts, n = [], 0
                for t in texts:
                    starts.append(n)
                    n += len(t.lower()) + 1
                self._chars = low, starts
        return self._chars

    def first(self, phrase: str) -> int | None:
        """The position (among the texts) of the first whose normalised text holds ``phrase``."""
        if not phrase:
            return 0 if self.facts else None
        word = max(phrase.split(" "), key=len)
        if not word:  # only spaces: no word to look for first
            return next((k for k, f in enumerate(self.facts) if phrase in f.text), None)
        raw = self._as_bytes() if word.isascii() else None
        if raw is not None:
            starts, key = self.starts, word.encode("ascii")
            find: Callable[[int], int] = lambda a: raw.find(key, a)  # noqa: E731
        else:
            low, starts = self._as_chars()
            find = lambda a: low.find(word, a)  # noqa: E731
        p = find(0)
        while p >= 0:
            k = bisect.bisect_right(starts, p) - 1
            if phrase in self.facts[k].text:
                return k
            p = find(starts[k + 1]) if k + 1 < len(starts) else -1
        return None

    def __contains__(self, phrase: str) -> bool:
        if not phrase or "\n" in phrase:  # the joined texts themselves
            return phrase in "\n".join(f.text for f in self.facts)
        return self.first(phrase) is not None


@dataclass(frozen=True)
class Survivors:
    """What a summary and the kept messages carry (the sets :func:`judge` looks items up in)."""

    prose: str
    prose_paths: frozenset[str]
    prose_idents: frozenset[str]
    prose_words: frozenset[str]
    files: frozenset[str]
    files_named: frozenset[str]
    """The listed files with their suffixes."""
    kept_paths: frozenset[str]
    kept_idents: frozenset[str]
    kept_errors: frozenset[str]
    kept_text: str | Said
    """The kept user, assistant and tool-output messages' texts (:attr:`Facts.text`), joined by
    newlines (a :class:`Said`: normalised only where a phrase may be)."""
    kept_words: frozenset[str]
    kept_source: str = ""
    """The kept messages' texts as read, joined by NULs: a path or an identifier is looked for in
    them (:func:`find_path`, :func:`find_ident`) instead of every token being read."""
    kept_found: frozenset[tuple[str, str]] | None = None
    """The (kind, item) pairs :attr:`kept_source` was found to mention, all looked for in one scan
    (:func:`with_kept_found`); None: each is looked for when asked."""


@dataclass(frozen=True)
class CompactionRetention:
    """The retention of one compaction under one summary."""

    span: Span
    summary_label: str
    needed: tuple[Needed, ...]
    redo: Redo
    files: tuple[dict[str, Any], ...] = field(default=())
    """Every file touched in the span: path, ops, needed, where (empty: dropped)."""

    def recall(self) -> dict[str, float | None]:
        """Kept / needed per category (None: nothing of that category was needed)."""
        out: dict[str, float | None] = {}
        for c in CATEGORIES:
            items = [n for n in self.needed if n.kind == c]
            out[c] = round(sum(n.kept for n in items) / len(items), 4) if items else None
        return out

    @property
    def forgotten(self) -> tuple[Needed, ...]:
        return tuple(n for n in self.needed if not n.kept)

    @property
    def overall(self) -> float | None:
        """Kept / needed over every item (None: nothing needed)."""
        return round(sum(n.kept for n in self.needed) / len(self.needed), 4) if self.needed else None

    def as_dict(self, details: bool = False) -> dict[str, Any]:
        d: dict[str, Any] = {
            "entryIndex": self.span.entry_index,
            "source": self.span.source,
            "recall": self.recall(),
            "needed": len(self.needed),
            "forgotten": [n.as_dict(details) for n in self.forgotten],
        }
        if details:
            d |= {
                "step": self.span.step,
                "summary": self.summary_label,
                "overall": self.overall,
                "kept": [n.as_dict(True) for n in self.needed if n.kept],
                "redo": self.redo.as_dict(),
                "files": list(self.files),
            }
            if self.span.unread:
                d["summaryUnread"] = self.span.unread
        return d


# ---------------------------------------------------------------------------------------------
# What survives
# ---------------------------------------------------------------------------------------------


def file_blocks(text: str) -> tuple[str, set[str]]:
    """``text`` without its ``<read-files>``/``<modified-files>`` blocks, and the files they list.
    A block starts with one of its two tags: the pattern runs from the first of them on (a
    summary lists its files at its end; before, the whole text went through the pattern twice)."""
    text = text or ""
    tags = [p for p in (text.find("<read-files>"), text.find("<modified-files>")) if p >= 0]
    if not tags:
        return text, set()
    at = min(tags)
    files: set[str] = set()
    for _, body in _FILE_BLOCK.findall(text, at):
        files |= {x.strip() for x in body.splitlines() if x.strip()}
    return text[:at] + _FILE_BLOCK.sub("", text[at:]), files


def survivors(session: Any, span: Span, summary_text: str) -> Survivors:
    """The sets an item is looked up in: the summary's prose, its file lists, the kept messages."""
    prose, listed = file_blocks(summary_text)
    if span.file_lists is not None:
        listed = set(span.file_lists[0]) | set(span.file_lists[1])
    facts = facts_for(session, span.kept)
    kept = [facts[i] for i in span.kept]
    deep = all(f.deep for f in kept)  # their tokens read: sets; else their texts are searched
    low, prose_paths, prose_idents, prose_words = read_prose(prose)
    return Survivors(
        prose=low,
        prose_paths=prose_paths,
        prose_idents=prose_idents,
        prose_words=prose_words,
        files=frozenset(listed),
        files_named=frozenset().union(*(path_suffixes(f) for f in listed)),
        kept_paths=frozenset(p for f in kept for p, _ in f.touches)
        | frozenset().union(*map(path_suffixes, span.attached))
        | (frozenset().union(*(f.paths for f in kept)) if deep else frozenset()),
        kept_idents=frozenset().union(*(f.idents for f in kept)) if deep else frozenset(),
        kept_errors=frozenset(e for f in kept for e in f.errors),
        kept_text=Said(f for f in kept if f.role in ("user", "assistant", "toolResult")),
        kept_words=frozenset().union(*(words(f.text) for f in kept if f.role == "user")),
        kept_source="" if deep else "\x00".join(f.source for f in kept),
    )


def _path_named(path: str, names: frozenset[str] | set[str]) -> bool:
    """Does a set of mentioned paths (with their suffixes) name ``path``? Either is a ``/``-suffix of
    the other."""
    return bool(path_suffixes(path) & names) or path.strip().rstrip("/") in names


@per_process
@lru_cache(maxsize=1 << 14)
def _path_searches(path: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """What to search a text for to find ``path`` mentioned (:func:`_path_named` over the paths of
    the text): (a string, the names an occurrence's token must give one of). Memoised: every
    compaction looks for every file of its span."""
    names = {n for n in (*path_suffixes(path), path.strip().rstrip("/")) if n}
    if not names:
        return ()
    short = min(names, key=len)
    if all(short in n for n in names):  # one search: each name holds the file's own name
        return ((short, frozenset(names)),)
    return tuple((n, frozenset({n})) for n in names)


def _path_in(path: str, text: str) -> bool:
    """Does ``text`` mention ``path`` (:func:`_path_named` over the paths of ``text``)?"""
    return any(find_path(text, n, names) >= 0 for n, names in _path_searches(path))


def with_kept_found(sv: Survivors, items: Iterable[tuple[str, str]]) -> Survivors:
    """``sv`` with :attr:`Survivors.kept_found`: which of the files and identifiers ``items`` (kind,
    item) the kept messages' texts mention, found in one scan of them (the same answers as
    :func:`_path_in` and :func:`find_ident` one by one)."""
    text = sv.kept_source
    patterns: dict[str, list[tuple[str, str, frozenset[str]]]] = {}
    for kind, item in items:
        if kind == "files":
            for n, names in _path_searches(item):
                patterns.setdefault(n, []).append((kind, item, names))
        elif kind == "identifiers":
            patterns.setdefault(item, []).append((kind, item, frozenset()))

    def accept(key: tuple[str, str, frozenset[str]], p: int) -> bool:
        kind, item, names = key
        return path_at(text, p, names) if kind == "files" else ident_at(text, p, item)

    hits = first_hits(text, patterns, accept) if text else {}
    return replace(sv, kept_found=frozenset((kind, item) for kind, item, _ in hits))


def _kept_mentions(sv: Survivors, kind: str, item: str) -> bool:
    if sv.kept_found is not None:
        return (kind, item) in sv.kept_found
    return _path_in(item, sv.kept_source) if kind == "files" else find_ident(sv.kept_source, item) >= 0


def _phrase_in(phrase: str, ws: frozenset[str], text: str | Said) -> bool:
    p = norm(phrase).lower()
    if p and p in text:
        return True
    need = words(phrase)
    return bool(need) and len(need & ws) >= max(1, round(PHRASE_SHARE * len(need) + 1e-9))


def _error_key(sig: str) -> str:
    """The part of an error line worth quoting: what follows its first ``: `` when that is long."""
    head, sep, rest = sig.partition(": ")
    return (rest if sep and len(rest) >= 12 else sig).lower()


def where(kind: str, item: str, sv: Survivors) -> tuple[str, ...]:
    """Where ``item`` survives (empty: nowhere)."""
    out = []
    if kind == "files":
        if _path_named(item, sv.prose_paths):
            out.append(SUMMARY)
        if item in sv.files or _path_named(item, sv.files_named):
            out.append(DETAILS)
        if _path_named(item, sv.kept_paths) or _kept_mentions(sv, kind, item):
            out.append(KEPT)
    elif kind == "identifiers":
        if item in sv.prose_idents or item in sv.prose:
            out.append(SUMMARY)
        if item in sv.kept_idents or _kept_mentions(sv, kind, item):
            out.append(KEPT)
    elif kind == "errors":
        key = _error_key(item)
        if key in sv.prose or _phrase_in(item, sv.prose_words, sv.prose):
            out.append(SUMMARY)
        if item in sv.kept_errors or key in sv.kept_text:
            out.append(KEPT)
    else:  # instructions, task
        if _phrase_in(item, sv.prose_words, sv.prose):
            out.append(SUMMARY)
        if _phrase_in(item, sv.kept_words, sv.kept_text):
            out.append(KEPT)
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# What was needed
# ---------------------------------------------------------------------------------------------


@dataclass
class _Uses:
    """First use in the horizon of every path, identifier, error and phrase (entry indexes)."""

    paths: dict[str, int] = field(default_factory=dict)
    idents: dict[str, int] = field(default_factory=dict)
    """First use by the user or the assistant (whether a tool output showed it before: :func:`_shown`)."""
    errors: dict[str, int] = field(default_factory=dict)
    said: list[tuple[int, Facts]] = field(default_factory=list)
    """The user and assistant messages (entry index, facts), in order."""
    first_call: int | None = None
    starts_with_user: bool = False
    outputs: list[int] = field(default_factory=list)
    """Tool outputs of the horizon (entry indexes), in order."""
    output_pos: list[int] = field(default_factory=list)
    """Their positions in the horizon."""
    pos: dict[int, int] = field(default_factory=dict)
    """Horizon position of each user or assistant message."""


def _uses(facts: Sequence[Facts], horizon: Sequence[int]) -> _Uses:
    u = _Uses()
    seen_message = False
    for k, i in enumerate(horizon):
        f = facts[i]
        if f.role == "other" and not f.text:
            continue
        if not seen_message and f.role in ("user", "assistant"):
            u.starts_with_user = f.role == "user" and not continuation(f.text)
            seen_message = True
        if f.role in ("user", "assistant"):
            if f.role == "assistant" and u.first_call is None:
                u.first_call = i
            paths, idents = f.tokens()
            for p in paths:
                u.paths.setdefault(p, i)
            for p, _ in f.touches:
                for s in path_suffixes(p):
                    u.paths.setdefault(s, i)
            for x in idents:
                u.idents.setdefault(x, i)
            u.said.append((i, f))
            u.pos[i] = k
        elif f.role in ("toolResult", "bash"):
            u.outputs.append(i)
            u.output_pos.append(k)
            for e in f.errors:
                u.errors.setdefault(e, i)
    return u


class _Texts:
    """The texts of some entries joined (by NULs: no name holds one), to find the first of them
    that mentions each of many identifiers in one scan (:func:`inspector.retention.search.first_hits_in`;
    each occurrence judged as :func:`inspector.retention.extract.find_ident` does, in the token of
    its entry that holds it). They are searched as bytes, each text encoded on its own (one byte
    per character, a non-ASCII one a ``?``: a text with one is much slower to join as characters
    than to encode); the joined characters are made only for a name with a non-ASCII character."""

    def __init__(self, facts: Sequence[Facts], indexes: Sequence[int]) -> None:
        self.order = indexes
        self.sources = [facts[i].source for i in indexes]
        self.starts = []
        n = 0
        for s in self.sources:
            self.starts.append(n)
            n += len(s) + 1
        self.size = max(n - 1, 0)
        self.text = Encoded(
            lambda: b"\x00".join([s.encode("ascii", "replace") for s in self.sources]),
            all(s.isascii() for s in self.sources),
            lambda a, b: "\x00".join(self.sources)[a:b],
        )

    def end(self, hi: int) -> int:
        """Where the text of entry ``hi`` starts (a name mentioned before it lies wholly before it)."""
        return self.starts[hi] if hi < len(self.starts) else self.size + 1

    def first(self, names: Iterable[str], until: dict[str, int] | None = None) -> dict[str, int]:
        """Name → where the texts first mention it as an identifier (before ``until[name]``, when
        given), for the names they mention."""
        starts, sources = self.starts, self.sources

        def accept(x: str, p: int) -> bool:
            k = bisect.bisect_right(starts, p) - 1
            return ident_at(sources[k], p - starts[k], x)

        hits = first_hits_in(
            self.text, {x: (x,) for x in names}, accept, 0, self.size, until=until, names=True
        )
        return {x: p for x, p in hits.items() if until is None or p < until[x]}

    def entry(self, p: int) -> int:
        """The position (among the entries) of the entry whose text holds position ``p``."""
        return bisect.bisect_right(self.starts, p) - 1


def _used_from_memory(facts: Sequence[Facts], span: Span, u: _Uses) -> dict[str, tuple[int, int]]:
    """Identifier → (first span entry that shows it, first use in the horizon), for the identifiers
    of the span the user or the assistant used before any tool output of the horizon showed them
    again. Only the horizon's names are looked for in the span (and in the horizon's outputs)."""
    if not u.idents:
        return {}
    if all(facts[i].deep for i in span.summarised) and all(facts[i].deep for i in u.outputs):
        return _used_from_memory_sets(facts, span, u)
    outputs = _Texts(facts, u.outputs)
    until = {}  # the names a tool output may show before their use: where the use's outputs end
    for x, j in u.idents.items():
        before = bisect.bisect_left(u.output_pos, u.pos[j])  # the horizon's outputs before the use
        if before:
            until[x] = outputs.end(before)
    shown = outputs.first(until, until) if until else {}
    span_texts = _Texts(facts, span.summarised)
    first = span_texts.first(x for x in u.idents if x not in shown)
    return {x: (span.summarised[span_texts.entry(first[x])], j) for x, j in u.idents.items() if x in first}


def _used_from_memory_sets(facts: Sequence[Facts], span: Span, u: _Uses) -> dict[str, tuple[int, int]]:
    """:func:`_used_from_memory` when every token of the span and the horizon's outputs is read: the
    same answer from set intersections."""
    pending = set(u.idents)
    first_shown: dict[str, int] = {}
    for q, o in zip(u.output_pos, u.outputs, strict=True):
        hits = facts[o].idents & pending
        if hits:
            first_shown.update(dict.fromkeys(hits, q))
            pending -= hits
            if not pending:
                break
    pending = {x for x, j in u.idents.items() if first_shown.get(x, len(span.horizon)) >= u.pos[j]}
    first: dict[str, int] = {}
    for i in span.summarised:
        hits = facts[i].idents & pending
        if hits:
            first.update(dict.fromkeys(hits, i))
            pending -= hits
            if not pending:
                break
    return {x: (i, u.idents[x]) for x, i in first.items()}


def _first_path_use(path: str, u: _Uses) -> int | None:
    hits = [u.paths[s] for s in path_suffixes(path) if s in u.paths]
    return min(hits) if hits else None


def _first_quote(key: str, u: _Uses, said: Said | None = None) -> int | None:
    """The first user or assistant message whose text (:attr:`Facts.text`) holds ``key`` (8
    characters or more; ``said``: those messages' :class:`Said`)."""
    if len(key) < 8:
        return None
    k = (said if said is not None else Said(f for _, f in u.said)).first(key)
    return u.said[k][0] if k is not None else None


def _span_items(facts: Sequence[Facts], span: Span) -> dict[str, dict[str, tuple[int, str]]]:
    """Every candidate item of the span but identifiers (:func:`_used_from_memory`): kind → item →
    (first entry, how it appeared)."""
    c: dict[str, dict[str, tuple[int, str]]] = {k: {} for k in KINDS}
    for i in span.summarised:
        f = facts[i]
        for p, op in f.touches:
            c["files"].setdefault(p, (i, f"{op} {p} at entry {i}"))
        for e in f.errors:
            c["errors"].setdefault(e, (i, f"tool output at entry {i}"))
        for s in f.instructions:
            c["instructions"].setdefault(s, (i, f"user message at entry {i}"))
    _merge_named(c["files"])
    lu = span.last_user
    if lu is not None and lu in set(span.summarised):
        text = facts[lu].text
        if text:
            c["task"][text[:240]] = (lu, f"the last user request before the cut (entry {lu})")
    return c


def _merge_named(files: dict[str, Any]) -> None:
    """Drop a path that is a ``/``-suffix of another path of the span (``a.py`` named in a bash
    command when ``/repo/a.py`` was read): one file, listed once, by its longest name."""
    longer = {x for q in files for x in path_suffixes(q) if x != q.strip().rstrip("/")}
    for p in [p for p in files if p in longer]:
        del files[p]


def _role_name(f: Facts) -> str:
    return {
        "toolResult": "a tool output",
        "user": "a user message",
        "assistant": "an assistant message",
        "bash": "a ! command",
    }.get(f.role, "a message")


def needed_items(session: Any, span: Span) -> list[tuple[str, str, int, int, str]]:
    """(kind, item, introducedAt, neededAt, evidence) of every item the horizon needed."""
    facts = facts_for(session, (*span.summarised, *span.horizon))
    u = _uses(facts, span.horizon)
    out: list[tuple[str, str, int, int, str]] = []
    cand = _span_items(facts, span)
    for p, (i, how) in cand["files"].items():
        j = _first_path_use(p, u)
        if j is not None:
            out.append(("files", p, i, j, f"{how}; named again at entry {j}"))
    for x, (i, j) in _used_from_memory(facts, span, u).items():
        how = f"in {_role_name(facts[i])} at entry {i}"
        out.append(("identifiers", x, i, j, f"{how}; used at entry {j} before any new tool output showed it"))
    said = Said(f for _, f in u.said)
    for e, (i, how) in cand["errors"].items():
        j = u.errors.get(e)
        q = _first_quote(_error_key(e), u, said)
        if j is not None and (q is None or j <= q):
            out.append(("errors", e, i, j, f"{how}; recurs in the tool output at entry {j}"))
        elif q is not None:
            out.append(("errors", e, i, q, f"{how}; referred to at entry {q}"))
    if u.first_call is not None:
        for s, (i, how) in cand["instructions"].items():
            out.append(
                (
                    "instructions",
                    s,
                    i,
                    u.first_call,
                    f"{how}; stands for every later call, from entry {u.first_call}",
                )
            )
        if not u.starts_with_user:
            for t, (i, how) in cand["task"].items():
                out.append(
                    (
                        "task",
                        t,
                        i,
                        u.first_call,
                        f"{how}; still open: the agent carries on at entry {u.first_call}",
                    )
                )
    out.sort(key=lambda x: (x[3], KINDS.index(x[0]), x[2], x[1]))
    return out


def redo(session: Any, span: Span, reread_events: Iterable[tuple[int, Any]]) -> Redo:
    """Re-reads (the replay's events), commands re-run and failing commands repeated in the horizon."""
    summarised = set(span.summarised)
    items: list[dict[str, Any]] = []
    rereads = 0
    for ei, ev in reread_events:
        if ev.earlier_entry_index in summarised:  # a replay's Reread event
            rereads += 1
            items.append(
                {"kind": "reread", "item": ev.path, "introducedAt": ev.earlier_entry_index, "redoneAt": ei}
            )
    facts = facts_for(session, (*span.summarised, *span.horizon))
    status = _command_status(facts, (*span.summarised, *span.horizon))
    before: dict[str, tuple[int, bool]] = {}
    for i in span.summarised:
        for cid, cmd in facts[i].commands:
            before.setdefault(cmd, (i, status.get(cid, False)))
    reruns = failing = 0
    for i in span.horizon:
        for cid, cmd in facts[i].commands:
            if cmd in before:
                reruns += 1
                was, now = before[cmd][1], status.get(cid, False)
                failing += was and now
                items.append(
                    {
                        "kind": "failing rerun" if was and now else "rerun",
                        "item": cmd,
                        "introducedAt": before[cmd][0],
                        "redoneAt": i,
                    }
                )
    return Redo(rereads, reruns, failing, tuple(items))


def _command_status(facts: Sequence[Facts], indexes: Iterable[int]) -> dict[str, bool]:
    """Tool call id → failed, from the tool results among ``indexes``."""
    out = {}
    for i in indexes:
        f = facts[i]
        if f.role == "toolResult" and f.call_id:
            out[f.call_id] = f.failed
    return out


def judge(
    session: Any,
    span: Span,
    items: Sequence[tuple[str, str, int, int, str]],
    summary_text: str,
    label: str,
    rd: Redo,
) -> CompactionRetention:
    """Score ``items`` against one summary text of ``span``."""
    sv = survivors(session, span, summary_text)
    facts = facts_for(session, span.summarised)
    if sv.kept_source:  # every file of the span and every identifier needed, looked for at once
        span_files = {p for i in span.summarised for p, _ in facts[i].touches}
        sv = with_kept_found(
            sv, [*(("files", p) for p in span_files), *((k, x) for k, x, *_ in items if k == "identifiers")]
        )
    needed = tuple(Needed(k, x, i, j, ev, where(k, x, sv)) for k, x, i, j, ev in items)
    needed_files = {x for k, x, *_ in items if k == "files"}
    touched: dict[str, tuple[int, list[str]]] = {}
    for i in span.summarised:
        for p, op in facts[i].touches:
            ops = touched.setdefault(p, (i, []))[1]
            if op not in ops:
                ops.append(op)
    _merge_named(touched)
    files = []
    for p, (i, ops) in touched.items():
        w = where("files", p, sv)
        files.append(
            {
                "path": p,
                "ops": ops,
                "introducedAt": i,
                "needed": p in needed_files,
                "where": list(w),
                "kept": bool(w),
            }
        )
    return CompactionRetention(span, label, needed, rd, tuple(files))
