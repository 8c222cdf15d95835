"""Learn mode: a guided path through a bundled session, one idea per screen (pure; no streamlit).

Each :class:`Screen` names the idea, the real system whose rule it shows (with the rule and its
source), the control the learner moves and the question asked before the reveal. :func:`reveal`
computes what the screen reveals for a control value — from the same engine functions the app,
the CLI and the notebook use — as a :class:`Reveal`: the figures' numbers, the question's choices
and the right one, the explanation, and where the Replay page shows the same thing (settings and
step). The app's Learn page (``inspector/ui/pages/learn.py``), the teaching notebook and the
tests all read these values, so what a screen says is checked, not hand-written.

Screens that depend on work not done yet (the retention view, the prompt cache) show what exists
now and say what is coming in :attr:`Screen.coming`; :data:`EXTENSIONS` lets a later module add
values to a screen's reveal without touching this one.

Sources of the rules (all checked against pi's code by the parity tests of the modules used):
pi ``session-manager.ts`` ``buildSessionContext``; pi ``compaction.ts`` ``estimateTokens``,
``calculateContextTokens``, ``shouldCompact``, ``findCutPoint``, ``findTurnStartIndex``,
``prepareCompaction`` and ``compact``; pi ``branch-summarization.ts``
``collectEntriesForBranchSummary`` and ``prepareBranchEntries``; OpenCode ``session/compaction.ts``
``prune``; FammasMaz/pi-context-pruning ``pruner.ts``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .branch_summary import prepare_branch_summary
from .compaction import CompactionPreparation, CompactionSettings, is_cut_point, prepare_compaction
from .compaction_view import compaction_steps
from .replay import Replay, ReplaySettings, replay
from .session.models import AssistantMessage, BranchSummaryEntry, CompactionEntry, MessageEntry, ToolCall
from .session.tree import Session
from .tokens import estimate_tokens
from .window import session_window

LEARN_SAMPLE = "coding-session.jsonl"
"""The bundled session the Learn path walks through (``sample_sessions/``): a coding session with
a recorded compaction, a ``/tree`` branch with its branch summary, and recorded usage."""


def learn_session_path() -> Path:
    return Path(__file__).resolve().parent.parent / "sample_sessions" / LEARN_SAMPLE


def load_learn_session() -> Session:
    from .session.loader import load_session

    return load_session(learn_session_path())


@dataclass(frozen=True)
class Control:
    """The one thing the learner moves on a screen (``kind``: ``slider`` over ``lo..hi`` by
    ``step``, or ``select`` among ``options``)."""

    key: str
    label: str
    kind: str
    default: Any
    lo: int = 0
    hi: int = 0
    step: int = 1
    options: tuple[Any, ...] = ()
    help: str = ""


@dataclass(frozen=True)
class Screen:
    number: int
    """1-based, as in the URL (``?screen=4``)."""
    key: str
    title: str
    idea: str
    system: str
    """The real system whose rule the screen shows."""
    rule: str
    source: str
    control: Control
    question: str
    coming: str | None = None
    """What this screen will show once other work lands (None: complete)."""


@dataclass(frozen=True)
class Reveal:
    screen: str
    value: Any
    """The control's value this was computed for."""
    values: dict[str, Any]
    """The numbers and facts the screen reveals (also what the tests check)."""
    choices: tuple[str, ...]
    answer: str
    """The right choice (one of ``choices``)."""
    explanation: tuple[str, ...]
    replay_settings: ReplaySettings
    replay_step: int
    """The Replay page's step showing the same thing under ``replay_settings``."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Objects the figures draw (replays, preparations, walk frames); not plain values."""


# -- the session's teaching points, found from the file itself ----------------------------------


def recorded_compaction(session: Session) -> int:
    """File index of the first compaction entry on the default branch."""
    for i in session.path(session.default_leaf):
        if isinstance(session.entries[i], CompactionEntry):
            return i
    raise ValueError("the Learn session has no recorded compaction")


def leaf_before_compaction(session: Session) -> int:
    """The entry just before the recorded compaction: the point where pi decided to compact."""
    path = session.path(session.default_leaf)
    return path[path.index(recorded_compaction(session)) - 1]


def abandoned_leaf(session: Session) -> int:
    """The leaf of the branch left by ``/tree`` (the one the branch summary summarises)."""
    main = session.default_leaf
    return next(leaf for leaf in session.leaves if leaf != main)


