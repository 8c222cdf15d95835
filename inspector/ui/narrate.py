"""Plain words for the app's "what happened here" panel (pure functions, no streamlit)."""

from __future__ import annotations

from typing import Any


def step_story(replay: Any, k: int) -> list[str]:
    """Sentences explaining what changed before model call ``k`` and why."""
    st = replay.steps[k]
    s = replay.settings
    out: list[str] = []
    prev = replay.steps[k - 1] if k > 0 else None
    if prev is None:
        out.append(f"This is the first model call on this branch: the context holds {st.messages} message(s), "
                   f"{st.tokens:,} tokens.")
    else:
        delta = st.tokens - prev.tokens
        out.append(f"Since the previous call the context went from {prev.tokens:,} to {st.tokens:,} tokens "
                   f"({'+' if delta >= 0 else ''}{delta:,}).")
    if st.stop_reason in ("aborted", "error"):
        out.append(f"This call ended {st.stop_reason}: pi ignores its usage when deciding to compact.")
    for e in st.events:
        t = e["type"]
        if t == "compaction":
            if e.get("simulated"):
                out.append(f"A compaction was simulated ({e.get('policy')}): {e.get('reason', '')}. "
                           f"{e.get('summarizedMessages', 0)} message(s) were summarised into "
                           f"{e.get('summaryTokens', 0):,} tokens by the {e.get('summarizer', '')} summarizer; "
                           f"the context is now {e.get('tokensAfter', 0):,} tokens.")
                rec = next((x for x in replay.summaries if x.get("step") == k and x.get("simulated")), None)
                if rec and rec.get("story"):
                    out.append("Where the cut landed: " + " ".join(rec["story"]))
            else:
                out.append(f"The session's own compaction (entry {e.get('entryIndex')}) takes effect: everything "
                           f"before entry {e.get('firstKeptEntryIndex')} is replaced by its summary "
                           f"({e.get('summaryTokens', 0):,} tokens; pi measured {e.get('tokensBefore', 0):,.0f} before).")
        elif t == "overflow":
            out.append(f"Overflow: {e.get('tokens', 0):,} tokens is more than the {e.get('window', 0):,}-token window"
                       + (" — the request would fail, so the policy compacts and retries." if e.get("before")
                          else " — this request would be rejected by the provider."))
        elif t == "pruned":
            out.append(f"Pruning ({s.strategy}) replaced or dropped {e.get('items')} more message(s); the model gets "
                       f"{st.pruned_tokens:,} fewer tokens than the full context.")
        elif t == "prune_pass":
            out.append(f"{s.strategy} ran a prune pass after the previous prompt's final answer and marked "
                       f"{e.get('items')} output(s) (≈{e.get('estimate', 0):,} tokens by its own estimate).")
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
            out.append(f"The session's compaction at entry {e.get('entryIndex')} is set aside in this what-if replay.")
        elif t == "compaction_skipped":
            out.append(f"The policy wanted to compact ({e.get('trigger', '')}), but there was nothing to summarise.")
    if st.pruned_tokens and not any(e["type"] == "pruned" for e in st.events):
        out.append(f"Pruning keeps {st.pruned_tokens:,} tokens out of this call, as decided earlier.")
    if s.compaction == "pi" and st.tokens:
        limit = s.context_window - s.reserve_tokens
        out.append(f"pi compacts after an answer once the context exceeds window − reserve = {limit:,} tokens; "
                   f"this call is at {st.tokens / limit:.0%} of that.")
    return out
