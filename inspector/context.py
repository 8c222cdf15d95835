"""The context pi sends to the model, and its text form for summaries.

* :func:`build_session_context` — pi's ``buildSessionContext`` (``core/session-manager.ts``):
  walk from the leaf to the root; thinking level from the last ``thinking_level_change``
  (default ``"off"``); model from the last ``model_change`` or assistant message; with a
  compaction on the path only the **last** one counts: its summary first, then the path
  entries from its ``firstKeptEntryId`` up to the compaction (none if that id is not on the
  path before it), then everything after it. ``message`` entries give their message,
  ``custom_message`` a ``custom`` message (whatever its ``display``), ``branch_summary`` a
  ``branchSummary`` message only when its summary is non-empty; nothing else gives anything.
* :func:`convert_to_llm` — pi's ``convertToLlm`` (``core/messages.ts``).
* :func:`serialize_conversation` — pi's ``serializeConversation``
  (``core/compaction/utils.ts``), byte for byte, tool results cut at 2000 UTF-16 units.

Every context message remembers the entry it came from (``entry_index``), so the UI can link
a message to the line of the session file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .jsjson import js_keys, js_stringify, utf16_len, utf16_slice
from .session.models import (
    AnyEntry,
    AnyMessage,
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryEntry,
    BranchSummaryMessage,
    CompactionEntry,
    CompactionSummaryMessage,
    CustomMessage,
    CustomMessageEntry,
    MessageEntry,
    ModelChangeEntry,
    TextContent,
    ThinkingContent,
    ThinkingLevelChangeEntry,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from .session.tree import Session, iso_to_ms

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX = "</summary>"
TOOL_RESULT_MAX_CHARS = 2000


@dataclass(frozen=True, slots=True)  # slots: one per message of every context a replay holds
class ContextMessage:
    """One message of a context, with the index of the session entry that produced it
    (None for an entry that is not in the session, such as a simulated compaction)."""

    message: AnyMessage
    entry_index: int | None

    @property
    def role(self) -> str:
        return str(self.message.role)


@dataclass(frozen=True)
class SessionContext:
    """pi's ``SessionContext`` plus where each message came from."""

    messages: tuple[ContextMessage, ...]
    thinking_level: str = "off"
    model: dict[str, Any] | None = None
    path: tuple[int, ...] = ()
    compaction_index: int | None = None
    """Entry index of the compaction that shaped this context (the last one on the path)."""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def agent_messages(self) -> list[AnyMessage]:
        return [m.message for m in self.messages]


# ---------------------------------------------------------------------------------------------
# Entries → messages
# ---------------------------------------------------------------------------------------------


def custom_message_from_entry(e: CustomMessageEntry) -> CustomMessage:
    return CustomMessage(
        customType=e.customType,
        content=e.content,
        display=e.display,
        details=e.details,
        timestamp=iso_to_ms(e.timestamp),
    )


def branch_summary_message(e: BranchSummaryEntry) -> BranchSummaryMessage:
    return BranchSummaryMessage(summary=e.summary, fromId=e.fromId, timestamp=iso_to_ms(e.timestamp))


def compaction_summary_message(e: CompactionEntry) -> CompactionSummaryMessage:
    return CompactionSummaryMessage(
        summary=e.summary, tokensBefore=e.tokensBefore, timestamp=iso_to_ms(e.timestamp)
    )


def message_from_entry(e: AnyEntry, *, include_compaction: bool) -> AnyMessage | None:
    """pi's ``getMessageFromEntry`` (compaction.ts): message, custom_message, branch_summary
    (even with an empty summary) and, if ``include_compaction``, compaction entries."""
    if isinstance(e, MessageEntry):
        return e.message
    if isinstance(e, CustomMessageEntry):
        return custom_message_from_entry(e)
    if isinstance(e, BranchSummaryEntry):
        return branch_summary_message(e)
    if include_compaction and isinstance(e, CompactionEntry):
        return compaction_summary_message(e)
    return None


def _context_message(e: AnyEntry) -> AnyMessage | None:
    """``appendMessage`` inside ``buildSessionContext``: empty branch summaries give nothing."""
    if isinstance(e, MessageEntry):
        return e.message
    if isinstance(e, CustomMessageEntry):
        return custom_message_from_entry(e)
    if isinstance(e, BranchSummaryEntry) and e.summary:
        return branch_summary_message(e)
    return None


