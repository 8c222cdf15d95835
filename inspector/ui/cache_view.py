"""The prompt cache in the app: each call's prompt split into cache read, written and uncached
input (beside what the provider recorded), invalidation marks on the timeline, a sentence in
"What happened here", billed cost in the run metrics and on Compare & tune, and the check of the
model against the session's recorded cache usage. The pages call these in one line each; the
computing is :func:`inspector.cache.cache_replay`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from ..cache import CacheReport, cache_replay
from ..cache.causes import invalidated_by
from ..cache.summaries import RECORDED_SHAPE
from ..replay import ReplaySettings
from . import figures, views
from .state import current_replay, memo

COLOURS = {"read": "#2ca02c", "write": "#ff7f0e", "uncached": "#7f7f7f"}
LABELS = {"read": "cache read", "write": "cache written", "uncached": "uncached input"}
PLOT_CONFIG = {"displaylogo": False, "displayModeBar": False}


COST_COLUMNS = {
    "rank": st.column_config.NumberColumn(width=50),
    "configuration": st.column_config.TextColumn(width=340),
    "billed input cost ($)": st.column_config.NumberColumn(format="$%.4f"),
    "of which summarisation ($)": st.column_config.NumberColumn(format="$%.4f"),
    "blended input cost ($)": st.column_config.NumberColumn(format="$%.4f"),
    "cache hit rate": st.column_config.NumberColumn(format="percent"),
    "input tokens": st.column_config.NumberColumn(format="localized"),
    "billedCostUsd": st.column_config.NumberColumn("billed cost", format="$%.4f"),
    "cacheHitRate": st.column_config.NumberColumn("cache hit rate", format="percent"),
    "invalidationPremiumUsd": st.column_config.NumberColumn("invalidation premium", format="$%.4f"),
    "tokensRewritten": st.column_config.NumberColumn("tokens rewritten", format="localized"),
    "blended cost": st.column_config.NumberColumn(format="$%.4f"),
}
"""How the cost tables (:func:`compare_rows`, :func:`sweep_rows`) show their numbers: dollars,
shares as percentages, token counts with separators (the values themselves stay as computed)."""
COMPARE_ORDER = ("rank", "configuration")
"""The cost table's first columns: its rank, then which configuration."""


def report(r: Any) -> CacheReport:
    """The cache model of replay ``r``, computed once per session and settings."""
    return memo("cache_report", (r.settings,), lambda: cache_replay(r))


# -- pure helpers (tested without Streamlit) ---------------------------------------------------


def split_figure(c: CacheReport, k: int) -> go.Figure:
    """One call's prompt as stacked bars: predicted (and recorded, when the session has it)."""
    s = c.steps[k]
    rows: list[tuple[str, dict[str, int]]] = [
        ("predicted", {"read": s.read, "write": s.write, "uncached": s.uncached})
    ]
    if s.recorded_read is not None:
        rows.append(
            (
                "recorded",
                {"read": s.recorded_read, "write": s.recorded_write or 0, "uncached": s.recorded_input or 0},
            )
        )
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "name": LABELS[part],
            "y": [name for name, _ in rows],
            "x": [v[part] for _, v in rows],
            "marker": {"color": COLOURS[part]},
            "hovertemplate": f"%{{y}}: %{{x:,}} tokens {LABELS[part]}<extra></extra>",
        }
        for part in LABELS
    ]
    layout = {
        "barmode": "stack",
        "height": 90 + 34 * len(rows),
        "margin": {"l": 10, "r": 10, "t": 26, "b": 10},
        "title": {"text": f"Prompt cache at call {k}", "font": {"size": 13}},
        "xaxis": {"tickformat": ",~s"},
        "yaxis": {"autorange": "reversed"},
        "legend": {"orientation": "h", "y": -0.35},
    }
    return go.Figure({"data": data, "layout": layout})


