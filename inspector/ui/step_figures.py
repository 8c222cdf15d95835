"""The Replay page's bars for one step as a plain function (no streamlit), for the notebook
inspector: at a compaction, the moment of compaction; otherwise the context as built and as sent,
with where the next compaction will cut. The same figure functions and helpers the page uses."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from ..compaction_view import compaction_view, compactions_at
from ..whatif import keep_recent_line
from . import figures, views


def _next_cuts(replay: Any, k: int, detail: Any, before_tokens: list[int]) -> list[tuple[str, float]]:
    out: list[tuple[str, float]] = []
    for i in compactions_at(replay, k + 1):
        for c in compaction_view(replay, i).cuts:
            off = views.offset_of_entry(detail.before, before_tokens, c.entry_index)
            if off is not None:
                out.append((f"next compaction: {c.label} (entry {c.entry_index})", off))
    return out


def step_bars(replay: Any, k: int, counter: Any, detail: Any = None, zoom: bool = True) -> go.Figure:
    """The context bars of model call ``k`` of ``replay`` (``counter``: the replay's token counter)."""
    d = detail if detail is not None else replay.step_detail(k)
    settings = replay.settings
    sent_tokens = counter.count_many([c.message for c in d.after])
    comps = compactions_at(replay, k)
    if comps:
        v = compaction_view(replay, comps[0])
        return figures.compaction_bars(
            v,
            d.after,
            sent_tokens,
            pruned_positions=views.pruned_positions(d),
            window=replay.steps[k].window,
            reserve=settings.reserve_tokens,
            title=f"Compaction before model call {k} (entry {replay.steps[k].entry_index})",
            zoom=zoom,
            put_back=views.put_back_parts(replay, v.entry_index, counter.count),
            provider_tokens=replay.steps[k].provider_tokens,
        )
    before_tokens = counter.count_many([c.message for c in d.before])
    pruned = {row["#"] for row in views.pruned_rows(d, counter)}
    return figures.context_bars(
        d.before,
        before_tokens,
        d.after,
        sent_tokens,
        pruned_positions=views.pruned_positions(d),
        pruned_before=pruned,
        window=replay.steps[k].window,
        reserve=settings.reserve_tokens,
        keep_recent=keep_recent_line(settings),
        cuts=_next_cuts(replay, k, d, before_tokens),
        title=f"Context at model call {k} (entry {replay.steps[k].entry_index})",
        zoom=zoom,
        provider_tokens=replay.steps[k].provider_tokens,
    )
