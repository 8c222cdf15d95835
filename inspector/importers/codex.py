"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) → the pi session model.

Source of the format: ``../shared/research/ecosystem.md`` §2.3 (openai/codex
``codex-rs/protocol/src/protocol.rs``: ``RolloutItem``, ``SessionMetaLine``, ``CompactedItem``,
``TokenUsageInfo``; a parser spec verified against rust-v0.128.0). Rules reproduced:

* Two layouts. Current: one envelope per line, ``{"timestamp", "type", "payload"}`` with type
  ``session_meta`` | ``response_item`` | ``event_msg`` | ``turn_context`` | ``compacted``.
  Legacy (before September 2025): line 1 is a bare ``{id, timestamp, instructions, git}``, then
  bare response items and ``{"record_type": "state"}`` markers.
* A rollout is linear: every entry's parent is the one before it (forks and sub-agents are other
  files; ``forked_from_id`` and a sub-agent ``source`` are reported, and kept in the header as
  ``codexRelated`` so the app can offer those rollouts).
* ``response_item``\\ s are what the model sees. The model's outputs of one call — ``reasoning``
  (its summary text only; ``encrypted_content`` is never read), ``message`` (assistant),
  ``function_call`` / ``custom_tool_call`` / ``local_shell_call`` / ``web_search_call`` — become one
  assistant message, closed by the next input item (a ``web_search_call`` is run by the provider:
  it has no output, and its tool call is marked :data:`SERVER_SIDE`). ``function_call.arguments``
  is a JSON *string*: parsed when it is an object, else kept as ``{"input": <string>}`` (custom
  tools' free-form input too). Outputs (``function_call_output``, ``custom_tool_call_output``) become tool results joined
  on ``call_id``. An output is a string, a list of content items (text and ``input_image``, which
  become text and image blocks) or ``{content, success}``; a JSON-string output with
  ``metadata.exit_code`` ≠ 0, or ``success: false``, is an error result.
* User-role items Codex writes itself (``<environment_context>``, ``<user_instructions>``,
  AGENTS.md, ``<turn_aborted>``, ``<user_shell_command>``, ``<skill>``, sub-agent notices) and
  ``developer`` items are sent to the model but were not typed by the user: they
  become ``custom_message`` entries (``codex/context``, ``codex/developer``), which pi sends as
  user text, so they count in the context like the rest.
* ``event_msg`` is UI and telemetry. ``user_message`` / ``agent_message`` repeat response items and
  are skipped. ``token_count.info.last_token_usage`` is the usage of the latest model call
  (unless ``total_token_usage`` did not move since the previous one: Codex repeats the last
  event when a turn is interrupted, and no call was made):
  ``input = input_tokens − cached_input_tokens``, ``cacheRead = cached_input_tokens``,
  ``output = output_tokens``, ``totalTokens = total_tokens`` (so the context size of a call is
  Codex's own ``total_tokens``), ``reasoning = reasoning_output_tokens`` (part of the output, kept
  apart as pi keeps it: the reasoning items Codex sends back count at that size). ``model_context_window`` is kept in the header as
  ``contextWindow`` (see :func:`recorded_context_window`). Other events are counted, not imported.
* ``turn_context.model`` sets the model of later answers; a change becomes a ``model_change``.
  ``turn_context.truncation_policy`` (``{mode: tokens|bytes, limit}``) is how Codex cuts tool
  outputs as they enter its history (the rollout keeps them whole): from then on an output over
  the limit (+20%) is cut to its head and tail for the model, the whole output kept in
  ``details.codex.output``. Without a recorded policy outputs are imported as written.
* ``compacted{message, replacement_history}`` becomes a compaction: summary = ``message``,
  ``tokensBefore`` = the last recorded context size, nothing kept by ``firstKeptEntryId``. The
  replacement history — exactly what the model sees afterwards — is re-emitted right after it
  (its summary item left out, since the compaction entry already carries the summary), each entry
  marked ``"codex": {"replacementHistory": true}``. Without a replacement history (older
  rollouts) Codex rebuilds it on resume (``build_compacted_history``): the history's user
  messages within 20,000 tokens, then the summary; those user messages are re-emitted the same
  way, marked ``"codex": {"rebuiltHistory": true}``. Difference left: Codex puts the summary
  *after* the kept user messages, pi's context puts it first. A ``compaction`` response item
  (server-side, encrypted) becomes a compaction whose summary says it cannot be read; inside a
  replacement history (a remote compaction, recorded with an empty ``message``) it is that
  compaction's summary.
* ``event_msg/turn_aborted`` (the user interrupted the turn): the turn's last answer, when its call
  recorded no usage (Codex repeats the last ``token_count``: see above), was cut off as it streamed
  and gets pi's ``stopReason: "aborted"``. An answer whose call finished keeps its reason.
* ``event_msg/thread_rolled_back{num_turns}`` (the user undid turns): Codex drops the newest
  ``num_turns`` user turns from its history. Here they stay as an abandoned branch of the tree
  and the rollout continues from where they started — pi's shape for an undo.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from ..agents import AGENTS
from ..session.foreign import foreign_format, foreign_issues
from ..session.loader import _build, _parse_json, _to_entry
from ..session.models import SessionHeader
from ..session.tree import LoadIssue, Session, iso_to_ms

FORMAT = AGENTS["codex"].name
LABEL = AGENTS["codex"].format_label
#: what Codex puts before the summary in the user message that replaces compacted history, and the
#: tokens of recent user messages it keeps (``codex-rs/core/src/compact.rs``); the codex policy writes them
CODEX_USER_MESSAGE_MAX_TOKENS = 20000
CODEX_SUMMARY_PREFIX = (
    "Another language model started to solve this problem and produced a summary of its thinking "
    "process. You also have access to the state of the tools that were used by that language model. "
    "Use this to build on the work that has already been done and avoid duplicating work. Here is "
    "the summary produced by the other language model, use the information in this summary to "
    "assist with your own analysis:"
)

ENVELOPE_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
_OUTPUTS = (
    "reasoning",
    "message",
    "function_call",
    "custom_tool_call",
    "local_shell_call",
    "web_search_call",
)
# user-role messages Codex writes itself (its "contextual user messages"): not a user turn, not kept
# as a user message by its compaction; compared lower-cased, after leading whitespace
_CONTEXT_MARKERS = (
    "<environment_context>",
    "<user_instructions>",
    "# agents.md instructions",
    "<instructions>",
    "<turn_aborted>",
    "<user_shell_command>",
    "<skill>",
    "<subagent_notification>",
    "<plugins>",
    "<subagents>",
)
SERVER_SIDE = "serverSide"
"""Set on a tool call the provider runs itself (OpenAI's hosted web search, ``web_search_call``):
the rollout has no output for it, and none is missing (the doctor does not look for one)."""
PUT_BACK = ("replacementHistory", "rebuiltHistory")
"""The marks of the entries Codex puts back in the context right after its compaction: its
``replacement_history``, or the user messages it rebuilds when the file has none."""


def put_back(entry: Any) -> str | None:
    """How Codex put ``entry`` back after its compaction (a :data:`PUT_BACK` mark), or None."""
    mark = getattr(entry, "codex", None)
    return next((k for k in PUT_BACK if mark.get(k)), None) if isinstance(mark, dict) else None


def put_back_count(entries: Sequence[Any], path: Sequence[int], start: int, end: int | None = None) -> int:
    """How many entries of ``path`` (indexes into ``entries``) from ``start``, right after a recorded
    compaction, and before ``end``, Codex put back itself (:func:`put_back`): they follow the
    compaction entry on the branch, but the model has them because the compaction kept them."""
    stop = len(path) if end is None else end
    n = 0
    while start + n < stop and put_back(entries[path[start + n]]) is not None:
        n += 1
    return n


ENCRYPTED_SUMMARY = "(server-side compaction: Codex stored the summary encrypted; it cannot be read)"


def sniff(first: dict[str, Any] | None, head: bytes) -> bool:
    if first is None:
        return False
    if first.get("type") in ENVELOPE_TYPES and "payload" in first:
        return True
    # legacy: a bare session line with the instructions Codex ran with
    return (
        "type" not in first
        and "id" in first
        and "timestamp" in first
        and ("instructions" in first or "git" in first)
    )


def parse(data: bytes, source: str | None) -> Session:
    return _Importer(source).run(data)


def recorded_context_window(session: Session) -> int | None:
    """The context window the agent recorded for its model (Codex's ``model_context_window``)."""
    h = session.header
    extra = (h.__pydantic_extra__ or {}) if h is not None else {}
    w = extra.get("contextWindow")
    return int(w) if isinstance(w, (int, float)) and not isinstance(w, bool) and w > 0 else None


def recorded_model_windows(session: Session) -> tuple[tuple[str, str, int], ...]:
    """(provider, model, window) of each model whose window the agent recorded, when they differ
    (Codex records ``model_context_window`` at each call: a rollout that switched models records
    each model's); empty otherwise."""
    h = session.header
    extra = (h.__pydantic_extra__ or {}) if h is not None else {}
    rows = extra.get("contextWindows")
    out = []
    for row in rows if isinstance(rows, list) else []:
        if (
            isinstance(row, list)
            and len(row) == 3
            and isinstance(row[0], str)
            and isinstance(row[1], str)
            and isinstance(row[2], int)
            and not isinstance(row[2], bool)
            and row[2] > 0
        ):
            out.append((row[0], row[1], row[2]))
    return tuple(out)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        str(c.get("text", ""))
        for c in content
        if isinstance(c, dict) and c.get("type") in ("input_text", "output_text", "text")
    )


