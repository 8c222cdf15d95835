"""Comparing an oracle-shaped JSON (ours: ``inspector oracle-json``) with pi's (``tools/pi-oracle``).

``compare(pi, ours)`` checks what decides a replay, entry by entry **by index** (never by id: pi
gives migrated v1 entries random ids): every entry's type, role, parent, token estimate, error
flag, usage and kept entry; the path; the context pi builds (each message's role, source and
tokens) and its usage-based size; for every keepRecentTokens, ``findCutPoint``,
``prepareCompaction`` (cut, split, tokensBefore, previous summary, the summarised and turn-prefix
spans with their serialized text's length and sha256, the file lists) and the context after the
compaction; ``shouldCompact``; the whole serialized context. In branch mode: the common ancestor,
the entries to summarise and ``prepareBranchEntries`` at every budget.

``strict_differences(pi, ours)`` goes further: every field pi printed, with the same value, and no
other field (``meta`` fields that describe the program rather than the session aside).

Values are equal when JSON would call them equal: ``true`` is not ``1``, and a number pi prints as
a double (``123456789012345680000``) equals the same double held as an int or a float.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# meta fields that describe the program and its run, not the session
PROGRAM_META = frozenset({"oracle", "piPackage", "node", "note", "engine"})

ENTRY_FIELDS = (
    "type",
    "role",
    "parentIndex",
    "tokens",
    "isError",
    "usageContextTokens",
    "firstKeptEntryIndex",
)
SPAN_FIELDS = ("count", "tokens", "entryIndexes", "roles", "serializedChars", "serializedSha256")


def same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        try:
            return a == b or float(a) == float(b)
        except OverflowError:
            return False
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _short(v: Any, width: int = 160) -> str:
    s = json.dumps(v, ensure_ascii=False)
    return s if len(s) <= width else s[: width - 3] + "..."


def at(obj: Any, *keys: str | int) -> Any:
    """``obj[k1][k2]...``, or None where a step is missing."""
    for k in keys:
        if isinstance(k, int):
            obj = obj[k] if isinstance(obj, list) and 0 <= k < len(obj) else None
        else:
            obj = obj.get(k) if isinstance(obj, dict) else None
    return obj


@dataclass
class Group:
    checks: int = 0
    agree: int = 0
    first_differences: list[str] = field(default_factory=list)


@dataclass
class Comparison:
    """Checks made, grouped by what they are about (``compaction[keep=2000].findCutPoint``, ...)."""

    groups: dict[str, Group] = field(default_factory=dict)

    def check(self, group: str, label: str, pi: Any, ours: Any) -> None:
        g = self.groups.setdefault(group, Group())
        g.checks += 1
        if same(pi, ours):
            g.agree += 1
        elif len(g.first_differences) < 5:
            g.first_differences.append(f"{label}: pi={_short(pi)} ours={_short(ours)}")

    @property
    def checks(self) -> int:
        return sum(g.checks for g in self.groups.values())

    @property
    def agree(self) -> int:
        return sum(g.agree for g in self.groups.values())

    @property
    def ok(self) -> bool:
        return self.checks > 0 and self.agree == self.checks

    def disagreeing(self) -> list[str]:
        """One line per group with a difference: its name, count and first differences."""
        return [
            f"{name}: {g.agree}/{g.checks} agree; " + "; ".join(g.first_differences[:3])
            for name, g in self.groups.items()
            if g.agree != g.checks
        ]

    def report(self) -> str:
        lines = []
        for name, g in self.groups.items():
            lines.append(f"{'ok ' if g.agree == g.checks else 'BAD'} {name}: {g.agree}/{g.checks}")
            if g.agree != g.checks:
                lines += [f"      {d}" for d in g.first_differences]
        pct = 100.0 * self.agree / self.checks if self.checks else 0.0
        lines.append(f"parity: {self.agree}/{self.checks} checks agree ({pct:.2f}%)")
        return "\n".join(lines)


def compare(pi: dict[str, Any], ours: dict[str, Any]) -> Comparison:
    """Main or branch mode, as pi's output says."""
    c = Comparison()
    if at(pi, "meta", "mode") == "branch":
        _branch(c, pi, ours)
    else:
        _main(c, pi, ours)
    return c


