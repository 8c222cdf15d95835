"""Re-encode a generated pi conversation in other agents' session formats (for the corpus
generator, :mod:`inspector.corpus.generate`).

Input: the JSON objects of a pi session without branches or compactions (the header, then
entries; only ``message`` entries are carried over). Output: the bytes of the same conversation
as the agent records it, in the shapes our importers read (``inspector.importers``):

* **Claude Code** — one JSONL line per message: ``user`` lines (text, or ``tool_result`` blocks),
  ``assistant`` lines with Anthropic content blocks and ``usage`` (``input_tokens``,
  ``cache_read_input_tokens``, ``cache_creation_input_tokens``), chained by ``uuid`` /
  ``parentUuid``; tools by Claude Code's names (``Read``, ``Bash``, ``Edit``, …).
* **Codex CLI** — a rollout: ``session_meta``, ``turn_context``, then ``response_item``\\ s
  (``message``, ``reasoning``, ``function_call`` / ``function_call_output``) and an
  ``event_msg`` ``token_count`` after each model call (``last_token_usage``: ``input_tokens``
  including ``cached_input_tokens``).
* **OpenCode** — an ``opencode export`` document: ``info`` and ``messages`` (each ``info`` +
  ``parts``); a model call's tool results live in its ``tool`` parts (``state.output``), its
  usage in ``tokens`` (``input``, ``output``, ``cache.read`` / ``cache.write``).

Identifiers are derived from the seed, so the bytes are deterministic.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson

CWD = "/home/dev/tasklane"
CC_TOOLS = {
    "read": "Read",
    "bash": "Bash",
    "edit": "Edit",
    "write": "Write",
    "grep": "Grep",
    "find": "Glob",
    "ls": "LS",
}
CC_ARGS = {"path": "file_path", "oldText": "old_string", "newText": "new_string"}


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _messages(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        x["message"]
        for x in lines
        if x.get("type") == "message" and x["message"].get("role") in ("user", "assistant", "toolResult")
    ]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")


def _jsonl(objs: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(o) + b"\n" for o in objs)


# ---------------------------------------------------------------------------------------------
# Claude Code
# ---------------------------------------------------------------------------------------------


def _cc_tool_result(m: dict[str, Any]) -> dict[str, Any]:
    """A pi tool result as Claude Code's user message holding one ``tool_result`` block."""
    return {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": m["toolCallId"],
                "content": _text(m["content"]),
                "is_error": bool(m.get("isError")),
            }
        ],
    }


