"""What the provider is sent for a context: the prompt a model call recorded, rebuilt.

pi's own estimate counts a context as pi holds it. What reaches the provider differs, by agent,
provider and model, and the recorded usage counts *that*. This module rebuilds it for the
analyses that compare a context with the recorded prompt (:mod:`inspector.recon`,
:mod:`inspector.calibration`); the replay, pruning and compaction never apply it, so pi's own
figures (the ``pi`` counter, ``oracle-json``) are untouched. Rules, each with its source:

* **Failed answers are not sent (pi).** pi-ai ``providers/transform-messages.ts``
  (``transformMessages``, second pass): an assistant message whose ``stopReason`` is ``error``
  or ``aborted`` is skipped.
* **Thinking of another model is sent as text (pi).** The same function: a thinking block of
  another provider/api/model becomes a text block (an empty one is dropped); only the same
  model's signed thinking is replayed as thinking.
* **Replayed reasoning items (OpenAI Responses).** pi-ai ``providers/openai-responses-shared.ts``
  (``convertResponsesMessages``): a thinking block's ``thinkingSignature`` holds the whole
  reasoning item (``encrypted_content`` included), pushed back into the input for the same
  model. The provider counts it at the answer's reasoning size, which pi records as
  ``usage.reasoning``; the summary text pi keeps is not sent as text. Turn scope, as observed on
  recorded usage: pi's ``openai-codex`` / ``openai-responses`` calls count every earlier
  answer's reasoning; Codex CLI's only the current turn's (OpenAI's reasoning guide: reasoning
  items of earlier turns are dropped), its importer recording ``reasoning_output_tokens``.
* **Claude thinking.** Anthropic's extended-thinking documentation ("thinking block
  preservation"): Claude Opus 4.5 and later Opus models, Sonnet 4.6 and later, Mythos and every
  model from generation 5 keep all earlier thinking blocks in context; earlier models keep only
  the current assistant turn's (the rest are stripped before counting). Thinking a file stores
  only as a signature (``thinking: ""``) counts at ``usage.reasoning`` where that is recorded,
  else at the answer's output tokens less what it shows. Claude Code does not send again an
  answer that stopped at ``max_tokens`` with nothing but thinking (it retries the call; observed
  on recorded usage).
* **Failed answers are not sent (OpenCode).** OpenCode ``session/message-v2.ts``
  (``toModelMessages``): an answer with an error is left out whole — every step, its tool calls
  and their results —, unless the user interrupted it after it wrote more than reasoning. The
  importer marks those messages (:data:`inspector.importers.opencode.WITHHELD`).
* **DCP message ids.** Opencode-DCP ``lib/message-ids.ts`` and ``lib/messages/inject``: every
  message sent carries ``<dcp-message-id>mNNNN</dcp-message-id>`` (once per OpenCode message, on
  its last tool output or as a text part), and each compressed block's summary message its own.
* **Claude Code's post-compaction re-injection (an estimate).** Claude Code ``compact.ts``
  (``createPostCompactFileAttachments``; constants ``POST_COMPACT_MAX_FILES_TO_RESTORE`` = 5,
  ``POST_COMPACT_MAX_TOKENS_PER_FILE`` = 5,000, ``POST_COMPACT_TOKEN_BUDGET`` = 50,000, as
  third-party readings of the source report them): after a compaction the most recently read
  files are read again and attached. The file does not hold them; the importer names the last
  reads, and their last recorded text, cut at 5,000 tokens (chars ÷ 4), stands in for them.

Counts need an additive counter (tiktoken: a message's count is the sum of its pieces').
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import takewhile
from operator import is_, truth
from typing import Any, Literal

from .context import ContextMessage
from .importers.claude_code import reinjected
from .importers.opencode import WITHHELD as OPENCODE_WITHHELD
from .session.models import (
    AssistantMessage,
    CompactionSummaryMessage,
    ThinkingContent,
    UserMessage,
)
from .session.tree import Session

Thinking = Literal["text", "all", "turn"]
"""How an answer's thinking is sent: ``text`` as stored; ``all`` at its reasoning size, every
turn; ``turn`` at its reasoning size in the current turn and not at all before it."""

DCP_TAG = "\n<dcp-message-id>m0000</dcp-message-id>"
REINJECT_MAX_CHARS = 5_000 * 4
"""Claude Code's ``POST_COMPACT_MAX_TOKENS_PER_FILE`` (5,000) in its rough chars ÷ 4 estimate."""
REINJECT_BUDGET_CHARS = 50_000 * 4
REINJECTED = "re-injected after compaction (estimated)"
_RESPONSES_APIS = ("openai-responses", "openai-codex-responses", "azure-openai-responses")
_CLAUDE = re.compile(r"claude-(?:(opus|sonnet|haiku|mythos|fable)-)?(\d+)(?:[-.](\d{1,2}))?(?!\d)")
_CLAUDE_OLD = re.compile(r"claude-(\d+)(?:[-.](\d))?-(opus|sonnet|haiku)")


