"""Plain words for the app's "what happened here" panel (pure functions, no streamlit).

Each sentence says what changed before a model call and why, with entry numbers (file order) and
token counts, for someone learning how pruning and compaction work.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from ..agents import AGENTS
from ..compaction import CompactionSettings
from ..explain import explain_compaction
from ..policies import get_policy

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
            if e["type"] == "zone":
                if e.get("zone") != zone:
                    notable = zone is not None or notable
                    zone = e.get("zone")
            elif e["type"] not in quiet:
                notable = True
        if notable:
            out.append(s.step)
    return out


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def recorded_cut_story(session: Any, compaction_index: int, keep: int, reserve: int, pi_version: str = "0.73"
                       ) -> list[str]:
    """Why a recorded compaction's cut is where it is: pi's cut rule replayed at the entry
    before the compaction with the sidebar's keepRecentTokens, compared with the recorded cut."""
    e = session.entries[compaction_index]
    parent = session.parents[compaction_index]
    if parent is None or parent < 0:
        return []
    plan = explain_compaction(session, parent, CompactionSettings(keepRecentTokens=keep, reserveTokens=reserve),
                              pi_version=pi_version)
    recorded = session.index_of(getattr(e, "firstKeptEntryId", None))
    if plan is None:
        return ["pi would not compact at this point with these settings (nothing before the cut)."]
    out = [f"Replaying pi's cut rule here with keepRecentTokens = {keep:,}:"]
    out += plan.steps[:-1] if plan.steps else []
    if plan.firstKeptEntryIndex == recorded:
        out.append(f"That is exactly where the session's own compaction cut: the kept part starts at entry "
                   f"{recorded}.")
    else:
        from ..compaction_view import recorded_cut_reason

        out.append(recorded_cut_reason(session, compaction_index, plan.firstKeptEntryIndex, keep, pi_version))
    return out