# ---------------------------------------------------------------------------------------------
# buildSessionContext
# ---------------------------------------------------------------------------------------------


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    # JSON.stringify leaves out undefined fields; a missing field reads as undefined in JS.
    return {k: v for k, v in d.items() if v is not None}


def entry_setting(e: AnyEntry) -> tuple[str, Any] | None:
    """What ``buildSessionContext`` reads from an entry on the path besides messages: a thinking
    level change (``("thinking", level)``), or the model (``("model", {...})``) from a model change
    or an assistant message; None for any other entry. The last one on the path wins."""
    if isinstance(e, ThinkingLevelChangeEntry):
        return "thinking", e.thinkingLevel
    if isinstance(e, ModelChangeEntry):
        return "model", _drop_none({"provider": e.provider, "modelId": e.modelId})
    if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage):
        return "model", _drop_none({"provider": e.message.provider, "modelId": e.message.model})
    return None


def context_from_path(path_entries: Sequence[AnyEntry], path_indexes: Sequence[int | None]) -> SessionContext:
    """``buildSessionContext`` over an already-resolved root→leaf path."""
    thinking = "off"
    model: dict[str, Any] | None = None
    comp_pos = -1
    for k, e in enumerate(path_entries):
        setting = entry_setting(e)
        if setting is not None:
            if setting[0] == "thinking":
                thinking = setting[1]
            else:
                model = setting[1]
        elif isinstance(e, CompactionEntry):
            comp_pos = k

    comp_index = None
    if comp_pos >= 0:
        comp = path_entries[comp_pos]
        assert isinstance(comp, CompactionEntry)
        comp_index = path_indexes[comp_pos]
        first_kept = next((k for k in range(comp_pos) if path_entries[k].id == comp.firstKeptEntryId), None)
        out = compaction_context(path_entries, path_indexes, comp_pos, first_kept)
    else:
        out = []
        for k, e in enumerate(path_entries):
            m = _context_message(e)
            if m is not None:
                out.append(ContextMessage(m, path_indexes[k]))
    return SessionContext(
        messages=tuple(out),
        thinking_level=thinking,
        model=model,
        path=tuple(i for i in path_indexes if i is not None),
        compaction_index=comp_index,
    )


def compaction_context(
    path_entries: Sequence[AnyEntry],
    path_indexes: Sequence[int | None],
    comp_pos: int,
    first_kept_pos: int | None,
) -> list[ContextMessage]:
    """The messages after the compaction at ``comp_pos``: its summary, the entries from
    ``first_kept_pos`` (if before it) up to it, then everything after it. Only that slice of the
    path is visited, so a replay can rebuild a context in time proportional to what is kept."""
    comp = path_entries[comp_pos]
    assert isinstance(comp, CompactionEntry)
    out = [ContextMessage(compaction_summary_message(comp), path_indexes[comp_pos])]
    ranges = (
        [range(first_kept_pos, comp_pos)] if first_kept_pos is not None and first_kept_pos < comp_pos else []
    )
    ranges.append(range(comp_pos + 1, len(path_entries)))
    for r in ranges:
        for k in r:
            m = _context_message(path_entries[k])
            if m is not None:
                out.append(ContextMessage(m, path_indexes[k]))
    return out


def build_session_context(session: Session, leaf: int | str | None = "leaf") -> SessionContext:
    """The context pi sends with ``leaf`` as the current entry.

    ``leaf`` is an index, an id, ``"@N"`` or ``"leaf"`` (the default leaf); ``None`` means pi's
    explicit ``null`` leaf (before the first entry): an empty context.
    """
    if leaf is None:
        return SessionContext(messages=())
    idx = session.resolve(leaf)
    if idx is None:
        return SessionContext(messages=())
    path = session.path(idx)
    return context_from_path([session.entries[i] for i in path], path)


# ---------------------------------------------------------------------------------------------
# convertToLlm
# ---------------------------------------------------------------------------------------------