def branch_targets(session: Session) -> tuple[int, ...]:
    """Entries to navigate to from the abandoned leaf: the fork point, then earlier user messages
    of the main branch (each one summarises more of the old branch)."""
    old, main = abandoned_leaf(session), session.default_leaf
    fork = None if main is None else session.common_ancestor(old, main)
    if fork is None:
        raise ValueError("the Learn session's branches share no entry")
    path = session.path(old)
    users = [
        i
        for i in path[: path.index(fork)]
        if isinstance(e := session.entries[i], MessageEntry) and e.message.role == "user"
    ]
    comp = recorded_compaction(session)
    users = [i for i in users if i > comp - 40]  # the last few prompts before the fork
    return (fork, *reversed(users[-3:]))


# -- the screens -----------------------------------------------------------------------------

KEEP_CONTROL = Control(
    "keep",
    "keepRecentTokens",
    "slider",
    20_000,
    2_000,
    40_000,
    2_000,
    help="pi's keepRecentTokens: how far back the cut walks, in estimated tokens.",
)
STEP_HELP = "Which model call of the session (one assistant message each)."

SCREENS: tuple[Screen, ...] = (
    Screen(
        1,
        "context",
        "What the context is",
        "Every model call gets the whole conversation so far: the user's "
        "prompts, the assistant's answers and every tool output, rebuilt from the session file.",
        "pi",
        "The context is the branch from the root to the current entry; a compaction replaces what it "
        "summarised with its summary.",
        "pi session-manager.ts buildSessionContext",
        Control("step", "Model call", "slider", None, help=STEP_HELP),
        "At this call, which kind of message fills most of the context?",
    ),
    Screen(
        2,
        "tokens",
        "Tokens: estimate versus recorded",
        "pi cannot run the provider's tokenizer, so it "
        "estimates: characters ÷ 4. The provider reports the real count afterwards.",
        "pi",
        "estimateTokens: ceil(chars / 4) per message (an image in a tool result counts 1,200, a user's image "
        "0); calculateContextTokens: the recorded usage's totalTokens, else input + output + cache read + "
        "cache write.",
        "pi compaction.ts estimateTokens, calculateContextTokens",
        Control("step", "Model call", "slider", None, help=STEP_HELP),
        "Is pi's chars ÷ 4 estimate above or below what the provider recorded for this call?",
    ),
    Screen(
        3,
        "trigger",
        "The trigger",
        "pi compacts when the context no longer leaves reserveTokens free in the "
        "window: the red line is the window, the dashed line the threshold.",
        "pi",
        "shouldCompact: contextTokens > contextWindow − reserveTokens (strictly), checked when an agent run "
        "ends (an answer that calls no tool) with that answer's recorded usage (calculateContextTokens), "
        "not between the tool calls of a run.",
        "pi compaction.ts shouldCompact, agent-session.ts _checkCompaction",
        Control(
            "window",
            "Context window",
            "slider",
            64_000,
            32_000,
            200_000,
            8_000,
            help="The model's context window, in tokens.",
        ),
        "With this window, how many times does pi compact this session?",
    ),
    Screen(
        4,
        "cut",
        "The cut point",
        "From the newest message, pi walks back adding estimates until it has "
        "keepRecentTokens; the kept part must start at a valid cut point (never a tool result).",
        "pi",
        "findCutPoint: walk back from the newest entry summing estimateTokens; at the first message where the "
        "sum reaches keepRecentTokens, cut at the first valid cut point at or after it (a user, assistant, bash, "
        "custom or summary message, or a custom-message or branch-summary entry; never a tool result), then "
        "move back over non-message entries.",
        "pi compaction.ts findCutPoint",
        KEEP_CONTROL,
        "How many tokens stay verbatim after the cut, compared with keepRecentTokens?",
    ),
    Screen(
        5,
        "split",
        "A split turn and its two summaries",
        "When the cut lands inside a turn, that turn's first "
        "part is summarised on its own, so the kept part still makes sense.",
        "pi",
        "findTurnStartIndex: a cut not at a user message splits the turn that started at the last user message "
        "(or bash execution, custom message or branch summary) before it; compact() then makes two summaries (history, and the turn prefix) joined under "
        '"Turn Context (split turn)".',
        "pi compaction.ts findTurnStartIndex, prepareCompaction, compact",
        KEEP_CONTROL,
        "At this keepRecentTokens, does the cut split a turn?",
    ),
    Screen(
        6,
        "keeps",
        "What the summary keeps",
        "Besides the text, the summary carries the files the summarised "
        "part read and modified, so the model knows where it was working.",
        "pi",
        "prepareCompaction collects file operations (read, write, edit tool calls) of the summarised "
        "messages, the turn prefix and the previous compaction's details; compact() appends them as "
        "<read-files> and <modified-files>; a file both read and modified is listed as modified.",
        "pi compaction.ts prepareCompaction, formatFileOperations",
        KEEP_CONTROL,
        "How many files does the summary list (read + modified)?",
    ),
    Screen(
        7,
        "pruning",
        "Pruning old tool outputs",
        "Agents can also drop old tool outputs between calls, which keeps "
        "compaction further off: the newest PRUNE_PROTECT tokens of outputs stay (40,000 in both; the slider "
        "starts at 20,000, where this short session has some to drop); older ones go, but only when enough "
        "would go (PRUNE_MINIMUM, 20,000).",
        "OpenCode and pi-context-pruning",
        "OpenCode prune: after a prompt's final answer, walk back over tool outputs outside the last 2 turns; "
        "once they total more than PRUNE_PROTECT, the rest (the crossing one included) is pruned, if more than "
        "PRUNE_MINIMUM. pi-context-pruning: before every call, the same walk, but the crossing output is kept "
        "and the minimum is ≥.",
        "OpenCode session/compaction.ts prune; FammasMaz/pi-context-pruning pruner.ts",
        Control(
            "protect",
            "PRUNE_PROTECT",
            "slider",
            20_000,
            0,
            60_000,
            5_000,
            help="Newest tool-output tokens never pruned (PRUNE_MINIMUM is the second slider).",
        ),
        "Over the whole session, which rule prunes more tokens?",
    ),
    Screen(
        8,
        "branch",
        "Branch summaries",
        "Moving to another point of the tree with /tree leaves a branch "
        "behind; pi summarises it so the new branch knows what was tried.",
        "pi",
        "collectEntriesForBranchSummary: the entries from the old leaf back to the common ancestor with the "
        "target; prepareBranchEntries: newest first, within a token budget (tool results left out, their "
        "files kept).",
        "pi branch-summarization.ts collectEntriesForBranchSummary, prepareBranchEntries",
        Control("target", "Navigate to entry", "select", None, help="Where /tree moves the session to."),
        "Navigating there from the old branch's leaf, how many messages go into the branch summary?",
    ),
    Screen(
        9,
        "cost",
        "The cost of it all",
        "Every call pays for its whole context again: compaction shrinks what "
        "later calls pay, but it also throws away the provider's prompt cache.",
        "the providers' prompt caching",
        "Each call is billed for its prompt: what the provider's prompt cache holds (the unchanged start of the "
        "prompt) at the cache-read price, the rest at the input price plus a cache write; a compaction changes "
        "the prompt's start, so the next call reads only the system prompt and tools from the cache, and the "
        "compaction is a request of its own: pi sends the span it summarises as new text. Never compacting "
        "loses the cache too, after a pause longer than its lifetime or at a switch of model (each model has "
        "its own cache).",
        "inspector/cache (Anthropic and OpenAI prompt caching, issue 19; the summarisation requests: pi-mono "
        "compaction.ts); inspector/pricing.py",
        Control(
            "window",
            "Context window",
            "slider",
            64_000,
            24_000,
            200_000,
            8_000,
            help="pi's compaction at this window, compared with never compacting.",
        ),
        "Compacting at this window, with the prompt cache, is the session cheaper or dearer than never "
        "compacting?",
    ),
)
BY_KEY = {s.key: s for s in SCREENS}
PRUNE_MINIMUM_DEFAULT = 20_000
PRUNE_STRATEGIES = ("opencode", "pi-context-pruning")