def _user_blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    out: list[dict[str, Any]] = []
    for c in content if isinstance(content, list) else []:
        if not isinstance(c, dict):
            continue
        if c.get("type") in ("input_text", "output_text", "text"):
            out.append({"type": "text", "text": str(c.get("text", ""))})
        elif c.get("type") == "input_image":
            url = str(c.get("image_url", ""))
            if url.startswith("data:") and ";base64," in url:
                mime, data = url[5:].split(";base64,", 1)
                out.append({"type": "image", "data": data, "mimeType": mime})
            else:
                out.append({"type": "text", "text": f"[image: {url[:200]}]"})
    return out


def _arguments(raw: Any) -> Any:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            v = json.loads(raw)
        except ValueError:
            return {"input": raw}
        return v if isinstance(v, dict) else {"input": raw}
    return {} if raw is None else {"input": raw}


def _items(raw: list[Any]) -> list[dict[str, Any]] | None:
    """An output written as content items (``[{type: input_text|output_text, text} |
    {type: input_image, image_url}]``) as pi content blocks; None if it is some other list."""
    if not raw or not all(
        isinstance(c, dict) and c.get("type") in ("input_text", "output_text", "text", "input_image")
        for c in raw
    ):
        return None
    return _user_blocks(raw)


def _output(raw: Any) -> tuple[list[dict[str, Any]], bool]:
    """A tool output's content blocks and whether it failed. Codex writes an output as a string, as
    content items, or (some versions) as ``{content, success}`` whose content is either of those."""

    def text(t: str) -> list[dict[str, Any]]:
        return [{"type": "text", "text": t}]

    if isinstance(raw, dict):
        c = raw.get("content")
        blocks = text(c) if isinstance(c, str) else _items(c) if isinstance(c, list) else None
        return blocks or text(json.dumps(raw, ensure_ascii=False)), raw.get("success") is False
    if isinstance(raw, list):
        return _items(raw) or text(json.dumps(raw, ensure_ascii=False)), False
    if not isinstance(raw, str):
        return text("" if raw is None else json.dumps(raw, ensure_ascii=False)), False
    try:
        v = json.loads(raw)
    except ValueError:
        return text(raw), False
    if isinstance(v, dict) and "output" in v and isinstance(v.get("metadata"), dict):  # older shell outputs
        code = v["metadata"].get("exit_code")
        return text(str(v["output"])), isinstance(code, int) and code != 0
    return text(raw), False


