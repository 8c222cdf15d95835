"""Checks of the agent's calls and answers: tool calls paired with their results, files read again
(many times, or right after a compaction), loops, failure streaks, a model changed mid-turn."""

from __future__ import annotations

from ..jsjson import js_stringify
from ..session.models import (
    AssistantMessage,
    CompactionEntry,
    MessageEntry,
    ModelChangeEntry,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from ..session.tree import Session
from ..visible import clip
from .findings import DoctorOptions, Finding, finding, tool_calls


def check_tool_pairing(session: Session, path: list[int], o: DoctorOptions) -> list[Finding]:
    out = []
    open_calls: dict[str, tuple[int, str, bool]] = {}
    seen_ids: set[str] = set()
    for i in path:
        e = session.entries[i]
        if not isinstance(e, MessageEntry):
            continue
        m = e.message
        for c in tool_calls(m):
            seen_ids.add(c.id)
            if getattr(c, "serverSide", None) is True:  # run by the provider: no result to wait for
                continue
            open_calls[c.id] = (i, c.name, getattr(m, "stopReason", None) in ("aborted", "error"))
        if isinstance(m, ToolResultMessage):
            if m.toolCallId in open_calls:
                del open_calls[m.toolCallId]
            elif m.toolCallId not in seen_ids:
                out.append(
                    finding(
                        session,
                        "result-without-call",
                        "error",
                        f"tool result for call {m.toolCallId!r} ({m.toolName}) has no matching tool call before it",
                        [i],
                    )
                )
    last = path[-1] if path else -1
    for cid, (i, name, failed) in open_calls.items():
        # the newest answer's calls may simply still be running
        if i == last:
            continue
        if failed:
            out.append(
                finding(
                    session,
                    "tool-call-without-result",
                    "info",
                    f"tool call {name} ({cid}) has no result: its answer was aborted or failed",
                    [i],
                )
            )
        else:
            out.append(
                finding(
                    session,
                    "tool-call-without-result",
                    "warning",
                    f"tool call {name} ({cid}) never got a result on this branch",
                    [i],
                )
            )
    return out


def check_reads(session: Session, path: list[int], o: DoctorOptions) -> list[Finding]:
    reads: dict[str, list[int]] = {}
    comp_steps: list[int] = []
    step = 0
    calls_at: list[tuple[int, int, str]] = []  # (step, entry, path)
    for i in path:
        e = session.entries[i]
        if isinstance(e, CompactionEntry):
            comp_steps.append(step)
        if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage):
            for c in tool_calls(e.message):
                p = c.arguments.get("path") if isinstance(c.arguments, dict) else None
                if c.name == "read" and isinstance(p, str) and p:
                    reads.setdefault(p, []).append(i)
                    calls_at.append((step, i, p))
            step += 1
    out = []
    for p, idx in reads.items():
        if len(idx) >= o.read_repeat:
            out.append(
                finding(session, "file-read-many-times", "info", f"{p} was read {len(idx)} times", idx[:20])
            )
    for cs in comp_steps:
        before = {p for s, _, p in calls_at if s < cs}
        for s, i, p in calls_at:
            if cs <= s < cs + o.reread_window and p in before:
                out.append(
                    finding(
                        session,
                        "reread-after-compaction",
                        "warning",
                        f"{p} read again {s - cs + 1} call(s) after a compaction summarised the earlier read away",
                        [i],
                    )
                )
    return out


def check_loops(session: Session, path: list[int], o: DoctorOptions) -> list[Finding]:
    out = []
    run: list[int] = []
    prev: str | None = None

    polling = False

    def flush() -> None:
        if len(run) >= o.loop_repeat and prev is not None:
            out.append(
                finding(
                    session,
                    "repeated-tool-call",
                    "info",
                    f"polled a running command {len(run)} times in a row (write_stdin with no input: "
                    "Codex waiting for the command's output): a long command, not a loop",
                    run[:20],
                )
                if polling
                else finding(
                    session,
                    "repeated-tool-call",
                    "warning",
                    f"the same call {clip(prev, 80)} {len(run)} times in a row (a loop?)",
                    run[:20],
                )
            )

    for i in path:
        e = session.entries[i]
        if not (isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage)):
            continue
        calls = tool_calls(e.message)
        key = ";".join(f"{c.name}({js_stringify(c.arguments)})" for c in calls) if calls else None
        if key is not None and key == prev:
            run.append(i)
        else:
            flush()
            run = [i] if key is not None else []
            prev = key
            polling = bool(calls) and all(_polls(c) for c in calls)
    flush()
    return out


def _polls(c: ToolCall) -> bool:
    """Codex's ``write_stdin`` with no input: it waits for more output of a command it started
    (``exec_command``) — calls that repeat while a long command runs."""
    a = c.arguments
    return c.name == "write_stdin" and isinstance(a, dict) and not a.get("chars")


def check_failure_streaks(session: Session, path: list[int], o: DoctorOptions) -> list[Finding]:
    out = []
    run: list[int] = []

    def flush() -> None:
        if len(run) >= o.streak:
            out.append(
                finding(
                    session,
                    "failure-streak",
                    "warning",
                    f"{len(run)} aborted/error answers in a row",
                    run[:20],
                )
            )

    for i in path:
        e = session.entries[i]
        if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage):
            if e.message.stopReason in ("aborted", "error"):
                run.append(i)
            else:
                flush()
                run = []
    flush()
    return out


def _never_answered(m: AssistantMessage) -> bool:
    """A failed or aborted call with no usage: no model answered it (Claude Code's own
    ``<synthetic>`` API-error answers, imported as pi records a failed call, are such)."""
    return m.stopReason in ("error", "aborted") and not (m.usage is not None and m.usage.totalTokens)


def check_model_changes(session: Session, path: list[int], o: DoctorOptions) -> list[Finding]:
    out = []
    in_turn_answers = 0
    last_stop: str | None = None  # a switch after a final answer (before the next prompt) is between turns
    last_model: tuple[str | None, str | None] | None = None
    for i in path:
        e = session.entries[i]
        if isinstance(e, MessageEntry) and isinstance(e.message, UserMessage):
            in_turn_answers = 0
            continue
        if isinstance(e, ModelChangeEntry) and in_turn_answers > 0 and last_stop == "toolUse":
            out.append(
                finding(
                    session,
                    "model-change-mid-turn",
                    "info",
                    f"model changed to {e.provider}/{e.modelId} in the middle of a turn",
                    [i],
                )
            )
        if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage):
            # a failed request no model answered names no model that answered (a change shows next)
            answered = not _never_answered(e.message)
            model = (e.message.provider, e.message.model) if answered else last_model
            if answered and in_turn_answers > 0 and last_model is not None and model != last_model:
                out.append(
                    finding(
                        session,
                        "model-change-mid-turn",
                        "info",
                        f"answer from {e.message.provider}/{e.message.model} after {last_model[0]}/{last_model[1]} "
                        "in the same turn",
                        [i],
                    )
                )
            last_model = model
            last_stop = e.message.stopReason
            in_turn_answers += 1
    return out