Extension = Callable[[Session, Reveal], dict[str, Any]]
EXTENSIONS: dict[str, list[Extension]] = {}
"""Later modules add values to a screen's reveal here (``EXTENSIONS["keeps"].append(fn)``):
``fn(session, reveal)`` returns values merged into ``reveal.values``."""


def screen(number_or_key: int | str) -> Screen:
    if isinstance(number_or_key, int):
        if not 1 <= number_or_key <= len(SCREENS):
            raise KeyError(f"screen {number_or_key} out of range 1–{len(SCREENS)}")
        return SCREENS[number_or_key - 1]
    return BY_KEY[number_or_key]


def parse_screen(raw: Any) -> int:
    """The screen number from a URL value: 1 when missing or not a screen."""
    try:
        n = int(str(raw))
    except (TypeError, ValueError):
        return 1
    return n if 1 <= n <= len(SCREENS) else 1


BASE = ReplaySettings()
"""The session as recorded (its own compaction and branch summary), pi's estimate."""

KINDS = {
    "user": "user prompts",
    "assistant": "assistant messages",
    "toolResult": "tool outputs",
    "compactionSummary": "summaries",
    "branchSummary": "summaries",
}
KIND_CHOICES = ("user prompts", "assistant messages", "tool outputs", "summaries", "other")