def _span(c: Comparison, group: str, pi: Any, ours: Any) -> None:
    for f in SPAN_FIELDS:
        c.check(group, f, at(pi, f), at(ours, f))


def _by(rows: Iterable[dict[str, Any]] | None, key: str) -> dict[Any, dict[str, Any]]:
    return {r.get(key): r for r in rows or ()}


def _main(c: Comparison, pi: dict[str, Any], ours: dict[str, Any]) -> None:
    c.check("leaf", "leafIndex", pi.get("leafIndex"), ours.get("leafIndex"))
    _entries(c, pi, ours)
    c.check("path", "entryIndexes", at(pi, "path", "entryIndexes"), at(ours, "path", "entryIndexes"))
    _context(c, pi, ours)
    ours_by_keep = _by(ours.get("compaction"), "keepRecentTokens")
    for comp in pi.get("compaction") or ():
        _compaction(c, comp, ours_by_keep.get(comp["keepRecentTokens"], {}))

    def asked(row: dict[str, Any]) -> str:
        return json.dumps(
            [row.get("contextTokens"), row.get("contextWindow"), row.get("settings")], sort_keys=True
        )

    ours_answers = {asked(row): row.get("result") for row in ours.get("shouldCompact") or ()}
    for row in pi.get("shouldCompact") or ():
        c.check("shouldCompact", asked(row), row.get("result"), ours_answers.get(asked(row)))
    c.check(
        "serialize",
        "wholeContext.sha256",
        at(pi, "serializeWholeContext", "sha256"),
        at(ours, "serializeWholeContext", "sha256"),
    )


def _entries(c: Comparison, pi: dict[str, Any], ours: dict[str, Any]) -> None:
    ours_by_index = _by(ours.get("entries"), "index")
    c.check("entries", "count", len(pi.get("entries") or ()), len(ours_by_index))
    for e in pi.get("entries") or ():
        mine = ours_by_index.get(e["index"], {})
        for f in ENTRY_FIELDS:
            if f in e:
                c.check("entries", f"[{e['index']}].{f}", e[f], mine.get(f))


def _context(c: Comparison, pi: dict[str, Any], ours: dict[str, Any]) -> None:
    for f in ("thinkingLevel", "model", "messageCount", "sumEstimateTokens"):
        c.check("context", f, at(pi, "context", f), at(ours, "context", f))
    theirs, mine = at(pi, "context", "messages") or [], at(ours, "context", "messages") or []
    c.check("context.messages", "count", len(theirs), len(mine))
    for i, m in enumerate(theirs):
        for f in ("role", "entryIndex", "tokens"):
            c.check("context.messages", f"[{i}].{f}", m.get(f), at(mine, i, f))
    for f in ("tokens", "usageTokens", "trailingTokens", "lastUsageEntryIndex"):
        c.check(
            "contextTokens",
            f,
            at(pi, "contextTokens", "estimateContextTokens", f),
            at(ours, "contextTokens", "estimateContextTokens", f),
        )


