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
from bisect import bisect_left, insort
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..context import ContextMessage
from ..numbers import finite_ms
from ..session.models import CustomMessage, TextContent
from ..tokens import estimate_tokens
from .base import CallInfo, Plan, PruneResult, Strategy, pi_estimate, result_text, with_text
from .runner import IncrementalRunner

ZONES = ("green", "yellow", "red", "compact")
PACKET_TYPE = "context-manager-packet"
PACKET_HEADER = "[resume packet — context manager ledger]"


class TurnAwareSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    recent_turns: int = Field(
        6, ge=1, le=100, description="Turns kept in the green zone (halved in yellow, 1 in red)."
    )
    yellow: float = Field(0.50, gt=0, le=1.5, description="Pressure (context ÷ window) where yellow starts.")
    red: float = Field(
        0.70, gt=0, le=1.5, description="Pressure where red starts (keep newest turn, request compaction)."
    )
    compact: float = Field(0.85, gt=0, le=1.5, description="Pressure where the compact zone starts.")
    distill_green: int = Field(
        4000, ge=0, le=1_000_000, description="Green: distill older tool results above this many tokens."
    )
    distill_yellow: int = Field(
        1000, ge=0, le=1_000_000, description="Yellow: distill older tool results above this many tokens."
    )
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
_TITLES = (
    ("goal", "Goal"),
    ("constraints", "Constraints"),
    ("decisions", "Decisions"),
    ("tasks", "Tasks"),
    ("blockers", "Blockers"),
    ("requests", "Earlier requests (dropped turns)"),
)
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
    """A message's time (ms) for ordering; 0.0 when it has none or it is not a finite number."""
    ts = finite_ms(getattr(m, "timestamp", None))
    return ts if ts is not None else 0.0


def _user_text(m: Any) -> str:
    c = m.content
    return c if isinstance(c, str) else "".join(b.text for b in c if isinstance(b, TextContent))


def request_item(cm: ContextMessage) -> LedgerItem | None:
    """The ledger item of a dropped user prompt: its first line, at most 200 characters."""
    text = _user_text(cm.message).strip()
    return ("requests", _timestamp(cm.message), text.splitlines()[0][:200]) if text else None


def distilled_text(cm: ContextMessage, est: int, s: TurnAwareSettings) -> str:
    text = result_text(cm.message)  # type: ignore[arg-type]
    head = text[: s.distill_head_chars]
    header = (
        f"[distilled {cm.message.toolName} output: ~{est:,} tokens, "  # type: ignore[union-attr]
        f"{text.count(chr(10)) + 1:,} lines; first {len(head):,} characters follow]"
    )
    return f"{header}\n{head}"


_PACKETS: dict[str, CustomMessage] = {}


def packet_message(text: str) -> CustomMessage:
    """The hidden packet message (the same object for the same text, so its count is cached)."""
    m = _PACKETS.get(text)
    if m is None:
        if len(_PACKETS) > 256:
            _PACKETS.clear()
        m = _PACKETS[text] = CustomMessage(customType=PACKET_TYPE, content=text, display=False)
    return m


def latch(
    st: TurnAwareState,
    compaction_id: Any,
    zone: str,
    pressure: float,
    tokens: int,
    known: bool,
    events: list[dict[str, Any]],
) -> TurnAwareState:
    """The early-compaction latch after this call (appends the request event when it fires)."""
    latched = st.latched
    if compaction_id != st.last_compaction:
        latched = False  # a compaction happened
    if zone in ("green", "yellow"):
        latched = False  # pressure fell below the trigger zone: re-armed
    elif known and not latched:
        latched = True
        events.append(
            {
                "type": "early_compaction_requested",
                "strategy": TurnAware.name,
                "zone": zone,
                "pressure": round(pressure, 4),
                "tokens": tokens,
            }
        )
    return TurnAwareState(latched, compaction_id)


# -- the strategy -----------------------------------------------------------------------------


class TurnAware(Strategy):
    name = "turn-aware"
    title = "Turn-aware + lean packet (context-manager design)"
    source = "seeds/context-manager-design.md (no public implementation; thresholds ours)"
    description = (
        "Keep a suffix of whole recent turns that shrinks as pressure grows, distill bulky older "
        "outputs, replace raw summaries by one ledger packet, request compaction early at red."
    )
    verified = False
    unverified_notes = (
        "A design document, not a released system: zone thresholds, turn counts, distillation "
        "and the packet's format are our choice."
    )
    Settings = TurnAwareSettings

    def runner(self, settings: Any, counter: Any) -> TurnAwareRunner:
        return TurnAwareRunner(self, settings, counter)

    def apply(
        self, messages: Sequence[ContextMessage], settings: Any, state: Any, call: CallInfo, counter: Any
    ) -> PruneResult:
        s: TurnAwareSettings = settings
        st = state if isinstance(state, TurnAwareState) else TurnAwareState()
        plan = Plan(messages, counter)
        known = call.context_tokens is not None
        tokens = (
            call.context_tokens
            if call.context_tokens is not None
            else sum(plan.tokens(i) for i in range(len(messages)))
        )
        pressure = tokens / call.context_window if call.context_window else 0.0
        zone = zone_of(pressure, s)
        events: list[dict[str, Any]] = [
            {"type": "zone", "strategy": self.name, "zone": zone, "pressure": round(pressure, 4)}
        ]
        # 1. raw summaries out, into the ledger
        items: list[LedgerItem] = []
        live, compaction_id = _summaries_out(messages, plan, items, st.last_compaction)

        # 2. whole turns: keep a suffix, drop the rest, distill inside older kept turns
        _keep_turns(messages, live, zone, s, plan, items)

        # 3. one lean packet in place of the raw summaries and the dropped turns
        if items:
            plan.insert(
                0, ContextMessage(packet_message(render_packet(merge_ledger(items, s.packet_items))), None)
            )

        # 4. early compaction, once per pressure episode
        return plan.finish(
            state=latch(st, compaction_id, zone, pressure, tokens, known, events), events=events
        )


