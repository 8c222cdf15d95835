"""OpenCode sessions (``opencode export <session>``, or a session of OpenCode's database written
the same way by :func:`inspector.importers.discover.opencode_db_export`) → the pi session model.

Source of the format: ``../shared/research/ecosystem.md`` §2.4 (anomalyco/opencode
``session/message-v2.ts``, ``session.sql.ts``, ``cli/cmd/export.ts``). Rules reproduced:

* One JSON document ``{info: Session, messages: [{info: Message, parts: Part[]}]}``; messages are
  linear (sub-agent sessions are other sessions, ``info.parentID``), so every entry's parent is
  the one before it. The session title becomes a ``session_info`` name.
* User messages: ``text`` parts (``ignored`` ones left out; ``synthetic`` ones kept — the model
  sees them), ``file`` parts (a ``data:`` image becomes an image block, other attachments a
  mention; ``text/plain`` files and directories are left out, as OpenCode does: their content
  arrived as synthetic text parts) and ``subtask`` parts (the line OpenCode sends for them).
* An assistant message is split at its ``step-start`` / ``step-finish`` parts: **one assistant
  message per LLM call**, holding that step's ``reasoning`` (thinking), ``text`` and ``tool``
  parts (tool calls), followed by the tool results. Usage comes from the step's
  ``step-finish.tokens``: ``input``, ``cacheRead`` = ``cache.read``, ``cacheWrite`` =
  ``cache.write``, ``output`` = ``output + reasoning`` (pi counts reasoning as output),
  ``totalTokens`` = their sum, ``reasoning`` kept apart too (as pi records it); without step
  parts, the message's own ``tokens``. A part the model did not write between a ``step-finish``
  and the next step (the ``patch`` of the files the step changed, which OpenCode's processor
  writes right after the ``step-finish``) belongs to the step that finished: no call of its own.
* An answer with an ``error``: its last step gets pi's ``stopReason`` ``aborted`` for the user's
  interruption (``MessageAbortedError``), else ``error``, the error's message as
  ``errorMessage``. OpenCode sends such an answer again only when it was interrupted after it
  wrote more than reasoning (``toModelMessages``); otherwise every message of it, tool results
  included, is marked :data:`WITHHELD`, and the prompt rebuilt as sent leaves it out
  (:mod:`inspector.sent`).
* A tool part's state: ``completed`` → its output; ``error`` → the error, an error result (an
  interrupted run with ``metadata.output``: that output, as OpenCode sends it);
  ``pending`` / ``running`` → an interrupted call, an error result saying so.
* **Pruned outputs**: a completed part with ``state.time.compacted`` was replaced for the model
  by ``[Old tool result content cleared]`` from then on. The result keeps the original output and
  records the time in ``details.opencode.compacted`` (ms); the ``recorded`` pruning strategy shows
  it cleared from the next call on (see :func:`recorded_pruned_call_ids`).
* **Compaction**: a user message with a ``compaction`` part (the request, shown to the model as
  "What did we do so far?") answered by an assistant message with ``summary: true`` becomes one
  compaction entry: summary = the answer's text, ``tokensBefore`` = the last step's context size
  (input + cache read + cache write). Without ``tail_start_id`` nothing is kept (OpenCode's
  ``filterCompacted`` starts the model's history at that request). With the newer
  ``tail_start_id`` (a retained tail of recent messages), ``firstKeptEntryId`` is the first entry
  of that message: the context is summary, tail, later messages — the order of newer OpenCode,
  which moves the summary exchange before the tail (earlier builds sent the tail first, in time
  order). Difference left: OpenCode sends the request and the summary as a user/assistant pair;
  pi's context carries the summary as one user-side message.
* **DCP compress** (the Dynamic Context Pruning plugin's ``compress`` tool; rules and sources in
  :mod:`.opencode_dcp`): each completed call's blocks — the messages a range replaced, as entry
  indexes, and the summary message DCP sent instead — are kept in the call's tool result
  ``details["dcp"]``; the ``recorded`` pruning strategy applies them from the next call on. The
  header says ``dcp: true`` (every message then carries DCP's id, which the reconstruction check
  counts). What DCP's own notification (an ignored user message, not imported) says the call's
  summaries came to is kept there too (``details["dcp"]["notified"]``: tokens by Anthropic's
  tokenizer, and the line): DCP may send more than the compress call's summary
  (:func:`.opencode_dcp.notified`), and the reconstruction check says so where it departs.
* A pending undo (``info.revert``) is reported at its message: OpenCode removes the reverted
  messages when the next prompt starts; they are imported as recorded (they were sent).
* Other parts (``agent``, ``patch``, ``snapshot``, ``retry``) send nothing and are
  counted.
"""