def agent_compaction_story(session: Any, compaction_index: int, summarised: int) -> list[str]:
    """What another agent's recorded compaction kept, in its own terms (pi's cut rule does not
    apply to it, so it is not replayed): ``summarised`` is how many messages it replaced."""
    e = session.entries[compaction_index]
    agent = AGENTS[session.format].short_title if session.format in AGENTS else session.format
    kept = session.index_of(getattr(e, "firstKeptEntryId", None))
    details = e.details if isinstance(getattr(e, "details", None), dict) else {}
    out = [f"{agent} compacted here, as its file records; its cut rule is not pi's, so pi's is not replayed. "
           f"The summary generated here summarises the same {_plural(summarised, 'message')}."]
    if details.get("encrypted"):
        out.append("The summary was made on the server and stored encrypted: its text cannot be read.")
    if kept is not None:
        why = {"claude-code": " (the boundary's preservedSegment)", "opencode": " (the compaction's tail_start_id)"}
        out.append(f"It kept the messages from entry {kept} verbatim{why.get(session.format, '')}: they follow the "
                   "summary in the context.")
    else:
        after = session.entries[compaction_index + 1:]
        marked = [x for x in after if isinstance(getattr(x, "codex", None), dict)
                  and (x.codex.get("replacementHistory") or x.codex.get("rebuiltHistory"))]
        if session.format == "codex" and marked:
            rebuilt = any(x.codex.get("rebuiltHistory") for x in marked)
            out.append(f"Codex continued with {_plural(len(marked), 'message')} after it — "
                       + ("the user messages it rebuilds (no replacement_history in the file)" if rebuilt
                          else "its replacement_history, re-emitted after the compaction")
                       + ": Codex puts the summary after them, pi's context before.")
        else:
            out.append("It kept nothing verbatim: the summary alone stands for everything before it.")
    if getattr(e, "tokensBefore", 0):
        post = details.get("postTokens")
        out.append(f"The context was {int(e.tokensBefore):,} tokens before it"
                   + (f" and {post:,} right after" if isinstance(post, int) else "") + ", as the agent recorded.")
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
        out.append(f"{_plural(len(ds), 'message')} ({what}) {verb}: {before:,} → {after:,} tokens. Why: {reason}."
                   + (f" ({fresh:,} of them for the first time at this call.)" if fresh and fresh != len(ds) else ""))
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
        out.append(f"This is the first model call on this branch: the context holds {_plural(st.messages, 'message')}, "
                   f"{st.tokens:,} tokens.")
    else:
        delta = st.tokens - prev.tokens
        out.append(f"Since the previous call the context went from {prev.tokens:,} to {st.tokens:,} tokens "
                   f"({delta:+,}).")
    if st.stop_reason in ("aborted", "error"):
        out.append(f"This call ended {st.stop_reason}: pi ignores its usage when deciding to compact.")
    newly: list[int] = []
    for e in st.events:
        t = e["type"]
        if t == "compaction":
            if e.get("simulated"):
                out.append(f"A compaction was simulated ({e.get('policy')}) because {e.get('reason', '')}. "
                           f"{_plural(e.get('summarizedMessages', 0), 'message')} were summarised into "
                           f"{e.get('summaryTokens', 0):,} tokens by the {e.get('summarizer', '')} summarizer; "
                           f"the context is now {e.get('tokensAfter', 0):,} tokens.")
                if e.get("fellBack"):
                    out.append(f"The summarizer failed ({e.get('error')}); the offline summary was used instead.")
                rec = next((x for x in replay.summaries if x.get("step") == k and x.get("simulated")), None)
                if rec and rec.get("story"):
                    out.append("Where the cut landed: " + " ".join(rec["story"]))
            else:
                out.append(f"The session's own compaction (entry {e.get('entryIndex')}) takes effect: everything "
                           f"before entry {e.get('firstKeptEntryIndex')} is replaced by its summary "
                           f"({e.get('summaryTokens', 0):,} tokens); pi measured {e.get('tokensBefore', 0):,.0f} "
                           "tokens before it.")
                if e.get("entryIndex") is not None:
                    out += recorded_cut_story(replay.session, e["entryIndex"], s.keep_recent_tokens,
                                              s.reserve_tokens, s.pi_version)
        elif t == "overflow":
            out.append(f"Overflow: {e.get('tokens', 0):,} tokens is more than the {e.get('window', 0):,}-token window"
                       + (" — the request would fail, so the policy compacts and retries." if e.get("before")
                          else " — a provider would reject this request."))
        elif t == "pruned":
            newly = list(e.get("entryIndexes") or [])
            out.append(f"Pruning ({s.strategy}) newly removed or shortened {_plural(e.get('items', 0), 'message')} "
                       f"before this call; the model gets {st.tokens:,} of the {st.tokens_before_pruning:,} tokens "
                       "of the full context.")
        elif t == "unpruned":
            out.append(f"{_plural(e.get('items', 0), 'message')} pruned at the previous call are sent in full again "
                       "(the strategy decides afresh at every call).")
        elif t == "prune_pass":
            out.append(f"{s.strategy} ran a prune pass after the previous prompt's final answer and marked "
                       f"{_plural(e.get('items', 0), 'output')} (≈{e.get('estimate', 0):,} tokens by its own estimate).")
        elif t == "prune_skipped":
            out.append(f"{e.get('strategy')} found candidates but did not prune: {e.get('reason')}.")
        elif t == "branch_summary":
            out.append(f"A branch summary (entry {e.get('entryIndex')}, {e.get('tokens', 0):,} tokens) carries over "
                       "what the abandoned branch did.")
        elif t == "reread":
            out.append(f"This call reads {e.get('path')} again, whose earlier output (entry "
                       f"{e.get('earlierEntryIndex')}) the model no longer sees — pruned or summarised away.")
        elif t == "early_compaction_requested":
            out.append(f"Turn-aware pruning reached the {e.get('zone')} zone and requested an early compaction "
                       "(once per pressure episode).")
        elif t == "zone":
            out.append(f"Turn-aware zone: {e.get('zone')} (context at {e.get('pressure', 0):.0%} of the window).")
        elif t == "recorded_compaction_set_aside":
            out.append(f"The session's own compaction at entry {e.get('entryIndex')} is set aside: this what-if "
                       "replay decides for itself when to compact.")
        elif t == "compaction_skipped":
            out.append(f"The policy wanted to compact ({e.get('trigger', '')}), but there was nothing to summarise.")
    if recon is not None:
        from ..recon import step_note

        note = step_note(recon, st.step)
        if note:
            out.append(note)
    if detail is not None:
        out += prune_story(detail, newly)
    elif st.pruned_tokens and not any(e["type"] == "pruned" for e in st.events):
        out.append(f"Pruning keeps {st.pruned_tokens:,} tokens out of this call, as decided earlier.")
    trig = None
    fmt = getattr(getattr(replay, "session", None), "format", "pi")
    pol = get_policy(s.compaction)
    if pol.as_recorded and fmt != "pi":
        out.append("The compactions replayed are the ones the agent recorded in its file; when it would compact "
                   "is not in the file (pick its policy in the sidebar, or the agent preset, to see its threshold).")
    elif (pol.as_recorded or pol is get_policy("pi")) and st.tokens:
        trig = s.context_window - s.reserve_tokens
        if trig > 0:
            out.append(f"pi compacts after an answer once the context exceeds window − reserveTokens = {trig:,} "
                       f"tokens; this call is at {st.tokens / trig:.0%} of that.")
    return out
