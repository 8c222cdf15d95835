"""Self-contained HTML reports (work offline: plotly.js is inlined once, no CDN, no scripts of
the session's own — every session string is HTML-escaped)."""

from __future__ import annotations

import html
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


def _page(title: str, body: str) -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; script-src 'unsafe-inline' "
            f"'unsafe-eval'; style-src 'unsafe-inline'; img-src data:; font-src data:\">"
            f"<style>{_CSS}</style></head><body>{body}</body></html>")


def _fig(fig: Any, first: bool) -> str:
    return pio.to_html(fig, full_html=False, include_plotlyjs="inline" if first else False,
                       config={"displaylogo": False, "responsive": True})


def replay_html(session: Any, replay: Any) -> str:
    """A replay report: settings, metrics, the timeline, events and the last call's context."""
    s = replay.settings
    m = replay.metrics
    rows = "".join(f"<tr><th>{html.escape(k.replace('_', ' '))}</th><td class='num'>{html.escape(str(v))}</td></tr>"
                   for k, v in m.model_dump().items())
    sets = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>"
                   for k, v in s.model_dump().items())
    parts = [f"<h1>Context Inspector — replay</h1><p class='muted'>{html.escape(str(session.source))} · "
             f"{len(replay.steps):,} model calls</p>",
             f"<h2>Settings</h2><table>{sets}</table><h2>Metrics</h2><table>{rows}</table>",
             "<h2>Context tokens per call</h2>", _fig(figures.timeline(replay), True)]
    if replay.steps:
        k = len(replay.steps) - 1
        d = replay.step_detail(k)
        from ..replay import session_counter

        c = session_counter(session, s.counter)
        parts.append(f"<h2>Context at the last call ({k})</h2>")
        parts.append(_fig(figures.context_bars(d.before, c.count_many([x.message for x in d.before]), d.after,
                                               c.count_many([x.message for x in d.after]),
                                               window=s.context_window, reserve=s.reserve_tokens), False))
    ev_rows = "".join(
        f"<tr><td class='num'>{st.step}</td><td class='num'>{st.entry_index}</td><td>{html.escape(e['type'])}</td>"
        f"<td>{html.escape(str(e.get('reason') or e.get('path') or ''))}</td></tr>"
        for st in replay.steps for e in st.events if e["type"] not in ("zone",))
    parts.append(f"<h2>Events</h2><table><tr><th>step</th><th>entry</th><th>event</th><th>detail</th></tr>{ev_rows}</table>")
    for rec in replay.summaries:
        parts.append(f"<h3>Compaction before call {rec['step']} ({'simulated' if rec.get('simulated') else 'recorded'})"
                     f"</h3><pre>{html.escape(rec['text'])}</pre>")
    return _page("Context Inspector — replay", "".join(parts))


def doctor_html(session: Any, report: Any) -> str:
    rows = "".join(
        f"<tr><td class='{f.severity}'>{f.severity}</td><td>{html.escape(f.kind)}</td>"
        f"<td>{html.escape(', '.join(map(str, f.entries[:10])))}</td><td>{html.escape(', '.join(map(str, f.lines[:10])))}</td>"
        f"<td>{html.escape(f.message)}</td></tr>" for f in report.findings)
    ctx = build_session_context(session, report.leaf) if report.leaf is not None else None
    counts = report.counts()
    body = (f"<h1>Context Inspector — doctor</h1><p class='muted'>{html.escape(str(session.source))} · "
            f"{len(session.entries):,} entries · context {len(ctx.messages) if ctx else 0} messages · "
            f"{counts.get('error', 0)} error(s), {counts.get('warning', 0)} warning(s), {counts.get('info', 0)} info</p>"
            f"<table><tr><th>severity</th><th>kind</th><th>entries</th><th>lines</th><th>explanation</th></tr>"
            f"{rows}</table>")
    return _page("Context Inspector — doctor", body)