from __future__ import annotations

import bisect
import json
import re
from typing import Any

from pydantic import ValidationError

from ..agents import AGENTS
from ..numbers import utc_of_ms
from ..session.loader import _build, _to_entry
from ..session.models import SessionHeader
from ..session.tree import LoadIssue, Session
from .opencode_dcp import Replay as DcpReplay
from .opencode_dcp import is_dcp
from .opencode_dcp import notified as dcp_notified

FORMAT = AGENTS["opencode"].name
LABEL = AGENTS["opencode"].format_label
CLEARED = "[Old tool result content cleared]"
SUBTASK_TEXT = "The following tool was executed by the user"  # what OpenCode sends for a subtask part


ABORTED = "MessageAbortedError"
"""The error OpenCode records on an answer the user interrupted (``MessageV2.AbortedError``): pi's
``stopReason: "aborted"``; any other error is pi's ``"error"``."""
_BARE = ("step-start", "reasoning")
"""Parts that leave an interrupted answer with nothing OpenCode sends again."""
WITHHELD = "openCodeWithheld"
"""Set on the messages of an answer OpenCode does not send again (``session/message-v2.ts``,
``toModelMessages``): an answer with an error, unless the user interrupted it after it wrote more
than reasoning (a part other than ``step-start`` and ``reasoning``). The whole answer is left
out — every step, its tool calls and their results."""


def sniff(first: dict[str, Any] | None, head: bytes) -> bool:
    if first is not None:
        return isinstance(first.get("info"), dict) and isinstance(first.get("messages"), list)
    h = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return (
        h.startswith(b"{")
        and b'"messages"' in h
        and b'"info"' in h
        and (b'"ses_' in h or b'"sessionID"' in h or b'"directory"' in h)
    )


def parse(data: bytes, source: str | None) -> Session:
    return _Importer(source).run(data)


def recorded_pruned_call_ids(session: Session) -> dict[str, float]:
    """Tool call id → when OpenCode pruned its output (ms), for every pruned output in the file."""
    out: dict[str, float] = {}
    for e in session.entries:
        m = getattr(e, "message", None)
        d = getattr(m, "details", None)
        oc = d.get("opencode") if isinstance(d, dict) else None
        at = oc.get("compacted") if isinstance(oc, dict) else None
        if isinstance(at, (int, float)) and not isinstance(at, bool):
            out[m.toolCallId] = at  # type: ignore[union-attr]
    return out


def _iso(ms: Any) -> str | None:
    dt = utc_of_ms(ms)
    if dt is None:
        return None
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(ms) % 1000:03d}Z"


SUMMARY_USAGE = "summaryUsage"
"""A compaction entry's ``details`` key for the usage OpenCode records of the request that wrote the
summary (its ``summary: true`` answer): ``input``, ``cacheRead``, ``cacheWrite``, ``output``,
``provider``, ``model``."""


def summary_usage(details: Any) -> dict[str, Any] | None:
    """The recorded usage of a compaction's own request (OpenCode), from its entry's ``details``."""
    got = details.get(SUMMARY_USAGE) if isinstance(details, dict) else None
    return got if isinstance(got, dict) else None


def _usage(tokens: Any) -> dict[str, Any] | None:
    if not isinstance(tokens, dict):
        return None
    cache = jv if isinstance(jv := tokens.get("cache"), dict) else {}

    def num(v: Any) -> int:
        return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0

    u = {
        "input": num(tokens.get("input")),
        "output": num(tokens.get("output")) + num(tokens.get("reasoning")),
        "cacheRead": num(cache.get("read")),
        "cacheWrite": num(cache.get("write")),
    }
    u["totalTokens"] = sum(u.values())
    if num(tokens.get("reasoning")):
        u["reasoning"] = num(tokens.get("reasoning"))  # as pi records it (part of output)
    return u