def _summaries_out(
    messages: Sequence[ContextMessage], plan: Plan, items: list[LedgerItem], compaction_id: Any
) -> tuple[list[int], Any]:
    """Raw compaction and branch summaries dropped, their ledger items added to ``items``; the
    other positions, and the identity of the newest compaction summary (else ``compaction_id``)."""
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
    return live, compaction_id


def _keep_turns(
    messages: Sequence[ContextMessage],
    live: list[int],
    zone: str,
    s: TurnAwareSettings,
    plan: Plan,
    items: list[LedgerItem],
) -> None:
    """A suffix of whole turns kept (the zone says how many), older turns dropped (their prompts
    into ``items``), bulky outputs distilled inside older kept turns, the newest turn lossless."""
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
                item = request_item(cm)
                if item is not None:
                    items.append(item)
            continue
        if i >= newest:
            plan.protected += plan.tokens(i)
            plan.keep(i, "newest turn: kept lossless")
            continue
        if cm.role == "toolResult":
            plan.scanned += plan.tokens(i)
            est = estimate_tokens(cm.message)
            if est > distill:
                distilled = distilled_text(cm, est, s)
                plan.prune(
                    i,
                    with_text(cm, distilled),
                    distilled,
                    f"bulky output (over {distill:,} tokens) in an older kept turn ({zone} zone)",
                )
                continue
        plan.keep(i, f"in one of the {keep_n} most recent turns kept in the {zone} zone")


class _PrefixLedger:
    """The "requests" slot of :func:`merge_ledger` over the first ``k`` dropped prompts, for any
    ``k``, moved one prompt at a time: each key's best entry is kept with its history (so the
    prefix can shrink as well as grow), and the best entries in (timestamp, text) order."""

    def __init__(self) -> None:
        self.items: list[tuple[float, str, str] | None] = []  # (timestamp, text, key) per prompt
        self.k = 0
        self.n = 0  # items (not None) in the prefix
        self.best: dict[str, tuple[float, str]] = {}
        self.history: dict[str, list[tuple[float, str]]] = {}
        self.order: list[tuple[float, str]] = []

    def add(self, item: LedgerItem | None) -> None:
        self.items.append(None if item is None else (item[1], item[2], " ".join(item[2].split()).lower()))

    def top(self, k: int, n: int) -> list[str]:
        while self.k < k:
            self._push(self.items[self.k])
            self.k += 1
        while self.k > k:
            self.k -= 1
            self._pop(self.items[self.k])
        return [t for _, t in self.order[-n:]] if n else []

    def _push(self, it: tuple[float, str, str] | None) -> None:
        if it is None:
            return
        self.n += 1
        ts, text, key = it
        cur = self.best.get(key)
        new = (ts, text) if cur is None or ts > cur[0] or (ts == cur[0] and text < cur[1]) else cur
        self.history.setdefault(key, []).append(new)
        if new is not cur:
            if cur is not None:
                del self.order[bisect_left(self.order, cur)]
            insort(self.order, new)
            self.best[key] = new

    def _pop(self, it: tuple[float, str, str] | None) -> None:
        if it is None:
            return
        self.n -= 1
        key = it[2]
        h = self.history[key]
        cur = h.pop()
        prev = h[-1] if h else None
        if prev is not cur:
            del self.order[bisect_left(self.order, cur)]
            if prev is None:
                del self.best[key]
                del self.history[key]
            else:
                insort(self.order, prev)
                self.best[key] = prev


_NO_SUMMARY = object()


