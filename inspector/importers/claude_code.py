"""Claude Code transcripts (``~/.claude/projects/<project>/<session>.jsonl``) → the pi session model.

Source of the format: ``../shared/research/ecosystem.md`` §2.2 (claude-code-log's models and DAG
code, ccusage, observed 2.1.x files). Rules reproduced:

* The tree comes from ``uuid``/``parentUuid``. An assistant answer is written **one line per
  content block**, all lines sharing ``message.id`` and the same usage: they are merged into one
  assistant message (usage counted once), and links to any of its lines reach the merged entry.
* ``tool_result`` blocks inside ``user`` lines become ``toolResult`` messages (tool name taken
  from the matching ``tool_use``); the ``tool_reference`` blocks of a ``ToolSearch`` result (the
  deferred tools it loaded) are named in ``details.claudeCode.toolReferences``. Parallel tool calls
  produce chained lines that look like forks; results answering the same answer are chained one
  after another instead, and a line written off any of them continues after the last, so they are
  not mistaken for branches. A dead-end run of ``progress`` lines beside the line that continues is
  put in line before it (:func:`_progress_inline`).
* ``system`` lines with ``subtype: compact_boundary`` start a new chain (``parentUuid: null``); they
  are re-attached to ``logicalParentUuid`` and, with the following ``isCompactSummary`` user
  message, become one compaction whose summary is that message (``tokensBefore`` =
  ``compactMetadata.preTokens``). A classic compaction keeps nothing verbatim. A newer boundary
  may carry ``compactMetadata.preservedSegment{headUuid, anchorUuid, tailUuid}``: messages head…tail,
  already written before the boundary, stay in the context after the summary. Claude Code relinks
  them when it reads the file (head after the anchor, the anchor's other children after the tail);
  here the same thing is pi's shape: the compaction's ``firstKeptEntryId`` is the head, the
  compaction hangs after the last preserved message written before it (``logicalParentUuid`` when
  that is already written), and lines written after the boundary that hang off the tail (or the
  anchor) continue after the compaction — including preserved messages written only after the
  summary. A ``preservedMessages{uuids}`` list is read the same way (first and last uuid).
* After a compaction Claude Code reads the most recently read files again and attaches them
  (``compact.ts``: at most 5 files, 5,000 tokens each, 50,000 in all, as third-party readings of
  the source report them). The transcript does not hold what was attached: the compaction's
  ``details["claudeCode"]["reinjectedReads"]`` names the last read of each of those files (an
  **estimate**, said so wherever it is counted; :mod:`inspector.sent`).
* ``microcompact_boundary`` lines (Claude Code clearing old tool results; the format third-party
  analyses reported, as the shared transcript b0dc55 writes it: ``microcompactMetadata{trigger,
  preTokens, tokensSaved, compactedToolIds}``): the results named in ``compactedToolIds`` keep their text
  and get ``details.claudeCode.microcompacted`` (ms), which the ``recorded`` pruning strategy reads.
* Sidechain (sub-agent) lines are kept apart: not in the main tree, counted in an info issue —
  unless every line is one (a sub-agent's own ``subagents/agent-<id>.jsonl``), which is then the
  conversation.
  Other system lines and attachments stay in the tree as ``custom`` entries (they send nothing;
  the text Claude Code makes of some attachments is not in the file — an info issue counts them);
  lines outside the chain (snapshots, queue operations, titles) are counted, not imported.
* Context size of an answer = input + cache creation + cache read tokens (recorded as pi's
  ``input``/``cacheWrite``/``cacheRead``).
* An answer Claude Code wrote itself (``message.model`` ``"<synthetic>"``, no usage) is no
  model's answer. One that reports a failed request (``isApiErrorMessage``, or text starting
  ``API Error``: overloaded, rate or session limits, a prompt too long) becomes what pi records
  for a failed call: ``stopReason`` ``error``, its text as ``errorMessage`` (not sent again, no
  recorded point, nothing billed). Any other (``No response requested.``) answered no request:
  a ``custom`` entry ``claude-code/synthetic`` holding its text, in its place in the chain.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import Counter
from typing import Any

from pydantic import ValidationError

from ..agents import AGENTS
from ..session.foreign import foreign_format, foreign_issues
from ..session.loader import _build, _parse_json
from ..session.models import (
    AssistantMessage,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    MessageEntry,
    SessionHeader,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from ..session.tree import LoadIssue, Session
from .claude_code_attachments import attachment_text, known

SYNTHETIC = "<synthetic>"
"""The model Claude Code names on an answer it wrote itself, no request behind it (an API error, a
limit reached, "No response requested.")."""

FORMAT = AGENTS["claude-code"].name
LABEL = AGENTS["claude-code"].format_label

_STOP: dict[Any, str] = {
    "end_turn": "stop",
    "tool_use": "toolUse",
    "max_tokens": "length",
    "stop_sequence": "stop",
}


#: records recent builds write outside the conversation chain (no ``uuid``), often first in the file
BOOKKEEPING = frozenset(
    {
        "last-prompt",
        "mode",
        "permission-mode",
        "bridge-session",
        "ai-title",
        "custom-title",
        "file-history-snapshot",
        "queue-operation",
        "summary",
        "tag",
        "agent-name",
        "pr-link",
    }
)
SNIFF_LINES = 200


def looks_like_claude_code(obj: dict[str, Any]) -> bool:
    return obj.get("type") in (
        "user",
        "assistant",
        "system",
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "attachment",
    ) and ("uuid" in obj or "sessionId" in obj or obj.get("type") in ("summary", "file-history-snapshot"))


def sniff(first: dict[str, Any] | None, head: bytes) -> bool:
    """The first object looks like a Claude Code line; or the file starts with Claude Code's
    uuid-less bookkeeping records (``last-prompt``, ``mode``, ``permission-mode``,
    ``bridge-session``, …) and the first line past them does."""
    if first is None:
        return False
    if looks_like_claude_code(first):
        return True
    if first.get("type") not in BOOKKEEPING or "uuid" in first:
        return False
    for raw in head.split(b"\n", SNIFF_LINES)[1:SNIFF_LINES]:
        try:
            o = _parse_json(raw.decode("utf-8", "replace")) if raw.strip() else None
        except (ValueError, RecursionError):
            return False  # a line cut by the head's end, or not JSON: undecided, so no
        if not isinstance(o, dict):
            continue
        if looks_like_claude_code(o) and "uuid" in o:
            return True
        if o.get("type") not in BOOKKEEPING:
            return False
    return False


def parse(data: bytes, source: str | None) -> Session:
    return parse_claude_code(list(enumerate(data.split(b"\n"), start=1)), source)


def _blocks(content: Any) -> list[dict[str, Any]]:
    return (
        content
        if isinstance(content, list)
        else ([{"type": "text", "text": content}] if isinstance(content, str) else [])
    )


def _image(b: dict[str, Any]) -> dict[str, Any]:
    src = b.get("source") or {}
    return {"type": "image", "data": src.get("data", ""), "mimeType": src.get("media_type", "")}


def _ms(ts: Any) -> Any:
    from ..session.tree import iso_to_ms

    return iso_to_ms(ts)


def parse_claude_code(lines: list[tuple[int, bytes]], source: str | None) -> Session:
    issues, objs = _read_lines(lines)
    imp = _Importer(objs, issues)
    for n, o in objs:
        try:
            imp.line(n, o)
        except (ValidationError, TypeError, AttributeError, ValueError, KeyError, IndexError) as e:
            # a line of an unexpected shape: reported with its number, the rest still loads
            issues.append(
                LoadIssue(
                    "invalid-line",
                    "warning",
                    f"not a Claude Code line this importer can read ({type(e).__name__}); skipped",
                    line=n,
                )
            )
    return imp.finish(source)


def _read_lines(lines: list[tuple[int, bytes]]) -> tuple[list[LoadIssue], list[tuple[int, dict[str, Any]]]]:
    """The file's JSON objects with their line numbers, and an issue for each line that is not JSON."""
    issues: list[LoadIssue] = []
    objs: list[tuple[int, dict[str, Any]]] = []
    for n, raw in lines:
        if not raw.strip():
            continue
        try:
            v = _parse_json(raw.decode("utf-8", "replace"))
        except (ValueError, RecursionError) as e:
            issues.append(
                LoadIssue("malformed-json", "error", f"not valid JSON, skipped: {str(e)[:160]}", line=n)
            )
            continue
        if isinstance(v, dict):
            objs.append((n, v))
    return issues, objs


