"""pi's summary sections as data: parse any earlier summary, merge, render within a token budget.

The layouts are pi's (``compaction.ts`` SUMMARIZATION_PROMPT / TURN_PREFIX_SUMMARIZATION_PROMPT and
``branch-summarization.ts`` BRANCH_SUMMARY_PROMPT): section names, ``### Done`` / ``### In
Progress`` / ``### Blocked`` under ``## Progress``, ``- [x]`` / ``- [ ]`` / ``**Decision**:`` /
numbered next steps. :func:`parse_summary` reads pi's own summaries (file blocks and the split-turn
part included) and foreign ones (Claude Code's nine sections, OpenCode's headings, free-form
checkpoints): known headings map onto pi's sections, the rest is kept whole under Critical
Context, so an update never silently drops earlier content. Code fences stay intact.
"""

from __future__ import annotations

import functools
import re
import textwrap
from dataclasses import dataclass

from ..jsjson import utf16_len, utf16_slice
from ..tokens import get_counter

HISTORY = (
    "Goal",
    "Constraints & Preferences",
    "Done",
    "In Progress",
    "Blocked",
    "Key Decisions",
    "Next Steps",
    "Critical Context",
)
BRANCH = HISTORY[:-1]
TURN_PREFIX = ("Original Request", "Early Progress", "Context for Suffix")
_PROGRESS = ("Done", "In Progress", "Blocked")
_MARK = {"Done": "- [x] ", "In Progress": "- [ ] ", "Goal": "", "Original Request": ""}