@dataclass(frozen=True)
class SendRules:
    """How one session's agent sends its history."""

    agent: str
    skip_failed: bool
    dcp_tags: bool
    providers: bool = True
    """Apply the provider rules (thinking, reasoning, re-injection); False counts the context as
    pi holds it (a baseline to measure the rules against)."""


@dataclass
class SentCount:
    """A context's tokens as sent, with what the rules changed (negative: left out)."""

    tokens: int = 0
    items: int = 0
    """Messages the provider receives (each carries framing the calibration prices)."""
    parts: dict[str, int] = field(default_factory=dict)

    def add(self, part: str, n: int) -> None:
        if n:
            self.tokens += n
            self.parts[part] = self.parts.get(part, 0) + n


def rules_for(session: Session, providers: bool = True) -> SendRules:
    """The sending rules of ``session``'s agent (``providers=False``: none, the context as held)."""
    if not providers:
        return SendRules(agent=session.format, skip_failed=False, dcp_tags=False, providers=False)
    extra = (session.header.__pydantic_extra__ or {}) if session.header is not None else {}
    return SendRules(
        agent=session.format, skip_failed=session.format == "pi", dcp_tags=bool(extra.get("dcp"))
    )


@lru_cache(maxsize=256)
def claude_keeps_thinking(model: str | None) -> bool | None:
    """Does this Claude model keep earlier turns' thinking (Anthropic's thinking-preservation
    rule)? None for a model that is not Claude."""
    if not model or "claude" not in model:
        return None
    m = _CLAUDE.search(model)
    if m and m.group(1):
        family, major, minor = m.group(1), int(m.group(2)), int(m.group(3) or 0)
    else:
        old = _CLAUDE_OLD.search(model)  # claude-3-7-sonnet-…
        if not old:
            return False
        family, major, minor = old.group(3), int(old.group(1)), int(old.group(2) or 0)
    if family in ("mythos", "fable") or major >= 5:
        return True
    if family == "opus":
        return (major, minor) >= (4, 5)
    if family == "sonnet":
        return (major, minor) >= (4, 6)
    return False


def thinking_rule(rules: SendRules, answer: AssistantMessage, call: AssistantMessage | None) -> Thinking:
    """How ``answer``'s thinking reaches the provider at the call that ``call`` answers."""
    if not rules.providers:
        return "text"
    if (
        rules.agent == "pi"
        and call is not None
        and (answer.model, answer.provider, answer.api) != (call.model, call.provider, call.api)
    ):
        return "text"  # transformMessages: another model's thinking goes as text
    if rules.agent == "codex":
        return "turn"
    if answer.api in _RESPONSES_APIS:
        return "all" if rules.agent == "pi" else "turn"
    keeps = claude_keeps_thinking(answer.model)
    if keeps is not None:
        return "all" if keeps else "turn"
    return "text"


def recorded_reasoning(m: AssistantMessage) -> int | None:
    """``usage.reasoning`` as recorded (pi, and the Codex and OpenCode importers, record it)."""
    u = m.usage
    r = (u.__pydantic_extra__ or {}).get("reasoning") if u is not None else None
    return int(r) if isinstance(r, (int, float)) and not isinstance(r, bool) and r >= 0 else None


def withheld(rules: SendRules, m: Any) -> bool:
    """Is message ``m`` left out by its agent? Claude Code does not send an answer that stopped at
    max_tokens holding nothing but thinking: it retries the call (observed: the next call's cache
    read is the previous prompt). OpenCode does not send an answer that failed, nor its tool
    results (the importer marks them: :data:`~inspector.importers.opencode.WITHHELD`)."""
    if rules.agent == "opencode":
        return _opencode_withheld(m)
    return (
        rules.agent == "claude-code"
        and isinstance(m, AssistantMessage)
        and m.stopReason == "length"
        and all(isinstance(b, ThinkingContent) for b in m.content)
    )


def _opencode_withheld(m: Any) -> bool:
    """Did the OpenCode importer mark ``m`` as a message OpenCode does not send again?"""
    return bool((m.__pydantic_extra__ or {}).get(OPENCODE_WITHHELD))


@dataclass
class _Counted:
    """A context :meth:`SentCounter.count` counted: its messages, the call's model, its turn's
    start, the count of its messages (before DCP's ids and re-injected files), DCP's ids, and the
    answers of its last turn (position, answer, thinking tokens sent as stored and beyond)."""

    messages: tuple[ContextMessage, ...]
    key: Any
    turn_start: int
    held: SentCount
    seen: dict[str, int]
    blocks: int
    current: list[tuple[int, AssistantMessage, int, int]]


