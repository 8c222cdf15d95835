"""``recorded``: the session's own compactions and branch summaries stand; only pruning is replayed.

What it keeps is what the file records: at each compaction entry the context becomes pi's
``buildSessionContext`` after it (the summary, then the entries from its first kept one). Other
policies set the recorded compactions aside and simulate their own.
"""

from __future__ import annotations

from .base import CompactionPolicy, PolicyInfo


class RecordedPolicy(CompactionPolicy):
    info = PolicyInfo(
        "recorded",
        "As recorded",
        "the session file",
        "The session's own compactions and branch summaries stand; only pruning is replayed on top.",
    )
    simulated = False
    as_recorded = True
