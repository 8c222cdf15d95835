"""Self-contained HTML reports (work offline: plotly.js is inlined once, no CDN, no scripts of
the session's own — every session string is HTML-escaped).

Every session string passes through ``redact`` (e.g. :func:`inspector.redact.redact_text`) before
it is escaped, figure data included (plotly.js itself is not session text and is left alone).
Lone surrogates (possible in JavaScript strings, not in UTF-8) are shown as U+FFFD."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Any

import plotly.io as pio

from ..context import build_session_context
from . import figures

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1200px;color:#222}
h1{margin-bottom:.2rem} .muted{color:#666} table{border-collapse:collapse;width:100%;margin:1rem 0}
th,td{border:1px solid #ddd;padding:.3rem .5rem;text-align:left;font-size:.9rem;vertical-align:top}
th{background:#f5f5f5} td.num{text-align:right;font-variant-numeric:tabular-nums}
pre{white-space:pre-wrap;background:#f7f7f7;padding:.8rem;border-radius:6px;font-size:.85rem}
.error{color:#b00020}.warning{color:#a15c00}.info{color:#555}
"""


_SURROGATE = re.compile("[\ud800-\udfff]")
_FIG_CONFIG = {"displaylogo": False, "responsive": True}


def _same(text: str) -> str:
    return text


class _Text:
    """Session text into HTML: redacted (``redact``), lone surrogates as U+FFFD, then escaped."""

    def __init__(self, redact: Callable[[str], str] | None) -> None:
        self.redact = redact or _same

    def __call__(self, value: Any) -> str:
        return html.escape(_SURROGATE.sub("\ufffd", self.redact(str(value))))

    def value(self, v: Any) -> Any:
        """A figure's data with every string redacted and made valid UTF-8."""
        if isinstance(v, str):
            return _SURROGATE.sub("\ufffd", self.redact(v))
        if isinstance(v, (list, tuple)):
            return [self.value(x) for x in v]
        if isinstance(v, dict):
            return {k: self.value(x) for k, x in v.items()}
        return v

    def fig(self, fig: Any) -> str:
        return pio.to_html(
            self.value(fig.to_plotly_json()), full_html=False, include_plotlyjs=False, config=_FIG_CONFIG
        )


def _page(title: str, body: str, plotly: bool = False) -> str:
    from plotly.offline import get_plotlyjs

    lib = f"<script type='text/javascript'>{get_plotlyjs()}</script>" if plotly else ""
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; script-src 'unsafe-inline' "
        f"'unsafe-eval'; style-src 'unsafe-inline'; img-src data:; font-src data:\">"
        f"<style>{_CSS}</style>{lib}</head><body>{body}</body></html>"
    )


def replay_html(session: Any, replay: Any, redact: Callable[[str], str] | None = None) -> str:
    """A replay report: settings, metrics, the timeline, events and the last call's context.
    Every string from the session passes through ``redact`` (e.g. ``redact_text``) first."""
    t = _Text(redact)
    s = replay.settings
    sets = "".join(f"<tr><th>{html.escape(k)}</th><td>{t(v)}</td></tr>" for k, v in s.model_dump().items())
    recon = _check(session, replay)
    parts = [
        f"<h1>Context Inspector — replay</h1><p class='muted'>{t(session.source)} · "
        f"{len(replay.steps):,} model calls</p>",
        f"<h2>Settings</h2><table>{sets}</table><h2>Metrics</h2><table>{_metric_rows(replay, t)}</table>",
        "<h2>Context tokens per call</h2>",
        t.fig(figures.timeline(replay, recon=recon)),
    ]
    if recon is not None:
        from ..recon import unstored_words, verdict

        parts.append(
            f"<p class='muted'>Reconstruction check: the context rebuilt here {t(verdict(recon))}; "
            f"{t(unstored_words(recon))}. The shaded band: the prompt it expects at each call.</p>"
        )
    if replay.steps:
        k = len(replay.steps) - 1
        d = replay.step_detail(k)
        from ..replay import session_counter

        c = session_counter(session, s.counter)
        parts.append(f"<h2>Context at the last call ({k})</h2>")
        sent = c.count_many([x.message for x in d.after])
        parts.append(
            t.fig(
                figures.context_bars(
                    d.before,
                    c.count_many([x.message for x in d.before]),
                    d.after,
                    sent,
                    window=replay.steps[k].window,
                    reserve=s.reserve_tokens,
                    provider_tokens=replay.steps[k].provider_tokens,
                )
            )
        )
        if replay.steps[k].provider_tokens not in (None, sum(sent)):
            parts.append(f"<p class='muted'>{t(figures.PROVIDER_PART_NOTE)}</p>")
    ev_rows = "".join(
        f"<tr><td class='num'>{st.step}</td><td class='num'>{st.entry_index}</td><td>{t(e.type)}</td>"
        f"<td>{t((j := e.to_json()).get('reason') or j.get('path') or '')}</td></tr>"
        for st in replay.steps
        for e in st.events
        if e.type not in ("zone",)
    )
    parts.append(
        f"<h2>Events</h2><table><tr><th>step</th><th>entry</th><th>event</th><th>detail</th></tr>{ev_rows}</table>"
        if ev_rows
        else "<h2>Events</h2><p class='muted'>No prune or compaction on this branch under these settings.</p>"
    )
    for rec in replay.summaries:
        parts.append(
            f"<h3>Compaction before call {rec.step} ({'simulated' if rec.simulated else 'recorded'})"
            f"</h3><pre>{t(rec.text)}</pre>"
        )
    return _page("Context Inspector — replay", "".join(parts), plotly=True)


