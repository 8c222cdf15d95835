"""A replay as a report — HTML, JSON or CSV — exactly as ``inspector export replay`` writes it
(the CLI and the app's "Download report" both call :func:`replay_report`)."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

REPORT_FORMATS = ("html", "json", "csv")


def replay_report(session: Any, replay: Any, fmt: str = "html", *, redact: bool = True) -> str:
    """The report of ``replay`` in ``fmt``; strings that look like API keys are redacted unless
    ``redact`` is false (as the CLI's ``--keep-secrets``)."""
    if fmt not in REPORT_FORMATS:
        raise ValueError(f"report format must be one of {', '.join(REPORT_FORMATS)}, not {fmt!r}")
    if fmt == "html":
        from .ui.report_html import replay_html

        text = replay_html(session, replay)
    elif fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(["step", "entryIndex", "stopReason", "contextTokens", "tokensBeforePruning", "recordedTokens",
                    "prunedItems", "prunedTokens", "events"])
        for s in replay.steps:
            w.writerow([s.step, s.entry_index, s.stop_reason, s.tokens, s.tokens_before_pruning, s.recorded_input,
                        s.pruned_items, s.pruned_tokens, ";".join(e["type"] for e in s.events)])
        text = buf.getvalue()
    else:
        text = json.dumps(replay.as_dict(), indent=1, ensure_ascii=False)
    if redact:
        from .redact import redact_text

        text = redact_text(text)
    return text