def kind_of(role: str) -> str:
    """A message role as the Learn page names it (bash executions and custom messages: other)."""
    return KINDS.get(role, "other")


def default_value(session: Session, s: Screen) -> Any:
    """The control's starting value on ``session``: the call just before the recorded compaction
    (steps), the fork point (branch), else the control's default."""
    if s.control.key == "step":
        r = replay(session, BASE)
        comp = compaction_steps(r)
        return max(0, comp[0] - 1) if comp else len(r.steps) - 1
    if s.control.key == "target":
        return branch_targets(session)[0]
    return s.control.default


def control_range(session: Session, s: Screen) -> tuple[Any, ...]:
    """The values the control takes on ``session`` (slider: ``(lo, hi, step)``; select: options)."""
    if s.control.key == "step":
        return (0, len(replay(session, BASE).steps) - 1, 1)
    if s.control.key == "target":
        return branch_targets(session)
    return (s.control.lo, s.control.hi, s.control.step)


def number_choices(n: int, spread: Sequence[int] = (-3, -1, 0, 2, 5)) -> tuple[str, ...]:
    """Choices around the right number ``n`` (distinct, not negative, ascending)."""
    return tuple(str(v) for v in sorted({max(0, n + d) for d in spread}))


def reveal(session: Session, key: str | int, value: Any = None, **more: Any) -> Reveal:
    """What screen ``key`` reveals when its control is at ``value`` (None: its default).
    ``more``: the screen's second control (``minimum`` on the pruning screen)."""
    s = screen(key)
    if value is None:
        value = default_value(session, s)
    out = _COMPUTE[s.key](session, value, **more)
    for ext in EXTENSIONS.get(s.key, ()):
        out = replace(out, values={**out.values, **ext(session, out)})
    return out


# -- one computation per screen ----------------------------------------------------------------


def _context(session: Session, k: int) -> Reveal:
    r = replay(session, BASE)
    k = max(0, min(len(r.steps) - 1, int(k)))
    d = r.step_detail(k)
    by_kind = dict.fromkeys(KIND_CHOICES, 0)
    for cm in d.after:
        by_kind[kind_of(cm.role)] += estimate_tokens(cm.message)
    top = max(by_kind, key=lambda x: by_kind[x])
    total = sum(by_kind.values())
    return Reveal(
        "context",
        k,
        {
            "step": k,
            "entry": r.steps[k].entry_index,
            "messages": len(d.after),
            "tokens": total,
            "by_kind": by_kind,
            "largest": top,
        },
        KIND_CHOICES,
        top,
        (
            f"Model call {k} (entry {r.steps[k].entry_index}) is sent {len(d.after):,} messages, "
            f"{total:,} estimated tokens.",
            f"The largest share is {top}: {by_kind[top]:,} tokens ({by_kind[top] / max(1, total):.0%}).",
        ),
        BASE,
        k,
        {"replay": r, "detail": d},
    )


def _tokens(session: Session, k: int) -> Reveal:
    r = replay(session, BASE)
    k = max(0, min(len(r.steps) - 1, int(k)))
    st = r.steps[k]
    rec = st.recorded_input
    est = st.tokens
    why: tuple[str, ...]
    if rec is None or st.stop_reason in ("aborted", "error"):
        answer, diff = "no recorded usage", None
        why = (
            f"Call {k} was {st.stop_reason or 'not recorded'}: the provider reported no usage, so only the "
            "estimate exists.",
        )
    else:
        diff = int(est - rec)
        answer = "above" if diff > 0 else "below" if diff < 0 else "equal"
        why = (
            f"Estimate {est:,} vs recorded {int(rec):,} (the prompt the provider counted: input + cache read + "
            f"cache write): the estimate is {abs(diff):,} tokens {answer}.",
            "The recorded prompt also holds the system prompt and the tool definitions, which the session "
            "file does not store, so the estimate of the messages alone usually comes out below it.",
        )
    return Reveal(
        "tokens",
        k,
        {"step": k, "estimate": est, "recorded": rec, "difference": diff},
        ("above", "below", "equal", "no recorded usage"),
        answer,
        why,
        BASE,
        k,
        {"replay": r},
    )