def _compaction(c: Comparison, pi: dict[str, Any], ours: dict[str, Any]) -> None:
    group = f"compaction[keep={pi['keepRecentTokens']}]"
    for f in ("startIndex", "firstKeptEntryIndex", "turnStartIndex", "isSplitTurn"):
        c.check(f"{group}.findCutPoint", f, at(pi, "findCutPoint", f), at(ours, "findCutPoint", f))
    prep_pi, prep_ours = pi.get("prepareCompaction") or {}, ours.get("prepareCompaction") or {}
    for f in ("firstKeptEntryIndex", "isSplitTurn", "tokensBefore", "previousSummaryPresent"):
        c.check(f"{group}.prepareCompaction", f, prep_pi.get(f), prep_ours.get(f))
    for span in ("messagesToSummarize", "turnPrefixMessages"):
        _span(c, f"{group}.{span}", prep_pi.get(span), prep_ours.get(span))
    for f in ("readFiles", "modifiedFiles"):
        c.check(f"{group}.fileOps", f, at(prep_pi, "fileOps", f), at(prep_ours, "fileOps", f))
    for f in ("messageCount", "entryIndexes", "sumEstimateTokens"):
        c.check(f"{group}.afterCompaction", f, at(pi, "afterCompaction", f), at(ours, "afterCompaction", f))


def _branch(c: Comparison, pi: dict[str, Any], ours: dict[str, Any]) -> None:
    c.check("branch", "commonAncestorIndex", pi.get("commonAncestorIndex"), ours.get("commonAncestorIndex"))
    c.check(
        "branch",
        "entriesToSummarize",
        [e.get("index") for e in pi.get("entriesToSummarize") or ()],
        [e.get("index") for e in ours.get("entriesToSummarize") or ()],
    )
    ours_by_budget = _by(ours.get("prepareBranchEntries"), "tokenBudget")
    for prep in pi.get("prepareBranchEntries") or ():
        mine = ours_by_budget.get(prep["tokenBudget"], {})
        group = f"prepareBranchEntries[budget={prep['tokenBudget']}]"
        c.check(group, "totalTokens", prep.get("totalTokens"), mine.get("totalTokens"))
        _span(c, f"{group}.messages", prep.get("messages"), mine.get("messages"))
        for f in ("readFiles", "modifiedFiles"):
            c.check(f"{group}.fileOps", f, at(prep, "fileOps", f), at(mine, "fileOps", f))


def strict_differences(
    pi: Any, ours: Any, *, skip_meta: frozenset[str] = PROGRAM_META, limit: int = 12
) -> list[str]:
    """Every field pi printed, present in ours with the same value, and no other field in ours
    (``meta`` fields in ``skip_meta`` aside); the first ``limit`` differences, each with its path."""
    out: list[str] = []
    _strict(pi, ours, "", out, limit, skip_meta)
    return out


def _strict(pi: Any, ours: Any, where: str, out: list[str], limit: int, skip_meta: frozenset[str]) -> None:
    if len(out) >= limit:
        return
    if isinstance(pi, dict) and isinstance(ours, dict):
        for k in [*pi, *(k for k in ours if k not in pi)]:
            if where == "meta" and k in skip_meta:
                continue
            here = f"{where}.{k}" if where else k
            if k not in ours:
                out.append(f"{here}: missing in ours (pi={_short(pi[k], 200)})")
            elif k not in pi:
                out.append(f"{here}: not printed by pi (ours={_short(ours[k], 200)})")
            else:
                _strict(pi[k], ours[k], here, out, limit, skip_meta)
    elif isinstance(pi, list) and isinstance(ours, list):
        if len(pi) != len(ours):
            out.append(f"{where}: {len(pi)} items in pi, {len(ours)} in ours")
        for i, (a, b) in enumerate(zip(pi, ours, strict=False)):
            _strict(a, b, f"{where}[{i}]", out, limit, skip_meta)
    elif not same(pi, ours):
        out.append(f"{where}: pi={_short(pi, 200)} ours={_short(ours, 200)}")


def main(argv: list[str]) -> int:
    """``python -m tests.support.pi_compare PI.json OURS.json``: the comparison's report; exit
    status 0 only when every check agrees."""
    if len(argv) != 2:
        print("usage: python -m tests.support.pi_compare PI.json OURS.json")
        return 2
    pi, ours = (json.loads(Path(p).read_text(encoding="utf-8")) for p in argv)
    c = compare(pi, ours)
    print(c.report())
    return 0 if c.ok else 1


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