def _cc_blocks(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """pi's assistant content as Anthropic blocks (tools by Claude Code's names and arguments)."""
    blocks = []
    for b in content:
        if b["type"] == "text":
            blocks.append({"type": "text", "text": b["text"]})
        elif b["type"] == "thinking":
            blocks.append({"type": "thinking", "thinking": b["thinking"], "signature": "sig"})
        elif b["type"] == "toolCall":
            args = {CC_ARGS.get(k, k): v for k, v in b["arguments"].items()}
            blocks.append(
                {"type": "tool_use", "id": b["id"], "name": CC_TOOLS.get(b["name"], b["name"]), "input": args}
            )
    return blocks


def _cc_assistant(m: dict[str, Any], n: int) -> dict[str, Any]:
    """A pi assistant message as Claude Code's (``n``: lines so far, for an id it lacks)."""
    u = m.get("usage") or {}
    stops: dict[Any, str] = {"toolUse": "tool_use", "stop": "end_turn", "length": "max_tokens"}
    return {
        "id": m.get("responseId") or f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": m.get("model"),
        "content": _cc_blocks(m["content"]),
        "stop_reason": stops.get(m.get("stopReason"), "end_turn"),
        "usage": {
            "input_tokens": u.get("input", 0),
            "output_tokens": u.get("output", 0),
            "cache_read_input_tokens": u.get("cacheRead", 0),
            "cache_creation_input_tokens": u.get("cacheWrite", 0),
        },
    }


def claude_code(lines: list[dict[str, Any]], seed: int) -> bytes:
    sid = f"7d1c2b3a-0000-4000-8000-{seed:012x}"
    out: list[dict[str, Any]] = []
    parent: list[str | None] = [None]

    def add(kind: str, message: dict[str, Any], ms: int, **extra: Any) -> None:
        uid = f"cc{seed % 0xFFFFFF:06x}-0000-4000-8000-{len(out) + 1:012x}"
        out.append(
            {
                "type": kind,
                "uuid": uid,
                "parentUuid": parent[0],
                "isSidechain": False,
                "userType": "external",
                "cwd": CWD,
                "sessionId": sid,
                "version": "2.1.3",
                "timestamp": _iso(ms),
                **extra,
                "message": message,
            }
        )
        parent[0] = uid

    for m in _messages(lines):
        ms = int(m.get("timestamp") or 0)
        if m["role"] == "user":
            add("user", {"role": "user", "content": _text(m["content"])}, ms)
        elif m["role"] == "toolResult":
            add("user", _cc_tool_result(m), ms)
        else:
            add("assistant", _cc_assistant(m, len(out)), ms, requestId=f"req_{len(out)}")
    return _jsonl(out)


# ---------------------------------------------------------------------------------------------
# Codex CLI
# ---------------------------------------------------------------------------------------------


def _codex_head(sid: str, t0: int) -> list[dict[str, Any]]:
    """A rollout's first lines: ``session_meta`` and ``turn_context``."""
    return [
        {
            "timestamp": _iso(t0),
            "type": "session_meta",
            "payload": {
                "id": sid,
                "timestamp": _iso(t0),
                "cwd": CWD,
                "originator": "codex_cli_rs",
                "cli_version": "0.128.0",
                "source": "cli",
                "model_provider": "openai",
            },
        },
        {
            "timestamp": _iso(t0),
            "type": "turn_context",
            "payload": {
                "cwd": CWD,
                "model": "gpt-5-codex",
                "approval_policy": "on-request",
                "effort": "medium",
            },
        },
    ]


def _codex_output(m: dict[str, Any]) -> dict[str, Any]:
    """A pi tool result as a ``function_call_output`` (its output JSON, as the shell tool writes it)."""
    out_text = json.dumps(
        {
            "output": _text(m["content"]),
            "metadata": {"exit_code": 1 if m.get("isError") else 0, "duration_seconds": 0.4},
        }
    )
    return {"type": "function_call_output", "call_id": m["toolCallId"], "output": out_text}


def _codex_items(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """pi's assistant content as response items: ``reasoning``, ``message``, ``function_call``."""
    items = []
    for b in content:
        if b["type"] == "thinking":
            items.append(
                {
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": b["thinking"]}],
                    "encrypted_content": "gAAAAB" + "x" * 24,
                }
            )
        elif b["type"] == "text":
            items.append(
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": b["text"]}],
                }
            )
        elif b["type"] == "toolCall":
            items.append(
                {
                    "type": "function_call",
                    "name": b["name"],
                    "arguments": json.dumps(b["arguments"]),
                    "call_id": b["id"],
                }
            )
    return items


def _codex_token_count(u: dict[str, Any], total: dict[str, int]) -> tuple[dict[str, Any], dict[str, int]]:
    """The ``token_count`` event after a model call with pi's usage ``u``, and the new running total
    (Codex counts cached input inside ``input_tokens``)."""
    last = {
        "input_tokens": u.get("input", 0) + u.get("cacheRead", 0) + u.get("cacheWrite", 0),
        "cached_input_tokens": u.get("cacheRead", 0),
        "output_tokens": u.get("output", 0),
    }
    last["total_tokens"] = last["input_tokens"] + last["output_tokens"]
    total = {k: total[k] + last[k] for k in total}
    event = {
        "type": "token_count",
        "info": {"total_token_usage": dict(total), "last_token_usage": last, "model_context_window": 272000},
        "rate_limits": None,
    }
    return event, total


def codex(lines: list[dict[str, Any]], seed: int) -> bytes:
    msgs = _messages(lines)
    t0 = int(msgs[0].get("timestamp") or 0) if msgs else 0
    out = _codex_head(f"0199a7c1-0000-7000-8000-{seed:012x}", t0)

    def item(ms: int, payload: dict[str, Any], kind: str = "response_item") -> None:
        out.append({"timestamp": _iso(ms), "type": kind, "payload": payload})

    total = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    for m in msgs:
        ms = int(m.get("timestamp") or t0)
        if m["role"] == "user":
            text = _text(m["content"])
            item(ms, {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
            item(ms, {"type": "user_message", "message": text, "images": []}, "event_msg")
        elif m["role"] == "toolResult":
            item(ms, _codex_output(m))
        else:
            for payload in _codex_items(m["content"]):
                item(ms, payload)
            event, total = _codex_token_count(m.get("usage") or {}, total)
            item(ms, event, "event_msg")
    return _jsonl(out)


# ---------------------------------------------------------------------------------------------
# OpenCode
# ---------------------------------------------------------------------------------------------


def _oc_tool_state(b: dict[str, Any], r: dict[str, Any] | None, ms: int) -> dict[str, Any]:
    """A tool part's ``state``: the call ``b`` with its result ``r`` (completed, or error)."""
    rms = int(r.get("timestamp") or ms) if r else ms
    if r and r.get("isError"):
        return {
            "status": "error",
            "input": b["arguments"],
            "error": _text(r["content"]),
            "time": {"start": ms, "end": rms},
        }
    return {
        "status": "completed",
        "input": b["arguments"],
        "output": _text(r["content"]) if r else "",
        "title": b["name"],
        "metadata": {},
        "time": {"start": ms, "end": rms},
    }


def _oc_tokens(u: dict[str, Any]) -> dict[str, Any]:
    return {
        "input": u.get("input", 0),
        "output": u.get("output", 0),
        "reasoning": 0,
        "cache": {"read": u.get("cacheRead", 0), "write": u.get("cacheWrite", 0)},
    }


def _oc_user(m: dict[str, Any], mid: str, sid: str, prt: str, ms: int) -> dict[str, Any]:
    return {
        "info": {"id": mid, "sessionID": sid, "role": "user", "time": {"created": ms}, "agent": "build"},
        "parts": [
            {"id": prt, "sessionID": sid, "messageID": mid, "type": "text", "text": _text(m["content"])}
        ],
    }


def _oc_assistant(
    m: dict[str, Any],
    mid: str,
    sid: str,
    nid: Callable[[str], str],
    results: dict[str, dict[str, Any]],
    parent: str | None,
) -> dict[str, Any]:
    """A pi assistant message as OpenCode's: ``step-start``, a part per block (tool calls with their
    results), ``step-finish`` with the usage. Part ids come from ``nid`` in that order."""
    ms = int(m.get("timestamp") or 0)
    parts: list[dict[str, Any]] = [
        {"id": nid("prt"), "sessionID": sid, "messageID": mid, "type": "step-start"}
    ]
    for b in m["content"]:
        base = {"id": nid("prt"), "sessionID": sid, "messageID": mid}
        if b["type"] == "thinking":
            parts.append(
                {**base, "type": "reasoning", "text": b["thinking"], "time": {"start": ms, "end": ms}}
            )
        elif b["type"] == "text":
            parts.append({**base, "type": "text", "text": b["text"]})
        elif b["type"] == "toolCall":
            state = _oc_tool_state(b, results.get(b["id"]), ms)
            parts.append({**base, "type": "tool", "callID": b["id"], "tool": b["name"], "state": state})
    u = m.get("usage") or {}
    tokens = _oc_tokens(u)
    finish = "tool-calls" if m.get("stopReason") == "toolUse" else "stop"
    cost = (u.get("cost") or {}).get("total", 0.0)
    parts.append(
        {
            "id": nid("prt"),
            "sessionID": sid,
            "messageID": mid,
            "type": "step-finish",
            "reason": finish,
            "tokens": tokens,
            "cost": cost,
        }
    )
    info = {
        "id": mid,
        "sessionID": sid,
        "role": "assistant",
        "time": {"created": ms, "completed": ms},
        "parentID": parent,
        "modelID": m.get("model"),
        "providerID": "anthropic",
        "mode": "build",
        "agent": "build",
        "path": {"cwd": CWD, "root": CWD},
        "cost": cost,
        "tokens": tokens,
        "finish": finish,
    }
    return {"info": info, "parts": parts}


def opencode(lines: list[dict[str, Any]], seed: int) -> bytes:
    msgs = _messages(lines)
    sid = f"ses_{seed:012x}Corpus"
    n = [0]

    def nid(prefix: str) -> str:
        n[0] += 1
        return f"{prefix}_{seed:08x}{n[0]:08d}"

    results = {m["toolCallId"]: m for m in msgs if m["role"] == "toolResult"}
    out: list[dict[str, Any]] = []
    parent = None
    for m in msgs:
        if m["role"] == "toolResult":
            continue
        mid = nid("msg")
        if m["role"] == "user":
            parent = mid
            out.append(_oc_user(m, mid, sid, nid("prt"), int(m.get("timestamp") or 0)))
        else:
            out.append(_oc_assistant(m, mid, sid, nid, results, parent))
    t0 = out[0]["info"]["time"]["created"] if out else 0
    doc = {
        "info": {
            "id": sid,
            "slug": f"corpus-{seed}",
            "projectID": "prj_corpus",
            "directory": CWD,
            "title": f"Generated session {seed}",
            "version": "1.0.120",
            "time": {"created": t0, "updated": out[-1]["info"]["time"]["created"] if out else t0},
        },
        "messages": out,
    }
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