def _recorded_over(session: Session, threshold: int) -> tuple[int, int] | None:
    """(call, its recorded context) of the first answer ending an agent run (one that calls no
    tool: pi checks at ``agent_end``; an aborted one before the next prompt) whose recorded usage
    (``calculateContextTokens``) exceeds ``threshold``, in the session as recorded; None when none
    does. A failed answer's usage is not read, as in pi."""
    for st in replay(session, BASE).steps:
        total = st.recorded_total
        if total is None or st.stop_reason == "error" or total <= threshold:
            continue
        m = getattr(session.entries[st.entry_index], "message", None)
        if not isinstance(m, AssistantMessage):
            continue
        if st.stop_reason == "aborted" or not any(isinstance(b, ToolCall) for b in m.content):
            return st.step, int(total)
    return None


def _pi_at(window: int) -> ReplaySettings:
    return ReplaySettings(compaction="pi", context_window=int(window))


def _trigger(session: Session, window: int) -> Reveal:
    rs = _pi_at(window)
    r = replay(session, rs)
    n = r.metrics.compactions
    steps = compaction_steps(r)
    bucket = "0" if n == 0 else "1" if n == 1 else "2–3" if n <= 3 else "4 or more"
    threshold = rs.context_window - rs.reserve_tokens
    why = [
        f"Threshold = {rs.context_window:,} − {rs.reserve_tokens:,} = {threshold:,} tokens; the session's "
        f"largest context (pi's estimate) is {r.metrics.peak_context:,}."
    ]
    why.append(f"pi compacts {n} time(s)" + (f", first before call {steps[0]}." if steps else "."))
    over = _recorded_over(session, threshold)
    if over is not None:
        why.append(
            f"pi itself checks the recorded usage of the answer that ends each agent run (one that calls no "
            f"tool): in the session as recorded it first exceeds {threshold:,} after call {over[0]} "
            f"({over[1]:,} tokens), so pi would compact before call "
            f"{over[0] + 1}. The replay checks the same usage, as long as its context is the one the session "
            "sent; once a compaction has changed it, the recorded usage plus what the replay changed (counted "
            "with pi's chars ÷ 4 estimate, times the provider tokens per counted token fitted on this "
            "session's calls), since the provider never counted that context."
        )
    return Reveal(
        "trigger",
        int(window),
        {
            "window": rs.context_window,
            "reserve": rs.reserve_tokens,
            "threshold": threshold,
            "compactions": n,
            "compaction_steps": steps,
            "peak": r.metrics.peak_context,
            "recorded_first_over": over[0] if over is not None else None,
        },
        ("0", "1", "2–3", "4 or more"),
        bucket,
        tuple(why),
        rs,
        steps[0] if steps else 0,
        {"replay": r},
    )


@dataclass(frozen=True)
class WalkFrame:
    """One step of pi's backward walk: the message at ``entry`` adds ``tokens``, making ``total``."""

    entry: int
    role: str
    tokens: int
    total: int
    cut_point: bool
    reached: bool
    """The total has reached keepRecentTokens here (the walk stops)."""


def cut_walk(
    session: Session, leaf: int, keep: int
) -> tuple[tuple[WalkFrame, ...], CompactionPreparation | None]:
    """pi's ``findCutPoint`` walk at ``leaf``, one frame per message (the same loop as
    :func:`inspector.compaction.find_cut_point`, recorded for the animation), and the
    preparation pi makes there (whose cut is the walk's end)."""
    path = session.path(leaf)
    entries = session.entries_at(path)
    prep = prepare_compaction(entries, CompactionSettings(keepRecentTokens=int(keep)), path_indexes=path)
    start = prep.boundary_start if prep is not None else 0
    frames: list[WalkFrame] = []
    total = 0
    for p in range(len(entries) - 1, start - 1, -1):
        e = entries[p]
        if not isinstance(e, MessageEntry):
            continue
        t = estimate_tokens(e.message)
        total += t
        reached = total >= keep
        frames.append(WalkFrame(path[p], e.message.role, t, total, is_cut_point(e), reached))
        if reached:
            break
    return tuple(frames), prep


