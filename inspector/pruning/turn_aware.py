"""Turn-aware pruning with a lean resume packet — the context-manager design.

Source: ``../shared/seeds/context-manager-design.md`` ("Context manager: stronger pruning and
earlier compaction"). No public implementation exists (the research note searched); the
design fixes the shape, and the numbers below are ours — **beyond any released system**.

Rules reproduced from the design:

* A turn is a ``user`` message plus the assistant and tool-result messages up to the next one.
  A suffix of whole recent turns is kept; older turns are dropped whole (never a tool result
  without its turn). Inside kept but older turns, bulky tool results are distilled; the newest
  turn is lossless.
* Raw ``compactionSummary`` and ``branchSummary`` messages are filtered out of the payload and
  replaced by **one** lean packet rendered from a ledger (goal, constraints, decisions, tasks,
  blockers) extracted from those summaries. The ledger merge is deterministic: entries are
  ordered by (timestamp, text), so an exact-timestamp tie resolves the same way whatever
  order the candidates were processed in.
* Early compaction: when the zone reaches red and no request is in flight for this pressure
  episode, request compaction once (an event); the latch clears after a compaction happens or
  when pressure falls below red.

Our numbers (pressure = context tokens ÷ window), chosen so the zones act well before pi's own
trigger (window − 16,384 ≈ 92 % of a 200k window):

* green < 50 %: keep ``recent_turns`` (6) turns, distill tool results over 4,000 tokens;
* yellow 50–70 %: keep half as many turns (3), distill over 1,000 tokens;
* red 70–85 % and compact ≥ 85 %: keep only the newest turn; red requests compaction.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..context import ContextMessage
from ..session.models import CustomMessage, TextContent
from .base import CallInfo, Plan, PruneResult, Strategy, result_text, with_text

ZONES = ("green", "yellow", "red", "compact")
PACKET_TYPE = "context-manager-packet"


class TurnAwareSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    recent_turns: int = Field(6, ge=1, le=100, description="Turns kept in the green zone (halved in yellow, 1 in red).")
    yellow: float = Field(0.50, gt=0, le=1.5, description="Pressure (context ÷ window) where yellow starts.")
    red: float = Field(0.70, gt=0, le=1.5, description="Pressure where red starts (keep newest turn, request compaction).")
    compact: float = Field(0.85, gt=0, le=1.5, description="Pressure where the compact zone starts.")
    distill_green: int = Field(4000, ge=0, description="Green: distill older tool results above this many tokens.")
    distill_yellow: int = Field(1000, ge=0, description="Yellow: distill older tool results above this many tokens.")
    distill_head_chars: int = Field(400, ge=0, le=20000, description="Characters of a distilled output kept.")
    packet_items: int = Field(6, ge=1, le=50, description="Most recent ledger items per slot in the packet.")


@dataclass(frozen=True)
class TurnAwareState:
    latched: bool = False
    last_compaction: int | None = None


def zone_of(pressure: float, s: TurnAwareSettings) -> str:
    if pressure >= s.compact:
        return "compact"
    if pressure >= s.red:
        return "red"
    if pressure >= s.yellow:
        return "yellow"
    return "green"


# -- the ledger -------------------------------------------------------------------------------

_SLOTS = {
    "goal": "goal",
    "constraints & preferences": "constraints",
    "constraints": "constraints",
    "key decisions": "decisions",
    "decisions": "decisions",
    "in progress": "tasks",
    "next steps": "tasks",
    "blocked": "blockers",
}
_HEADING = re.compile(r"^#{2,3}\s+(.*?)\s*$")
_BULLET = re.compile(r"^\s*(?:[-*]\s+(?:\[[ x]\]\s+)?|\d+\.\s+)")


def ledger_items(summary: str, timestamp: float) -> list[tuple[str, float, str]]:
    """(slot, timestamp, text) items from a pi-style structured summary."""
    out: list[tuple[str, float, str]] = []
    slot: str | None = None
    for line in summary.splitlines():
        h = _HEADING.match(line)
        if h:
            slot = _SLOTS.get(h.group(1).strip().lower())
            continue
        if slot is None or not line.strip() or line.lstrip().startswith("<"):
            continue
        text = _BULLET.sub("", line).strip()
        if text and text.lower() not in ("(none)", "none", "-"):
            out.append((slot, timestamp, text))
    return out


def merge_ledger(items: Sequence[tuple[str, float, str]], per_slot: int) -> dict[str, list[str]]:
    """Deterministic merge: newest distinct texts per slot; ties on the exact timestamp are
    broken by the text itself, so the processing order never matters."""
    best: dict[tuple[str, str], float] = {}
    for slot, ts, text in items:
        key = (slot, " ".join(text.split()).lower())
        if key not in best or ts > best[key]:
            best[key] = ts
    by_slot: dict[str, list[tuple[float, str]]] = {}
    for (slot, norm), ts in best.items():
        original = min(t for s2, t2, t in items if s2 == slot and " ".join(t.split()).lower() == norm and t2 == ts)
        by_slot.setdefault(slot, []).append((ts, original))
    return {slot: [t for _, t in sorted(v)[-per_slot:]] for slot, v in by_slot.items()}


def render_packet(ledger: dict[str, list[str]]) -> str:
    parts = ["[resume packet — context manager ledger]"]
    for slot, title in (("goal", "Goal"), ("constraints", "Constraints"), ("decisions", "Decisions"),
                        ("tasks", "Tasks"), ("blockers", "Blockers")):
        if ledger.get(slot):
            parts.append(f"{title}:\n" + "\n".join(f"- {t}" for t in ledger[slot]))
    return "\n".join(parts)


class TurnAware(Strategy):
    name = "turn-aware"
    title = "Turn-aware + lean packet (context-manager design)"
    source = "seeds/context-manager-design.md (no public implementation; thresholds ours)"
    description = ("Keep a suffix of whole recent turns that shrinks as pressure grows, distill bulky older "
                   "outputs, replace raw summaries by one ledger packet, request compaction early at red.")
    verified = False
    unverified_notes = "A design document, not a released system: zone thresholds and turn counts are our choice."
    Settings = TurnAwareSettings

    def apply(self, messages: Sequence[ContextMessage], settings: Any, state: Any, call: CallInfo,
              counter: Any) -> PruneResult:
        s: TurnAwareSettings = settings
        st = state if isinstance(state, TurnAwareState) else TurnAwareState()
        plan = Plan(messages, counter)
        events: list[dict[str, Any]] = []
        tokens = call.context_tokens if call.context_tokens is not None else sum(
            counter.count(cm.message) for cm in messages)
        pressure = tokens / call.context_window if call.context_window else 0.0
        zone = zone_of(pressure, s)
        events.append({"type": "zone", "strategy": self.name, "zone": zone, "pressure": round(pressure, 4)})

        # 1. raw summaries out, into the ledger
        items: list[tuple[str, float, str]] = []
        newest_comp = st.last_compaction
        for i, cm in enumerate(messages):
            if cm.role in ("compactionSummary", "branchSummary"):
                m = cm.message
                items.extend(ledger_items(m.summary, float(m.timestamp or 0)))  # type: ignore[union-attr]
                plan.drop(i, "raw summary filtered out; its content goes into the lean packet")
                if cm.role == "compactionSummary":
                    newest_comp = cm.entry_index
        # 2. turns
        starts = [i for i, cm in enumerate(messages) if cm.role == "user"]
        keep_n = s.recent_turns if zone == "green" else max(1, s.recent_turns // 2) if zone == "yellow" else 1
        kept_starts = starts[-keep_n:] if starts else []
        first_kept = kept_starts[0] if kept_starts else 0
        newest = starts[-1] if starts else 0
        distill = s.distill_green if zone == "green" else s.distill_yellow
        for i, cm in enumerate(messages):
            if i in plan.dropped:
                continue
            if i < first_kept:
                plan.drop(i, f"older than the {keep_n} most recent turn(s) kept in the {zone} zone")
                if cm.role == "user":
                    c = cm.message.content  # type: ignore[union-attr]
                    text = c if isinstance(c, str) else "".join(b.text for b in c if isinstance(b, TextContent))
                    if text.strip():
                        items.append(("goal", float(cm.message.timestamp or 0), text.strip().splitlines()[0][:200]))  # type: ignore[union-attr]
                continue
            if i >= newest:
                plan.keep(i, "newest turn: kept lossless")
                continue
            if cm.role == "toolResult":
                t = counter.count(cm.message)
                if t > distill:
                    text = result_text(cm.message)  # type: ignore[arg-type]
                    lines = text.count("\n") + 1
                    head = text[: s.distill_head_chars]
                    marker = (f"[distilled {cm.message.toolName} output: ~{t:,} tokens, {lines:,} lines; "  # type: ignore[union-attr]
                              f"first {len(head):,} characters follow]\n{head}")
                    plan.prune(i, with_text(cm, marker), marker.split("\n")[0],
                               f"bulky output ({t:,} > {distill:,} tokens) in an older kept turn ({zone} zone)")
                    continue
            plan.keep(i, f"in a recent turn kept in the {zone} zone")
        # 3. the packet
        if items:
            ledger = merge_ledger(items, s.packet_items)
            packet = CustomMessage(customType=PACKET_TYPE, content=render_packet(ledger), display=False)
            plan.insert(0, ContextMessage(packet, None))
        # 4. early compaction with a latch
        latched = st.latched
        if newest_comp != st.last_compaction:
            latched = False  # a compaction happened: clear the latch
        if zone in ("green", "yellow"):
            latched = False  # pressure fell: re-arm
        elif not latched:
            latched = True
            events.append({"type": "early_compaction_requested", "strategy": self.name, "zone": zone,
                           "pressure": round(pressure, 4)})
        return plan.finish(state=TurnAwareState(latched, newest_comp), events=events)