def invalidation_trace(r: Any, c: CacheReport, top: float | None = None) -> dict[str, Any] | None:
    """Timeline markers: one per call whose cached prefix shrank, with its cause and cost."""
    inv = c.invalidations
    if not inv:
        return None
    top = top or float("inf")
    ys = [min(r.steps[s.step].tokens, top * 0.985) for s in inv]
    text = [
        f"cache invalidated by {invalidated_by(s.invalidation)}: "  # type: ignore[arg-type]
        f"{s.invalidation['tokensRewritten']:,} tokens {'written' if s.family == 'anthropic' else 'sent uncached'} "  # type: ignore[index]
        f"again, +${s.invalidation['premiumUsd']:,.4f}"  # type: ignore[index]
        for s in inv
    ]
    return {
        "type": "scatter",
        "mode": "markers",
        "name": "cache invalidated",
        "x": [s.step for s in inv],
        "y": ys,
        "text": text,
        "marker": {
            "symbol": "diamond-wide",
            "size": 11,
            "color": "#9467bd",
            "line": {"width": 1, "color": "#fff"},
        },
        "hovertemplate": "step %{x}: %{text}<extra></extra>",
    }


def story(r: Any, c: CacheReport, k: int) -> list[str]:
    """Plain sentences about the cache at call ``k``."""
    s = c.steps[k]
    if s.family == "none":
        return ["Prompt cache: no cache model for this provider; every input token is priced in full."]
    if s.prompt == 0:
        return [
            "Prompt cache: this call failed before the model read it (no usage recorded), so nothing was "
            "read, written or billed."
        ]
    out = [
        f"Prompt cache ({s.family}): {s.read:,} tokens read from the cache, {s.write:,} written, "
        f"{s.uncached:,} uncached; this call's input bills ${s.cost:,.4f}."
    ]
    if c.start and s.read and not any(x.prompt for x in c.steps[:k]):  # the first billed call
        out.append(f"The read is {c.start}.")
    inv = s.invalidation
    if inv is not None:
        again = (
            "be written again"
            if s.family == "anthropic"
            else "be sent uncached again (this provider caches what it is sent, without a write price)"
        )
        out.append(
            f"The cached prefix broke here: {invalidated_by(inv)} made {inv['tokensRewritten']:,} tokens {again}, "
            f"costing ${inv['premiumUsd']:,.4f} more than reading them."
        )
    for sc in c.summaries:
        if sc.step == s.step:
            parts = [
                f"{n:,} tokens {what}"
                for n, what in (
                    (sc.read, "read from the cache"),
                    (sc.write, "written to the cache"),
                    (sc.uncached, "of plain input"),
                )
                if n
            ]
            known = (
                "as recorded"
                if sc.shape == RECORDED_SHAPE
                else "estimated (the file records no usage for it)"
            )
            out.append(
                f"The compaction before this call was a model call of its own: {sc.requests} summarisation "
                f"request{'s' if sc.requests != 1 else ''} ({', '.join(parts) or 'nothing sent'}; {sc.shape}), "
                f"${sc.cost:,.4f}, {known}, counted in the billed cost."
            )
    if s.recorded_read is not None and c.departs is not None and k >= c.departs:
        out.append(
            f"Recorded by the provider, for the context the session itself sent: {s.recorded_read:,} read, "
            f"{s.recorded_write or 0:,} written. This what-if sends another one since call {c.departs}, so "
            "the two differ by design (the as-recorded replay checks the model against them)."
        )
    elif s.recorded_read is not None:
        out.append(
            f"Recorded by the provider: {s.recorded_read:,} read, {s.recorded_write or 0:,} written."
            + (f" They disagree: {s.disagreement}." if s.disagreement else "")
        )
    return out