class SentCounter:
    """Counts contexts as sent, per session: remembers each message's pieces (a context shares
    its message objects with the next call's)."""

    def __init__(self, session: Session, counter: Any, rules: SendRules | None = None) -> None:
        self.session = session
        self.counter = counter
        self.rules = rules or rules_for(session)
        self._thinking: dict[int, tuple[Any, int]] = {}
        self._tag = counter.count_text(DCP_TAG)
        self._last: _Counted | None = None  # the previous context counted (see count)

    def thinking_text(self, m: AssistantMessage) -> int:
        hit = self._thinking.get(id(m))
        if hit is not None and hit[0] is m:
            return hit[1]
        n = sum(
            self.counter.count_text(b.thinking)
            for b in m.content
            if isinstance(b, ThinkingContent) and b.thinking
        )
        self._thinking[id(m)] = (m, n)
        return n

    def answer_thinking(self, m: AssistantMessage, rule: Thinking, current_turn: bool) -> int:
        """Tokens ``m``'s thinking is sent as (its stored text already counted is not included)."""
        if rule == "text":
            return self.thinking_text(m)
        if rule == "turn" and not current_turn:
            return 0
        r = recorded_reasoning(m)
        return r if r is not None else max(self.thinking_text(m), self.unrecorded_thinking(m))

    def unrecorded_thinking(self, m: AssistantMessage) -> int:
        """Thinking a file holds only as a signature, from the answer's output tokens: output −
        what the answer shows (text and tool calls). 0 where the output is not the full answer's
        (Claude Code before 2.1.x wrote the usage of the stream's start)."""
        if not any(isinstance(b, ThinkingContent) for b in m.content) or m.usage is None:
            return 0
        shown = self.counter.count(m) - self.thinking_text(m)
        return max(0, round(m.usage.output) - shown)

    def count(self, messages: Sequence[ContextMessage], call: AssistantMessage | None = None) -> SentCount:
        """The tokens ``messages`` reach the provider as, for the call ``call`` answers. A context
        counted for the same model as the previous one is counted from the previous count on: the
        messages of the previous context past the ones both hold first (the same objects) are
        taken out, the new context's from there on are added, and the answers whose turn changed
        (a new turn has started, or the last prompt is another) have their thinking counted
        again. Every message's share of the count depends only on it, the call's model and
        whether it is in the context's last turn, so this is the count afresh; it reads only what
        changed (DCP, pruning a few recent tool outputs, changes a context near its end)."""
        turn_start = _last_prompt(messages)
        key = (  # what thinking_rule reads of the call
            (getattr(call, "model", None), getattr(call, "provider", None), getattr(call, "api", None))
            if call is not None
            else None
        )
        last = self._last
        shared = 0
        if last is not None and last.key == key:
            n = len(last.messages)
            if n <= len(messages) and tuple(messages[:n]) == last.messages:
                shared = n  # the previous context, extended (compared in C; an equal message counts alike)
            else:
                shared = len(list(takewhile(truth, map(is_, last.messages, messages))))
            if n - shared > shared:  # more to take out than to keep: afresh
                shared = 0
        current: dict[int, tuple[AssistantMessage, int, int]] = {}
        if last is not None and shared:
            out = SentCount(last.held.tokens, last.held.items, dict(last.held.parts))
            seen, blocks = dict(last.seen), last.blocks
            before = {i: (a, stored, beyond) for i, a, stored, beyond in last.current}
            # the previous context's messages past the shared ones: taken out
            for i in range(shared, len(last.messages)):
                self._share(out, last.messages[i].message, call, before.get(i), -1)
            if self.rules.dcp_tags:
                blocks -= _dcp_messages(self.session, last.messages[shared:], seen, -1)
            for i, (a, stored, beyond) in before.items():  # the shared answers of its last turn
                if i < shared and i > turn_start:
                    current[i] = (a, stored, beyond)
            lo, hi = sorted((last.turn_start, turn_start))
            for i in range(lo + 1, min(hi + 1, shared)):  # shared ones on the other side of the turn now
                m = messages[i].message
                if not isinstance(m, AssistantMessage) or not self._sent(m):
                    continue
                old = before.get(i)
                self._thinking_share(out, m, call, old[1:] if old is not None else None, -1)
                stored, beyond = self._thinking_share(out, m, call, None, 1, i > turn_start)
                if i > turn_start:
                    current[i] = (m, stored, beyond)
            out.parts = {k: v for k, v in out.parts.items() if v}
        else:
            out, seen, blocks = SentCount(), {}, 0
        for i in range(shared, len(messages)):
            m = messages[i].message
            share = self._share(out, m, call, None, 1, i > turn_start)
            if share is not None and i > turn_start and isinstance(m, AssistantMessage):
                current[i] = (m, share[0], share[1])
        if self.rules.dcp_tags:
            blocks += _dcp_messages(self.session, messages[shared:], seen)
        self._last = _Counted(
            tuple(messages), key, turn_start, out, seen, blocks, [(i, *v) for i, v in sorted(current.items())]
        )
        full = SentCount(out.tokens, out.items, dict(out.parts))
        if self.rules.dcp_tags:
            full.add("DCP message ids", self._tag * (len(seen) + blocks))
        if self.rules.providers:
            full.add(REINJECTED, self.reinjected(messages))
        return full

    def _sent(self, m: Any) -> bool:
        """Is ``m`` an answer the provider is sent (not a failed or withheld one)?"""
        return isinstance(m, AssistantMessage) and not (
            (self.rules.skip_failed and m.stopReason in ("error", "aborted")) or withheld(self.rules, m)
        )

    def _share(
        self,
        out: SentCount,
        m: Any,
        call: AssistantMessage | None,
        thinking: tuple[AssistantMessage, int, int] | None,
        sign: int,
        current_turn: bool = False,
    ) -> tuple[int, int] | None:
        """Add (``sign`` 1) or take out (-1) message ``m``'s share of a count: its tokens, its
        thinking as sent (taken out: as ``thinking`` recorded it in the last turn, else counted
        out of it), one message. Returns an answer's thinking (as stored, beyond), else None."""
        if not isinstance(m, AssistantMessage):
            if withheld(self.rules, m):  # a failed answer's tool result (OpenCode)
                return None
            out.add("messages", sign * self.counter.count(m))
            out.items += sign
            return None
        if not self._sent(m):
            return None
        out.items += sign
        out.add("messages", sign * (self.counter.count(m) - self.thinking_text(m)))
        return self._thinking_share(
            out, m, call, thinking[1:] if thinking is not None else None, sign, current_turn
        )

    def _thinking_share(
        self,
        out: SentCount,
        m: AssistantMessage,
        call: AssistantMessage | None,
        known: tuple[int, int] | None,
        sign: int,
        current_turn: bool = False,
    ) -> tuple[int, int]:
        """Add or take out the tokens ``m``'s thinking is sent as (``known``: (as stored, beyond)
        as counted in the last turn; else counted for ``current_turn``); returns them."""
        if known is None:
            text = self.thinking_text(m)
            sent = self.answer_thinking(m, thinking_rule(self.rules, m, call), current_turn)
            known = (min(sent, text), sent - min(sent, text))
        out.add("thinking as stored", sign * known[0])
        out.add("reasoning beyond the stored text", sign * known[1])
        return known

    def reinjected(self, messages: Sequence[ContextMessage]) -> int:
        """Claude Code's post-compaction file attachments, estimated from the last reads the
        compaction entry names (see the module docstring)."""
        if not messages or not isinstance(messages[0].message, CompactionSummaryMessage):
            return 0
        idx = messages[0].entry_index
        files = reinjected_reads(self.session, idx) if idx is not None else []
        budget, total = REINJECT_BUDGET_CHARS, 0
        for text in files:
            piece = text[: min(REINJECT_MAX_CHARS, budget)]
            if not piece:
                break
            budget -= len(piece)
            total += self.counter.count_text(piece)
        return total