def _prep_values(session: Session, leaf: int, keep: int) -> tuple[dict[str, Any], Any]:
    frames, prep = cut_walk(session, leaf, keep)
    if prep is None:
        raise ValueError(f"pi would not compact at entry {leaf}")
    path = session.path(leaf)
    first_kept = path[prep.first_kept_path_index]
    kept = [
        e for i in path[prep.first_kept_path_index :] if isinstance(e := session.entries[i], MessageEntry)
    ]
    kept_tokens = sum(estimate_tokens(e.message) for e in kept)
    vals = {
        "keep": int(keep),
        "leaf": leaf,
        "first_kept": first_kept,
        "walked_to": frames[-1].entry if frames and frames[-1].reached else None,
        "walk_length": len(frames),
        "kept_tokens": kept_tokens,
        "kept_messages": len(kept),
        "split_turn": prep.isSplitTurn,
        "turn_start": path[prep.cut.turnStartIndex] if prep.isSplitTurn else None,
        "summarised_messages": len(prep.messagesToSummarize),
        "summarised_tokens": sum(estimate_tokens(c.message) for c in prep.messagesToSummarize),
        "turn_prefix_tokens": sum(estimate_tokens(c.message) for c in prep.turnPrefixMessages),
        "turn_prefix_messages": len(prep.turnPrefixMessages),
    }
    return vals, (frames, prep)


def _recorded_link(session: Session, keep: int) -> tuple[ReplaySettings, int]:
    """The recorded compaction's step, with pi's rule replayed at this keepRecentTokens beside it."""
    rs = BASE.model_copy(update={"keep_recent_tokens": int(keep)})
    steps = compaction_steps(replay(session, BASE))
    return rs, steps[0] if steps else 0


def _cut(session: Session, keep: int) -> Reveal:
    leaf = leaf_before_compaction(session)
    vals, (frames, prep) = _prep_values(session, leaf, keep)
    kt, k = vals["kept_tokens"], int(keep)
    answer = "about the same (within 10 %)" if abs(kt - k) <= 0.1 * k else "fewer" if kt < k else "more"
    why = (
        f"The walk back from entry {leaf} adds {len(frames)} message(s) and reaches {frames[-1].total:,} ≥ "
        f"{k:,} at entry {frames[-1].entry} ({frames[-1].role})."
        if frames and frames[-1].reached
        else f"The walk never reaches {k:,}: everything is kept.",
        f"The kept part starts at entry {vals['first_kept']}: {vals['kept_messages']} message(s), {kt:,} tokens. "
        "It starts at the first valid cut point at or after where the walk stopped: fewer tokens than walked "
        "when the cut snaps forward past tool results, more when it then moves back over non-message entries.",
    )
    rs, step = _recorded_link(session, keep)
    return Reveal(
        "cut",
        k,
        vals,
        ("fewer", "about the same (within 10 %)", "more"),
        answer,
        why,
        rs,
        step,
        {"frames": frames, "prep": prep},
    )


def _split(session: Session, keep: int) -> Reveal:
    from .summarize import SPLIT_TURN_SEPARATOR, get_summarizer, summarize_compaction

    leaf = leaf_before_compaction(session)
    vals, (frames, prep) = _prep_values(session, leaf, keep)
    text = summarize_compaction(prep, get_summarizer("offline")).text
    history, _, prefix = text.partition(SPLIT_TURN_SEPARATOR) if prep.isSplitTurn else (text, "", "")
    vals = {**vals, "history_summary_chars": len(history), "prefix_summary_chars": len(prefix)}
    why: tuple[str, ...]
    if prep.isSplitTurn:
        why = (
            f"The cut (entry {vals['first_kept']}) is inside the turn that started at entry "
            f"{vals['turn_start']}: its first {vals['turn_prefix_messages']} message(s) are the turn prefix.",
            "pi summarises the history and the turn prefix in two calls and joins them under "
            '"Turn Context (split turn)".',
        )
    else:
        why = (
            f"The cut is at a user message (entry {vals['first_kept']}): a whole turn starts the kept part, "
            "and one summary is made.",
        )
    rs, step = _recorded_link(session, keep)
    return Reveal(
        "split",
        int(keep),
        vals,
        ("yes", "no"),
        "yes" if prep.isSplitTurn else "no",
        why,
        rs,
        step,
        {"frames": frames, "prep": prep, "history": history, "prefix": prefix},
    )


