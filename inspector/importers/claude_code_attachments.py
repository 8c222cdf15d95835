"""The text Claude Code sends for an ``attachment`` line of its transcript.

Claude Code writes what it attaches to a turn — hook output, the deferred tool, agent and skill
listings, MCP server instructions, reminders — as ``attachment`` lines, and turns each into
user-side text when it builds a request (``normalizeAttachmentForAPI`` in ``src/utils/messages.ts``):
meta user messages wrapped in ``<system-reminder>`` … ``</system-reminder>``. The rules below
follow a third-party port of that function (a Go port "mirroring TS normalizeAttachmentForAPI",
index id 51766571473) and a third-party reading of the minified build (cli_inner_pretty.js
424960–425332, index id 60115378455); the wording of the fixed sentences changes between
Claude Code versions, the payload (listed tools, agents, skills, instructions, hook output) is
the file's own. Types that send nothing there send nothing here (``hook_system_message``,
``hook_non_blocking_error``, ``command_permissions``, ``async_hook_response`` without a system
message or added context, a ``hook_success`` with no content or of another event, …); a type this
module does not know sends nothing and is counted by the importer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Att = dict[str, Any]


def wrap(text: str) -> str:
    """``wrapMessagesInSystemReminder`` for one text."""
    return f"<system-reminder>\n{text}\n</system-reminder>"


def _strs(v: Any) -> list[str]:
    return [str(x) for x in v] if isinstance(v, list) else []


def _s(a: Att, key: str) -> str:
    v = a.get(key)
    return v if isinstance(v, str) else ""


def _deferred_tools(a: Att) -> str | None:
    parts = []
    if _strs(a.get("addedLines")):
        parts.append(
            "The following deferred tools are now available via ToolSearch:\n"
            + "\n".join(_strs(a["addedLines"]))
        )
    if _strs(a.get("removedNames")):
        parts.append(
            "The following deferred tools are no longer available (their MCP server disconnected). "
            "Do not search for them — ToolSearch will return no match:\n"
            + "\n".join(_strs(a["removedNames"]))
        )
    return "\n\n".join(parts) or None


def _agent_listing(a: Att) -> str | None:
    parts = []
    if _strs(a.get("addedLines")):
        head = (
            "Available agent types for the Agent tool:"
            if a.get("isInitial")
            else "New agent types are now available for the Agent tool:"
        )
        parts.append(head + "\n" + "\n".join(_strs(a["addedLines"])))
    if _strs(a.get("removedTypes")):
        parts.append(
            "The following agent types are no longer available:\n"
            + "\n".join(f"- {t}" for t in _strs(a["removedTypes"]))
        )
    if a.get("isInitial") and a.get("showConcurrencyNote"):
        parts.append(
            "Launch multiple agents concurrently whenever possible, to maximize performance; to do that, "
            "use a single message with multiple tool uses."
        )
    return "\n\n".join(parts) or None


def _mcp_instructions(a: Att) -> str | None:
    parts = []
    if _strs(a.get("addedBlocks")):
        parts.append(
            "# MCP Server Instructions\n\nThe following MCP servers have provided instructions for how to use "
            "their tools and resources:\n\n" + "\n\n".join(_strs(a["addedBlocks"]))
        )
    if _strs(a.get("removedNames")):
        parts.append(
            "The following MCP servers have disconnected. Their instructions above no longer apply:\n"
            + "\n".join(_strs(a["removedNames"]))
        )
    return "\n\n".join(parts) or None


def _hook_success(a: Att) -> str | None:
    if _s(a, "hookEvent") not in ("SessionStart", "UserPromptSubmit") or not _s(a, "content"):
        return None
    return f"{_s(a, 'hookName')} hook success: {_s(a, 'content')}"


def _hook_context(a: Att) -> str | None:
    lines = _strs(a.get("content"))
    return f"{_s(a, 'hookName')} hook additional context: " + "\n".join(lines) if lines else None


def _async_hook(a: Att) -> str | None:
    resp = jv if isinstance(jv := a.get("response"), dict) else {}
    out = [_s(resp, "systemMessage")]
    hso = jv if isinstance(jv := resp.get("hookSpecificOutput"), dict) else {}
    out.append(_s(hso, "additionalContext"))
    return "\n".join(x for x in out if x) or None


def _todo(a: Att) -> str:
    text = (
        "The TodoWrite tool hasn't been used recently. If you're working on tasks that would benefit from tracking "
        "progress, consider using the TodoWrite tool to track progress. Also consider cleaning up the todo list if "
        "has become stale and no longer matches what you are working on. Only use it if it's relevant to the current "
        "work. This is just a gentle reminder - ignore if not applicable. Make sure that you NEVER mention this "
        "reminder to the user\n"
    )
    items = [x for x in a.get("content") or [] if isinstance(x, dict)]
    if items:
        text += (
            "\n\nHere are the existing contents of your todo list:\n\n["
            + "\n".join(f"{k + 1}. [{_s(x, 'status')}] {_s(x, 'content')}" for k, x in enumerate(items))
            + "]"
        )
    return text


def _task(a: Att) -> str:
    text = (
        "The task tools haven't been used recently. If you're working on tasks that would benefit from tracking "
        "progress, consider using TaskCreate to add new tasks and TaskUpdate to update task status (set to "
        "in_progress when starting, completed when done). Also consider cleaning up the task list if it has become "
        "stale. Only use these if relevant to the current work. This is just a gentle reminder - ignore if not "
        "applicable. Make sure that you NEVER mention this reminder to the user\n"
    )
    items = [x for x in a.get("content") or [] if isinstance(x, dict)]
    if items:
        text += "\n\nHere are the existing tasks:\n\n" + "\n".join(
            f"#{_s(x, 'id')}. [{_s(x, 'status')}] {_s(x, 'subject')}" for x in items
        )
    return text


def _edited(a: Att) -> str:
    return (
        f"Note: {_s(a, 'filename')} was modified, either by the user or by a linter. This change was intentional, so "
        "make sure to take it into account as you proceed (ie. don't revert it unless the user asks you to). Don't "
        "tell the user this, since they are already aware. Here are the relevant changes (shown with line "
        f"numbers):\n{_s(a, 'snippet')}"
    )


def _file(a: Att) -> str | None:
    c = jv if isinstance(jv := a.get("content"), dict) else {}
    f = jv if isinstance(jv := c.get("file"), dict) else {}
    body = _s(f, "content") or _s(c, "text")
    if not body:
        return None
    call = json.dumps({"file_path": _s(a, "filename")}, ensure_ascii=False)
    return (
        f"Called the Read tool with the following input: {call}\n\nResult of calling the Read tool:\n{body}"
    )


def _queued(a: Att) -> str | None:
    p = a.get("prompt")
    if isinstance(p, list):
        return "\n".join(_s(b, "text") for b in p if isinstance(b, dict) and b.get("type") == "text") or None
    return p if isinstance(p, str) and p else None


def _skills(a: Att) -> str | None:
    skills = [x for x in a.get("skills") or [] if isinstance(x, dict)]
    if not skills:
        return None
    return (
        "The following skills were invoked in this session. Continue to follow these guidelines:\n\n"
        + "\n\n---\n\n".join(
            f"### Skill: {_s(x, 'name')}\nPath: {_s(x, 'path')}\n\n{_s(x, 'content')}" for x in skills
        )
    )


_RENDER: dict[str, Callable[[Att], str | None]] = {
    "deferred_tools_delta": _deferred_tools,
    "agent_listing_delta": _agent_listing,
    "mcp_instructions_delta": _mcp_instructions,
    "skill_listing": lambda a: (
        ("The following skills are available for use with the Skill tool:\n\n" + _s(a, "content"))
        if _s(a, "content")
        else None
    ),
    "hook_success": _hook_success,
    "hook_additional_context": _hook_context,
    "async_hook_response": _async_hook,
    "todo_reminder": _todo,
    "task_reminder": _task,
    "edited_text_file": _edited,
    "file": _file,
    "queued_command": _queued,
    "invoked_skills": _skills,
    "nested_memory": lambda a: (
        f"Contents of {_s(a['content'], 'path')}:\n\n{_s(a['content'], 'content')}"
        if isinstance(a.get("content"), dict)
        else None
    ),
    "critical_system_reminder": lambda a: _s(a, "content") or None,
    "date_change": lambda a: (
        f"The date has changed. Today's date is now {_s(a, 'newDate')}. DO NOT mention this to "
        "the user explicitly because they are already aware."
    ),
    "opened_file_in_ide": lambda a: (
        f"The user opened the file {_s(a, 'filename')} in the IDE. This may or may not be "
        "related to the current task."
    ),
    "compact_file_reference": lambda a: (
        f"Note: {_s(a, 'filename')} was read before the last conversation was summarized, "
        "but the contents are too large to include. Use Read tool if you need to access it."
    ),
}

SILENT = frozenset(
    {
        "hook_system_message",
        "hook_non_blocking_error",
        "command_permissions",
        "already_read_file",
        "edited_image_file",
        "hook_cancelled",
        "hook_error_during_execution",
        "structured_output",
        "hook_permission_decision",
        "autocheckpointing",
        "background_task_status",
        "todo",
        "task_progress",
        "ultramemory",
        "context_efficiency",
        "dynamic_skill",
        "max_turns_reached",
    }
)
"""Types Claude Code sends nothing for."""


def attachment_text(a: Att) -> str | None:
    """The text Claude Code sends for attachment ``a`` (wrapped as it wraps it), or None."""
    render = _RENDER.get(_s(a, "type"))
    text = render(a) if render is not None else None
    return wrap(text) if text else None


def known(kind: str) -> bool:
    return kind in _RENDER or kind in SILENT