def metrics_rows(c: CacheReport) -> list[dict[str, str]]:
    m = c.metrics()
    pct = views.fmt_share
    departed = c.departed
    rows = [
        ("Billed input cost (prompt cache priced)", f"${m['billedCostUsd']:,.4f}"),
        (
            "of which the compactions' summarisation requests (estimated where the file records none)",
            f"${m['summarisationCostUsd']:,.4f} ({m['summarisationRequests']} requests)",
        ),
        (
            "Recorded input cost (the calls)",
            "—" if m["recordedBilledCostUsd"] is None else f"${m['recordedBilledCostUsd']:,.4f}",
        ),
        ("Cache hit rate", pct(m["cacheHitRate"])),
        ("Invalidations", f"{m['invalidations']:,}"),
        ("Tokens written again after them", f"{m['tokensRewritten']:,}"),
        ("Invalidation premium", f"${m['invalidationPremiumUsd']:,.4f}"),
        (
            "Cache-read error vs recorded (Σ|predicted − recorded| / Σ recorded)" + departed,
            pct(m["cacheReadError"]),
        ),
        (
            "of the total read error: reads of only the shared prefix or an older copy, nothing changed "
            "in the file (the provider's cache servers, as far as the file shows)",
            "—"
            if m["cacheReadServerSideError"] is None
            else f"{m['cacheReadServerSideError']:+.1%} ({m['serverSideCalls']:,} calls)",
        ),
        ("Billed cost error vs recorded (the calls)" + departed, pct(m["billedCostError"])),
    ]
    return [{"metric": a, "value": b} for a, b in rows]


def compare_rows(runs: Sequence[tuple[str, Any, CacheReport]]) -> list[dict[str, Any]]:
    """Configurations ranked by billed cost, beside the blended figure that ignores the cache."""
    rows = [
        {
            "configuration": name,
            "billed input cost ($)": round(c.billed_cost, 4),
            "of which summarisation ($)": round(c.summary_cost, 4),
            "blended input cost ($)": round(r.metrics.cost_usd, 4),
            "cache hit rate": round(c.hit_rate or 0.0, 3),
            "invalidations": len(c.invalidations),
            "input tokens": r.metrics.total_input_tokens,
            "re-reads": r.metrics.rereads,
        }
        for name, r, c in runs
    ]
    rows.sort(key=lambda x: x["billed input cost ($)"])
    for i, row in enumerate(rows):
        row["rank"] = i + 1
    return rows


