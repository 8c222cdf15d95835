"""Tables and small computations behind the pages (pure functions, no streamlit).

Session text returned here is plain text: pages show it through dataframes, ``st.text`` or
``st.code``, never as HTML or unescaped markdown.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..compaction_view import put_back_messages
from ..numbers import clamp_int
from ..session.models import (
    AssistantMessage,
    BashExecutionMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
)
from ..visible import clip
from .figures import message_kind, message_text

# -- Replay ---------------------------------------------------------------------------------------


def pruned_positions(detail: Any) -> set[int]:
    """Positions in ``detail.after`` of messages the strategy replaced by a marker."""
    if detail.prune is None:
        return set()
    pruned = {
        d.entry_index for d in detail.prune.decisions if d.action == "pruned" and d.entry_index is not None
    }
    return {i for i, cm in enumerate(detail.after) if cm.entry_index in pruned}


UNREMARKABLE = "not a candidate"
"""The reason a strategy gives a message it never considered: left out of the "why" column."""


def message_rows(detail: Any, counter: Any, preview: int = 160) -> list[dict[str, Any]]:
    """One row per message of the step's context (as built), with what pruning did to it, then
    any message the strategy injected."""
    decisions = {d.position: d for d in detail.prune.decisions} if detail.prune is not None else {}
    tokens = counter.count_many([cm.message for cm in detail.before])
    rows: list[dict[str, Any]] = []
    for i, (cm, t) in enumerate(zip(detail.before, tokens, strict=True)):
        d = decisions.get(i)
        m = cm.message
        rows.append(
            {
                "#": i,
                "entry": cm.entry_index,
                "kind": message_kind(cm),
                "tool": m.toolName if isinstance(m, ToolResultMessage) else "",
                "tokens": t,
                "sent": d.tokens_after if d else t,
                "status": d.action if d else "kept",
                "why": d.reason if d and d.reason != UNREMARKABLE else "",
                "text": message_text(m, preview).replace("\n", " ⏎ "),
            }
        )
    for cm in detail.after:
        if cm.entry_index is None:
            rows.append(
                {
                    "#": None,
                    "entry": None,
                    "kind": message_kind(cm),
                    "tool": "",
                    "tokens": 0,
                    "sent": counter.count(cm.message),
                    "status": "injected",
                    "why": "added by the strategy or the compaction",
                    "text": message_text(cm.message, preview).replace("\n", " ⏎ "),
                }
            )
    return rows


def _blocks_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    out = []
    for b in content or []:
        if isinstance(b, TextContent):
            out.append(b.text)
        elif isinstance(b, ThinkingContent):
            out.append(f"[thinking]\n{b.thinking}\n[/thinking]")
        elif isinstance(b, ToolCall):
            args = (
                b.arguments
                if isinstance(b.arguments, str)
                else json.dumps(b.arguments, indent=2, ensure_ascii=False)
            )
            out.append(f"[tool call {b.name} · id {b.id}]\n{args}")
        elif isinstance(b, ImageContent):
            out.append(f"[image {b.mimeType}, {len(b.data):,} base64 characters]")
        else:
            out.append(f"[{getattr(b, 'type', 'block')} block]")
    return "\n\n".join(out)


def full_text(m: Any) -> str:
    """The whole of a message as plain text: text, thinking, tool calls with their arguments,
    tool outputs, commands, summaries; a header line says what it is. Never truncated."""
    role = getattr(m, "role", None)
    if isinstance(m, AssistantMessage):
        head = f"[assistant · {m.provider or '?'}/{m.model or '?'} · stop: {m.stopReason}]"
        tail = f"\n\n[error] {m.errorMessage}" if m.errorMessage else ""
        if m.usage is not None:
            u = m.usage
            tail += (
                f"\n\n[usage] input {u.input:,} · output {u.output:,} · cache read {u.cacheRead:,} · "
                f"cache write {u.cacheWrite:,}"
            )
        return f"{head}\n{_blocks_text(m.content)}{tail}"
    if isinstance(m, ToolResultMessage):
        head = f"[output of {m.toolName} · call {m.toolCallId}" + (" · error]" if m.isError else "]")
        return f"{head}\n{_blocks_text(m.content)}"
    if isinstance(m, BashExecutionMessage):
        return (
            f"[! command · exit {m.exitCode}" + (" · cancelled" if m.cancelled else "") + "]\n$ "
            f"{m.command}\n{m.output}"
        )
    if role in ("compactionSummary", "branchSummary"):
        return f"[{role}]\n{getattr(m, 'summary', '')}"
    if role == "custom":
        return f"[custom message · {getattr(m, 'customType', '')}]\n{_blocks_text(getattr(m, 'content', ''))}"
    if hasattr(m, "content"):
        return f"[{role}]\n{_blocks_text(m.content)}"
    return f"[{role}]\n{message_text(m, 10**9)}"


def relative_paths(text: str, cwd: str | None) -> str:
    """``text`` with the session's working folder dropped from the paths in it (``cwd/src/a.ts``
    → ``src/a.ts``; the folder itself → ``.``)."""
    if not cwd or len(cwd) < 2:
        return text
    base = cwd.rstrip("/")
    return text.replace(base + "/", "").replace(base, ".")


def message_label(cm: Any, position: int | None, tokens: int) -> str:
    """A one-line name for a message in a picker: position, role/tool, entry, tokens."""
    m = cm.message
    what = f"{cm.role} · {m.toolName}" if isinstance(m, ToolResultMessage) else cm.role
    where = f"entry {cm.entry_index}" if cm.entry_index is not None else "injected"
    return (f"#{position} · " if position is not None else "") + f"{what} · {where} · {tokens:,} tokens"


def pruned_before(detail: Any) -> set[int]:
    """Positions in ``detail.before`` that pruning removed or shortened at this call (the rows of
    :func:`pruned_rows`, without building them)."""
    if detail.prune is None:
        return set()
    n = len(detail.before)
    return {d.position for d in detail.prune.decisions if d.action != "kept" and 0 <= d.position < n}


def pruned_rows(detail: Any, counter: Any, preview: int = 160) -> list[dict[str, Any]]:
    """The messages pruning removed or shortened at this call, with what they weighed before and
    after and why (positions are the context's, as built)."""
    if detail.prune is None:
        return []
    out = []
    for d in detail.prune.decisions:
        if d.action == "kept" or not 0 <= d.position < len(detail.before):
            continue
        m = detail.before[d.position].message
        out.append(
            {
                "#": d.position,
                "entry": d.entry_index,
                "tool": getattr(m, "toolName", "") or d.role,
                "tokens": d.tokens_before,
                "sent": d.tokens_after,
                "status": d.action,
                "why": d.reason,
                "text": message_text(m, preview).replace("\n", " ⏎ "),
            }
        )
    return out


def summarised_rows(view: Any, preview: int = 160) -> list[dict[str, Any]]:
    """The messages of a compaction's context that do not survive verbatim, with what became of each."""
    return [
        {
            "#": p.position,
            "entry": p.message.entry_index,
            "became": p.part,
            "kind": message_kind(p.message),
            "tool": getattr(p.message.message, "toolName", "") or "",
            "tokens": p.tokens,
            "text": message_text(p.message.message, preview).replace("\n", " ⏎ "),
        }
        for p in view.summarised
    ]


def offset_of_entry(msgs: Sequence[Any], tokens: Sequence[int], entry: int) -> int | None:
    """Tokens before the first message of entry ``entry`` or later (summaries excepted) in a
    context; None when no such message is in it."""
    total = 0
    for cm, t in zip(msgs, tokens, strict=True):
        if cm.entry_index is not None and cm.role != "compactionSummary" and cm.entry_index >= entry:
            return total
        total += t
    return None


def neighbour(steps: Sequence[int], k: int, direction: int) -> int | None:
    """The nearest of ``steps`` after (direction 1) or before (-1) step ``k``; None if there is none."""
    if direction > 0:
        return next((x for x in steps if x > k), None)
    return next((x for x in reversed(steps) if x < k), None)


def step_showing_entry(replay: Any, entry: int) -> int:
    """The first model call whose context holds ``entry`` (a call's answer is in the context of
    the next call); the last call when none comes after it."""
    return next((s.step for s in replay.steps if s.entry_index > entry), max(0, len(replay.steps) - 1))


def step_for_entry(replay: Any, entry: int) -> int:
    """The first model call at or after ``entry`` (file order) on the replayed branch."""
    return next((s.step for s in replay.steps if s.entry_index >= entry), max(0, len(replay.steps) - 1))


# -- Compare ----------------------------------------------------------------------------------------

METRIC_LABELS = {
    "steps": "model calls",
    "total_input_tokens": "total input tokens (sum over calls)",
    "cost_usd": "input cost, blended per token, no cache (USD)",
    "recorded_cost_usd": "cost, recorded (USD: input and output)",
    "peak_context": "peak context (tokens)",
    "mean_context": "mean context (tokens)",
    "compactions": "compactions",
    "summary_tokens": "summarizer tokens this replay spent (LLM in + out; none offline or as recorded)",
    "tokens_pruned": "tokens pruned (sum over calls)",
    "overflows": "overflows (prompt > window, as the provider counts it)",
    "rereads": "re-reads of forgotten files",
    "recorded_total_input": "recorded input tokens (sum)",
}


def fmt_metric(name: str, v: Any) -> str:
    if v is None:
        return "—"
    if name.endswith("usd"):
        return f"${v:,.4f}"
    if isinstance(v, float):
        return f"{v:,.0f}"
    return f"{v:,}"


def fmt_share(v: float | None) -> str:
    """A rate (0…1) in per cent, one decimal; "—" for none."""
    return "—" if v is None else f"{v:.1%}"


def metrics_rows(runs: Sequence[tuple[str, Any]]) -> list[dict[str, str]]:
    """Metrics as rows (one per metric, one column per configuration), formatted with units."""
    out = []
    for key, label in METRIC_LABELS.items():
        row = {"metric": label}
        for name, r in runs:
            row[name] = fmt_metric(key, getattr(r.metrics, key, None))
        out.append(row)
    return out


def sweep_axes(strategy: Any) -> list[str]:
    """Numeric settings a sweep can vary: the strategy's int settings, then pi's thresholds."""
    own = (
        []
        if strategy is None
        else [
            k
            for k, f in strategy.Settings.model_fields.items()
            if isinstance(f.default, int) and not isinstance(f.default, bool)
        ]
    )
    return own + ["keep_recent_tokens", "reserve_tokens", "context_window"]


def sweep_values(axis: str, current: int | None, lo: int | None = None, hi: int | None = None) -> list[int]:
    """Six values around ``current`` (¼× … 2×), kept within bounds; small counts step by one."""
    base = max(1, int(current or 1))
    if base <= 10:
        vals = {base + d for d in (-2, -1, 0, 1, 2, 4)}
    else:
        vals = {int(base * f) for f in (0.25, 0.5, 0.75, 1.0, 1.5, 2.0)}
    if axis == "context_window":
        lo = max(lo or 0, 1000)
    return sorted(v for v in vals if (lo is None or v >= lo) and (hi is None or v <= hi) and v >= 0)


def _without(settings: Any, axes: Sequence[str]) -> Any:
    fields = {a: 0 for a in axes if a in type(settings).model_fields}
    own = tuple((k, v) for k, v in settings.strategy_settings if k not in axes)
    return settings.model_copy(update={**fields, "strategy_settings": own})


def sweep_is_stale(base: Any, current: Any, x: str, y: str) -> bool:
    """Whether the sidebar changed since a sweep ran, other than on the swept axes."""
    return _without(base, (x, y)) != _without(current, (x, y))


# -- Tree ---------------------------------------------------------------------------------------------


def entry_detail(session: Any, e: Any) -> str:
    """A few words on a non-message entry (what a label points at, which model, …)."""
    t = str(e.type)
    f = lambda name: getattr(e, name, None)  # noqa: E731 - an entry kept opaque may lack any field
    if t == "label":
        target = session.index_of(f("targetId"))
        return f"→ entry {target}: {f('label')!r}" if f("label") else f"→ entry {target}: label cleared"
    if t == "model_change":
        return f"{f('provider')}/{f('modelId')}"
    if t == "thinking_level_change":
        return str(f("thinkingLevel"))
    if t == "session_info":
        return f"name {f('name')!r}" if f("name") else ""
    if t in ("custom", "custom_message"):
        text = message_text(e) if t == "custom_message" else ""
        return f"{f('customType')}" + (f": {text}" if text else "")
    return str(f("summary") or "")


def entry_label(session: Any, i: int, preview: int = 60) -> str:
    e = session.entries[i]
    m = getattr(e, "message", None)
    m = m if hasattr(m, "role") else None  # an opaque entry's message may be any JSON value
    what = str(m.role) if m is not None else str(e.type)
    text = message_text(m, preview) if m is not None else entry_detail(session, e)
    text = clip(text, preview)
    lbl = session.labels.get(i)
    return (f"{i} · {what}" + (f" [{lbl}]" if lbl else "") + (f" · {text}" if text else "")).replace(
        "\n", " "
    )


def tree_rows(session: Any, current_path: Sequence[int] = (), limit: int = 20_000) -> list[dict[str, Any]]:
    """The entries in pi's ``/tree`` order: depth-first, children in timestamp order, indented
    only below fork points (a chain stays at one level), with ├─/└─ connectors on a fork's
    children. ``on branch`` marks the replayed path."""
    on = set(current_path)
    rows: list[dict[str, Any]] = []
    # stack of (entry, prefix for its own line, prefix for its children)
    stack: list[tuple[int, str, str]] = [(r, "", "") for r in reversed(session.roots)]
    while stack and len(rows) < limit:
        i, own, below = stack.pop()
        kids = session.children[i]
        e = session.entries[i]
        role = getattr(getattr(e, "message", None), "role", None)  # an opaque message may be any JSON
        rows.append(
            {
                "entry": i,
                "tree": own + ("● " if i in on else "○ ") + entry_label(session, i, 80),
                "type": (f"{e.type}/{role}" if role is not None else str(e.type)),
                "label": session.labels.get(i, ""),
                "on branch": i in on,
                "children": len(kids),
            }
        )
        if len(kids) > 1:
            for n, c in reversed(list(enumerate(kids))):
                last = n == len(kids) - 1
                stack.append((c, below + ("└─ " if last else "├─ "), below + ("   " if last else "│  ")))
        elif kids:
            stack.append((kids[0], below, below))
    return rows


def default_branch_pair(session: Any, current_leaf: int | None) -> tuple[int, int]:
    """A meaningful (from, to) for the branch-summary preview: the replayed leaf and the newest
    leaf of another branch (or the first entry when there is one branch)."""
    cur = current_leaf if current_leaf is not None else (session.default_leaf or 0)
    others = [x for x in session.leaves if x != cur]
    return cur, (max(others) if others else 0)


def context_before_help(r: Any, view: Any, counter_label: str) -> str:
    """The help of the compaction metric "Context before": what it counts, and, at a recorded
    compaction whose agent wrote its own figure (``tokensBefore``), that figure beside it, since
    "Where the cut landed" quotes the agent's and the two differ by the counter."""
    text = f"The context the policy saw, as built, counted by {counter_label}."
    if view.simulated or view.entry_index is None:
        return text
    recorded = clamp_int(getattr(r.session.entries[view.entry_index], "tokensBefore", None))
    if recorded > 0:
        text += f" The agent recorded {recorded:,} tokens before it, by its own count."
    return text


def put_back_parts(r: Any, entry_index: int | None, count: Any) -> list[tuple[Any, int]]:
    """The messages the agent put back itself right after its recorded compaction at
    ``entry_index`` (None: a simulated one; Codex:
    :func:`inspector.compaction_view.put_back_messages`), each with its tokens by ``count`` (the
    replay's counter); none after a simulated compaction or another agent's."""
    return [(cm, count(cm.message)) for cm in put_back_messages(r, entry_index)]


def kept_and_after(
    r: Any, view: Any, back: Sequence[tuple[Any, int]]
) -> tuple[tuple[str, int, str], tuple[int, str]]:
    """The compaction metrics "Kept" and "Context after" (their label, value and help): what was kept
    verbatim and the summary with it, or, after a compaction whose agent puts messages back itself
    (``back``: :func:`put_back_parts`), those messages and the summary with them."""
    n, tokens = len(back), sum(t for _, t in back)
    if not n:
        return ("Kept", view.kept_tokens, "Tokens kept verbatim after the summary."), (
            view.tokens_after,
            "The summary plus what was kept.",
        )
    who = "Codex" if getattr(r.session, "format", "") == "codex" else "The agent"
    return (
        "Put back",
        tokens,
        f"{who} keeps nothing verbatim: it puts {n} message(s) back right after the compaction (entries "
        "of their own on the branch, by the replay's counter).",
    ), (view.tokens_after + tokens, f"The summary plus the {n} message(s) {who} put back.")