def _usage(msg: dict[str, Any]) -> dict[str, Any]:
    """An answer's usage in pi's shape: input, output, cache read and cache creation tokens."""
    u = msg.get("usage") or {}
    usage = {
        "input": u.get("input_tokens", 0) or 0,
        "output": u.get("output_tokens", 0) or 0,
        "cacheRead": u.get("cache_read_input_tokens", 0) or 0,
        "cacheWrite": u.get("cache_creation_input_tokens", 0) or 0,
    }
    usage["totalTokens"] = sum(usage.values())
    return usage


def _tool_references(c: Any) -> list[str]:
    """The tools a ``tool_result`` block loads: the ``tool_name`` of each ``tool_reference`` block in
    its content (Claude Code's ``ToolSearch`` result; the API expands each into the tool's definition,
    which the transcript does not hold)."""
    if not isinstance(c, list):
        return []
    return [
        n
        for x in c
        if isinstance(x, dict)
        and x.get("type") == "tool_reference"
        and isinstance(n := x.get("tool_name"), str)
    ]


def _result_content(c: Any) -> list[dict[str, Any]]:
    """A ``tool_result`` block's content (a string, or text and image blocks) as pi blocks."""
    if isinstance(c, str):
        return [{"type": "text", "text": c}]
    return [
        _image(x) if x.get("type") == "image" else {"type": "text", "text": x.get("text", "")}
        for x in (c or [])
        if isinstance(x, dict)
    ]


