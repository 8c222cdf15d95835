"""Plain words for the app's "what happened here" panel (pure functions, no streamlit).

Each sentence says what changed before a model call and why, with entry numbers (file order) and
token counts, for someone learning how pruning and compaction work.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import takewhile
from typing import Any

from ..agents import AGENTS
from ..compaction import CompactionSettings
from ..compaction_view import compared_at, trigger_label
from ..explain import explain_compaction
from ..importers.claude_code import reinjected
from ..importers.codex import put_back
from ..policies import get_policy
from ..policies.pi import PiPolicy
from ..replay.results import (
    BranchSummary,
    CompactionSkipped,
    Event,
    Overflow,
    Pruned,
    RecordedCompaction,
    RecordedCompactionSetAside,
    Reread,
    SimulatedCompaction,
    StrategyEvent,
    Unpruned,
)
from .figures.timelines import draws_provider_line
from .views import relative_paths

QUIET_EVENTS = frozenset({"zone"})
"""Events that mark a state rather than a change (turn-aware's zone is reported at every call)."""
SKIPPED_EVENTS = frozenset({"prune_skipped", "compaction_skipped"})
"""Events that say nothing changed (a prune or a compaction considered, then not done)."""


def notable_steps(replay: Any, include_skipped: bool = False) -> list[int]:
    """Steps where something happened: any event, except a turn-aware zone report that repeats
    the previous zone and (unless ``include_skipped``) a skipped prune or compaction. "Next event"
    walks these."""
    quiet = QUIET_EVENTS if include_skipped else QUIET_EVENTS | SKIPPED_EVENTS
    out: list[int] = []
    zone = None
    for s in replay.steps:
        notable = False
        for e in s.events:
            if e.type == "zone":
                if (z := e.to_json().get("zone")) != zone:
                    notable = zone is not None or notable
                    zone = z
            elif e.type not in quiet:
                notable = True
        if notable:
            out.append(s.step)
    return out


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def recorded_cut_story(
    session: Any, compaction_index: int, keep: int, reserve: int, pi_version: str = "0.73"
) -> list[str]:
    """Why a recorded compaction's cut is where it is: pi's cut rule replayed at the entry
    before the compaction with the sidebar's keepRecentTokens, compared with the recorded cut."""
    e = session.entries[compaction_index]
    parent = session.parents[compaction_index]
    if parent is None or parent < 0:
        return []
    plan = explain_compaction(
        session,
        parent,
        CompactionSettings(keepRecentTokens=keep, reserveTokens=reserve),
        pi_version=pi_version,
    )
    recorded = session.index_of(getattr(e, "firstKeptEntryId", None))
    if plan is None:
        return ["pi would not compact at this point with these settings (nothing before the cut)."]
    out = [f"Replaying pi's cut rule here with keepRecentTokens = {keep:,}:"]
    out += plan.steps[:-1] if plan.steps else []
    if plan.firstKeptEntryIndex == recorded:
        out.append(
            f"That is exactly where the session's own compaction cut: the kept part starts at entry "
            f"{recorded}."
        )
    else:
        from ..compaction_view import recorded_cut_reason

        out.append(recorded_cut_reason(session, compaction_index, plan.firstKeptEntryIndex, keep, pi_version))
    return out


def agent_compaction_story(session: Any, compaction_index: int, summarised: int) -> list[str]:
    """What another agent's recorded compaction kept, in its own terms (pi's cut rule does not
    apply to it, so it is not replayed): ``summarised`` is how many messages it replaced."""
    return [
        f"{_agent_title(session.format)} compacted here, as its file records; its cut rule is not pi's, so "
        f"pi's is not replayed. The summary generated here summarises the same {_plural(summarised, 'message')}.",
        *_agent_compaction_kept(session, compaction_index),
    ]


def _agent_title(fmt: str) -> str:
    return AGENTS[fmt].short_title if fmt in AGENTS else fmt


def _agent_compaction_kept(session: Any, compaction_index: int) -> list[str]:
    """What another agent's recorded compaction kept verbatim or put back, and the size it recorded
    (the Summaries page's story and the Replay page's tell it alike)."""
    e = session.entries[compaction_index]
    kept = session.index_of(getattr(e, "firstKeptEntryId", None))
    details = e.details if isinstance(getattr(e, "details", None), dict) else {}
    out = []
    if details.get("encrypted"):
        out.append("The summary was made on the server and stored encrypted: its text cannot be read.")
    if kept is not None:
        why = {
            "claude-code": " (the boundary's preservedSegment)",
            "opencode": " (the compaction's tail_start_id)",
        }
        out.append(
            f"It kept the messages from entry {kept} verbatim{why.get(session.format, '')}: they follow the "
            "summary in the context."
        )
    else:
        # what Codex put back right after this compaction
        marked = list(takewhile(put_back, session.entries[compaction_index + 1 :]))
        if session.format == "codex" and marked:
            rebuilt = any(put_back(x) == "rebuiltHistory" for x in marked)
            out.append(
                f"Codex continued with {_plural(len(marked), 'message')} after it — "
                + (
                    "the user messages it rebuilds (no replacement_history in the file)"
                    if rebuilt
                    else "its replacement_history, re-emitted after the compaction"
                )
                + ": Codex puts the summary after them, pi's context before."
            )
        else:
            out.append("It kept no message verbatim: the summary alone stands for everything before it.")
    files = [f for _, f in reinjected(e) if f is not None]
    if session.format == "claude-code" and files:
        cwd = getattr(session.header, "cwd", None) if session.header is not None else None
        out.append(
            "Claude Code then reads again "
            + ("the file" if len(files) == 1 else f"the {len(files)} files")
            + f" read most recently and attaches {'it' if len(files) == 1 else 'them'} after the summary "
            f"({relative_paths(', '.join(files), cwd)}): an estimate from their last reads in the file, "
            "which does not hold what was attached."
        )
    if getattr(e, "tokensBefore", 0):
        post = details.get("postTokens")
        out.append(
            f"The context was {int(e.tokensBefore):,} tokens before it"
            + (f" and {post:,} right after" if isinstance(post, int) else "")
            + ", as the agent recorded (by its own count; the compaction's metrics count the replayed "
            "context with the replay's counter)."
        )
    return out


def prune_story(detail: Any, newly: Sequence[int] = (), limit: int = 4) -> list[str]:
    """What pruning removed from this call and why, grouped by the strategy's reasons."""
    prune = getattr(detail, "prune", None)
    if prune is None:
        return []
    acted = [d for d in prune.decisions if d.action != "kept"]
    if not acted:
        return []
    new = set(newly)
    out: list[str] = []
    groups: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for d in acted:
        groups[(d.action, d.reason)].append(d)
    for (action, reason), ds in sorted(groups.items(), key=lambda kv: -len(kv[1]))[:limit]:
        tools = Counter(d.tool_name or d.role for d in ds)
        what = ", ".join(f"{t} ×{n}" if n > 1 else t for t, n in tools.most_common(4))
        before = sum(d.tokens_before for d in ds)
        after = sum(d.tokens_after for d in ds)
        fresh = sum(1 for d in ds if d.entry_index in new)
        verb = "replaced by a short marker" if action == "pruned" else "dropped"
        out.append(
            f"{_plural(len(ds), 'message')} ({what}) {verb}: {before:,} → {after:,} tokens. Why: {reason}."
            + (f" ({fresh:,} of them for the first time at this call.)" if fresh and fresh != len(ds) else "")
        )
    if len(groups) > limit:
        out.append(f"…and {len(groups) - limit} other reason(s); see the message list below.")
    return out


def step_story(replay: Any, k: int, detail: Any = None, recon: Any = None) -> list[str]:
    """Sentences explaining what changed before model call ``k`` and why; with ``recon`` (an
    :func:`inspector.recon.check` of the session), what the file cannot show about it."""
    st = replay.steps[k]
    s = replay.settings
    out: list[str] = []
    prev = replay.steps[k - 1] if k > 0 else None
    if prev is None:
        out.append(
            f"This is the first model call on this branch: the context holds {_plural(st.messages, 'message')}, "
            f"{st.tokens:,} tokens."
        )
    else:
        delta = st.tokens - prev.tokens
        out.append(
            f"Since the previous call the context went from {prev.tokens:,} to {st.tokens:,} tokens "
            f"({delta:+,})."
        )
    fmt = getattr(getattr(replay, "session", None), "format", "pi")
    pol = get_policy(s.compaction)
    pis = isinstance(pol, PiPolicy) or (pol.as_recorded and fmt == "pi")  # pi's rules decide here
    if prev is not None and st.window != prev.window:
        out.append(
            f"Another model answers this call: its window is {st.window:,} tokens (the previous call's: "
            f"{prev.window:,}), and {'pi checks' if pis else 'the replay measures'} the call against it."
        )
    if st.stop_reason in ("aborted", "error"):
        out.append(_failed_sentence(st.stop_reason, pis, None if pol.checks_failed else pol.title))
    newly: list[int] = []
    for e in st.events:
        if isinstance(e, Pruned):
            newly = list(e.entry_indexes)
        out += _event_sentences(e, replay, k)
    if recon is not None:
        from ..recon import recorded_split, step_note

        note = step_note(recon, st.step) or recorded_split(recon, st.step)
        if note:
            out.append(note)
    if detail is not None:
        out += prune_story(detail, newly)
    elif st.pruned_tokens and not any(isinstance(e, Pruned) for e in st.events):
        out.append(f"Pruning keeps {st.pruned_tokens:,} tokens out of this call, as decided earlier.")
    trig = None
    if pol.as_recorded and fmt != "pi":
        out.append(
            "The compactions replayed are the ones the agent recorded in its file; when it would compact "
            "is not in the file (pick its policy in the sidebar, or the agent preset, to see its threshold)."
        )
    elif (pol.as_recorded or pol is get_policy("pi")) and st.tokens:
        trig = st.window - s.reserve_tokens
        if trig > 0:
            out.append(
                f"pi compacts when an agent run ends with the context above window − reserveTokens = {trig:,} "
                f"tokens; {_compared(replay, k, pol.as_recorded, trig)}."
            )
    return out


def _failed_sentence(stop: str, pis: bool, unchecked: str | None = None) -> str:
    """What an aborted or failed call means; where pi's rules decide (``pis``: its policy, or a pi
    session as recorded), what pi does with it (``agent-session.ts`` ``_checkCompaction``, 0.73.1:
    an aborted answer is skipped when its run ends and checked before the next prompt; a failed
    one is checked on ``estimateContextTokens``, which skips such answers' usage); ``unchecked``:
    the agent whose policy makes no check after it (:attr:`CompactionPolicy.checks_failed`)."""
    if stop == "aborted":
        head = "This call was aborted: its answer was cut off as it streamed"
        rule = (
            "pi makes no compaction check when an aborted run ends; it checks before the next prompt, "
            "on this answer's own usage"
        )
    else:
        head = "This call ended in an error"
        rule = (
            "pi checks its threshold on an estimate, the last successful answer's usage plus what came "
            "after it (a context overflow error takes pi's overflow path instead)"
        )
    if unchecked is not None:
        return f"{head}; {unchecked} makes no compaction check after it."
    return f"{head}; {rule}." if pis else f"{head}."


def _compared(replay: Any, k: int, as_recorded: bool, trig: int) -> str:
    """Where call ``k`` stands against pi's threshold ``trig``, in what pi compares
    (:func:`inspector.compaction_view.compared_at`): the answer's recorded usage (as recorded), or
    the usage the what-if's policy compares after it; the replayed context when there is neither."""
    val = compared_at(replay, k)
    what = "the answer's recorded usage" if as_recorded else "the usage the policy compares after this answer"
    if val:
        return f"{what} is {int(val):,} tokens, {val / trig:.0%} of that"
    return f"this call's context is at {replay.steps[k].tokens / trig:.0%} of that"


def _recorded_compaction_sentences(e: RecordedCompaction, replay: Any) -> list[str]:
    """The session's own compaction taking effect: pi's cut rule replayed beside it in a pi session,
    another agent's in its own terms (as the Summaries page tells it)."""
    s = replay.settings
    before = (
        f"before entry {e.first_kept_entry_index}" if e.first_kept_entry_index is not None else "before it"
    )
    head = (
        f"The session's own compaction (entry {e.entry_index}) takes effect: everything {before} is "
        f"replaced by its summary ({e.summary_tokens:,} tokens)"
    )
    fmt = getattr(replay.session, "format", "pi")
    if fmt != "pi":
        return [
            f"{head}. {_agent_title(fmt)}'s cut rule is not pi's, so pi's is not replayed here.",
            *_agent_compaction_kept(replay.session, e.entry_index),
        ]
    return [
        f"{head}; pi measured {e.tokens_before:,.0f} tokens before it.",
        *recorded_cut_story(
            replay.session, e.entry_index, s.keep_recent_tokens, s.reserve_tokens, s.pi_version
        ),
    ]


def _event_sentences(e: Event, replay: Any, k: int) -> list[str]:
    """What one event of call ``k`` means, in plain words."""
    s = replay.settings
    match e:
        case SimulatedCompaction():
            out = [
                f"A compaction was simulated ({e.policy}) because {e.reason}. "
                f"{_plural(e.summarized_messages, 'message')} were summarised into "
                f"{e.summary_tokens:,} tokens by the {e.summarizer} summarizer; "
                f"the context is now {e.tokens_after:,} tokens."
            ]
            if e.fell_back:
                out.append(f"The summarizer failed ({e.error}); the offline summary was used instead.")
            rec = next((x for x in replay.summaries if x.step == k and x.simulated), None)
            if rec is not None and rec.story:
                out.append("Where the cut landed: " + " ".join(rec.story))
            return out
        case RecordedCompaction():
            return _recorded_compaction_sentences(e, replay)
        case Overflow():
            return [_overflow_sentence(e, replay.steps[k])]
        case Pruned():
            st = replay.steps[k]
            return [
                f"Pruning ({s.strategy}) newly removed or shortened {_plural(e.items, 'message')} "
                f"before this call; the model gets {st.tokens:,} of the {st.tokens_before_pruning:,} tokens "
                "of the full context."
            ]
        case Unpruned():
            return [
                f"{_plural(e.items, 'message')} pruned at the previous call are sent in full again "
                "(the strategy decides afresh at every call)."
            ]
        case BranchSummary():
            return [
                f"A branch summary (entry {e.entry_index}, {e.tokens:,} tokens) carries over "
                "what the abandoned branch did."
            ]
        case Reread():
            return [
                f"This call reads {e.path} again, whose earlier output (entry "
                f"{e.earlier_entry_index}) the model no longer sees — pruned or summarised away."
            ]
        case RecordedCompactionSetAside():
            return [
                f"The session's own compaction at entry {e.entry_index} is set aside: this what-if "
                "replay decides for itself when to compact."
            ]
        case CompactionSkipped():
            return [f"The policy wanted to compact ({e.trigger}), but there was nothing to summarise."]
        case StrategyEvent():
            return _strategy_sentences(e.data, s.strategy)
    return []


def _overflow_sentence(e: Overflow, step: Any) -> str:
    """An overflow in plain words. Every replay counts one on the prompt as the provider counts it
    (:meth:`inspector.replay.run.ReplayRun.provider_size`): the recorded one where the replay sends
    what was sent. A call the provider answered (recorded usage, neither failed nor aborted) over
    the window was not rejected: said so, with the provider's count, a lower bound on the model's
    window; one it answered under the window (a what-if sent more) would have been rejected."""
    head = f"Overflow: {e.tokens:,} tokens is more than the {e.window:,}-token window"
    if e.before:
        return head + " — the request would fail, so the policy compacts and retries."
    got = step.recorded_input
    if not got or step.error or step.aborted:  # no usage (0: none recorded), or not answered
        return head + " — a provider would reject this request."
    if got > e.window:
        return head + (
            f". The provider answered the recorded request, which it counted as {got:,.0f} tokens: "
            "the model's window is larger than the one set here."
        )
    return head + (
        f" — a provider would reject this request (the one recorded, {got:,.0f} tokens by the "
        "provider's count, was answered)."
    )


def _strategy_sentences(d: dict[str, Any], strategy: str) -> list[str]:
    """What an event a pruning strategy reported means (in its own fields)."""
    t = d.get("type")
    if t == "prune_pass":
        return [
            f"{strategy} ran a prune pass after the previous prompt's final answer and marked "
            f"{_plural(d.get('items', 0), 'output')} (≈{d.get('estimate', 0):,} tokens by its own estimate)."
        ]
    if t == "prune_skipped":
        return [f"{d.get('strategy')} found candidates but did not prune: {d.get('reason')}."]
    if t == "early_compaction_requested":
        return [
            f"Turn-aware pruning reached the {d.get('zone')} zone and requested an early compaction "
            "(once per pressure episode)."
        ]
    if t == "zone":
        return [f"Turn-aware zone: {d.get('zone')} (context at {d.get('pressure', 0):.0%} of the window)."]
    return []


def timeline_caption(r: Any) -> str:
    """The Replay timeline's caption: what its lines are, the orange one in the terms of the agent
    whose compaction compared it (as recorded) or of the policy replayed."""
    label = trigger_label(r)
    fmt = getattr(r.session, "format", "pi")
    agent = AGENTS[fmt].short_title if fmt in AGENTS else "pi"
    when = "; pi checks the answer that ends each agent run" if agent == "pi" else ""
    what = (
        ""
        if label is None
        else f" The orange line is what {agent}'s compaction compares with the dashed threshold: the recorded "
        f"usage (input + output + cache of each answer{when}), not the estimate."
        if get_policy(r.settings.compaction).as_recorded
        else f" The dashed dark line is what the policy compares with the dashed threshold: {label}."
    )
    if draws_provider_line(r):
        what += (
            " The dashed red line is the prompt as the provider would count it (the recorded one, plus what "
            "this what-if changed, sized by the session's fit): an overflow is a call where it is over the window."
        )
    return (
        "Context tokens at every call (aborted and failed calls have no recorded point). Click a point to jump "
        "to that call. Solid red: the window; dashed: where the compaction policy triggers."
        + what
        + " The axis ends just above the window: ▲ marks calls above it. Lanes below: events, counted per "
        "group of calls."
    )
