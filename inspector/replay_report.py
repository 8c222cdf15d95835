"""Reports — HTML, JSON or CSV — exactly as ``inspector export`` writes them: a replay
(:func:`replay_report`, which the app's "Download report" calls too) and a doctor report
(:func:`doctor_report`). :func:`csv_text` is the one CSV writer (the CLI's ``replay --csv`` too)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

REPORT_FORMATS = ("html", "json", "csv")
_SAME: Callable[[str], str] = lambda text: text  # noqa: E731


FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet takes a cell for a formula by: a text cell that starts with one is written
after a ``'`` (OWASP's advice on CSV injection), so a session's ``stopReason`` or model name of
``=HYPERLINK(…)`` is shown as text, not run, when the CSV is opened."""


def csv_cell(v: Any) -> Any:
    """``v`` as a CSV cell: a text that a spreadsheet would take for a formula (:data:`FORMULA_LEADS`)
    starts with ``'``; anything else as it is (a negative number stays a number)."""
    return "'" + v if isinstance(v, str) and v.startswith(FORMULA_LEADS) else v


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]], *, lineterminator: str = "\r\n") -> str:
    """``header`` and ``rows`` as CSV (the csv module's quoting; ``\\r\\n`` line ends, as RFC 4180
    writes them, unless ``lineterminator`` says otherwise); each text cell through :func:`csv_cell`."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator=lineterminator)
    w.writerow(header)
    w.writerows([csv_cell(c) for c in row] for row in rows)
    return buf.getvalue()


def replay_table(replay: Any, *, messages: bool = False) -> tuple[list[str], list[list[Any]]]:
    """One row per model call of ``replay``: the report's CSV columns (``messages``: with the
    number of messages sent, as ``inspector replay --csv`` prints them)."""
    header = [
        "step",
        "entryIndex",
        "stopReason",
        "contextTokens",
        "tokensBeforePruning",
        "recordedTokens",
        *(["messages"] if messages else []),
        "prunedItems",
        "prunedTokens",
        "events",
    ]
    rows = [
        [
            s.step,
            s.entry_index,
            s.stop_reason,
            s.tokens,
            s.tokens_before_pruning,
            s.recorded_input,
            *([s.messages] if messages else []),
            s.pruned_items,
            s.pruned_tokens,
            ";".join(e.type for e in s.events),
        ]
        for s in replay.steps
    ]
    return header, rows


def _redactor(redact: Callable[[str], str] | None | bool) -> Callable[[str], str] | None:
    if redact is True:
        from .redact import redact_text

        return redact_text
    return redact or None


def _json(data: Any, redact: Callable[[str], str] | None) -> str:
    from .redact import redact_value

    return json.dumps(redact_value(data) if redact else data, indent=1, ensure_ascii=False)


def _check(fmt: str) -> None:
    if fmt not in REPORT_FORMATS:
        raise ValueError(f"report format must be one of {', '.join(REPORT_FORMATS)}, not {fmt!r}")


def replay_report(
    session: Any, replay: Any, fmt: str = "html", *, redact: Callable[[str], str] | None | bool = True
) -> str:
    """The report of ``replay`` in ``fmt``. Every string from the session passes through ``redact``
    (``True``: :func:`inspector.redact.redact_text`; ``None``/``False``: kept, as the CLI's
    ``--keep-secrets``) before it is escaped, so the report's own code (plotly.js) is never touched."""
    _check(fmt)
    fn = _redactor(redact)
    if fmt == "html":
        from .ui.report_html import replay_html

        return replay_html(session, replay, fn)
    if fmt == "csv":  # the stop reasons are the session's text
        header, rows = replay_table(replay)
        same = fn or _SAME
        return csv_text(header, ([same(c) if isinstance(c, str) else c for c in row] for row in rows))
    from .cache import cache_replay

    data = cache_replay(replay).annotate(replay.as_dict())  # with the prompt cache's billed cost
    data["summaries"] = [rec.to_json() for rec in replay.summaries]  # as the HTML report shows them
    return _json(data, fn)


def doctor_report(
    session: Any, report: Any, fmt: str = "html", *, redact: Callable[[str], str] | None | bool = True
) -> str:
    """The doctor ``report`` (:func:`inspector.doctor.diagnose`) in ``fmt``; ``redact`` as in
    :func:`replay_report` (the findings' messages quote the session)."""
    _check(fmt)
    fn = _redactor(redact)
    if fmt == "html":
        from .ui.report_html import doctor_html

        return doctor_html(session, report, fn)
    if fmt == "csv":
        same = fn or _SAME
        return csv_text(
            ["severity", "kind", "entries", "lines", "message"],
            (
                [
                    f.severity,
                    f.kind,
                    " ".join(map(str, f.entries)),
                    " ".join(map(str, f.lines)),
                    same(f.message),
                ]
                for f in report.findings
            ),
        )
    return _json(report.as_dict(), fn)