class _Importer:
    """One transcript's lines, read in file order into pi entries (the rules in the module's
    docstring); :meth:`finish` makes the session."""

    def __init__(self, objs: list[tuple[int, dict[str, Any]]], issues: list[LoadIssue]) -> None:
        self.issues = issues
        self.entries: list[Any] = []
        self.lines_of: list[int] = []
        self.alias: dict[str, str] = {}  # line uuid -> entry id it was merged into
        self.tool_names: dict[str, str] = {}
        self.root_of: dict[str, str] = {}  # tool result entry id -> the answer whose results it chains
        self.last_in_chain: dict[str, str] = {}  # answer entry id -> the newest result chained after it
        self.msg_entry: dict[str, int] = {}  # assistant message.id -> entry index
        self.reads = _Reads()  # what each compaction attaches again
        self.sidechain = self.outside = 0
        self.foreign: list[tuple[int, str]] = []  # (line, format) of other agents' lines
        self.pending_boundary: int | None = None
        self.microcompacted: dict[str, Any] = {}  # tool_use id -> ms of the microcompact that cleared it
        self.relink: dict[str, str] = {}  # preserved tail uuid -> the compaction later lines continue after
        # attachment type -> lines whose text this importer cannot rebuild
        self.attachments: Counter[str] = Counter()
        self.sent_attachments: Counter[str] = Counter()  # attachment type -> lines sent as text
        self.silent: Counter[str] = Counter()  # attachment type -> lines Claude Code sends nothing for
        self.outside_types: Counter[str] = Counter()  # type -> uuid-less lines
        self.parent_ids: dict[str, str | None] = {}  # entry id -> its parent's id (merges keep both)
        self.session_id = next(
            (o.get("sessionId") for _, o in objs if isinstance(o.get("sessionId"), str)), "claude-code"
        )
        # a sub-agent's own file (subagents/agent-<id>.jsonl): every line is a sidechain; it is the conversation
        self.chain = [o for _, o in objs if isinstance(o.get("uuid"), str)]
        self.subagent_file = bool(self.chain) and all(o.get("isSidechain") for o in self.chain)
        self.cwd = next(
            (o.get("cwd") for _, o in objs if isinstance(o.get("cwd"), str) and o.get("cwd")), None
        )
        # a file whose lines carry no parent links at all (hand-made or very old transcripts): one
        # conversation in file order, said in an info issue, instead of as many roots as lines
        self.linear = len(self.chain) > 1 and not any(
            isinstance(o.get("parentUuid"), str) or isinstance(o.get("logicalParentUuid"), str)
            for o in self.chain
        )

    def parent_of(self, o: dict[str, Any]) -> str | None:
        p = o.get("parentUuid")
        if self.linear:
            return self.entries[-1].id if self.entries else None
        if not isinstance(p, str):
            return None
        p = self.relink.get(p, p)
        p = self.alias.get(p, p)
        # a line hanging off one of an answer's parallel results continues after the last of them
        # (the results are chained), not beside it
        return self.last_in_chain.get(self.root_of[p], p) if p in self.root_of else p

    def add(self, entry: Any, line: int) -> None:
        self.entries.append(entry)
        self.lines_of.append(line)
        self.parent_ids.setdefault(entry.id, entry.parentId)

    # -- lines --------------------------------------------------------------------------------

    def line(self, n: int, o: dict[str, Any]) -> None:
        t = o.get("type")
        uid = o.get("uuid")
        if not isinstance(uid, str):
            fmt = foreign_format(o, FORMAT)
            if fmt is not None:
                self.foreign.append((n, fmt))
            else:
                self.outside += 1
                self.outside_types[str(t)] += 1
            return
        if o.get("isSidechain") and not self.subagent_file:
            self.sidechain += 1
            return
        ts = o.get("timestamp")
        msg = jv if isinstance(jv := o.get("message"), dict) else {}
        if t == "assistant":
            self._assistant(n, o, uid, ts, msg)
        elif t == "user":
            self._user(n, o, uid, ts, msg)
        elif t == "system" and o.get("subtype") == "microcompact_boundary":
            self._microcompact(n, o, uid, ts)
        elif t == "system" and o.get("subtype") == "compact_boundary":
            self._compact_boundary(n, o, uid, ts)
        elif t == "attachment" and isinstance(o.get("attachment"), dict) and attachment_text(o["attachment"]):
            self._sent_attachment(n, o, uid, ts)
        else:
            self._custom(n, o, uid, ts)

    def _assistant(self, n: int, o: dict[str, Any], uid: str, ts: Any, msg: dict[str, Any]) -> None:
        mid = msg.get("id")
        if isinstance(mid, str) and mid in self.msg_entry:  # another block of the same answer
            k = self.msg_entry[mid]
            e = self.entries[k]
            merged = [
                *e.message.raw()["content"],
                *[_assistant_block(b, self.tool_names) for b in _blocks(msg.get("content"))],
            ]
            self.entries[k] = e.model_copy(
                update={"message": AssistantMessage.model_validate({**e.message.raw(), "content": merged})}
            )
            if k < self.reads.n:
                self.reads.dirty.add(k)
            self.alias[uid] = e.id
            return
        blocks = _blocks(msg.get("content"))
        am: dict[str, Any] = {
            "role": "assistant",
            "content": [_assistant_block(b, self.tool_names) for b in blocks],
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": msg.get("model"),
            "usage": _usage(msg),
            "stopReason": _STOP.get(
                msg.get("stop_reason"), "toolUse" if msg.get("stop_reason") is None else "stop"
            ),
            "timestamp": _ms(ts),
        }
        if msg.get("model") == SYNTHETIC:  # Claude Code's own answer (see the module docstring)
            text = "\n".join(
                str(b.get("text", "")) for b in blocks if isinstance(b, dict) and b.get("type") == "text"
            )
            if not (o.get("isApiErrorMessage") or text.startswith("API Error")):
                self._kept(n, o, uid, ts, "claude-code/synthetic", {"text": text})  # no call
                return
            am.update(stopReason="error", errorMessage=text or str(o.get("error") or "API error"))
        if isinstance(mid, str):
            self.msg_entry[mid] = len(self.entries)
        message = AssistantMessage.model_validate(am)
        self.add(MessageEntry(id=uid, parentId=self.parent_of(o), timestamp=ts, message=message), n)

    def _user(self, n: int, o: dict[str, Any], uid: str, ts: Any, msg: dict[str, Any]) -> None:
        if o.get("isCompactSummary") and self.pending_boundary is not None:
            k = self.pending_boundary
            text = "".join(b.get("text", "") for b in _blocks(msg.get("content")) if isinstance(b, dict))
            self.entries[k] = self.entries[k].model_copy(update={"summary": text})
            self.alias[uid] = self.entries[k].id
            self.pending_boundary = None
            return
        parent = self.parent_of(o)
        blocks = _blocks(msg.get("content"))
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        others = [b for b in blocks if isinstance(b, dict) and b.get("type") in ("text", "image")]
        parent, last_id = self._tool_results(n, uid, ts, parent, results)
        if others:
            uid2 = uid if last_id is None else f"{uid}#text"
            self._user_message(n, uid2, ts, parent, others)
            last_id = uid2
        if last_id is not None and last_id != uid:
            self.alias[uid] = last_id
        if last_id is None:  # an empty user line: keep its place in the chain
            self.add(
                CustomEntry(id=uid, parentId=parent, timestamp=ts, customType="claude-code/user-empty"), n
            )

    def _tool_results(
        self, n: int, uid: str, ts: Any, parent: str | None, results: list[dict[str, Any]]
    ) -> tuple[str | None, str | None]:
        """The ``tool_result`` blocks of one user line as tool results, parallel ones chained;
        (the parent of what follows, the last result's id)."""
        last_id = None
        for k, b in enumerate(results):
            rid = uid if k == 0 else f"{uid}#{k}"
            root = self.root_of.get(parent, parent) if parent is not None else None
            if root is not None and root in self.last_in_chain:
                parent = self.last_in_chain[root]  # parallel results: a chain, not a fork
            content = _result_content(b.get("content"))
            result: dict[str, Any] = {
                "role": "toolResult",
                "toolCallId": b.get("tool_use_id", ""),
                "toolName": self.tool_names.get(b.get("tool_use_id", ""), ""),
                "content": content,
                "isError": bool(b.get("is_error")),
                "timestamp": _ms(ts),
            }
            if loaded := _tool_references(b.get("content")):
                result["details"] = {"claudeCode": {"toolReferences": loaded}}
            tr = ToolResultMessage.model_validate(result)
            self.add(MessageEntry(id=rid, parentId=parent, timestamp=ts, message=tr), n)
            if root is not None:
                self.root_of[rid] = root
                self.last_in_chain[root] = rid
            parent = rid
            last_id = rid
        return parent, last_id

    def _user_message(
        self, n: int, uid: str, ts: Any, parent: str | None, others: list[dict[str, Any]]
    ) -> None:
        """The text and image blocks of a user line as one user message."""
        content = [
            _image(b) if b.get("type") == "image" else {"type": "text", "text": b.get("text", "")}
            for b in others
        ]
        um = UserMessage.model_validate(
            {
                "role": "user",
                "content": content
                if len(content) > 1 or content[0]["type"] != "text"
                else content[0]["text"],
                "timestamp": _ms(ts),
            }
        )
        self.add(MessageEntry(id=uid, parentId=parent, timestamp=ts, message=um), n)

    def _microcompact(self, n: int, o: dict[str, Any], uid: str, ts: Any) -> None:
        meta = o.get("microcompactMetadata") or o.get("microcompact_metadata") or {}
        ids = meta.get("compactedToolIds") or meta.get("compacted_tool_ids") or []
        at = _ms(ts)
        for tid in ids if isinstance(ids, list) else []:
            if isinstance(tid, str) and isinstance(at, (int, float)):
                self.microcompacted.setdefault(tid, at)
        data = {
            "compactedToolIds": ids,
            "tokensSaved": meta.get("tokensSaved"),
            "trigger": meta.get("trigger"),
        }
        self._kept(n, o, uid, ts, "claude-code/system:microcompact_boundary", data)

    def _seen(self, u: Any) -> str | None:
        """The entry a uuid written before this line became (None if it is not written yet)."""
        return (
            self.alias.get(u, u) if isinstance(u, str) and self.alias.get(u, u) in self.parent_ids else None
        )

    def _compact_boundary(self, n: int, o: dict[str, Any], uid: str, ts: Any) -> None:
        meta = o.get("compactMetadata") or o.get("compact_metadata") or {}
        logical = o.get("logicalParentUuid")
        head, tail, members = _preserved(meta)
        first_kept = self._seen(head)
        if head is not None and first_kept is None:
            self.issues.append(
                LoadIssue(
                    "preserved-segment",
                    "warning",
                    f"the compaction's preserved messages start "
                    f"at {head!s:.60}, which is not written before it; the replay keeps nothing",
                    line=n,
                )
            )
        parent = self._boundary_parent(o, logical, first_kept, tail, members)
        if first_kept is not None:
            self._check_preserved_before(n, head, parent, first_kept)
        self.pending_boundary = len(self.entries)
        details: dict[str, Any] = {"trigger": meta.get("trigger")}
        post = meta.get("postTokens", meta.get("post_tokens"))
        if isinstance(post, int) and not isinstance(post, bool):
            details["postTokens"] = post  # the context right after, as Claude Code measured it
        if first_kept is not None:
            details["preservedSegment"] = {"head": head, "tail": tail}
        reads, files = self.reads.reinjected(self.entries, first_kept)
        if reads:
            details["claudeCode"] = {"reinjectedReads": reads, "reinjectedFiles": files, "estimate": True}
        self.add(
            CompactionEntry(
                id=uid,
                parentId=parent,
                timestamp=ts,
                summary="",
                firstKeptEntryId=first_kept,
                tokensBefore=meta.get("preTokens", meta.get("pre_tokens", 0)) or 0,
                details=details,
            ),
            n,
        )
        if isinstance(tail, str) and self._seen(tail) is not None:
            self.relink[tail] = uid  # later lines hanging off the tail continue after the compaction

    def _boundary_parent(
        self, o: dict[str, Any], logical: Any, first_kept: str | None, tail: str | None, members: list[str]
    ) -> str | None:
        """Where a compaction hangs: its ``logicalParentUuid`` when written, else the last
        preserved message written before it, else its logical parent's id or its own parent."""
        parent = self._seen(logical)
        if parent is None and first_kept is not None:
            # the last preserved message written before the boundary (later ones follow the summary)
            parent = next((self._seen(u) for u in [tail, *reversed(members)] if self._seen(u)), first_kept)
        if parent is None:
            parent = self.alias.get(logical, logical) if isinstance(logical, str) else self.parent_of(o)
        return parent

    def _check_preserved_before(self, n: int, head: str | None, parent: str | None, first_kept: str) -> None:
        """Warn when the preserved head is not on the conversation before the compaction."""
        a: str | None = parent
        walked: set[str] = set()  # a hostile file may link in a cycle
        while a is not None and a != first_kept and a not in walked:
            walked.add(a)
            a = self.parent_ids.get(a)
        if a in walked:
            a = None
        if a is None:
            self.issues.append(
                LoadIssue(
                    "preserved-segment",
                    "warning",
                    f"the compaction's preserved messages "
                    f"(from {head!s:.60}) are not on the conversation before it; the replay "
                    "keeps nothing",
                    line=n,
                )
            )

    def _sent_attachment(self, n: int, o: dict[str, Any], uid: str, ts: Any) -> None:
        att = o["attachment"]
        self.sent_attachments[str(att.get("type"))] += 1
        self.add(
            CustomMessageEntry(
                id=uid,
                parentId=self.parent_of(o),
                timestamp=ts,
                display=False,
                customType=f"claude-code/attachment:{att.get('type')}",
                content=attachment_text(att) or "",
            ),
            n,
        )

    def _custom(self, n: int, o: dict[str, Any], uid: str, ts: Any) -> None:
        """Other system lines and attachments that send nothing: ``custom`` entries."""
        t = o.get("type")
        att = o.get("attachment")
        if t == "attachment":
            kind = str(att.get("type") if isinstance(att, dict) else "?")
            (self.silent if known(kind) else self.attachments)[kind] += 1
        sub = o.get("subtype") or (att.get("type") if isinstance(att, dict) else "")
        self._kept(n, o, uid, ts, f"claude-code/{t}:{sub or ''}")

    def _kept(self, n: int, o: dict[str, Any], uid: str, ts: Any, kind: str, data: Any = None) -> None:
        """Line ``n`` kept in its place in the chain as a ``custom`` entry (it sends nothing)."""
        self.add(CustomEntry(id=uid, parentId=self.parent_of(o), timestamp=ts, customType=kind, data=data), n)

    # -- the session --------------------------------------------------------------------------

    def finish(self, source: str | None) -> Session:
        _mark_microcompacted(self.entries, self.microcompacted)
        issues = self.issues
        if self.linear:
            issues.append(
                LoadIssue(
                    "no-parent-links",
                    "info",
                    "no line names its parent (parentUuid): the lines are read as one conversation in file order",
                )
            )
        issues.extend(_attachment_issues(self.sent_attachments, self.silent, self.attachments))
        issues.extend(self._apart_issues())
        issues.insert(
            0, LoadIssue("format", "info", "Claude Code transcript, imported into the pi session model")
        )
        if self.subagent_file:
            agent = next((o.get("agentId") for o in self.chain if isinstance(o.get("agentId"), str)), None)
            issues.insert(
                1,
                LoadIssue(
                    "subagent",
                    "info",
                    "a sub-agent's transcript"
                    + (f" (agent {agent})" if agent else "")
                    + ": its sidechain lines are the conversation",
                ),
            )
        inline = _progress_inline(self.entries)
        if inline:
            issues.append(
                LoadIssue(
                    "progress-inline",
                    "info",
                    f"{inline} dead-end run(s) of progress lines (a tool's or a hook's progress, "
                    "written beside the conversation) put in line before the message that continues "
                    "there: a recording artifact, not a branch (they send nothing)",
                )
            )
        extra = _continues_earlier(self.entries, self.parent_ids, self.lines_of, issues)
        header = SessionHeader(id=str(self.session_id), cwd=self.cwd, version=3, **extra)
        return _build(header, self.entries, self.lines_of, issues, source, 3, False)

    def _apart_issues(self) -> list[LoadIssue]:
        """Info lines for what was kept apart: sidechain lines, uuid-less lines, other agents' lines."""
        out: list[LoadIssue] = []
        if self.sidechain:
            out.append(
                LoadIssue(
                    "sidechain",
                    "info",
                    f"{self.sidechain} sub-agent (sidechain) line(s) kept apart from the main conversation",
                )
            )
        if self.outside:
            listed = ", ".join(f"{v} {k}" for k, v in self.outside_types.most_common())
            out.append(
                LoadIssue(
                    "outside-chain",
                    "info",
                    f"{self.outside} line(s) outside the conversation, without a uuid "
                    f"({listed}): bookkeeping, not sent to the model, not imported",
                )
            )
        out.extend(foreign_issues(self.foreign, LABEL))
        return out


