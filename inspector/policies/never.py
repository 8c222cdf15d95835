"""``never``: no compaction; the context grows until it overflows (the replay counts overflows)."""

from __future__ import annotations

from .base import CompactionPolicy, PolicyInfo


class NeverPolicy(CompactionPolicy):
    info = PolicyInfo("never", "Never", "—", "No compaction; overflows are counted.")
    simulated = False