def _keeps(session: Session, keep: int) -> Reveal:
    leaf = leaf_before_compaction(session)
    vals, (_, prep) = _prep_values(session, leaf, keep)
    read, modified = prep.fileOps.lists()
    n = len(read) + len(modified)
    vals = {**vals, "read_files": read, "modified_files": modified, "files": n}
    why = (
        f"The summarised part read {len(read)} file(s) it did not modify and modified {len(modified)}.",
        "Lower keepRecentTokens summarises more, so the lists grow; the kept messages' files are not listed "
        "(the model still sees them).",
    )
    rs, step = _recorded_link(session, keep)
    return Reveal("keeps", int(keep), vals, number_choices(n), str(n), why, rs, step, {"prep": prep})


def prune_settings(strategy: str, protect: int, minimum: int) -> ReplaySettings:
    return BASE.model_copy(
        update={
            "strategy": strategy,
            "strategy_settings": (("prune_minimum", int(minimum)), ("prune_protect", int(protect))),
        }
    )


def _pruning(session: Session, protect: int, minimum: int = PRUNE_MINIMUM_DEFAULT) -> Reveal:
    runs = {name: replay(session, prune_settings(name, protect, minimum)) for name in PRUNE_STRATEGIES}
    pruned = {name: r.metrics.tokens_pruned for name, r in runs.items()}
    a, b = (pruned[n] for n in PRUNE_STRATEGIES)
    answer = "the same" if a == b else "OpenCode" if a > b else "pi-context-pruning"
    best = max(PRUNE_STRATEGIES, key=lambda n: pruned[n])
    r = runs[best]
    step = max(range(len(r.steps)), key=lambda k: r.steps[k].pruned_tokens) if r.steps else 0
    why = (
        f"Summed over every call: OpenCode keeps {a:,} tokens out, pi-context-pruning {b:,}.",
        "OpenCode prunes only after a prompt's final answer and persists what it pruned; pi-context-pruning "
        "decides before every call and keeps the output that crosses PRUNE_PROTECT.",
    )
    return Reveal(
        "pruning",
        int(protect),
        {"protect": int(protect), "minimum": int(minimum), "pruned": pruned, "most_pruned_step": step},
        ("OpenCode", "pi-context-pruning", "the same"),
        answer,
        why,
        runs[best].settings,
        step,
        {"replays": runs},
    )


def _branch(session: Session, target: int) -> Reveal:
    from .summarize import get_summarizer, summarize_branch

    old = abandoned_leaf(session)
    col, prep = prepare_branch_summary(session, old, int(target), context_window=session_window(session))
    text = summarize_branch(prep, get_summarizer("offline")).text
    read, modified = prep.fileOps.lists()
    n = len(prep.messages)
    recorded = next(
        (i for i in session.path(session.default_leaf) if isinstance(session.entries[i], BranchSummaryEntry)),
        None,
    )
    base = replay(session, BASE)
    step = next((s.step for s in base.steps if any(e.type == "branch_summary" for e in s.events)), 0)
    why = (
        f"From the old leaf (entry {old}) back to the common ancestor with entry {target}: "
        f"{len(col.entries)} entries; tool results are left out, so {n} message(s), {prep.totalTokens:,} tokens "
        f"(budget {prep.budget:,}).",
        f"Files carried over: {len(read)} read, {len(modified)} modified."
        + (f" The session's own branch summary is entry {recorded}." if recorded is not None else ""),
    )
    return Reveal(
        "branch",
        int(target),
        {
            "old_leaf": old,
            "target": int(target),
            "entries": len(col.entries),
            "messages": n,
            "tokens": prep.totalTokens,
            "read_files": read,
            "modified_files": modified,
        },
        number_choices(n),
        str(n),
        why,
        BASE,
        step,
        {
            "summary": text,
            "prep": prep,
            "collected": col.entries,
            "target_path": session.path(int(target)),
            "prep_session": session,
        },
    )


def _largest(steps: Sequence[Any], words: Callable[[dict[str, Any]], str]) -> str:
    """The invalidation that rewrote most among ``steps`` (cache steps), in words, or nothing."""
    if not steps:
        return ""
    x = max(steps, key=lambda x: x.invalidation["tokensRewritten"])
    return f"; the largest, {words(x.invalidation)} at call {x.step}, rewrote {x.invalidation['tokensRewritten']:,} tokens"