def _attachment_issues(sent: Counter[str], silent: Counter[str], unknown: Counter[str]) -> list[LoadIssue]:
    """One info line each: the attachments sent as text, those Claude Code sends nothing for, and
    those whose text this importer cannot rebuild."""
    out = []
    for counts, what in (
        (sent, "sent to the model as Claude Code renders them (<system-reminder> text)"),
        (silent, "Claude Code sends nothing for them"),
        (unknown, "a type this importer cannot render: their text, if any, is left out of the counts"),
    ):
        if counts:
            listed = ", ".join(f"{v} {k}" for k, v in counts.most_common())
            out.append(
                LoadIssue(
                    "attachments", "info", f"{sum(counts.values())} attachment line(s) ({listed}): {what}"
                )
            )
    return out


PROGRESS = "claude-code/progress:"
"""The custom type prefix of a ``progress`` line (``bash_progress``, ``hook_progress``, …)."""


def _progress_inline(entries: list[Any]) -> int:
    """Put dead-end runs of progress lines in line; returns how many runs moved.

    Claude Code writes a tool's progress (``bash_progress``) and a hook's (``hook_progress``) as
    chained lines off the answer or the line before them, and the line that continues the
    conversation (the tool's result, the next prompt) sometimes hangs off the same parent instead
    of the last progress line. The progress run is then a dead end beside the conversation: a
    recording artifact that claude-code-log's linearisation sets aside first, not a rewind (a run
    holds only progress lines, each with one child, the last with none). Where every such run off
    one parent was written before the one other child that continues, the runs are chained in file
    order and that child continues after the last of them; otherwise nothing moves."""
    ids = {e.id: k for k, e in enumerate(entries)}
    children: dict[str, list[int]] = {}
    for k, e in enumerate(entries):
        if isinstance(e.parentId, str) and e.parentId in ids:
            children.setdefault(e.parentId, []).append(k)

    def progress(k: int) -> bool:
        e = entries[k]
        return isinstance(e, CustomEntry) and (e.customType or "").startswith(PROGRESS)

    def dead_end(k: int) -> int | None:
        """The last entry of the run from ``k`` when it is a dead end of progress lines."""
        seen = set()
        while progress(k) and k not in seen:  # a hostile file may repeat ids: never loop
            seen.add(k)
            kids = children.get(entries[k].id, [])
            if not kids:
                return k
            if len(kids) > 1:
                return None
            k = kids[0]
        return None

    moved = 0
    for parent, kids in children.items():
        if len(kids) < 2:
            continue
        runs = [(k, t) for k in kids if (t := dead_end(k)) is not None]
        rest = [k for k in kids if all(k != h for h, _ in runs)]
        if not runs or len(rest) != 1 or any(t > rest[0] for _, t in runs):
            continue  # a real fork, or progress written after what continues
        last = parent
        for head, tail in runs:  # in file order
            entries[head] = entries[head].model_copy(update={"parentId": last})
            last = entries[tail].id
        entries[rest[0]] = entries[rest[0]].model_copy(update={"parentId": last})
        moved += len(runs)
    return moved


