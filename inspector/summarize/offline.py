"""The offline extractive summarizer: no network, deterministic, in pi's structured format.

It writes pi's sections (Goal; Constraints & Preferences; Progress with Done / In Progress /
Blocked; Key Decisions; Next Steps; Critical Context) from what the messages say — the user's
requests, the files read and changed, tool errors, the assistant's last statements — without
inventing anything. With a previous summary it *updates* it: previous items are kept and new
ones appended. It respects the token budget (pi's estimate) by trimming the longest sections
first. Everywhere it appears it is labelled "offline extractive".
"""

from __future__ import annotations

import math
import re
import time

from ..compaction import FileOps, extract_file_ops
from ..jsjson import utf16_len
from ..session.models import (
    AssistantMessage,
    BashExecutionMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from .base import SummaryRequest, SummaryResult, SummaryUsage

LABEL = "offline extractive"
_WS = re.compile(r"\s+")
_CONSTRAINT = re.compile(r"\b(must|never|don't|do not|always|should not|shouldn't|keep|avoid|only|prefer)\b", re.I)
_DECISION = re.compile(r"\b(I'll|I will|decided|instead|switch(ed)? to|use|using|chose|going to)\b", re.I)


def _one_line(text: str, limit: int = 200) -> str:
    t = _WS.sub(" ", text).strip().lstrip("-*• ").strip()
    return t if len(t) <= limit else t[: limit - 1] + "…"


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(b.text for b in content if isinstance(b, TextContent))
    return ""


def _sections_of(summary: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    cur = None
    for line in summary.splitlines():
        if line.startswith("#"):
            cur = line.lstrip("#").strip()
            out.setdefault(cur, [])
        elif cur and line.strip() and not line.startswith("<"):
            out[cur].append(line.rstrip())
    return out


def estimate(text: str) -> int:
    return math.ceil(utf16_len(text) / 4)


class OfflineSummarizer:
    name = "offline"
    label = LABEL

    def summarize(self, req: SummaryRequest) -> SummaryResult:
        t0 = time.perf_counter()
        goals: list[str] = []
        constraints: list[str] = []
        decisions: list[str] = []
        errors: list[str] = []
        done: list[str] = []
        last_statements: list[str] = []
        ops = FileOps()
        calls: dict[str, ToolCall] = {}
        for cm in req.messages:
            m = cm.message
            if isinstance(m, UserMessage):
                t = _one_line(_text(m.content))
                if t:
                    goals.append(t)
                    for sent in re.split(r"(?<=[.!?])\s+", t):
                        if _CONSTRAINT.search(sent):
                            constraints.append(_one_line(sent, 160))
            elif isinstance(m, AssistantMessage):
                extract_file_ops(m, ops)
                for b in m.content:
                    if isinstance(b, ToolCall):
                        calls[b.id] = b
                text = " ".join(b.text for b in m.content if isinstance(b, TextContent)).strip()
                if text:
                    last_statements.append(_one_line(text, 240))
                    if _DECISION.search(text):
                        decisions.append(_one_line(text, 160))
                if m.stopReason in ("error", "aborted"):
                    errors.append(f"an answer ended {m.stopReason}" + (f": {_one_line(m.errorMessage, 120)}"
                                                                       if m.errorMessage else ""))
            elif isinstance(m, ToolResultMessage):
                c = calls.get(m.toolCallId)
                what = f"{m.toolName}" + (f" {c.arguments.get('path') or c.arguments.get('command') or ''}"
                                          if c is not None and isinstance(c.arguments, dict) else "")
                if m.isError:
                    errors.append(f"{what.strip()}: {_one_line(_text(m.content), 160)}")
                elif m.toolName in ("edit", "write"):
                    done.append(f"{m.toolName} {c.arguments.get('path', '') if c and isinstance(c.arguments, dict) else ''}".strip())
            elif isinstance(m, BashExecutionMessage):
                if m.exitCode not in (None, 0):
                    errors.append(f"user ran `{_one_line(m.command, 80)}`: exit code {m.exitCode}")
        prev = _sections_of(req.previous_summary) if req.previous_summary else {}
        read_files, modified_files = ops.lists()

        def merge(name: str, new: list[str], prefix: str = "- ", cap: int = 12) -> list[str]:
            old = prev.get(name, [])
            seen = {_WS.sub(" ", x).strip().lower() for x in old}
            lines = list(old)
            for x in dict.fromkeys(new):
                line = prefix + x
                if _WS.sub(" ", line).strip().lower() not in seen:
                    lines.append(line)
            return lines[-cap:] if len(lines) > cap else lines

        latest = goals[-1] if goals else ""
        sections = [
            ("Goal", merge("Goal", goals[-3:] if goals else [], prefix="")),
            ("Constraints & Preferences", merge("Constraints & Preferences", constraints) or ["- (none)"]),
            ("Progress", []),
            ("Done", merge("Done", [f"[x] {d}" for d in dict.fromkeys(done)] +
                           [f"[x] modified {f}" for f in modified_files if not any(f in d for d in done)])),
            ("In Progress", [f"- [ ] {latest}"] if latest else ["- (none)"]),
            ("Blocked", merge("Blocked", errors[-6:]) or ["- (none)"]),
            ("Key Decisions", merge("Key Decisions", [f"**{_one_line(d, 60)}**" for d in decisions[-5:]]) or ["- (none)"]),
            ("Next Steps", [f"1. {_one_line(latest, 200)}"] if latest else ["1. (none recorded)"]),
            ("Critical Context", merge("Critical Context", last_statements[-3:]) or ["- (none)"]),
        ]
        if latest and not any(latest in x for x in sections[0][1]):
            sections[0][1].append(latest)
        text = self._render(sections, req.max_tokens, latest)
        dt = time.perf_counter() - t0
        return SummaryResult(text=text, usage=SummaryUsage(0, estimate(text), 0, dt, 0.0), summarizer=LABEL,
                             prompt="(offline extractive: no prompt is sent)")

    @staticmethod
    def _render(sections: list[tuple[str, list[str]]], budget: int, latest: str) -> str:
        def render(secs: list[tuple[str, list[str]]]) -> str:
            parts = []
            for name, lines in secs:
                level = "###" if name in ("Done", "In Progress", "Blocked") else "##"
                parts.append(f"{level} {name}" + ("\n" + "\n".join(lines) if lines else ""))
            return "\n\n".join(parts)

        secs = [(n, list(ls)) for n, ls in sections]
        text = render(secs)
        # over budget: drop the oldest lines of the longest sections, but never the latest request
        while estimate(text) > budget:
            name, lines = max(secs, key=lambda s: sum(len(x) for x in s[1]))
            if len(lines) <= 1:
                break
            drop = next((k for k, x in enumerate(lines) if latest not in x), None)
            if drop is None:
                break
            del lines[drop]
            text = render(secs)
        return text