def _metric_rows(replay: Any, t: _Text) -> str:
    """The metrics table's rows, written as the app writes them, with the prompt cache's billed
    cost beside the blended one (issue 19: billed cost wherever a cost appears)."""
    from ..cache import cache_replay
    from .views import METRIC_LABELS, fmt_metric, fmt_share

    cache = cache_replay(replay)
    cm = cache.metrics()
    rows = [
        (METRIC_LABELS.get(k, k.replace("_", " ")), fmt_metric(k, v))
        for k, v in replay.metrics.model_dump().items()
    ]
    rows += [
        ("billed input cost, prompt cache priced (USD)", fmt_metric("usd", cm["billedCostUsd"])),
        (
            "of which the compactions' summarisation requests (USD, estimated)",
            fmt_metric("usd", cm["summarisationCostUsd"]),
        ),
        ("cache hit rate", fmt_share(cm["cacheHitRate"])),
        ("cache invalidations", fmt_metric("", cm["invalidations"])),
        ("cache-read error vs recorded" + cache.departed, fmt_share(cm["cacheReadError"])),
    ]
    return "".join(f"<tr><th>{html.escape(label)}</th><td class='num'>{t(v)}</td></tr>" for label, v in rows)


def _check(session: Any, replay: Any) -> Any:
    """The reconstruction check the Replay page draws (as recorded, on a session a page checks),
    or None."""
    from ..policies import POLICIES
    from ..recon import view_check

    if not POLICIES[replay.settings.compaction].as_recorded:
        return None
    return view_check(session, replay.settings.leaf, len(replay.steps))


def doctor_html(session: Any, report: Any, redact: Callable[[str], str] | None = None) -> str:
    t = _Text(redact)
    rows = "".join(
        f"<tr><td class='{f.severity}'>{f.severity}</td><td>{t(f.kind)}</td>"
        f"<td>{t(', '.join(map(str, f.entries[:10])))}</td><td>{t(', '.join(map(str, f.lines[:10])))}</td>"
        f"<td>{t(f.message)}</td></tr>"
        for f in report.findings
    )
    ctx = build_session_context(session, report.leaf) if report.leaf is not None else None
    counts = report.counts()
    body = (
        f"<h1>Context Inspector — doctor</h1><p class='muted'>{t(session.source)} · "
        f"{len(session.entries):,} entries · context {len(ctx.messages) if ctx else 0} messages · "
        f"{counts.get('error', 0)} error(s), {counts.get('warning', 0)} warning(s), {counts.get('info', 0)} info</p>"
        f"<table><tr><th>severity</th><th>kind</th><th>entries</th><th>lines</th><th>explanation</th></tr>"
        f"{rows}</table>"
    )
    return _page("Context Inspector — doctor", body)