def _continues_earlier(
    entries: list[Any], parent_ids: dict[str, str | None], lines_of: list[int], issues: list[LoadIssue]
) -> dict[str, Any]:
    """A file that continues an earlier one: its first line's parent is in no line of this file.
    That link is dropped (the first entry is the root), kept in the header as ``continuesFrom``
    and said; the reconstruction check takes the first recorded prompt as its baseline."""
    if not entries:
        return {}
    first = entries[0]
    parent = first.parentId
    if not isinstance(parent, str) or parent in parent_ids:
        return {}
    entries[0] = first.model_copy(update={"parentId": None})
    issues.append(
        LoadIssue(
            "continues-earlier",
            "info",
            f"the first line's parent ({parent:.40}) is not in this "
            "file: the session continues an earlier file, whose history the model still had "
            "(the check takes the first recorded prompt as its baseline)",
            line=lines_of[0],
        )
    )
    return {"continuesFrom": parent}


def _preserved(meta: dict[str, Any]) -> tuple[str | None, str | None, list[str]]:
    """(head uuid, tail uuid, listed uuids) of the messages a compaction preserved verbatim, if it
    says so: ``preservedSegment{headUuid, tailUuid}``, else the first and last of
    ``preservedMessages{uuids}``."""
    pm = meta.get("preservedMessages") or meta.get("preserved_messages")
    uuids = pm.get("uuids") if isinstance(pm, dict) else pm
    members = [u for u in uuids if isinstance(u, str)] if isinstance(uuids, list) else []
    seg = meta.get("preservedSegment") or meta.get("preserved_segment")
    if isinstance(seg, dict):
        head = seg.get("headUuid", seg.get("head_uuid"))
        tail = seg.get("tailUuid", seg.get("tail_uuid"))
        return (head if isinstance(head, str) else None, tail if isinstance(tail, str) else None, members)
    if members:
        return members[0], members[-1], members
    return None, None, members