def reinjected_reads(session: Session, compaction_index: int) -> list[str]:
    """The texts of the reads a Claude Code compaction entry names as re-attached after it."""
    out = []
    for i, _ in reinjected(session.entries[compaction_index]):
        m = getattr(session.entries[i], "message", None) if i < len(session.entries) else None
        c = getattr(m, "content", None)
        out.append(c if isinstance(c, str) else "".join(getattr(b, "text", "") for b in c or ()))
    return out


def _last_prompt(messages: Sequence[ContextMessage]) -> int:
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i].message, UserMessage):
            return i
    return -1


_STEP = re.compile(r"-s\d+$")


def _dcp_messages(
    session: Session, messages: Sequence[ContextMessage], seen: dict[str, int], sign: int = 1
) -> int:
    """The OpenCode messages in the context (each carries one DCP id), counted in ``seen`` (their
    ids, each with how many of the context's messages carry it; ``sign`` -1: taken out of it);
    returns how many of DCP's block summaries it holds."""
    blocks = 0
    for cm in messages:
        if cm.entry_index is None:
            blocks += isinstance(cm.message, UserMessage)
            continue
        if not isinstance(cm.message, (UserMessage, AssistantMessage)) or _opencode_withheld(cm.message):
            continue  # (an answer OpenCode does not send carries no id)
        eid = session.entries[cm.entry_index].id
        if isinstance(eid, str):
            k = _STEP.sub("", eid)
            n = seen.get(k, 0) + sign
            if n:
                seen[k] = n
            else:
                del seen[k]
    return blocks
