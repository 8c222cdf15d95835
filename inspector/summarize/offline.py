"""The offline extractive summarizer: no network, deterministic, in pi's structured format.

It fills pi's sections (see ``sections.py``) only with what the messages say, never inventing:

* Goal — the user's substantive requests (the latest in full under In Progress, never trimmed);
* Constraints & Preferences — user sentences with must / never / don't / always / avoid / prefer…;
* Done — each file edited or written (successful ``edit``/``write`` results), commits and pushes;
* Blocked — tool errors not followed by a successful retry of the same call, a failed last answer;
* Key Decisions — assistant sentences that choose ("instead of", "the fix is", "decided"…);
* Next Steps — the plan sentences of the last assistant text, or the open request;
* Critical Context — the last assistant statements, commands the user ran, lines matching the
  custom instructions' words.

A turn prefix gets pi's turn layout (Original Request / Early Progress / Context for Suffix) and a
branch pi's branch layout (no Critical Context). A previous summary — and any compaction or branch
summary among the messages — is *updated*: its items are kept and the new ones merged in. The
text fits ``max_tokens`` by pi's estimate. The prompt style does not change the layout (always
pi's). It is labelled "offline extractive" wherever it appears.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..session.models import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from .base import SummaryRequest, SummaryResult, SummaryUsage
from .sections import BRANCH, HISTORY, TURN_PREFIX, Item, Sections, estimate, fit, from_text, merge

LABEL = "offline extractive"
__all__ = ["LABEL", "OfflineSummarizer", "estimate"]

_WS = re.compile(r"\s+")
# A sentence break: the whitespace after . ! or ? (not after a list number such as "1. "), or a run
# of newlines. Written to start at the punctuation (group 1 is the break), so the scan can skip to
# the next . ! ? or newline; the same breaks as (?<=[^\d\s][.!?])\s+|\n+ (tests/test_offline_speed.py).
_SENTENCE = re.compile(r"[.!?](?<=[^\d\s][.!?])(\s+)|(\n+)")
_CONSTRAINT = re.compile(
    r"\b(must|never|don'?t|do not|always|should not|shouldn'?t|avoid|make sure|prefer|"
    r"no need to)\b",
    re.I,
)
_CODE_LIKE = re.compile(r"[{}\\]|\":|^\s*[/$>]")
_ACTION = re.compile(r"^(now |ok,? |good,? )?(let me|let's|i need to)\b", re.I)
_DECISION = re.compile(
    r"\b(instead of|rather than|the fix is|the approach|the plan is|decided|decide to|"
    r"better to|we should|switch(?:ed|ing)? to|chose|going with)\b",
    re.I,
)
# Where a match of _DECISION can start, lower-cased: each alternative begins with one of these,
# and no alternative starts inside another's match (so the matches are exactly the candidates at
# which _DECISION matches). Case-insensitive matching also pairs these letters with others that
# lower() does not map onto them; a text holding one is searched with the pattern itself.
_DECISION_STARTS = (
    "instead of", "rather than", "the fix is", "the approach", "the plan is", "decide",
    "better to", "we should", "switch", "chose", "going with",
)  # fmt: skip
_CASE_ODD = re.compile("[\u0130\u0131\u017f\u212a]")
_PLAN = re.compile(
    r"^(next|then|now|after that|finally)\b|\b(I'll|I will|need to|still need|remaining|todo|"
    r"next step)\b",
    re.I,
)
_MILESTONE = re.compile(r"\bgit\s+(commit|push|merge|tag)\b")
_COMMIT_MSG = re.compile(r"\bgit\s+commit\b.*?-m\s+(\"(?:[^\"\\]|\\.)*\"|'[^']*')")
_CD = re.compile(r"^\s*cd\s+\S+\s*&&\s*")
_SPLIT_DECISION = re.compile(r":\s+| because | since | so that | — ")
_STOP = frozenset(
    "about above after also and any are but can does each focus for from have how include into keep "
    "make more most only other please should some summary sure than that the their them then there "
    "these they this those what when where which while with would your".split()
)
LATEST_MAX = 2000


def _one_line(text: str, limit: int = 200) -> str:
    if len(text) > 4 * limit + 64:  # a long text: folding a prefix is enough when it is already too long
        head = _WS.sub(" ", text[: 4 * limit + 64]).lstrip()
        if len(head) > limit + 1:  # the whole line is longer than limit (a trailing space aside)
            return head[: limit - 1].rstrip() + "…"
    t = _WS.sub(" ", text).strip()
    return t if len(t) <= limit else t[: limit - 1].rstrip() + "…"


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.text for b in content if isinstance(b, TextContent))
    return ""


def _target(call: ToolCall | None) -> str:
    args = call.arguments if call is not None and isinstance(call.arguments, dict) else {}
    for k in ("path", "command", "pattern", "url", "query"):
        v = args.get(k)
        if isinstance(v, str) and v:
            return v
    return next((v for v in args.values() if isinstance(v, str)), "")


def _sentences(text: str) -> list[str]:
    """Sentences and lines; one ending in ":" takes the line after it (a list that follows)."""
    return [s for s, _, _ in _sentence_spans(text)]


def _sentence_spans(text: str) -> list[tuple[str, int, int]]:
    """:func:`_sentences` with where each one lies in ``text`` (start, end)."""
    parts: list[tuple[str, int, int]] = []
    pos = 0
    for cut in (*_SENTENCE.finditer(text), None):  # re.split's pieces, with their offsets
        if cut is None:
            end = len(text)
        else:
            end = cut.start(1) if cut.group(1) is not None else cut.start(2)
        piece = text[pos:end]
        stripped = piece.strip()
        if stripped:
            a = pos + len(piece) - len(piece.lstrip())
            parts.append((stripped, a, a + len(stripped)))
        if cut is not None:
            pos = cut.end()
    out = []
    i = 0
    while i < len(parts):
        p, a, b = parts[i]
        if p.endswith(":") and i + 1 < len(parts):
            p, b, i = f"{p} {parts[i + 1][0]}", parts[i + 1][2], i + 1
        out.append((p, a, b))
        i += 1
    return out


def _decision_starts(text: str) -> list[int]:
    """Where the matches of :data:`_DECISION` in ``text`` start (as ``finditer`` finds them): the
    places a lower-cased alternative begins, each checked with the pattern itself (a long answer
    or summary is mostly searched by ``str.find``, not by the pattern at every position)."""
    low = text.lower()
    if len(low) != len(text) or _CASE_ODD.search(text):
        return [m.start() for m in _DECISION.finditer(text)]
    cands = set()
    for word in _DECISION_STARTS:
        i = low.find(word)
        while i >= 0:
            cands.add(i)
            i = low.find(word, i + 1)
    match = _DECISION.match
    return [i for i in sorted(cands) if match(text, i)]


def _piece_at(text: str, q: int) -> tuple[int, int]:
    """(start, end) of the stripped piece between sentence breaks that holds position ``q`` (not
    whitespace), as :func:`_sentence_spans` cuts ``text``, found from ``q`` outwards: the line
    around ``q`` is searched, not the whole text."""
    start = text.rfind("\n", 0, q) + 1  # a newline always breaks
    for m in _SENTENCE.finditer(text, start, q):  # within the line, only after . ! ?
        start = m.end()
    cut = _SENTENCE.search(text, q)
    end = len(text) if cut is None else cut.start(1) if cut.group(1) is not None else cut.start(2)
    piece = text[start:end]
    a = start + len(piece) - len(piece.lstrip())
    return a, start + len(piece.rstrip())


def _sentence_at(text: str, q: int) -> tuple[int, int]:
    """(start, end) of the sentence :func:`_sentence_spans` gives for position ``q`` (not
    whitespace), found locally: its piece, joined to the piece before when that one ends in ":"
    and opens a pair (an odd run of such pieces before it), else to the piece after when it
    ends in ":" itself."""
    a, b = _piece_at(text, q)
    prev: tuple[int, int] | None = None
    run, j = 0, a
    while True:  # how many pieces in a row before this one end in ":"
        j -= 1
        while j >= 0 and text[j].isspace():
            j -= 1
        if j < 0 or text[j] != ":":
            break
        pa, _ = _piece_at(text, j)
        prev = (pa, j + 1) if run == 0 else prev
        run, j = run + 1, pa
    if run % 2 and prev is not None:
        return prev[0], b
    if text[b - 1] == ":":
        j = b
        while j < len(text) and text[j].isspace():
            j += 1
        if j < len(text):
            return a, _piece_at(text, j)[1]
    return a, b


def _sentence_text(text: str, a: int, b: int) -> str:
    """The sentence at (a, b) as :func:`_sentence_spans` writes it: a pair joined by one space."""
    first_end = _piece_at(text, a)[1]
    if first_end >= b:
        return text[a:b]
    return f"{text[a:first_end]} {text[_piece_at(text, b - 1)[0] : b]}"


def _decision_sentences(text: str) -> list[str]:
    """The sentences of ``text`` that state a decision (and are not an announced action). Only
    sentences holding a match of the decision pattern in the whole text are looked at: its words
    never span a sentence break, so those are exactly the sentences it matches. Each is found
    from its match outwards (:func:`_sentence_at`), so a long text is not cut up whole."""
    out = []
    last = -1
    for p in _decision_starts(text):
        if p < last:
            continue
        a, b = _sentence_at(text, p)
        last = b
        s = _sentence_text(text, a, b)
        if _DECISION.search(s) and not _ACTION.search(s):
            out.append(s)
    return out


def _command_family(command: str) -> str:
    """A shell command's first two words after a leading ``cd … &&``: a later success of the same
    family (e.g. ``npm run``) counts as having dealt with an earlier failure."""
    return " ".join(_CD.sub("", command).split()[:2])


def _decision(sentence: str) -> str:
    s = _one_line(sentence, 300)
    parts = _SPLIT_DECISION.split(s, maxsplit=1)
    if len(parts) == 2 and 8 <= len(parts[0]) <= 120 and parts[1].strip():
        return f"**{parts[0].strip().rstrip(',;')}**: {_one_line(parts[1], 200)}"
    return f"**{_one_line(s, 160)}**"


@dataclass
class _Facts:
    requests: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    statements: list[str] = field(default_factory=list)
    last_text: str = ""
    answered: bool = False
    edits: dict[str, list[str]] = field(default_factory=dict)
    milestones: list[str] = field(default_factory=list)
    errors: dict[tuple[str, str], str] = field(default_factory=dict)
    failed_last: str | None = None
    ran: list[str] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)


class _IdMemo:
    """Per-message facts, keyed by the (immutable) message object: a replay summarises the same
    messages again whenever a setting moves the cuts. Bounded; identity-checked."""

    def __init__(self, limit: int = 200_000) -> None:
        self.limit = limit
        self._d: dict[tuple[int, str], tuple[object, object]] = {}

    def get(
        self, obj: object, key: str, make: Callable[..., Any]
    ) -> Any:  # make(): a lambda may bind by default
        hit = self._d.get((id(obj), key))
        if hit is not None and hit[0] is obj:
            return hit[1]
        value = make()
        if len(self._d) >= self.limit:
            self._d.clear()
        self._d[(id(obj), key)] = (obj, value)
        return value

    def clear(self) -> None:
        """Forget every message (a corpus worker, between sessions: the memo holds them alive)."""
        self._d.clear()


_MEMO = _IdMemo()


def _user_facts(m: UserMessage) -> tuple[str, list[str]]:
    t = _text(m.content).strip()
    if not t or not _CONSTRAINT.search(t):  # (a sentence's match is a match in the whole text)
        return t, []
    prose = "\n".join(
        par
        for par in re.split(r"\n\s*\n", t)  # paragraphs of pasted logs/code out
        if not any(_CODE_LIKE.search(ln) for ln in par.splitlines())
    )
    return t, [_one_line(s, 200) for s in _sentences(prose) if _CONSTRAINT.search(s) and len(s.split()) <= 50]


def _assistant_facts(m: AssistantMessage) -> tuple[str, str, list[str]]:
    t = "\n".join(b.text for b in m.content if isinstance(b, TextContent)).strip()
    if not t:
        return t, "", []
    return t, _one_line(t, 300), [_decision(s) for s in _decision_sentences(t)]


def remember_facts(messages: Iterable[Any], pause: Callable[[], Any] | None = None) -> None:
    """Work out the per-message facts of ``messages`` ahead of time (what :func:`_collect` reads:
    a replay warms them in the background, so its first what-if compaction finds them ready).
    ``pause`` is called every 200 messages (a background thread gives way to the page there)."""
    for n, m in enumerate(messages):
        if pause is not None and n % 200 == 0:
            pause()
        if isinstance(m, UserMessage):
            _MEMO.get(m, "user", lambda m=m: _user_facts(m))
        elif isinstance(m, AssistantMessage):
            _MEMO.get(m, "assistant", lambda m=m: _assistant_facts(m))


def _collect(req: SummaryRequest) -> _Facts:
    f = _Facts()
    calls: dict[str, ToolCall] = {}
    want_lines = bool(req.custom_instructions)  # the conversation's lines feed only _focus
    for cm in req.messages:
        m = cm.message
        if isinstance(m, UserMessage):
            _note_user(f, m, want_lines)
        elif isinstance(m, AssistantMessage):
            _note_assistant(f, m, calls, want_lines)
        elif isinstance(m, ToolResultMessage):
            _note_tool_result(f, m, calls, want_lines)
        elif isinstance(m, BashExecutionMessage):
            status = "cancelled" if m.cancelled else f"exit code {m.exitCode}" if m.exitCode else "ok"
            f.ran.append(f"The user ran `{_one_line(m.command, 160)}` ({status})")
            if m.exitCode not in (None, 0):
                f.errors[("!", m.command)] = (
                    f"`{_one_line(m.command, 120)}` (run by the user) exited {m.exitCode}"
                )
        elif isinstance(m, (BranchSummaryMessage, CompactionSummaryMessage)):
            f.summaries.append(m.summary)
    return f


def _note_user(f: _Facts, m: UserMessage, want_lines: bool) -> None:
    """A user message: a request (the previous one now unanswered), its constraints."""
    t, constraints = _MEMO.get(m, "user", lambda m=m: _user_facts(m))
    if t:
        f.requests.append(t)
        f.answered = False
        if want_lines:
            f.lines.extend(t.splitlines())
        f.constraints.extend(constraints)


def _note_assistant(f: _Facts, m: AssistantMessage, calls: dict[str, ToolCall], want_lines: bool) -> None:
    """An answer: its tool calls (by id), its statement and decisions, whether it failed."""
    for b in m.content:
        if isinstance(b, ToolCall):
            calls[b.id] = b
    t, statement, decisions = _MEMO.get(m, "assistant", lambda m=m: _assistant_facts(m))
    if t:
        f.statements.append(statement)
        f.last_text, f.answered = t, True
        if want_lines:
            f.lines.extend(t.splitlines())
        f.decisions.extend(decisions)
    f.failed_last = (
        (
            f"The last answer ended with {m.stopReason}"
            + (f": {_one_line(m.errorMessage, 200)}" if m.errorMessage else "")
        )
        if m.stopReason in ("error", "aborted")
        else None
    )


def _note_tool_result(f: _Facts, m: ToolResultMessage, calls: dict[str, ToolCall], want_lines: bool) -> None:
    """A tool result: an error (until the same call succeeds), a file edited, a commit or push."""
    call = calls.get(m.toolCallId)
    target = _target(call)
    key = (m.toolName, _command_family(target) if m.toolName == "bash" else target)
    body = _text(m.content)
    if want_lines:
        f.lines.extend(body.splitlines()[:200])
    if m.isError:
        first = _MEMO.get(
            m,
            "first",
            lambda body=body: next((ln for ln in body.splitlines() if ln.strip()), "(no message)"),
        )
        f.errors.pop(key, None)
        f.errors[key] = f"`{_one_line(f'{m.toolName} {target}', 120)}` failed: {_one_line(first, 200)}"
        return
    f.errors.pop(key, None)
    if m.toolName in ("edit", "write") and target:
        f.edits.setdefault(target, []).append(m.toolName)
    if m.toolName == "bash" and _MILESTONE.search(target):
        msg = _COMMIT_MSG.search(target)
        f.milestones.append(
            f"Committed {_one_line(msg.group(1), 160)}"
            if msg
            else f"Ran `{_one_line(_CD.sub('', target), 160)}`"
        )


def _edited(path: str, ops: list[str]) -> str:
    verbs = " and ".join(dict.fromkeys("wrote" if o == "write" else "edited" for o in ops))
    n = ops.count("edit")
    return f"{verbs[0].upper()}{verbs[1:]} `{path}`" + (f" ({n} edits)" if n > 1 else "")


def _focus(f: _Facts, instructions: str | None) -> list[str]:
    """Lines of the conversation that share the most words with the custom instructions."""
    if not instructions:
        return []
    words = {w for w in re.findall(r"[a-z0-9_]{4,}", instructions.lower()) if w not in _STOP}
    if not words:
        return []
    scored = []
    for pos, line in enumerate(f.lines):
        low = line.lower()
        score = sum(1 for w in words if w in low)
        if score:
            scored.append((-score, -pos, _one_line(line, 200)))
    picked = list(dict.fromkeys(t for _, _, t in sorted(scored)))[:5]
    return [f"Focus ({_one_line(instructions, 60)}): {t}" for t in picked]


def _sections(req: SummaryRequest, f: _Facts) -> Sections:
    substantive = [r for r in f.requests if len(r.split()) >= 4] or f.requests
    latest = _one_line(substantive[-1], LATEST_MAX) if substantive else ""
    last_msg = _one_line(f.requests[-1], LATEST_MAX) if f.requests else ""
    done = [_edited(p, ops) for p, ops in f.edits.items()] + f.milestones
    blocked = list(f.errors.values())[-6:] + ([f.failed_last] if f.failed_last else [])
    plans = [_one_line(s, 200) for s in _sentences(f.last_text) if _PLAN.search(s)][:3]
    if not f.answered and last_msg:
        plans.insert(0, f"Answer the user's latest message: {_one_line(last_msg, 200)}")
    focus = _focus(f, req.custom_instructions)

    def items(texts: list[str], keep: bool = False) -> list[Item]:
        return [Item(t, keep) for t in dict.fromkeys(t for t in texts if t)]

    if req.kind == "turn_prefix":
        first = _one_line(f.requests[0], LATEST_MAX) if f.requests else ""
        return {
            "Original Request": items([first], keep=True),
            "Early Progress": items(done + f.decisions[-6:] + f.constraints[-4:]),
            "Context for Suffix": items(f.ran[-3:] + blocked + f.statements[-3:] + plans + focus),
        }
    in_progress = [latest] + (
        [f"Latest message from the user: {last_msg}"] if last_msg and last_msg != latest else []
    )
    return {
        "Goal": items([_one_line(r, 240) for r in substantive[-6:]]),
        "Constraints & Preferences": items(f.constraints[-8:]),
        "Done": items(done),
        "In Progress": items(in_progress, keep=True),
        "Blocked": items(blocked),
        "Key Decisions": items(f.decisions[-6:]),
        "Next Steps": items(plans or ([f"Continue: {_one_line(latest, 200)}"] if latest else [])),
        "Critical Context": items(f.ran[-3:] + f.statements[-3:] + focus),
    }


class OfflineSummarizer:
    """Deterministic extractive summaries (the default; sends nothing anywhere)."""

    name = "offline"
    label = LABEL

    def summarize(self, req: SummaryRequest) -> SummaryResult:
        t0 = time.perf_counter()
        layout = TURN_PREFIX if req.kind == "turn_prefix" else BRANCH if req.kind == "branch" else HISTORY
        earlier: list[str] = []
        if req.previous_summary and req.kind != "turn_prefix":
            earlier.append(req.previous_summary)
        if req.kind == "stitch":
            earlier.extend(req.parts)
        f = _collect(req)
        earlier.extend(f.summaries)
        acc: Sections = {}
        for text in earlier:
            acc = merge(acc, from_text(text))
        if req.messages or not earlier:
            acc = merge(acc, _sections(req, f))
        text = fit(acc, layout, req.max_tokens)
        return SummaryResult(
            text=text,
            usage=SummaryUsage(0, estimate(text), 0, time.perf_counter() - t0, 0.0),
            summarizer=LABEL,
            prompt="",
        )