POST_COMPACT_MAX_FILES_TO_RESTORE = 5


def reinjected(entry: Any) -> list[tuple[int, str | None]]:
    """What a compaction entry says Claude Code attached again after it (the estimate this importer
    records in ``details.claudeCode``): (entry index of the read, its file or None), in the
    recorded order; anything else in those lists is left out (a hand-made or hostile file)."""
    details = getattr(entry, "details", None)
    cc = details.get("claudeCode") if isinstance(details, dict) else None
    reads = cc.get("reinjectedReads") if isinstance(cc, dict) else None
    if not isinstance(reads, list):
        return []
    files = cc.get("reinjectedFiles")  # type: ignore[union-attr]
    named = files if isinstance(files, list) and len(files) == len(reads) else [None] * len(reads)
    return [
        (i, f if isinstance(f, str) and f else None)
        for i, f in zip(reads, named, strict=True)
        if type(i) is int and i >= 0
    ]


class _Reads:
    """What each compaction attaches again: the entry indexes of the last successful read of each
    of the most recently read files (at most 5), and those files, which Claude Code reads again and
    attaches after a compaction (``compact.ts`` ``createPostCompactFileAttachments``,
    ``POST_COMPACT_MAX_FILES_TO_RESTORE``); files read in the preserved messages are already in the
    context and left out. An estimate: the file is read again from disk, and the transcript does
    not hold what was attached.

    Kept as the entries are added, so that each compaction reads only the entries added since the
    last one (and any merged into since: an answer's later blocks join its entry): each ``Read``
    call's file by its id (the newest call of an id wins, as in file order), the first entry of
    each id, and per file the successful results of the calls that read it; a compaction then
    looks at each file's last result before the kept messages, not at every entry before them."""

    def __init__(self) -> None:
        self.n = 0  # entries read
        self.dirty: set[int] = set()  # entries before n an answer's later blocks were merged into
        self.paths: dict[str, tuple[int, int, str]] = {}  # call id -> (entry, block, file)
        self.first: dict[str, int] = {}  # entry id -> its first index
        self.results: dict[str, list[int]] = {}  # call id -> its successful results' entry indexes
        self.by_file: dict[str, list[int]] = {}  # file -> the results of the calls that read it, sorted

    def _calls(self, k: int, e: Any) -> None:
        m = getattr(e, "message", None)
        for j, b in enumerate(m.content if isinstance(m, AssistantMessage) else []):
            if isinstance(b, ToolCall) and b.name == "Read" and isinstance(b.arguments, dict):
                p = b.arguments.get("file_path")
                old = self.paths.get(b.id)
                if isinstance(p, str) and p and (old is None or old[:2] < (k, j)):
                    self.paths[b.id] = (k, j, p)
                    if old is not None and old[2] != p:  # the id's results read another file now
                        for r in self.results.get(b.id, ()):
                            self.by_file[old[2]].remove(r)
                    if old is None or old[2] != p:
                        for r in self.results.get(b.id, ()):
                            insort(self.by_file.setdefault(p, []), r)

    def reinjected(self, entries: list[Any], first_kept: str | None) -> tuple[list[int], list[str]]:
        for k in sorted(self.dirty):
            self._calls(k, entries[k])
        self.dirty.clear()
        for k in range(self.n, len(entries)):
            e = entries[k]
            self._calls(k, e)
            self.first.setdefault(e.id, k)
            m = getattr(e, "message", None)
            if isinstance(m, ToolResultMessage) and not m.isError:
                self.results.setdefault(m.toolCallId, []).append(k)
                hit = self.paths.get(m.toolCallId)
                if hit is not None:
                    insort(self.by_file.setdefault(hit[2], []), k)
        self.n = len(entries)
        kept = self.first.get(first_kept, len(entries)) if first_kept else len(entries)
        last = []  # each file's last result before the kept messages
        for p, ks in self.by_file.items():
            i = bisect_left(ks, kept)
            if i:
                last.append((ks[i - 1], p))
        last.sort(reverse=True)
        chosen = last[:POST_COMPACT_MAX_FILES_TO_RESTORE]
        return [k for k, _ in chosen], [p for _, p in chosen]