def cost_table(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """:func:`compare_rows` as a table, its rank and configuration first."""
    df = pd.DataFrame(rows)
    first = [c for c in COMPARE_ORDER if c in df.columns]
    return df[first + [c for c in df.columns if c not in first]]


#: PRUNE_MINIMUM values compared: 0 prunes at every turn; the larger ones prune rarely, in batches
BATCHES = (0, 20_000, 40_000)


def batch_strategy(settings: Any) -> str:
    """The pruning strategy :func:`batch_configs` compares: the sidebar's when it has a
    PRUNE_MINIMUM (pi-context-pruning, opencode), else pi-context-pruning."""
    from ..pruning import REGISTRY

    own = REGISTRY.get(settings.strategy)
    return (
        settings.strategy
        if own is not None and "prune_minimum" in own.Settings.model_fields
        else "pi-context-pruning"
    )


def batch_configs(settings: Any) -> list[tuple[str, Any]]:
    """No pruning, pruning every turn and batch-style pruning with :func:`batch_strategy` (the
    rows are named by how often they prune; the strategy is said once, above the table)."""
    strat = batch_strategy(settings)
    own = settings.strategy_dict() if strat == settings.strategy else {}
    out = [("no pruning", settings.model_copy(update={"strategy": "none", "strategy_settings": ()}))]
    for m in BATCHES:
        cfg = settings.model_copy(update={"strategy": strat}).with_strategy_settings(
            {**own, "prune_minimum": m}
        )
        out.append(("every turn (PRUNE_MINIMUM 0)" if m == 0 else f"in batches (PRUNE_MINIMUM {m:,})", cfg))
    return out


# -- drawing ------------------------------------------------------------------------------------


def verdict(m: dict[str, Any], disagreeing: int) -> str | None:
    """One sentence: how far the cache model follows this session's recorded cache usage."""
    if m["cacheReadError"] is None:
        return None
    cost = (
        ""
        if m["billedCostError"] is None
        else f", billed input cost {m['billedCostError']:+.1%} of the recorded"
    )
    side = m.get("cacheReadServerSideError") or 0.0
    servers = (
        f" {m['serverSideCalls']:,} of them, where the read stopped at the prefix every request shares or "
        f"at an older copy with nothing before it changed in the file (the provider's cache servers, as far "
        f"as the file shows), account for {side:+.1%} of the total: nothing in the file lets a model foresee "
        f"those; without them the reads are off by {abs(m['cacheReadTotalError'] - side):.1%}."
        if m.get("serverSideCalls")
        else ""
    )
    return (
        f"Prompt cache: replayed as recorded, the model's cache reads are off the recorded ones by "
        f"{abs(m['cacheReadTotalError']):.1%} in total ({m['cacheReadError']:.1%} call by call{cost}); "
        f"{disagreeing:,} call(s) disagree, each with its likely cause on the Replay page.{servers}"
    )


def as_recorded_replay() -> Any:
    """The current session replayed as recorded (its own compactions and pruning), cached with the
    app's other replays: the Load page's checks read one."""
    return current_replay(ReplaySettings(strategy="recorded"))


def load_verdict() -> None:
    """Load page: the cache model's check on this session, in one line (sessions that record cache use)."""

    def make() -> str | None:
        c = cache_replay(as_recorded_replay())
        return verdict(c.metrics(), len(c.disagreements()))

    line = memo("cache_verdict", None, make)
    if line:
        st.caption(line)


def step_panel(r: Any, k: int) -> None:
    """Replay page: the cache split of this call's prompt."""
    c = report(r)
    if c.steps[k].family == "none":
        st.caption("Prompt cache: no cache model for this provider.")
        return
    st.plotly_chart(split_figure(c, k), key="cache_split", config=PLOT_CONFIG)
    family = c.steps[k].family
    premiums = sorted({r.write_multiplier for r in c.rules.values() if r.family == family and r.writes})
    written = (
        f"written to it (billed at {' or '.join(f'{x:g}×' for x in premiums)} the input price)"
        if premiums
        else "written to it (no write premium: billed as input)"
    )
    st.caption(
        f"What was sent, split the way the provider bills it ({family} rule; sizes: {c.sizes}, "
        f"retention: {c.retention}). Green is read from the cache (about a tenth of the price), orange "
        f"{written}, grey full-price input. The recorded bar is what the provider reported."
        + (
            f" First call: {c.start}."
            if c.start and k == next((i for i, x in enumerate(c.steps) if x.prompt), None)
            else ""
        )
    )


def mark_timeline(fig: go.Figure, r: Any) -> go.Figure:
    """The timeline with the cache invalidations marked (their cause and cost on hover)."""
    trace = invalidation_trace(r, report(r), figures.largest_window(r) * 1.15)
    if trace is not None:
        fig.add_trace(trace)
    return fig


def story_lines(r: Any, k: int) -> list[str]:
    return story(r, report(r), k)


def run_panel(r: Any) -> None:
    """Replay page: billed cost over the run and how far the model matches the recorded usage."""
    c = report(r)
    with st.expander("Prompt cache: billed cost, and the model checked against the recorded cache usage"):
        st.dataframe(pd.DataFrame(metrics_rows(c)), hide_index=True)
        st.caption(
            "The blended cost in the run metrics prices every input token alike. Here each provider's own "
            "cache rule is applied (Anthropic: breakpoints as pi places them, 5 min or 1 h; OpenAI: "
            "automatic from 1,024 tokens in 128-token steps; the idle time counted from when the previous "
            "request used the cache) and priced at the session's recorded rates where it has them (a prompt "
            "over a model's long-context threshold at its long-context rates). The check compares each "
            "call's predicted cache reads with the recorded "
            "ones; the calls below disagree, each with its likely cause."
            + (
                f" This what-if sends other contexts than the session did from call {c.departs} on: there the "
                "recorded reads are of the session's own contexts and differ by design, so the check stops "
                "before it (the as-recorded replay checks every call)."
                if c.departs is not None
                else ""
            )
        )
        dis = c.disagreements()
        if dis:
            st.dataframe(pd.DataFrame(dis), hide_index=True, height=min(400, 35 * len(dis) + 38))
        inv = c.invalidation_rows()
        if inv:
            st.markdown("**Invalidations**")
            st.dataframe(pd.DataFrame(inv), hide_index=True, height=min(400, 35 * len(inv) + 38))


def sweep_rows(session: Any, cells: Sequence[Any]) -> list[dict[str, Any]]:
    """A sweep's cells with the cache model's billed cost, best first, the cost frontier flagged."""
    from ..cache.sweep import billed_metrics, rank

    rows = [
        {
            **c.values,
            **billed_metrics(session, c.settings),
            "blended cost": c.metrics.cost_usd,
            "rereads": c.metrics.rereads,
            "overflows": c.metrics.overflows,
            "compactions": c.metrics.compactions,
        }
        for c in cells
    ]
    return rank(rows, "billed")


def sweep_panel(session: Any, cells: Sequence[Any]) -> None:
    """Compare & tune, under a sweep: its cells ranked by billed cost, on demand (each is replayed
    again to price it), with the frontier of cost against re-reads, overflows and compactions."""
    if not st.toggle("Rank the cells by billed cost (the prompt cache priced)", key="sw_billed"):
        return
    rows = memo("sweep_billed", tuple(c.settings for c in cells), lambda: sweep_rows(session, cells))
    st.dataframe(pd.DataFrame(rows), hide_index=True, column_config=COST_COLUMNS)
    st.caption(
        "frontier: no other cell is as cheap with as few re-reads, overflows and compactions — the settings "
        "worth choosing between."
    )
    st.plotly_chart(
        frontier_figure(rows, list(cells[0].values) if cells else []), key="sw_front", config=PLOT_CONFIG
    )


def frontier_figure(rows: Sequence[dict[str, Any]], axes: Sequence[str]) -> go.Figure:
    """A sweep's cells (:func:`sweep_rows`; ``axes``: the settings swept) as billed cost against
    re-reads, sized and coloured by overflows, with the frontier of the two: the Corpus page's
    figure (:func:`inspector.corpus.figures.frontier`) for one session."""
    from ..corpus.figures import frontier

    return frontier(
        [
            {
                "settings": {k: r[k] for k in axes},
                "billedCostUsd": {"total": r["billedCostUsd"]},
                "rereads": r["rereads"],
                "overflows": r["overflows"],
            }
            for r in rows
        ]
    )


def compare_panel(runs: Sequence[tuple[str, Any]], settings: Any = None) -> None:
    """Compare & tune: the configurations ranked by billed cost; on demand, batch-style pruning
    against pruning every turn."""
    from .state import current_replay

    rows = compare_rows([(name, r, report(r)) for name, r in runs])
    st.markdown(
        "**Ranked by billed input cost** (the provider's prompt cache priced; the recorded answers, and "
        "what their output costs, are the same in every configuration)"
    )
    st.dataframe(cost_table(rows), hide_index=True, key="cmp_billed", column_config=COST_COLUMNS)
    st.caption(
        "Pruning saves tokens, but every prune that changes an old message makes the next call write the "
        "cache again from there. Batch-style pruning (a large PRUNE_MINIMUM: prune rarely, more at once) "
        "breaks the cache less often than pruning every turn."
    )
    if settings is not None and st.toggle(
        "Batch-style pruning against pruning every turn", key="cmp_batches"
    ):
        strat = batch_strategy(settings)
        batch = [
            (name, current_replay(cfg, f"Replaying {strat}, {name}")) for name, cfg in batch_configs(settings)
        ]
        st.caption(f"Pruning with {strat} (the sidebar's other settings kept), against no pruning.")
        st.dataframe(
            cost_table(compare_rows([(n, r, report(r)) for n, r in batch if r is not None])),
            hide_index=True,
            column_config=COST_COLUMNS,
        )