def _time(obj: Any, key: str = "created") -> Any:
    t = obj.get("time") if isinstance(obj, dict) else None
    return t.get(key) if isinstance(t, dict) else None


MODEL_PARTS = frozenset({"reasoning", "text", "tool"})
"""The assistant parts the model wrote (what a step sends back: :meth:`_Importer._step_content`)."""


def _steps(parts: list[dict[str, Any]]) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any] | None]]:
    """An assistant message's parts split at ``step-start`` / ``step-finish``: each step's parts
    and its ``step-finish`` (None if it has none); a trailing empty step is left out. A part the
    model did not write that comes after a ``step-finish`` and before the next step begins belongs
    to the step that finished: OpenCode's processor writes a step's ``patch`` (the files it
    changed) right after its ``step-finish``, so it starts no LLM call of its own; one before a
    step's ``step-start`` joins that step."""
    steps: list[list[dict[str, Any]]] = [[]]
    finishes: list[dict[str, Any] | None] = [None]
    finished = False  # the last step has its step-finish, and no part of the model's came since
    for p in parts:
        t = p.get("type")
        if t == "step-start":
            if any(q.get("type") in MODEL_PARTS for q in steps[-1]):
                steps.append([])
                finishes.append(None)
            finished = False  # (parts of no step's before it join the step it starts)
        elif t == "step-finish":
            finishes[-1] = p
            steps.append([])
            finishes.append(None)
            finished = True
        elif finished and t not in MODEL_PARTS:
            steps[-2].append(p)
        else:
            steps[-1].append(p)
            finished = False
    if not steps[-1] and len(steps) > 1:
        steps.pop()
        finishes.pop()
    return steps, finishes