class TurnAwareRunner(IncrementalRunner):
    """:meth:`TurnAware.apply`, call after call. A call's fates follow from three positions —
    the first kept turn, the newest turn, and the distillation threshold of its zone — so only
    the positions between the old and the new values change: the messages crossing the first
    kept turn, and the bulky outputs between it and the newest turn. The packet's "requests" slot
    is kept for every prefix of dropped prompts (:class:`_PrefixLedger`); the summaries' slots
    change only when a summary arrives."""

    def _begin(self, msgs: Sequence[ContextMessage]) -> None:
        s: TurnAwareSettings = self.settings
        self.low = min(s.distill_green, s.distill_yellow)
        self.summary_items: list[LedgerItem] = []
        self.summary_ledger: dict[str, list[str]] = {}
        self.compaction: Any = _NO_SUMMARY
        self.first_live: int | None = None
        self.users: list[int] = []
        self.requests = _PrefixLedger()
        self.big: list[int] = []  # tool results over the lower distillation threshold
        self.est: dict[int, int] = {}
        self.distilled: dict[int, ContextMessage] = {}
        self.shape = (0, 0, 0)  # (first kept, newest turn, threshold) of the last call
        self.decided = 0  # positions decided at the last call
        self._packet_key: Any = None

    def _floor(self) -> int:
        return self.shape[0]

    def _append(self, msgs: Sequence[ContextMessage], i: int) -> None:
        cm = msgs[i]
        role = cm.role
        if role in ("compactionSummary", "branchSummary"):
            m = cm.message
            self.summary_items.extend(ledger_items(m.summary, _timestamp(m)))  # type: ignore[union-attr]
            self.summary_ledger = merge_ledger(self.summary_items, self.settings.packet_items)
            if role == "compactionSummary":
                self.compaction = (cm.entry_index, _timestamp(m), len(m.summary))  # type: ignore[union-attr]
            self._drop(msgs, i)
            return
        if self.first_live is None:
            self.first_live = i
        if role == "user":
            self.users.append(i)
            self.requests.add(request_item(cm))
        elif role == "toolResult":
            est = pi_estimate(cm.message)
            if est > self.low:
                self.big.append(i)
                self.est[i] = est

    def _decide(
        self, msgs: Sequence[ContextMessage], state: Any, call: Any
    ) -> tuple[list[dict[str, Any]], Any]:
        s: TurnAwareSettings = self.settings
        st = state if isinstance(state, TurnAwareState) else TurnAwareState()
        known = call.context_tokens is not None
        tokens = call.context_tokens if known else self.total
        pressure = tokens / call.context_window if call.context_window else 0.0
        zone = zone_of(pressure, s)
        events: list[dict[str, Any]] = [
            {"type": "zone", "strategy": TurnAware.name, "zone": zone, "pressure": round(pressure, 4)}
        ]
        first_kept, newest = self._turns(turns_kept(zone, s))
        self._reshape(msgs, (first_kept, newest, s.distill_green if zone == "green" else s.distill_yellow))
        self._packet(first_kept)
        compaction_id = st.last_compaction if self.compaction is _NO_SUMMARY else self.compaction
        return events, latch(st, compaction_id, zone, pressure, tokens, known, events)

    def _turns(self, keep_n: int) -> tuple[int, int]:
        """(first kept position, newest turn's position) when the ``keep_n`` newest turns stay."""
        users, first = self.users, self.first_live
        lead = 1 if first is not None and (not users or users[0] != first) else 0  # a turn without its prompt
        n = lead + len(users)
        if not n:
            return 0, 0
        j = max(0, n - keep_n)
        return (first if lead and j == 0 else users[j - lead]), users[-1] if users else first  # type: ignore[return-value]

    def _reshape(self, msgs: Sequence[ContextMessage], shape: tuple[int, int, int]) -> None:
        """Redo the fates the new shape can change: the messages crossing the first kept turn,
        the bulky outputs crossing the newest turn (or all between the two when the threshold
        changed), and the messages that arrived."""
        (fk0, nw0, d0), (fk1, nw1, d1) = self.shape, shape
        self.shape = shape
        todo: set[int] = set(range(self.decided, len(msgs)))
        self.decided = len(msgs)
        if fk0 != fk1:
            todo.update(range(min(fk0, fk1), max(fk0, fk1)))
        big = self.big
        if d0 != d1:
            todo.update(big[bisect_left(big, min(fk0, fk1)) : bisect_left(big, max(nw0, nw1))])
        elif nw0 != nw1:
            todo.update(big[bisect_left(big, min(nw0, nw1)) : bisect_left(big, max(nw0, nw1))])
        for p in todo:
            self._fate_of(msgs, p)

    def _fate_of(self, msgs: Sequence[ContextMessage], p: int) -> None:
        cm = msgs[p]
        if cm.role in ("compactionSummary", "branchSummary"):
            return  # always dropped
        first_kept, newest, distill = self.shape
        if p < first_kept:
            self._drop(msgs, p)
        elif p < newest and self.est.get(p, -1) > distill:
            new = self.distilled.get(p)
            if new is None:
                new = self.distilled[p] = with_text(cm, distilled_text(cm, self.est[p], self.settings))
            self._prune(msgs, p, new)
        else:
            self._keep(p)

    def _packet(self, first_kept: int) -> None:
        s: TurnAwareSettings = self.settings
        requests = self.requests.top(bisect_left(self.users, first_kept), s.packet_items)
        if not self.summary_items and not self.requests.n:
            self.front = ()
            return
        key = (len(self.summary_items), tuple(requests))  # summary items only grow within a context
        if key == self._packet_key and self.front:
            return  # the same ledger: the same packet
        self._packet_key = key
        ledger = {**self.summary_ledger, "requests": requests} if requests else self.summary_ledger
        self.front = (ContextMessage(packet_message(render_packet(ledger)), None),)
