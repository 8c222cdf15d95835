"""Sessions whose recorded prompts are made from the rebuilt context itself
(``R = constant + ratio × sent + overhead × messages``, less a drop the file does not explain),
so every figure the reconstruction check gives on them is exact."""

from __future__ import annotations

from typing import Any

from inspector.replay import ReplaySettings, replay
from inspector.sent import SentCounter
from inspector.tokens import TiktokenCounter

from .builder import SessionBuilder

TIK = TiktokenCounter()
SYSTEM = 30_000


def coding_session(calls: int, usage: list[int] | None = None) -> SessionBuilder:
    b = SessionBuilder()
    b.user("please fix the failing parser test")
    for k in range(calls):
        u = usage[k] if usage else None
        b.assistant(f"step {k}: reading the next file", tools=[("read", {"path": f"src/m{k}.py"})], usage=u)
        b.tool_result(" ".join(f"def f{k}_{j}(x): return x + {j}" for j in range(40 + 7 * k)))
    return b


def sent_counts(session: Any) -> list[tuple[int, int]]:
    """(tiktoken tokens as sent, messages) of each call's context."""
    r = replay(session, ReplaySettings(strategy="recorded", counter="tiktoken"))
    sent = SentCounter(session, TIK)
    out = []
    for k, st in enumerate(r.steps):
        c = sent.count(r.step_detail(k).after, session.entries[st.entry_index].message)
        out.append((c.tokens, c.items))
    return out


def recorded_builder(
    calls: int, ratio: float = 1.0, overhead: int = 0, drop_at: int | None = None, drop: int = 0
) -> SessionBuilder:
    sent = sent_counts(coding_session(calls).session())
    usage = [
        round(SYSTEM + ratio * s + overhead * n - (drop if drop_at is not None and k >= drop_at else 0))
        for k, (s, n) in enumerate(sent)
    ]
    return coding_session(calls, usage)