# heading words (lower case, first match wins) -> pi section
_HEADINGS = (
    ("in progress", "In Progress"),
    ("current task", "In Progress"),
    ("current work", "In Progress"),
    ("active", "In Progress"),
    ("original request", "Goal"),
    ("primary request", "Goal"),
    ("goal", "Goal"),
    ("objective", "Goal"),
    ("constraint", "Constraints & Preferences"),
    ("preference", "Constraints & Preferences"),
    ("instruction", "Constraints & Preferences"),
    ("requirement", "Constraints & Preferences"),
    ("early progress", "Done"),
    ("done", "Done"),
    ("completed", "Done"),
    ("accomplished", "Done"),
    ("blocked", "Blocked"),
    ("blocker", "Blocked"),
    ("decision", "Key Decisions"),
    ("next step", "Next Steps"),
    ("next move", "Next Steps"),
    ("pending", "Next Steps"),
    ("critical context", "Critical Context"),
    ("context for suffix", "Critical Context"),
)
_FILE_BLOCK = re.compile(r"<(read|modified)-files>.*?</\1-files>", re.S)
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_LIST = re.compile(r"^\s{0,1}(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
_CHECK = re.compile(r"^\[[ xX]\]\s+")
_NONE = {"(none)", "none", "(none recorded)", "(none stated)", "n/a"}
_WS = re.compile(r"\s+")


@dataclass
class Item:
    text: str
    keep: bool = False
    """Never dropped to meet the budget (the user's latest request)."""


Sections = dict[str, list[Item]]


def estimate(text: str) -> int:
    """pi's estimate: ceil(UTF-16 length / 4)."""
    return get_counter("pi").count_text(text)


@functools.lru_cache(maxsize=1 << 16)
def norm(text: str) -> str:
    """An item's identity for de-duplication (whitespace folded, case ignored). Cached: merging
    the summaries of a long replay compares the same items at every compaction."""
    return _WS.sub(" ", text).strip().lower()


def _section_of(heading: str) -> str | None:
    h = heading.lower()
    return next((sec for word, sec in _HEADINGS if word in h), None)


def _blocks(text: str) -> list[tuple[str | None, list[str]]]:
    """(heading or None, body lines), headings inside code fences ignored. A heading is a markdown
    one, or one of Claude Code's nine numbered section titles on a line of its own
    (``1. Primary Request and Intent:``, as its compaction summaries write them)."""
    out: list[tuple[str | None, list[str]]] = [(None, [])]
    fence = False
    for line in text.splitlines():
        if "```" in line and line.lstrip().startswith("```"):
            fence = not fence
        m = None if fence or "#" not in line else _HEADING.match(line)
        if m:
            out.append((m.group(2).strip().strip("*").strip(), []))
        elif not fence and (title := _claude_title(line)) is not None:
            out.append((title, []))
        else:
            out[-1][1].append(line.rstrip())
    return out


_NUMBERED_TITLE = re.compile(r"^\s{0,3}\d{1,2}\.\s+\**([A-Za-z][A-Za-z ]{2,40}?)\**:\s*$")


@functools.lru_cache(maxsize=1)
def _claude_titles() -> frozenset[str]:
    from .prompts import CLAUDE_CODE_SECTIONS

    return frozenset(t.lower() for t in CLAUDE_CODE_SECTIONS)


def _claude_title(line: str) -> str | None:
    """The section title of a ``N. Title:`` line naming one of Claude Code's nine sections."""
    m = _NUMBERED_TITLE.match(line) if line[:4].lstrip()[:1].isdigit() else None
    return m.group(1) if m is not None and m.group(1).lower() in _claude_titles() else None


def _items(lines: list[str]) -> list[str]:
    """List items and paragraphs; indented lines and code fences continue the item before them."""
    if not any("```" in ln or ln.startswith(("  ", "\t")) for ln in lines):
        return _flat_items(lines)
    return _nested_items(lines)


def _nested_items(lines: list[str]) -> list[str]:
    """:func:`_items` in general: lines gathered into items first (continuations, fences)."""
    items: list[list[str]] = []
    fence = False
    for line in lines:
        starts_fence = "```" in line and line.lstrip().startswith("```")
        if fence or (line.startswith(("  ", "\t")) and items and line.strip()):
            items[-1].append(line)
        elif starts_fence and items and items[-1][-1].rstrip().endswith(":"):
            items[-1].append(line)
        elif line.strip():
            items.append([line])
        elif items:  # a blank line stays inside an item if an indented line follows (stripped otherwise)
            items[-1].append("")
        if starts_fence:
            fence = not fence
    out = []
    for lines_ in items:
        marker = _LIST.match(lines_[0])
        width = len(marker.group(0)) if marker else 0  # continuation lines are indented by the marker
        rest = [ln[min(width, len(ln) - len(ln.lstrip(" "))) :] for ln in lines_[1:]]
        first = lines_[0][width:]  # the marker (anchored at the start) cut off
        check = _CHECK.match(first)
        first = (first[check.end() :] if check else first).strip()
        text = "\n".join([first, *rest]).strip()
        if text and norm(text) not in _NONE:
            out.append(text)
    return out


def _flat_items(lines: list[str]) -> list[str]:
    """:func:`_items` of lines with no fence and no indented line (most summaries): each
    non-blank line is one item (a blank line only ends one, and is stripped)."""
    out = []
    for line in lines:
        marker = _LIST.match(line)
        first = line[marker.end() :] if marker else line
        check = _CHECK.match(first)
        text = (first[check.end() :] if check else first).strip()
        if text and norm(text) not in _NONE:
            out.append(text)
    return out


def parse_summary(text: str) -> dict[str, list[str]]:
    """An earlier summary's items by pi section (unknown sections whole, under Critical Context)."""
    from .prompts import BRANCH_SUMMARY_PREAMBLE, CODEX_SUMMARY_PREFIX

    text = _FILE_BLOCK.sub("", text)
    for prefix in (BRANCH_SUMMARY_PREAMBLE, CODEX_SUMMARY_PREFIX):
        text = text.removeprefix(prefix)
    text = "\n".join(
        ln for ln in text.splitlines() if ln.strip() not in ("---", "**Turn Context (split turn):**")
    )
    out: dict[str, list[str]] = {}
    for heading, body in _blocks(text):
        sec = _section_of(heading) if heading else None
        if heading is not None and heading.lower() in _claude_titles():  # its body is indented under it
            body = textwrap.dedent("\n".join(body)).splitlines()
        items = _items(body)
        if sec is not None:
            if heading and ":" in heading:  # "Current Task: File Reorganization" keeps its subject
                items.insert(0, heading.split(":", 1)[1].strip())
            out.setdefault(sec, []).extend(i for i in items if i)
        elif heading is None:
            out.setdefault("Critical Context", []).extend(items)
        elif items:
            body_text = "\n".join(body).strip()
            out.setdefault("Critical Context", []).append(f"**{heading}**\n{body_text}")
    return out


def merge(old: Sections, new: Sections) -> Sections:
    """``new`` folded into ``old`` (both in pi's sections), as pi's update prompt asks: earlier items
    kept, new ones added, Next Steps rewritten when there are new ones; earlier In Progress items
    are kept as context when new work is in progress (their completion is not known)."""
    out: Sections = {}
    for sec in dict.fromkeys([*HISTORY, *old, *new]):
        a, b = list(old.get(sec, [])), list(new.get(sec, []))
        if sec == "Next Steps" and b:
            a = []
        if sec == "In Progress" and b and a:
            out.setdefault("Critical Context", [])
            current = {norm(i.text) for i in b}
            a_moved = [Item(f"Earlier in progress: {i.text}") for i in a if norm(i.text) not in current]
            out["Critical Context"] = a_moved + out["Critical Context"]
            a = []
        seen = {norm(i.text) for i in out.get(sec, [])}
        merged = out.setdefault(sec, [])
        for it in a + b:
            k = norm(it.text)
            if k not in seen:
                seen.add(k)
                merged.append(Item(it.text, it.keep))
    return out


def from_text(text: str) -> Sections:
    return {k: [Item(t) for t in v] for k, v in parse_summary(text).items()}


def _lines(sec: str, items: list[Item]) -> list[str]:
    mark = _MARK.get(sec, "- ")
    lines = []
    for n, it in enumerate(items, 1):
        m = f"{n}. " if sec == "Next Steps" else mark
        if "\n" not in it.text:  # most items: one line
            lines.append(m + it.text)
            continue
        first, *rest = it.text.split("\n")
        lines.append(m + first + "".join("\n" + (" " * len(m) if r.strip() else "") + r for r in rest))
    return lines


def _empty(sec: str) -> str:
    return "(none stated)" if sec in ("Goal", "Original Request") else "- (none)"


def _head(sec: str) -> str:
    return ("### " if sec in _PROGRESS else "## ") + sec + "\n"


def render(sections: Sections, layout: tuple[str, ...]) -> str:
    return _join({sec: _lines(sec, sections.get(sec, [])) for sec in layout}, layout)


def _join(lines: dict[str, list[str]], layout: tuple[str, ...]) -> str:
    """The summary from each section's rendered item lines."""
    parts: list[str] = []
    for sec in layout:
        if sec == "Done":
            parts.append("## Progress")
        parts.append(_head(sec) + "\n".join(lines[sec] or [_empty(sec)]))
    return "\n\n".join(parts)


def fit(sections: Sections, layout: tuple[str, ...], budget: int) -> str:
    """Render within ``budget`` tokens (pi estimate): drop the oldest item of the largest section
    (the last for Next Steps) until it fits, never an item marked ``keep``; cut the text as a last
    resort.

    The rendered length is kept up to date item by item (each item's line does not depend on
    the others, except Next Steps' numbers, re-rendered when an item before the last goes), so
    dropping many items costs one render, not one per item."""
    secs = {k: list(v) for k, v in sections.items() if k in layout}
    size = {k: sum(len(i.text) for i in v) for k, v in secs.items()}
    lines = {sec: _lines(sec, secs.get(sec, [])) for sec in layout}
    lens = {sec: [utf16_len(x) for x in ls] for sec, ls in lines.items()}

    def part_len(sec: str) -> int:
        ls = lens[sec]
        body = sum(ls) + len(ls) - 1 if ls else utf16_len(_empty(sec))
        return utf16_len(_head(sec)) + body

    parts = {sec: part_len(sec) for sec in layout}
    n_parts = len(layout) + (1 if "Done" in layout else 0)
    extra = (utf16_len("## Progress") if "Done" in layout else 0) + 2 * (n_parts - 1)
    total = sum(parts.values()) + extra
    while -(-total // 4) > budget:  # pi's estimate: ceil(length / 4)
        cands = [(size[k], -layout.index(k), k) for k, v in secs.items() if any(not i.keep for i in v)]
        if not cands:
            break
        sec = max(cands)[2]
        order = range(len(secs[sec]) - 1, -1, -1) if sec == "Next Steps" else range(len(secs[sec]))
        k = next(j for j in order if not secs[sec][j].keep)
        size[sec] -= len(secs[sec][k].text)
        del secs[sec][k]
        if sec == "Next Steps" and k != len(secs[sec]):  # numbers after it shift
            lines[sec] = _lines(sec, secs[sec])
            lens[sec] = [utf16_len(x) for x in lines[sec]]
        else:
            del lines[sec][k]
            del lens[sec][k]
        total -= parts[sec]
        parts[sec] = part_len(sec)
        total += parts[sec]
    text = _join(lines, layout)  # the lines kept up to date above: render(secs, layout)
    if estimate(text) > budget:
        room = max(0, budget * 4 - 1)
        cut = utf16_slice(text, room)
        if cut and "\ud800" <= cut[-1] <= "\udbff":  # do not leave half of a surrogate pair
            cut = cut[:-1]
        text = cut + "…" if room else ""
    return text
