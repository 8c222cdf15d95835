"""Turn-aware pruning with a lean resume packet — the context-manager design.

Source: ``../shared/seeds/context-manager-design.md`` ("Context manager: stronger pruning and
earlier compaction"). No public implementation exists (the research note searched for one);
the design fixes the shape, and every number below is ours — **beyond any released system**.

Rules from the design:

* A turn is a ``user`` message plus the messages up to the next one. A suffix of whole recent
  turns is kept; older turns are dropped whole (never a tool result without its turn). Messages
  before the first ``user`` message (the tail of a turn whose prompt a compaction summarised)
  form a turn of their own. Inside kept but older turns, bulky tool results are distilled; the
  newest turn is lossless.
* Raw ``compactionSummary`` and ``branchSummary`` messages are filtered out of the payload and
  replaced by **one** hidden lean packet (a ``custom`` message, ``entry_index`` None, first in
  the context) rendered from a ledger of goal, constraints, decisions, tasks and blockers.
* The ledger merge is deterministic: the same text (whitespace and case folded) in one slot is
  one item dated by its newest timestamp; a slot lists its newest items ordered by
  (timestamp, text), so an exact-timestamp tie resolves the same whatever order the candidates
  were processed in.
* Early compaction: when the context's tokens are known, the zone is red or worse and no
  request is in flight for this pressure episode, request compaction once (an event); the latch
  clears after a compaction happens or when pressure falls below red. The design checks at
  ``turn_end``; a replay checks at each model call, with that call's context size.

Our choices:

* Zones by pressure = context tokens ÷ context window: green < 50 % ≤ yellow < 70 % ≤ red < 85 %
  ≤ compact. pi compacts at window − 16,384 (92 % of a 200k window, 87 % of 128k); the design
  wants the extension to act well before that, so red — where compaction is requested — starts
  at 70 %, leaving room for a summary call, and "compact" (85 %) marks the last band before pi's
  own trigger. 70 / 85 % are also the bands of the public (unrelated) psmfd/pi-context-manager.
  Zones are checked from the top (compact, red, yellow), so out-of-order settings cannot crash.
* Turns kept: green ``recent_turns`` (6), yellow half of it (3), red and compact the newest only.
* Distillation in older kept turns: tool results over 4,000 tokens (green) or 1,000 (yellow),
  by pi's estimate, become their first 400 characters under a one-line header
  ``[distilled TOOL output: ~N tokens, L lines; first K characters follow]``.
* Ledger items: lines under pi's summary headings (Goal, Constraints & Preferences, Key
  Decisions, In Progress / Next Steps → tasks, Blocked); and, in a sixth slot of ours ("Earlier
  requests"), the first line (≤ 200 characters) of each dropped user prompt, since a replay has
  no extractor for live turns. ``packet_items`` (6) newest per slot.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..context import ContextMessage
from ..session.models import CustomMessage, TextContent
from ..tokens import estimate_tokens
from .base import CallInfo, Plan, PruneResult, Strategy, result_text, with_text

ZONES = ("green", "yellow", "red", "compact")
PACKET_TYPE = "context-manager-packet"
PACKET_HEADER = "[resume packet — context manager ledger]"


class TurnAwareSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    recent_turns: int = Field(6, ge=1, le=100, description="Turns kept in the green zone (halved in yellow, 1 in red).")
    yellow: float = Field(0.50, gt=0, le=1.5, description="Pressure (context ÷ window) where yellow starts.")
    red: float = Field(0.70, gt=0, le=1.5, description="Pressure where red starts (keep newest turn, request compaction).")
    compact: float = Field(0.85, gt=0, le=1.5, description="Pressure where the compact zone starts.")
    distill_green: int = Field(4000, ge=0, le=1_000_000, description="Green: distill older tool results above this many tokens.")
    distill_yellow: int = Field(1000, ge=0, le=1_000_000, description="Yellow: distill older tool results above this many tokens.")
    distill_head_chars: int = Field(400, ge=0, le=20000, description="Characters of a distilled output kept.")
    packet_items: int = Field(6, ge=1, le=50, description="Newest ledger items per slot in the packet.")


@dataclass(frozen=True)
class TurnAwareState:
    latched: bool = False
    """A compaction request is in flight for the current pressure episode."""
    last_compaction: Any = None
    """Identity of the newest compaction summary seen (a new one clears the latch)."""


def zone_of(pressure: float, s: TurnAwareSettings) -> str:
    if pressure >= s.compact:
        return "compact"
    if pressure >= s.red:
        return "red"
    if pressure >= s.yellow:
        return "yellow"
    return "green"


def turns_kept(zone: str, s: TurnAwareSettings) -> int:
    return s.recent_turns if zone == "green" else max(1, s.recent_turns // 2) if zone == "yellow" else 1


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
    "blockers": "blockers",
}
_TITLES = (("goal", "Goal"), ("constraints", "Constraints"), ("decisions", "Decisions"), ("tasks", "Tasks"),
           ("blockers", "Blockers"), ("requests", "Earlier requests (dropped turns)"))
_HEADING = re.compile(r"^#{2,3}\s+(.*?)\s*$")
_BULLET = re.compile(r"^\s*(?:[-*]\s+(?:\[[ xX]\]\s+)?|\d+\.\s+)")

LedgerItem = tuple[str, float, str]  # (slot, timestamp, text)


def ledger_items(summary: str, timestamp: float) -> list[LedgerItem]:
    """(slot, timestamp, text) items from a pi-style structured summary."""
    out: list[LedgerItem] = []
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


def merge_ledger(items: Sequence[LedgerItem], per_slot: int) -> dict[str, list[str]]:
    """Deterministic merge, independent of the order of ``items``: one entry per (slot, folded
    text) carrying its newest timestamp (equal timestamps: the smallest original text); each
    slot keeps its ``per_slot`` newest entries, ordered by (timestamp, text)."""
    best: dict[tuple[str, str], tuple[float, str]] = {}
    for slot, ts, text in items:
        key = (slot, " ".join(text.split()).lower())
        cur = best.get(key)
        if cur is None or ts > cur[0] or (ts == cur[0] and text < cur[1]):
            best[key] = (ts, text)
    by_slot: dict[str, list[tuple[float, str]]] = {}
    for (slot, _), entry in best.items():
        by_slot.setdefault(slot, []).append(entry)
    return {slot: [t for _, t in sorted(v)[-per_slot:]] for slot, v in by_slot.items()}


def render_packet(ledger: dict[str, list[str]]) -> str:
    parts = [PACKET_HEADER]
    for slot, title in _TITLES:
        if ledger.get(slot):
            parts.append(f"{title}:\n" + "\n".join(f"- {t}" for t in ledger[slot]))
    return "\n".join(parts)


def _timestamp(m: Any) -> float:
    ts = getattr(m, "timestamp", None)
    return float(ts) if isinstance(ts, (int, float)) else 0.0


def _user_text(m: Any) -> str:
    c = m.content
    return c if isinstance(c, str) else "".join(b.text for b in c if isinstance(b, TextContent))


# -- the strategy -----------------------------------------------------------------------------


class TurnAware(Strategy):
    name = "turn-aware"
    title = "Turn-aware + lean packet (context-manager design)"
    source = "seeds/context-manager-design.md (no public implementation; thresholds ours)"
    description = ("Keep a suffix of whole recent turns that shrinks as pressure grows, distill bulky older "
                   "outputs, replace raw summaries by one ledger packet, request compaction early at red.")
    verified = False
    unverified_notes = ("A design document, not a released system: zone thresholds, turn counts, distillation "
                        "and the packet's format are our choice.")
    Settings = TurnAwareSettings

    def apply(self, messages: Sequence[ContextMessage], settings: Any, state: Any, call: CallInfo,
              counter: Any) -> PruneResult:
        s: TurnAwareSettings = settings
        st = state if isinstance(state, TurnAwareState) else TurnAwareState()
        plan = Plan(messages, counter)
        known = call.context_tokens is not None
        tokens = call.context_tokens if known else sum(plan.tokens(i) for i in range(len(messages)))
        pressure = tokens / call.context_window if call.context_window else 0.0
        zone = zone_of(pressure, s)
        events: list[dict[str, Any]] = [{"type": "zone", "strategy": self.name, "zone": zone,
                                         "pressure": round(pressure, 4)}]
        items: list[LedgerItem] = []
        compaction_id = st.last_compaction

        # 1. raw summaries out, into the ledger
        live: list[int] = []
        for i, cm in enumerate(messages):
            if cm.role in ("compactionSummary", "branchSummary"):
                m = cm.message
                items.extend(ledger_items(m.summary, _timestamp(m)))  # type: ignore[union-attr]
                plan.drop(i, "raw summary filtered out; its content goes into the lean packet")
                if cm.role == "compactionSummary":
                    compaction_id = (cm.entry_index, _timestamp(m), len(m.summary))  # type: ignore[union-attr]
            else:
                live.append(i)

        # 2. whole turns: keep a suffix, drop the rest, distill inside older kept turns
        starts = [k for k, i in enumerate(live) if messages[i].role == "user"]
        if live and (not starts or starts[0] != 0):
            starts.insert(0, 0)  # a leading partial turn (its prompt was summarised)
        keep_n = turns_kept(zone, s)
        first_kept = live[starts[max(0, len(starts) - keep_n)]] if starts else 0
        newest = live[starts[-1]] if starts else 0
        distill = s.distill_green if zone == "green" else s.distill_yellow
        for i in live:
            cm = messages[i]
            if i < first_kept:
                plan.drop(i, f"in a turn older than the {keep_n} most recent kept in the {zone} zone")
                if cm.role == "user":
                    text = _user_text(cm.message).strip()
                    if text:
                        items.append(("requests", _timestamp(cm.message), text.splitlines()[0][:200]))
                continue
            if i >= newest:
                plan.protected += plan.tokens(i)
                plan.keep(i, "newest turn: kept lossless")
                continue
            if cm.role == "toolResult":
                plan.scanned += plan.tokens(i)
                est = estimate_tokens(cm.message)
                if est > distill:
                    text = result_text(cm.message)  # type: ignore[arg-type]
                    head = text[: s.distill_head_chars]
                    header = (f"[distilled {cm.message.toolName} output: ~{est:,} tokens, "  # type: ignore[union-attr]
                              f"{text.count(chr(10)) + 1:,} lines; first {len(head):,} characters follow]")
                    distilled = f"{header}\n{head}"
                    plan.prune(i, with_text(cm, distilled), distilled,
                               f"bulky output (over {distill:,} tokens) in an older kept turn ({zone} zone)")
                    continue
            plan.keep(i, f"in one of the {keep_n} most recent turns kept in the {zone} zone")

        # 3. one lean packet in place of the raw summaries and the dropped turns
        if items:
            packet = CustomMessage(customType=PACKET_TYPE, content=render_packet(merge_ledger(items, s.packet_items)),
                                   display=False)
            plan.insert(0, ContextMessage(packet, None))

        # 4. early compaction, once per pressure episode
        latched = st.latched
        if compaction_id != st.last_compaction:
            latched = False  # a compaction happened
        if zone in ("green", "yellow"):
            latched = False  # pressure fell below the trigger zone: re-armed
        elif known and not latched:
            latched = True
            events.append({"type": "early_compaction_requested", "strategy": self.name, "zone": zone,
                           "pressure": round(pressure, 4), "tokens": tokens})
        return plan.finish(state=TurnAwareState(latched, compaction_id), events=events)