def related_sessions(meta: dict[str, Any]) -> dict[str, str]:
    """Ids of the rollouts a session comes from: ``forkedFrom`` (``forked_from_id``) and, for a
    sub-agent, ``parentThread`` (``source.subagent.thread_spawn.parent_thread_id``)."""
    out: dict[str, str] = {}
    if isinstance(meta.get("forked_from_id"), str) and meta["forked_from_id"]:
        out["forkedFrom"] = meta["forked_from_id"]
    src = meta.get("source")
    sub = src.get("subagent") if isinstance(src, dict) else None
    spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
    parent = spawn.get("parent_thread_id") if isinstance(spawn, dict) else None
    if isinstance(parent, str) and parent:
        out["parentThread"] = parent
    return out


def _history_truncate(text: str, mode: str, limit: int) -> str | None:
    """A tool output as it enters Codex's history under the turn's ``truncation_policy``
    (``ContextManager.process_item``): the limit gets 20% headroom; an output over it keeps its
    first and last halves around a marker — tokens counted as 4 UTF-8 bytes, or bytes. None when
    it fits. Codex versions differ in the marker's wording; the size is what matters here."""
    budget_bytes = math.ceil(limit * 1.2) * (4 if mode == "tokens" else 1)
    raw = text.encode("utf-8")
    if len(raw) <= budget_bytes:
        return None
    head = raw[: budget_bytes // 2].decode("utf-8", "ignore")
    tail = raw[len(raw) - (budget_bytes - budget_bytes // 2) :].decode("utf-8", "ignore")
    if mode == "tokens":
        removed = f"{(len(raw) - budget_bytes + 3) // 4} tokens"
    else:
        removed = f"{len(text) - len(head) - len(tail)} chars"
    return f"{head}…{removed} truncated…{tail}"


def _truncate_middle(text: str, tokens: int) -> str:
    """``text`` cut to about ``tokens`` tokens (4 bytes each), keeping its start and end around a
    marker saying how much was removed, as Codex's token truncation does."""
    raw = text.encode("utf-8")
    budget = tokens * 4
    if len(raw) <= budget:
        return text
    head = raw[: budget // 2].decode("utf-8", "ignore")
    tail = raw[len(raw) - budget // 2 :].decode("utf-8", "ignore")
    removed = (len(raw) - budget + 3) // 4
    return f"{head}…{removed} tokens truncated…{tail}"


class _Importer:
    def __init__(self, source: str | None) -> None:
        self.source = source
        self.issues: list[LoadIssue] = []
        self.foreign: list[tuple[int, str]] = []  # (line, format) of other agents' lines
        self.raw: list[dict[str, Any]] = []  # pi entries as JSON objects
        self.lines: list[int] = []
        self.pending: dict[str, Any] | None = None  # the assistant message being assembled
        self.pending_line = 0
        self.last_assistant: int | None = None  # index in self.raw
        self.tool_names: dict[str, str] = {}
        self.model: str | None = None
        self.provider = "openai"
        self.context_tokens = 0
        self.last_total: Any = None
        self.window: int | None = None
        self.windows: dict[tuple[str, str], int] = {}  # (provider, model) → the window last recorded for it
        self.meta: dict[str, Any] = {}
        self.skipped: dict[str, int] = {}
        self.n_ids = 0
        self.head: str | None = None  # the entry the next one continues (moves back on a rollback)
        self.index: dict[str, int] = {}  # entry id -> index in self.raw
        self.rollbacks: list[tuple[int, int]] = []  # (line, user turns dropped)
        self.truncation: tuple[str, int] | None = None  # the turn's truncation_policy (mode, limit)

    # -- entries ----------------------------------------------------------------------------

    def _add(self, line: int, ts: Any, obj: dict[str, Any], extra: dict[str, Any] | None = None) -> None:
        self.n_ids += 1
        eid = f"cx{line:06d}" + (
            f"-{self.n_ids}" if self.raw and self.raw[-1]["id"].startswith(f"cx{line:06d}") else ""
        )
        self.index[eid] = len(self.raw)
        self.raw.append({**obj, "id": eid, "parentId": self.head, "timestamp": ts, **(extra or {})})
        self.lines.append(line)
        self.head = eid

    def _history(self) -> list[int]:
        """Indexes of the entries of Codex's current history: the chain back to (not including)
        the latest compaction, oldest first."""
        out: list[int] = []
        k = self.index.get(self.head) if self.head is not None else None
        while k is not None and self.raw[k].get("type") != "compaction":
            out.append(k)
            parent = self.raw[k].get("parentId")
            k = self.index.get(parent) if isinstance(parent, str) else None
        out.reverse()
        return out

    def _is_user_turn(self, k: int) -> bool:
        m = self.raw[k].get("message")
        return self.raw[k].get("type") == "message" and isinstance(m, dict) and m.get("role") == "user"

    def _flush(self) -> None:
        if self.pending is None:
            return
        m = self.pending
        m["stopReason"] = "toolUse" if any(b.get("type") == "toolCall" for b in m["content"]) else "stop"
        self._add(self.pending_line, m.pop("_ts"), {"type": "message", "message": m})
        self.last_assistant = len(self.raw) - 1
        self.pending = None

    def _assistant(self, line: int, ts: Any) -> dict[str, Any]:
        if self.pending is None:
            self.pending = {
                "role": "assistant",
                "content": [],
                "api": "openai-responses",
                "provider": self.provider,
                "model": self.model,
                "timestamp": iso_to_ms(ts),
                "_ts": ts,
            }
            self.pending_line = line
        return self.pending

    def _skip(self, what: str) -> None:
        self.skipped[what] = self.skipped.get(what, 0) + 1

    # -- items ------------------------------------------------------------------------------

    def response_item(
        self,
        line: int,
        ts: Any,
        p: dict[str, Any],
        extra: dict[str, Any] | None = None,
        summary: str | None = None,
    ) -> None:
        t = p.get("type")
        if t == "message" and p.get("role") in ("user", "developer", "system"):
            self._input_message(line, ts, p, extra, summary)
        elif t == "message":  # assistant
            if extra:
                self._flush()
            a = self._assistant(line, ts)
            text = _text_of(p.get("content"))
            if text:
                a["content"].append({"type": "text", "text": text})
            if extra:
                self._flush()
                self.raw[-1].update(extra)
        elif t == "reasoning":
            summ = jv if isinstance(jv := p.get("summary"), list) else []
            text = "\n\n".join(str(s.get("text", "")) for s in summ if isinstance(s, dict))
            self._assistant(line, ts)["content"].append({"type": "thinking", "thinking": text})
        elif t in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
            self._tool_call(line, ts, t, p)
        elif t in ("function_call_output", "custom_tool_call_output"):
            self._tool_output(line, ts, p, extra)
        elif t == "compaction":  # server-side compaction: an encrypted summary
            self._flush()
            self._add(
                line,
                ts,
                {
                    "type": "compaction",
                    "summary": ENCRYPTED_SUMMARY,
                    "firstKeptEntryId": None,
                    "tokensBefore": self.context_tokens,
                    "details": {"agent": "codex", "encrypted": True},
                },
            )
        else:
            self._skip(f"response item {t!r}")

    def _input_message(
        self, line: int, ts: Any, p: dict[str, Any], extra: dict[str, Any] | None, summary: str | None
    ) -> None:
        """A user, developer or system item: a user message, or context Codex wrote itself."""
        self._flush()
        text = _text_of(p.get("content"))
        if summary is not None and summary.strip() and summary.strip() in text:
            return  # the summary item of a replacement history: the compaction entry carries it
        blocks = _user_blocks(p.get("content"))
        if p.get("role") != "user" or text.lstrip().lower().startswith(_CONTEXT_MARKERS):
            kind = "codex/context" if p.get("role") == "user" else f"codex/{p.get('role')}"
            self._add(
                line,
                ts,
                {"type": "custom_message", "customType": kind, "content": blocks, "display": False},
                extra,
            )
        else:
            self._add(
                line,
                ts,
                {
                    "type": "message",
                    "message": {"role": "user", "content": blocks, "timestamp": iso_to_ms(ts)},
                },
                extra,
            )

    def _tool_call(self, line: int, ts: Any, t: str, p: dict[str, Any]) -> None:
        """A function, custom tool, local shell or web search call, into the open answer."""
        cid = str(p.get("call_id") or p.get("id") or f"call-{line}")
        if t == "function_call":
            name, args = str(p.get("name", "")), _arguments(p.get("arguments"))
        elif t == "custom_tool_call":
            name, args = str(p.get("name", "")), {"input": p.get("input", "")}
        elif t == "local_shell_call":
            name, args = "local_shell", jv if isinstance(jv := p.get("action"), dict) else {}
        else:
            name, args = "web_search", jv if isinstance(jv := p.get("action"), dict) else {}
        self.tool_names[cid] = name
        self._assistant(line, ts)["content"].append(
            {"type": "toolCall", "id": cid, "name": name, "arguments": args}
            | ({SERVER_SIDE: True} if t == "web_search_call" else {})
        )

    def _tool_output(self, line: int, ts: Any, p: dict[str, Any], extra: dict[str, Any] | None) -> None:
        """A call's output: a tool result, cut as the turn's truncation policy cuts it for the model."""
        self._flush()
        cid = str(p.get("call_id", ""))
        if cid not in self.tool_names:
            self.issues.append(
                LoadIssue(
                    "orphan-output",
                    "warning",
                    f"tool output for call_id {cid!r}, which no earlier call has",
                    line=line,
                )
            )
        blocks, failed = _output(p.get("output"))
        tr: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": cid,
            "toolName": self.tool_names.get(cid, ""),
            "content": blocks,
            "isError": failed,
            "timestamp": iso_to_ms(ts),
        }
        if self.truncation is not None and len(blocks) == 1 and blocks[0]["type"] == "text":
            cut = _history_truncate(blocks[0]["text"], *self.truncation)
            if cut is not None:  # the model saw it cut: keep the whole output in details
                tr["content"] = [{"type": "text", "text": cut}]
                tr["details"] = {"codex": {"truncated": list(self.truncation), "output": blocks[0]["text"]}}
        self._add(line, ts, {"type": "message", "message": tr}, extra)

    def event(self, line: int, p: dict[str, Any]) -> None:
        t = p.get("type")
        if t == "token_count":
            info = p.get("info") if isinstance(p.get("info"), dict) else None
            if info is None:
                return
            w = info.get("model_context_window")
            if isinstance(w, int) and not isinstance(w, bool) and w > 0:
                self.window = w
                self.windows[(self.provider, self.model or "")] = w
            u = info.get("last_token_usage")
            if not isinstance(u, dict):
                return
            total = info.get("total_token_usage")
            if isinstance(total, dict):
                if total == self.last_total:
                    return  # the totals did not move: no new call (Codex repeats it when a turn is interrupted)
                self.last_total = total
            cached = int(u.get("cached_input_tokens") or 0)
            usage = {
                "input": int(u.get("input_tokens") or 0) - cached,
                "output": int(u.get("output_tokens") or 0),
                "cacheRead": cached,
                "cacheWrite": 0,
                "totalTokens": int(u.get("total_tokens") or 0),
            }
            if u.get("reasoning_output_tokens"):
                usage["reasoning"] = int(
                    u["reasoning_output_tokens"]
                )  # part of output, kept apart as pi does
            self.context_tokens = usage["totalTokens"]
            if self.pending is not None:
                self.pending["usage"] = usage
            elif self.last_assistant is not None:
                self.raw[self.last_assistant]["message"]["usage"] = usage
        elif t == "thread_rolled_back":
            self.rollback(line, p.get("num_turns"))
        elif t == "turn_aborted":
            self.aborted()
        elif t in ("user_message", "agent_message", "agent_reasoning"):
            self._skip("event (repeats a response item)")
        else:
            self._skip(f"event {t!r}")

    def aborted(self) -> None:
        """``turn_aborted`` (the user interrupted the turn): the turn's last answer, if its call
        recorded no usage, was cut off while it streamed — pi's ``stopReason: "aborted"``. Only
        where the rollout records usage at all (a ``token_count`` was read): without any, no answer
        has usage and none can be told apart. An answer whose call finished keeps its reason (the
        interruption came while its tools ran)."""
        self._flush()
        k = self.last_assistant
        if k is None or self.last_total is None:
            return
        m = self.raw[k]["message"]
        if "usage" not in m and not any(self._is_user_turn(j) for j in range(k + 1, len(self.raw))):
            m["stopReason"] = "aborted"  # the answer is the turn's (no user message came after it)

    def rollback(self, line: int, num_turns: Any) -> None:
        """``thread_rolled_back{num_turns}``: Codex drops the newest ``num_turns`` user turns from
        its history (``drop_last_n_user_turns``): the cut is at that user message (at the first one
        if there are fewer), moved back over the context updates just before it. Here the dropped
        turns stay in the tree as an abandoned branch and later entries continue from the cut."""
        self._flush()
        n = num_turns if isinstance(num_turns, int) and not isinstance(num_turns, bool) else 0
        hist = self._history()
        users = [i for i, k in enumerate(hist) if self._is_user_turn(k)]
        if n <= 0 or not users:
            self._skip("rollback with nothing to drop")
            return
        cut = users[0] if n >= len(users) else users[len(users) - n]
        while cut - 1 > users[0] and self.raw[hist[cut - 1]].get("type") == "custom_message":
            cut -= 1  # context updates that opened the dropped turn go with it
        parent = self.raw[hist[cut]].get("parentId")
        self.head = parent if isinstance(parent, str) else None
        self.rollbacks.append((line, min(n, len(users))))

    def compacted(self, line: int, ts: Any, p: dict[str, Any]) -> None:
        self._flush()
        summary = str(p.get("message") or "")
        hist = p.get("replacement_history")
        rebuilt = None if isinstance(hist, list) else self._rebuilt_user_messages()
        details: dict[str, Any] = {"agent": "codex"}
        # a remote (server-side) compaction writes no message: its summary is the encrypted
        # `compaction` item inside the replacement history, which this entry stands for
        remote = isinstance(hist, list) and any(
            isinstance(i, dict) and i.get("type") == "compaction" for i in hist
        )
        if remote and not summary.strip():
            summary, details["encrypted"] = ENCRYPTED_SUMMARY, True
        self._add(
            line,
            ts,
            {
                "type": "compaction",
                "summary": summary,
                "firstKeptEntryId": None,
                "tokensBefore": self.context_tokens,
                "details": details,
            },
        )
        if isinstance(hist, list):
            for item in hist:
                if isinstance(item, dict) and item.get("type") != "compaction":
                    self.response_item(
                        line, ts, item, extra={"codex": {"replacementHistory": True}}, summary=summary
                    )
            self._flush()
        elif rebuilt:
            for text in rebuilt:
                self._add(
                    line,
                    ts,
                    {
                        "type": "message",
                        "message": {"role": "user", "content": text, "timestamp": iso_to_ms(ts)},
                    },
                    {"codex": {"rebuiltHistory": True}},
                )

    def _rebuilt_user_messages(self) -> list[str]:
        """What Codex puts back after a compaction recorded without ``replacement_history``
        (``build_compacted_history``): the user messages of the history — not injected context,
        not an earlier summary — newest first while they fit in 20,000 tokens (Codex's estimate:
        UTF-8 bytes / 4, rounded up), the one that does not fit cut to what is left, in time order."""
        texts = []
        for k in self._history():
            if self._is_user_turn(k):
                c = self.raw[k]["message"].get("content")
                text = (
                    c
                    if isinstance(c, str)
                    else "".join(
                        str(b.get("text", "")) for b in c if isinstance(b, dict) and b.get("type") == "text"
                    )
                )
                if not text.startswith(CODEX_SUMMARY_PREFIX):
                    texts.append(text)
        kept: list[str] = []
        left = CODEX_USER_MESSAGE_MAX_TOKENS
        for text in reversed(texts):
            tokens = (len(text.encode("utf-8")) + 3) // 4
            if tokens <= left:
                kept.append(text)
                left -= tokens
                continue
            if left > 0:
                kept.append(_truncate_middle(text, left))
            break
        kept.reverse()
        return kept

    def turn_context(self, line: int, ts: Any, p: dict[str, Any]) -> None:
        tp = p.get("truncation_policy")
        if (
            isinstance(tp, dict)
            and tp.get("mode") in ("tokens", "bytes")
            and isinstance(tp.get("limit"), int)
            and not isinstance(tp.get("limit"), bool)
            and tp["limit"] > 0
        ):
            self.truncation = (tp["mode"], tp["limit"])
        model = p.get("model")
        if isinstance(model, str) and model and model != self.model:
            self._flush()
            self._add(line, ts, {"type": "model_change", "provider": self.provider, "modelId": model})
            self.model = model

    # -- the file ---------------------------------------------------------------------------

    def run(self, data: bytes) -> Session:
        rows = data.split(b"\n")
        legacy = False
        for n, raw in enumerate(rows, start=1):
            if not raw.strip():
                continue
            try:
                o = _parse_json(raw.decode("utf-8", "replace").lstrip("\ufeff"))
            except (ValueError, RecursionError) as e:
                last = n == len(rows) and not data.endswith(b"\n")
                self.issues.append(
                    LoadIssue(
                        "truncated-line" if last else "malformed-json",
                        "error",
                        (
                            "the last line is cut off mid-JSON; skipped"
                            if last
                            else f"not valid JSON, skipped: {str(e)[:160]}"
                        ),
                        line=n,
                    )
                )
                continue
            if not isinstance(o, dict):
                self.issues.append(LoadIssue("not-an-object", "error", "skipped: not a JSON object", line=n))
                continue
            if n == 1 or (not self.meta and not self.raw):
                if "type" not in o and "id" in o and "timestamp" in o:  # legacy session line
                    legacy = True
                    self.meta = o
                    continue
            try:
                self.line(n, o, legacy)
            except (ValidationError, TypeError, AttributeError, ValueError, KeyError, IndexError) as e:
                self.pending = None  # a line of an unexpected shape: reported, the rest still loads
                self.issues.append(
                    LoadIssue(
                        "invalid-line",
                        "warning",
                        f"not a rollout line this importer can read ({type(e).__name__}); skipped",
                        line=n,
                    )
                )
        self._flush()
        return self._finish(legacy)

    def line(self, n: int, o: dict[str, Any], legacy: bool) -> None:
        if legacy:
            if o.get("record_type") == "state":
                self._skip("state marker")
                return
            self.response_item(n, self.meta.get("timestamp"), o)
            return
        kind, p, ts = o.get("type"), o.get("payload"), o.get("timestamp")
        ts = ts if isinstance(ts, str) else None
        if not isinstance(p, dict):
            fmt = foreign_format(o, FORMAT)
            if fmt is not None:
                self.foreign.append((n, fmt))
            else:
                self.issues.append(
                    LoadIssue(
                        "not-codex",
                        "warning",
                        f"line without a payload object (type {kind!r}); skipped",
                        line=n,
                    )
                )
            return
        if kind == "session_meta":
            if self.meta:
                self._skip("repeated session_meta (a resume)")
            else:
                self.meta = p
                if isinstance(p.get("model_provider"), str):
                    self.provider = p["model_provider"]
        elif kind == "response_item":
            self.response_item(n, ts, p)
        elif kind == "event_msg":
            self.event(n, p)
        elif kind == "turn_context":
            self.turn_context(n, ts, p)
        elif kind == "compacted":
            self.compacted(n, ts, p)
        else:
            self._skip(f"line type {kind!r}")

    def _finish(self, legacy: bool) -> Session:
        entries: list[Any] = []
        lines: list[int] = []
        for obj, line in zip(self.raw, self.lines, strict=True):
            entries.append(_to_entry(obj, line, len(entries), self.issues))
            lines.append(line)
        issues = self._file_issues(legacy)
        return _build(self._header(), entries, lines, [*issues, *self.issues], self.source, 3, False)

    def _file_issues(self, legacy: bool) -> list[LoadIssue]:
        """What the file as a whole says: its layout, a missing session_meta, other agents' lines,
        a fork or sub-agent, rollbacks, what was not imported."""
        meta = self.meta
        issues = [
            LoadIssue(
                "format",
                "info",
                f"{LABEL}{' (legacy layout)' if legacy else ''}, imported into the pi session model",
            )
        ]
        if not meta:
            issues.append(
                LoadIssue("no-session-meta", "warning", "no session_meta line: session id and cwd unknown")
            )
        issues.extend(foreign_issues(self.foreign, LABEL))
        if meta.get("forked_from_id"):
            issues.append(
                LoadIssue(
                    "fork",
                    "info",
                    f"forked from session {meta['forked_from_id']} (its history may be "
                    "repeated at the start of this file)",
                )
            )
        src = meta.get("source")
        if isinstance(src, dict) and "subagent" in src:
            issues.append(LoadIssue("subagent", "info", "a sub-agent's rollout (source.subagent)"))
        for line, n in self.rollbacks:
            issues.append(
                LoadIssue(
                    "rollback",
                    "info",
                    f"the user rolled back {n} turn(s): Codex dropped them from "
                    "its history; they stay in the tree as an abandoned branch",
                    line=line,
                )
            )
        if self.skipped:
            listed = ", ".join(f"{v} {k}" for k, v in sorted(self.skipped.items(), key=lambda kv: -kv[1]))
            issues.append(LoadIssue("not-imported", "info", f"not sent to the model, not imported: {listed}"))
        return issues

    def _header(self) -> SessionHeader:
        """The session's header: id, time and cwd from session_meta, the recorded context window
        and the related rollouts' ids."""
        meta = self.meta

        def text(v: Any) -> str | None:
            return v if isinstance(v, str) else None

        header_fields: dict[str, Any] = {
            "id": str(meta.get("id") or "codex"),
            "version": 3,
            "timestamp": text(meta.get("timestamp")),
            "cwd": text(meta.get("cwd")),
        }
        if self.window:
            header_fields["contextWindow"] = self.window
        if len(set(self.windows.values())) > 1:  # the rollout switched to a model with another window
            header_fields["contextWindows"] = [[p, m, w] for (p, m), w in self.windows.items()]
        related = related_sessions(meta)
        if related:
            header_fields["codexRelated"] = related  # {"forkedFrom"?, "parentThread"?}: other rollouts' ids
        return SessionHeader.model_validate(header_fields)
