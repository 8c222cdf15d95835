"""A replay as a report — HTML, JSON or CSV — exactly as ``inspector export replay`` writes it
(the CLI and the app's "Download report" both call :func:`replay_report`)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from typing import Any

REPORT_FORMATS = ("html", "json", "csv")
_SAME: Callable[[str], str] = lambda text: text  # noqa: E731


def replay_report(session: Any, replay: Any, fmt: str = "html", *,
                  redact: Callable[[str], str] | None | bool = True) -> str:
    """The report of ``replay`` in ``fmt``. Every string from the session passes through ``redact``
    (``True``: :func:`inspector.redact.redact_text`; ``None``/``False``: kept, as the CLI's
    ``--keep-secrets``) before it is escaped, so the report's own code (plotly.js) is never touched."""
    if fmt not in REPORT_FORMATS:
        raise ValueError(f"report format must be one of {', '.join(REPORT_FORMATS)}, not {fmt!r}")
    if redact is True:
        from .redact import redact_text

        redact = redact_text
    fn = redact or None
    if fmt == "html":
        from .ui.report_html import replay_html

        return replay_html(session, replay, fn)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(["step", "entryIndex", "stopReason", "contextTokens", "tokensBeforePruning", "recordedTokens",
                    "prunedItems", "prunedTokens", "events"])
        for s in replay.steps:
            w.writerow([s.step, s.entry_index, s.stop_reason, s.tokens, s.tokens_before_pruning, s.recorded_input,
                        s.pruned_items, s.pruned_tokens, ";".join(e["type"] for e in s.events)])
        return buf.getvalue()
    from .redact import redact_value

    data = replay.as_dict()
    return json.dumps(redact_value(data) if fn else data, indent=1, ensure_ascii=False)