def _cost(session: Session, window: int) -> Reveal:
    from .cache import cache_replay
    from .cache.causes import invalidated_by

    rs = _pi_at(window)
    pi_r = replay(session, rs)
    never = replay(session, rs.model_copy(update={"compaction": "never"}))
    ca, cb = cache_replay(pi_r, session), cache_replay(never, session)
    a, b = ca.billed_cost, cb.billed_cost
    answer = "the same" if abs(a - b) < 0.005 else "cheaper" if a < b else "dearer"
    why = (
        f"With the prompt cache: compacting at {int(window):,} bills ${a:.2f} ({pi_r.metrics.compactions} "
        f"compaction(s), {ca.hit_rate or 0:.0%} of prompt tokens read from the cache, {len(ca.invalidations)} "
        f"cache invalidation(s), ${ca.summary_cost:.2f} of it the summarisation requests themselves); never "
        f"compacting bills ${b:.2f} ({cb.hit_rate or 0:.0%} from the cache, {len(cb.invalidations)} cache "
        f"invalidation(s){_largest(cb.invalidations, invalidated_by)}).",
        f"Counting only the replayed messages at the input price (no cache, no system prompt or tools): "
        f"${pi_r.metrics.cost_usd:.2f} against ${never.metrics.cost_usd:.2f}. A compaction shrinks every later prompt, but it rewrites the prompt's "
        "start, so the cache must be written again: compacting often can cost more than it saves.",
    ) + (
        (
            f"Never compacting overflows this window at {never.metrics.overflows} call(s), counted as the "
            "provider counts each prompt (the recorded one and what never compacting kept; the lines count "
            "the messages alone, without the system prompt and tools): a provider would refuse them, and "
            "they are priced here as if answered.",
        )
        if never.metrics.overflows
        else ()
    )
    steps = compaction_steps(pi_r)
    return Reveal(
        "cost",
        int(window),
        {
            "window": int(window),
            "cost_pi": a,
            "cost_never": b,
            "cost_summaries": ca.summary_cost,
            "list_pi": pi_r.metrics.cost_usd,
            "list_never": never.metrics.cost_usd,
            "hit_rate_pi": ca.hit_rate,
            "hit_rate_never": cb.hit_rate,
            "invalidations_pi": len(ca.invalidations),
            "input_pi": pi_r.metrics.total_input_tokens,
            "input_never": never.metrics.total_input_tokens,
            "compactions": pi_r.metrics.compactions,
        },
        ("cheaper", "dearer", "the same"),
        answer,
        why,
        rs,
        steps[0] if steps else 0,
        {"replays": {"pi": pi_r, "never": never}},
    )


def retention_values(session: Session, rv: Reveal) -> dict[str, Any]:
    """Screen 6's retention view (:mod:`inspector.retention`, issue 21): of what the branch needed
    after the session's own compaction, what its summary and kept part carried over."""
    try:
        from .retention import retention
    except ImportError:  # pragma: no cover - a checkout without the retention package
        return {}
    c = retention(replay(session, BASE)).compactions[0]
    return {
        "retention_entry": c.span.entry_index,
        "retention_recall": c.recall(),
        "retention_needed": len(c.needed),
        "retention_forgotten": [n.as_dict() for n in c.forgotten],
    }


EXTENSIONS.setdefault("keeps", []).append(retention_values)

_COMPUTE: dict[str, Callable[..., Reveal]] = {
    "context": _context,
    "tokens": _tokens,
    "trigger": _trigger,
    "cut": _cut,
    "split": _split,
    "keeps": _keeps,
    "pruning": _pruning,
    "branch": _branch,
    "cost": _cost,
}


def all_reveals(session: Session) -> list[Reveal]:
    """Every screen at its default: what the Learn path shows first."""
    return [reveal(session, s.key) for s in SCREENS]


__all__ = [
    "SCREENS",
    "Screen",
    "Control",
    "Reveal",
    "WalkFrame",
    "reveal",
    "cut_walk",
    "screen",
    "parse_screen",
    "load_learn_session",
    "all_reveals",
    "Replay",
]


def as_dict(rv: Reveal) -> dict[str, Any]:
    """A screen and its reveal as plain JSON values (``inspector learn --json``); ``replay``: the
    Replay page's step and the settings that differ from the defaults."""
    s = screen(rv.screen)
    return {
        "screen": s.number,
        "key": s.key,
        "title": s.title,
        "idea": s.idea,
        "system": s.system,
        "rule": s.rule,
        "source": s.source,
        "control": {"key": s.control.key, "label": s.control.label, "value": rv.value},
        "question": s.question,
        "choices": list(rv.choices),
        "answer": rv.answer,
        "explanation": list(rv.explanation),
        "values": rv.values,
        "coming": s.coming,
        "replay": {
            "step": rv.replay_step,
            "settings": rv.replay_settings.model_dump(mode="json", exclude_defaults=True),
        },
    }
