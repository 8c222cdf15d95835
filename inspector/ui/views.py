"""Tables and small computations behind the pages (pure functions, no streamlit).

Session text returned here is plain text: pages show it through dataframes, ``st.text`` or
``st.code``, never as HTML or unescaped markdown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..session.models import ToolResultMessage
from .figures import message_kind, message_text

# -- Replay ---------------------------------------------------------------------------------------


def pruned_positions(detail: Any) -> set[int]:
    """Positions in ``detail.after`` of messages the strategy replaced by a marker."""
    if detail.prune is None:
        return set()
    pruned = {d.entry_index for d in detail.prune.decisions if d.action == "pruned" and d.entry_index is not None}
    return {i for i, cm in enumerate(detail.after) if cm.entry_index in pruned}


def message_rows(detail: Any, counter: Any, preview: int = 160) -> list[dict[str, Any]]:
    """One row per message of the step's context (as built), with what pruning did to it, then
    any message the strategy injected."""
    decisions = {d.position: d for d in detail.prune.decisions} if detail.prune is not None else {}
    tokens = counter.count_many([cm.message for cm in detail.before])
    rows: list[dict[str, Any]] = []
    for i, (cm, t) in enumerate(zip(detail.before, tokens, strict=True)):
        d = decisions.get(i)
        m = cm.message
        rows.append({"#": i, "entry": cm.entry_index, "kind": message_kind(cm),
                     "tool": m.toolName if isinstance(m, ToolResultMessage) else "",
                     "tokens": t, "sent": d.tokens_after if d else t,
                     "status": d.action if d else "kept", "why": d.reason if d else "",
                     "text": message_text(m, preview).replace("\n", " ⏎ ")})
    for cm in detail.after:
        if cm.entry_index is None:
            rows.append({"#": None, "entry": None, "kind": message_kind(cm), "tool": "", "tokens": 0,
                         "sent": counter.count(cm.message), "status": "injected",
                         "why": "added by the strategy or the compaction",
                         "text": message_text(cm.message, preview).replace("\n", " ⏎ ")})
    return rows


def step_for_entry(replay: Any, entry: int) -> int:
    """The first model call at or after ``entry`` (file order) on the replayed branch."""
    return next((s.step for s in replay.steps if s.entry_index >= entry), max(0, len(replay.steps) - 1))


# -- Compare ----------------------------------------------------------------------------------------

METRIC_LABELS = {
    "steps": "model calls",
    "total_input_tokens": "total input tokens (sum over calls)",
    "cost_usd": "input cost, replayed (USD)",
    "recorded_cost_usd": "cost, recorded (USD)",
    "peak_context": "peak context (tokens)",
    "mean_context": "mean context (tokens)",
    "compactions": "compactions",
    "summary_tokens": "summary tokens (summarizer in + out)",
    "tokens_pruned": "tokens pruned (sum over calls)",
    "overflows": "overflows (context > window)",
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
    own = [] if strategy is None else [
        k for k, f in strategy.Settings.model_fields.items()
        if isinstance(f.default, int) and not isinstance(f.default, bool)]
    return own + ["keep_recent_tokens", "reserve_tokens", "context_window"]


def sweep_values(axis: str, current: int, lo: int | None = None, hi: int | None = None) -> list[int]:
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
    text = text if len(text) <= preview else text[: preview - 1] + "…"
    lbl = session.labels.get(i)
    return (f"{i} · {what}" + (f" [{lbl}]" if lbl else "") + (f" · {text}" if text else "")).replace("\n", " ")


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
        rows.append({"entry": i, "tree": own + ("● " if i in on else "○ ") + entry_label(session, i, 80),
                     "type": (f"{e.type}/{role}" if role is not None else str(e.type)),
                     "label": session.labels.get(i, ""), "on branch": i in on,
                     "children": len(kids)})
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