class _Importer:
    def __init__(self, source: str | None) -> None:
        self.source = source
        self.issues: list[LoadIssue] = []
        self.raw: list[dict[str, Any]] = []
        self.lines: list[int] = []
        self.skipped: dict[str, int] = {}
        self.context_tokens = 0
        self.model: tuple[str | None, str | None] | None = None
        self.pending_compaction: tuple[int, Any, dict[str, Any]] | None = None  # (line, ts, part)
        self.first_entry: dict[str, int] = {}  # OpenCode message id -> index of its first entry
        self.mid_at: dict[int, str] = {}  # position in the export -> OpenCode message id
        self.dcp: dict[str, list[Any]] = {}  # compress part id -> DCP blocks it made (opencode_dcp)
        self.dcp_notified: dict[str, tuple[int, str]] = {}  # compress part id -> DCP's own count, its line

    def _add(self, eid: str, line: int, ts: Any, obj: dict[str, Any]) -> None:
        if any(r["id"] == eid for r in self.raw[-3:]):
            eid = f"{eid}#{len(self.raw)}"
        parent = self.raw[-1]["id"] if self.raw else None
        self.raw.append({**obj, "id": eid, "parentId": parent, "timestamp": _iso(ts)})
        self.lines.append(line)

    def _skip(self, what: str) -> None:
        self.skipped[what] = self.skipped.get(what, 0) + 1

    def run(self, data: bytes) -> Session:
        text = data.decode("utf-8", "replace").lstrip("\ufeff")
        doc = self._document(text)
        if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
            return self._finish(doc if isinstance(doc, dict) else {})
        info = jv if isinstance(jv := doc.get("info"), dict) else {}
        locate = _Locator(text)
        self._dcp(doc["messages"])
        if isinstance(info.get("title"), str) and info["title"]:
            self._add("oc-title", 1, _time(info), {"type": "session_info", "name": info["title"]})
        for k, msg in enumerate(doc["messages"]):
            self._message(k, msg, locate)
        self._revert(info, doc["messages"], locate)
        info = {k: info[k] for k in ("id", "title", "directory", "parentID", "time") if k in info}
        if self.dcp:
            info["dcp"] = True
        del doc, text, locate  # the entries keep what they need: free the parsed file before validating
        return self._finish(info)

    def _document(self, text: str) -> Any:
        """The parsed export; None (said in an issue) when it is not JSON, and an issue when it
        has no ``messages`` list."""
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            self.issues.append(
                LoadIssue(
                    "malformed-json",
                    "error",
                    f"not valid JSON at line {e.lineno} column {e.colno}: {e.msg}; nothing could be read",
                    line=e.lineno,
                )
            )
            return None
        except RecursionError:
            self.issues.append(LoadIssue("malformed-json", "error", "nested too deeply to read", line=1))
            return None
        if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
            self.issues.append(
                LoadIssue("not-opencode", "error", "not an OpenCode export: no 'messages' list", line=1)
            )
        return doc

    def _message(self, k: int, msg: Any, locate: _Locator) -> None:
        """The export's ``k``-th message; one of an unexpected shape is a located warning."""
        mi = msg.get("info") if isinstance(msg, dict) else None
        parts = msg.get("parts") if isinstance(msg, dict) else None
        line = locate.line_of(jv) if isinstance(mi, dict) and isinstance(jv := mi.get("id"), str) else 1
        if (
            not isinstance(mi, dict)
            or not isinstance(parts, list)
            or mi.get("role") not in ("user", "assistant")
        ):
            self.issues.append(
                LoadIssue(
                    "invalid-message",
                    "warning",
                    f"message {k + 1} is not an OpenCode "
                    "message (info with a user/assistant role, and parts); skipped",
                    line=line,
                )
            )
            return
        parts = [p for p in parts if isinstance(p, dict)]
        mid = str(mi.get("id") or f"m{k}")
        self.first_entry.setdefault(mid, len(self.raw))
        self.mid_at[k] = mid
        try:
            if mi["role"] == "user":
                self._user(mid, line, mi, parts)
            else:
                self._assistant(mid, line, mi, parts, locate)
        except (ValidationError, TypeError, AttributeError, ValueError, KeyError, IndexError) as e:
            self.issues.append(
                LoadIssue(
                    "invalid-message",
                    "warning",
                    f"message {k + 1} has a shape this importer cannot read ({type(e).__name__}); skipped",
                    line=line,
                )
            )

    def _dcp(self, messages: list[Any]) -> None:
        """The DCP plugin's compress calls, replayed (:mod:`.opencode_dcp`)."""
        if not is_dcp(messages):
            return
        replay = DcpReplay(messages)
        self.dcp = replay.run()
        self.dcp_notified = dcp_notified(messages, self.dcp)
        n = sum(len(v) for v in self.dcp.values())
        self.issues.append(
            LoadIssue(
                "dcp",
                "info",
                f"the DCP plugin compressed {n} range(s) of messages in "
                f"{len(self.dcp)} call(s); each is replayed from the call after it: the range "
                "left out, DCP's summary message in its place (the recorded pruning)",
            )
        )
        if replay.problems:
            self.issues.append(
                LoadIssue(
                    "dcp",
                    "warning",
                    f"{len(replay.problems)} DCP range(s) name messages this "
                    f"export does not number that way ({', '.join(replay.problems[:5])}); "
                    "they are not replayed",
                )
            )

    def _dcp_details(self, part_id: str) -> dict[str, Any] | None:
        """A compress call's blocks as entry ranges, for its tool result's ``details``."""
        blocks = self.dcp.get(part_id)
        if not blocks:
            return None
        out = []
        for b in blocks:
            first = self.first_entry.get(self.mid_at.get(b.lo, ""))
            after = self.first_entry.get(self.mid_at.get(b.hi + 1, ""), len(self.raw))
            if first is not None:
                out.append(
                    {
                        "block": b.id,
                        "first": first,
                        "last": after - 1,
                        "summary": b.summary,
                        "consumes": list(b.consumes),
                    }
                )
        if not out:
            return None
        note = self.dcp_notified.get(part_id)
        told = {"notified": {"summaryTokens": note[0], "line": note[1]}} if note else {}
        return {"dcp": {"blocks": out, **told}}

    def _revert(self, info: dict[str, Any], messages: list[Any], locate: _Locator) -> None:
        """A pending undo (``info.revert{messageID, partID?}``): OpenCode removes that message (or
        its parts from ``partID``) and everything after it when the next prompt starts, so the
        model never sees them again. They are imported as recorded, and said."""
        rv = info.get("revert")
        mid = rv.get("messageID") if isinstance(rv, dict) else None
        if not isinstance(mid, str):
            return
        ids = [
            m["info"].get("id") if isinstance(m, dict) and isinstance(m.get("info"), dict) else None
            for m in messages
        ]
        if mid not in ids:
            self.issues.append(
                LoadIssue(
                    "revert",
                    "info",
                    f"the session records an undo from message {mid:.60}, which is not in the export",
                )
            )
            return
        n = len(ids) - ids.index(mid)
        part = (
            " (from one of its parts)" if isinstance(rv, dict) and isinstance(rv.get("partID"), str) else ""
        )
        self.issues.append(
            LoadIssue(
                "revert",
                "info",
                f"a pending undo: OpenCode drops this message{part} and the "
                f"{n - 1} after it when the next prompt starts; they are shown as recorded",
                line=locate.line_of(mid),
            )
        )

    # -- messages -----------------------------------------------------------------------------

    def _user(self, mid: str, line: int, mi: dict[str, Any], parts: list[dict[str, Any]]) -> None:
        ts = _time(mi)
        model = mi.get("model") if isinstance(mi.get("model"), dict) else None
        if model:
            self._model(mid, line, ts, model.get("providerID"), model.get("modelID"))
        comp = next((p for p in parts if p.get("type") == "compaction"), None)
        if comp is not None:
            self.pending_compaction = (line, ts, comp)
            return
        blocks: list[dict[str, Any]] = []
        for p in parts:
            t = p.get("type")
            if t == "text":
                if p.get("ignored"):
                    self._skip("ignored text part")
                    continue
                blocks.append({"type": "text", "text": str(p.get("text", ""))})
            elif t == "file":
                url, mime = str(p.get("url", "")), str(p.get("mime", ""))
                if mime in ("text/plain", "application/x-directory"):
                    self._skip("text file part (its content came as a text part)")
                elif mime.startswith("image/") and url.startswith("data:") and ";base64," in url:
                    blocks.append({"type": "image", "data": url.split(";base64,", 1)[1], "mimeType": mime})
                else:
                    blocks.append({"type": "text", "text": f"[file: {p.get('filename') or url[:200]}]"})
            elif t == "subtask":
                blocks.append({"type": "text", "text": SUBTASK_TEXT})
            else:
                self._skip(f"{t} part")
        if blocks:
            content: Any = blocks[0]["text"] if len(blocks) == 1 and blocks[0]["type"] == "text" else blocks
            self._add(
                f"oc-{mid}",
                line,
                ts,
                {"type": "message", "message": {"role": "user", "content": content, "timestamp": ts}},
            )

    def _model(self, mid: str, line: int, ts: Any, provider: Any, model: Any) -> None:
        key = (provider if isinstance(provider, str) else None, model if isinstance(model, str) else None)
        if key[1] and key != self.model:
            self._add(
                f"oc-{mid}-model", line, ts, {"type": "model_change", "provider": key[0], "modelId": key[1]}
            )
            self.model = key

    def _assistant(
        self, mid: str, line: int, mi: dict[str, Any], parts: list[dict[str, Any]], locate: _Locator
    ) -> None:
        ts = _time(mi)
        provider, model = mi.get("providerID"), mi.get("modelID")
        if mi.get("summary") is True:
            self._summary(mid, line, ts, parts, _usage(mi.get("tokens")), provider, model)
            return
        if self.pending_compaction is not None:  # a compaction request that got no summary
            self.pending_compaction = None
            self._skip("compaction request without a summary")
        self._model(mid, line, ts, provider, model)
        steps, finishes = _steps(parts)
        single = len(steps) == 1
        failed = mi.get("error")
        aborted = isinstance(failed, dict) and failed.get("name") == ABORTED
        withheld = bool(failed) and not (aborted and any(p.get("type") not in _BARE for p in parts))
        for k, (step, fin) in enumerate(zip(steps, finishes, strict=True)):
            usage = _usage(fin.get("tokens")) if fin else (_usage(mi.get("tokens")) if single else None)
            content, tools = self._step_content(mid, step)
            error = failed if k == len(steps) - 1 else None
            stop = ("aborted" if aborted else "error") if error else ("toolUse" if tools else "stop")
            am: dict[str, Any] = {
                "role": "assistant",
                "content": content,
                "api": "opencode",
                "provider": provider,
                "model": model,
                "timestamp": _time(fin) or ts,
                "stopReason": stop,
            }
            if isinstance(agent := mi.get("agent"), str):
                am["agent"] = agent  # OpenCode's agent (build, plan, …): its own tools (the cache model)
            if withheld:
                am[WITHHELD] = True
            if usage is not None:
                am["usage"] = usage
                self.context_tokens = usage["input"] + usage["cacheRead"] + usage["cacheWrite"]
            if isinstance(error, dict):
                data = jv if isinstance(jv := error.get("data"), dict) else {}
                am["errorMessage"] = str(data.get("message") or error.get("name") or "error")
            sid = f"oc-{mid}" if single else f"oc-{mid}-s{k + 1}"
            self._add(sid, line, am["timestamp"], {"type": "message", "message": am})
            for p in tools:
                self._tool_result(p, mid, locate, withheld)

    def _summary(
        self,
        mid: str,
        line: int,
        ts: Any,
        parts: list[dict[str, Any]],
        usage: dict[str, Any] | None = None,
        provider: Any = None,
        model: Any = None,
    ) -> None:
        """A ``summary: true`` answer and the request before it: one compaction entry (the
        summarising request's own usage and model kept in its ``details``: :data:`SUMMARY_USAGE`)."""
        text = "\n".join(str(p.get("text", "")) for p in parts if p.get("type") == "text")
        line0, ts0, comp = self.pending_compaction or (line, ts, {})
        self.pending_compaction = None
        details: dict[str, Any] = {"agent": "opencode", "auto": bool(comp.get("auto"))}
        if usage is not None:
            details[SUMMARY_USAGE] = {**usage, "provider": provider, "model": model}
        if comp.get("overflow"):
            details["overflow"] = True
        first_kept = None
        tail = comp.get("tail_start_id")
        if tail:
            details["tailStartId"] = tail
            k = self.first_entry.get(tail) if isinstance(tail, str) else None
            if k is not None and k < len(self.raw):
                first_kept = self.raw[k]["id"]
            elif k is None:  # (k == len: the tail starts at the request itself, so nothing is kept)
                self.issues.append(
                    LoadIssue(
                        "retained-tail",
                        "warning",
                        f"this compaction keeps the messages from "
                        f"{tail!s:.60}, which is not before it in the export; the replay keeps "
                        "nothing",
                        line=line0,
                    )
                )
        self._add(
            f"oc-{mid}",
            line0,
            ts0,
            {
                "type": "compaction",
                "summary": text,
                "firstKeptEntryId": first_kept,
                "tokensBefore": self.context_tokens,
                "details": details,
            },
        )

    def _step_content(
        self, mid: str, step: list[dict[str, Any]]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """One step's reasoning, text and tool parts as pi content blocks; and its tool parts."""
        content: list[dict[str, Any]] = []
        tools: list[dict[str, Any]] = []
        for p in step:
            t = p.get("type")
            if t == "reasoning":
                content.append({"type": "thinking", "thinking": str(p.get("text", ""))})
            elif t == "text":
                if not p.get("ignored"):
                    content.append({"type": "text", "text": str(p.get("text", ""))})
            elif t == "tool":
                st = jv if isinstance(jv := p.get("state"), dict) else {}
                cid = str(p.get("callID") or p.get("id") or f"{mid}-{len(tools)}")
                content.append(
                    {
                        "type": "toolCall",
                        "id": cid,
                        "name": str(p.get("tool", "")),
                        "arguments": jv if isinstance(jv := st.get("input"), dict) else {},
                    }
                )
                tools.append(p)
            else:
                self._skip(f"{t} part")
        return content, tools

    def _tool_result(self, p: dict[str, Any], mid: str, locate: _Locator, withheld: bool = False) -> None:
        st = jv if isinstance(jv := p.get("state"), dict) else {}
        status = st.get("status")
        cid = str(p.get("callID") or p.get("id") or "")
        line = locate.line_of(p["id"]) if isinstance(p.get("id"), str) else locate.line_of(mid)
        details: dict[str, Any] | None = None
        if status == "completed":
            text, is_error = str(st.get("output", "")), False
            compacted = _time(st, "compacted")
            if isinstance(compacted, (int, float)) and not isinstance(compacted, bool):
                details = {"opencode": {"compacted": compacted}}
        elif status == "error":
            meta = jv if isinstance(jv := st.get("metadata"), dict) else {}
            if meta.get("interrupted") is True and isinstance(meta.get("output"), str):
                text, is_error = meta["output"], False  # an interrupted run: OpenCode sends what it printed
            else:
                text, is_error = str(st.get("error", "")), True
        else:
            text, is_error = f"(the call never finished: status {status!r} when the session was saved)", True
        dcp = self._dcp_details(str(p.get("id") or p.get("callID"))) if p.get("tool") == "compress" else None
        if dcp is not None:
            details = {**(details or {}), **dcp}
        when = _time(st, "end") or _time(st, "start")
        tr: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": cid,
            "toolName": str(p.get("tool", "")),
            "content": [{"type": "text", "text": text}],
            "isError": is_error,
            "timestamp": when,
        }
        if withheld:
            tr[WITHHELD] = True
        if details is not None:
            tr["details"] = details
        self._add(f"oc-{p.get('id') or cid}", line, when, {"type": "message", "message": tr})

    def _finish(self, info: dict[str, Any]) -> Session:
        entries: list[Any] = []
        for obj, line in zip(self.raw, self.lines, strict=True):
            entries.append(_to_entry(obj, line, len(entries), self.issues))
        issues = [LoadIssue("format", "info", f"{LABEL}, imported into the pi session model")]
        if info.get("parentID"):
            issues.append(LoadIssue("subagent", "info", f"a sub-agent (child) session of {info['parentID']}"))
        if self.pending_compaction is not None:
            self._skip("compaction request without a summary")
        if self.skipped:
            listed = ", ".join(f"{v} {k}" for k, v in sorted(self.skipped.items(), key=lambda kv: -kv[1]))
            issues.append(LoadIssue("not-imported", "info", f"not sent to the model, not imported: {listed}"))
        header = SessionHeader(
            id=str(info.get("id") or "opencode"),
            version=3,
            timestamp=_iso(_time(info) if isinstance(info, dict) else None),
            cwd=info.get("directory") if isinstance(info.get("directory"), str) else None,
            **({"dcp": True} if info.get("dcp") else {}),
        )
        return _build(header, entries, list(self.lines), [*issues, *self.issues], self.source, 3, False)


class _Locator:
    """Line numbers of ids in the document: the first ``"id": "<id>"`` at or after the previous
    hit (the document lists messages and parts in order). One pass over the text indexes every
    ``"id"`` key's positions; newlines are counted incrementally from the previous hit."""

    _ID = re.compile(r'"id"\s*:\s*"((?:[^"\\]|\\.)*)"')

    def __init__(self, text: str) -> None:
        self.at: dict[str, list[int]] = {}
        for m in self._ID.finditer(text):
            raw = m.group(1)
            try:
                key = json.loads(f'"{raw}"') if "\\" in raw else raw
            except ValueError:
                continue
            self.at.setdefault(key, []).append(m.start())
        self.text = text
        self.pos = 0
        self.line = 1

    def line_of(self, ident: str) -> int:
        hits = self.at.get(ident)
        if not hits:
            return 1
        k = bisect.bisect_left(hits, self.pos)
        if k == len(hits):  # only before the previous hit: count from the start
            return self.text.count("\n", 0, hits[0]) + 1
        self.line += self.text.count("\n", self.pos, hits[k])
        self.pos = hits[k]
        return self.line