def _mark_microcompacted(entries: list[Any], microcompacted: dict[str, Any]) -> None:
    """Tool results a ``microcompact_boundary`` cleared keep their text, marked in ``details`` with
    the time Claude Code cleared them (the ``recorded`` pruning strategy shows them cleared)."""
    if not microcompacted:
        return
    for k, e in enumerate(entries):
        m = getattr(e, "message", None)
        if isinstance(m, ToolResultMessage) and m.toolCallId in microcompacted:
            old = m.details if isinstance(m.details, dict) else {}
            cc = old.get("claudeCode")
            cc = cc if isinstance(cc, dict) else {}
            details = {**old, "claudeCode": {**cc, "microcompacted": microcompacted[m.toolCallId]}}
            entries[k] = e.model_copy(update={"message": m.model_copy(update={"details": details})})


def _assistant_block(b: Any, tool_names: dict[str, str]) -> dict[str, Any]:
    if not isinstance(b, dict):
        return {"type": "text", "text": str(b)}
    t = b.get("type")
    if t == "tool_use":
        tool_names[b.get("id", "")] = b.get("name", "")
        return {
            "type": "toolCall",
            "id": b.get("id", ""),
            "name": b.get("name", ""),
            "arguments": b.get("input") or {},
        }
    if t == "thinking":  # the signature kept as pi keeps it (``thinkingSignature``)
        sig = b.get("signature")
        return {
            "type": "thinking",
            "thinking": b.get("thinking", ""),
            **({"thinkingSignature": sig} if sig else {}),
        }
    if t == "text":
        return {"type": "text", "text": b.get("text", "")}
    return dict(b)