def bash_execution_to_text(m: BashExecutionMessage) -> str:
    """pi's ``bashExecutionToText``."""
    text = f"Ran `{m.command}`\n"
    text += f"```\n{m.output}\n```" if m.output else "(no output)"
    if m.cancelled:
        text += "\n\n(command cancelled)"
    elif m.exitCode is not None and m.exitCode != 0:
        text += f"\n\nCommand exited with code {m.exitCode}"
    if m.truncated and m.fullOutputPath:
        text += f"\n\n[Output truncated. Full output: {m.fullOutputPath}]"
    return text


LlmMessage = UserMessage | AssistantMessage | ToolResultMessage


def convert_message(m: AnyMessage) -> LlmMessage | None:
    """pi's ``convertToLlm`` for one message (None when pi drops it)."""
    if isinstance(m, (UserMessage, AssistantMessage, ToolResultMessage)):
        return m
    if isinstance(m, BashExecutionMessage):
        if m.excludeFromContext:
            return None
        return UserMessage(content=[TextContent(text=bash_execution_to_text(m))], timestamp=m.timestamp)
    if isinstance(m, CustomMessage):
        content = [TextContent(text=m.content)] if isinstance(m.content, str) else m.content
        return UserMessage(content=content, timestamp=m.timestamp)
    if isinstance(m, BranchSummaryMessage):
        text = BRANCH_SUMMARY_PREFIX + m.summary + BRANCH_SUMMARY_SUFFIX
        return UserMessage(content=[TextContent(text=text)], timestamp=m.timestamp)
    if isinstance(m, CompactionSummaryMessage):
        text = COMPACTION_SUMMARY_PREFIX + m.summary + COMPACTION_SUMMARY_SUFFIX
        return UserMessage(content=[TextContent(text=text)], timestamp=m.timestamp)
    return None


def convert_to_llm(messages: Sequence[AnyMessage]) -> list[LlmMessage]:
    out = []
    for m in messages:
        c = convert_message(m)
        if c is not None:
            out.append(c)
    return out


# ---------------------------------------------------------------------------------------------
# serializeConversation
# ---------------------------------------------------------------------------------------------


def truncate_for_summary(text: str, max_chars: int = TOOL_RESULT_MAX_CHARS) -> str:
    n = utf16_len(text)
    if n <= max_chars:
        return text
    return f"{utf16_slice(text, max_chars)}\n\n[... {n - max_chars} more characters truncated]"


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.text for b in content if isinstance(b, TextContent))


def format_tool_call(b: ToolCall) -> str:
    args = b.arguments
    if isinstance(args, dict):
        items = ", ".join(f"{k}={js_stringify(args[k])}" for k in js_keys(args))
    elif isinstance(args, list):
        items = ", ".join(f"{k}={js_stringify(v)}" for k, v in enumerate(args))
    else:
        items = ""
    return f"{b.name}({items})"


def serialize_message(msg: LlmMessage) -> list[str]:
    parts: list[str] = []
    if isinstance(msg, UserMessage):
        content = _texts(msg.content)
        if content:
            parts.append(f"[User]: {content}")
    elif isinstance(msg, AssistantMessage):
        texts: list[str] = []
        thinking: list[str] = []
        calls: list[str] = []
        for b in msg.content:
            if isinstance(b, TextContent):
                texts.append(b.text)
            elif isinstance(b, ThinkingContent):
                thinking.append(b.thinking)
            elif isinstance(b, ToolCall):
                calls.append(format_tool_call(b))
        if thinking:
            parts.append(f"[Assistant thinking]: {chr(10).join(thinking)}")
        if texts:
            parts.append(f"[Assistant]: {chr(10).join(texts)}")
        if calls:
            parts.append(f"[Assistant tool calls]: {'; '.join(calls)}")
    elif isinstance(msg, ToolResultMessage):
        content = _texts(msg.content)
        if content:
            parts.append(f"[Tool result]: {truncate_for_summary(content)}")
    return parts


def serialize_conversation(messages: Sequence[LlmMessage]) -> str:
    """pi's ``serializeConversation`` (call :func:`convert_to_llm` first, as pi does)."""
    parts: list[str] = []
    for m in messages:
        parts.extend(serialize_message(m))
    return "\n\n".join(parts)
