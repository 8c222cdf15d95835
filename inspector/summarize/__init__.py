"""Summaries for compactions and branch summaries: offline by default.

``summarize_compaction`` reproduces pi's ``compact()`` composition: a history summary (budget
0.8 × reserveTokens; "No prior history." when a split turn has nothing before it), a separate
turn-prefix summary for a split turn (0.5 × reserveTokens) joined under pi's
``**Turn Context (split turn):**`` heading, then the ``<read-files>``/``<modified-files>`` blocks.
"""

from __future__ import annotations

from typing import Any

from ..compaction import CompactionPreparation, format_file_operations
from .base import SummaryRequest, SummaryResult, SummaryUsage
from .offline import LABEL, OfflineSummarizer

SPLIT_TURN_SEPARATOR = "\n\n---\n\n**Turn Context (split turn):**\n\n"
from .llm import AnthropicSummarizer, OpenAISummarizer  # noqa: E402  (SDKs are imported lazily)

SUMMARIZERS = {"offline": OfflineSummarizer, "openai": OpenAISummarizer, "anthropic": AnthropicSummarizer}

__all__ = ["LABEL", "SummaryRequest", "SummaryResult", "SummaryUsage", "get_summarizer", "summarize_compaction"]


def get_summarizer(name: str = "offline", **options: Any) -> Any:
    try:
        cls = SUMMARIZERS[name]
    except KeyError:
        raise ValueError(f"unknown summarizer {name!r}; available: {', '.join(SUMMARIZERS)}") from None
    return cls() if name == "offline" else cls(**options)


def summarize_compaction(prep: CompactionPreparation, summarizer: Any, *, style: str = "pi",
                         custom_instructions: str | None = None) -> SummaryResult:
    reserve = prep.settings.reserveTokens
    hist_req = SummaryRequest(prep.messagesToSummarize, prep.previousSummary, custom_instructions,
                              int(0.8 * reserve), "history", style)
    if prep.isSplitTurn and prep.turnPrefixMessages:
        hist = summarizer.summarize(hist_req) if prep.messagesToSummarize else SummaryResult("No prior history.")
        pre = summarizer.summarize(SummaryRequest(prep.turnPrefixMessages, None, None, int(0.5 * reserve),
                                                  "turn_prefix", style))
        text = hist.text + SPLIT_TURN_SEPARATOR + pre.text
        usage = SummaryUsage(hist.usage.input_tokens + pre.usage.input_tokens,
                             hist.usage.output_tokens + pre.usage.output_tokens,
                             hist.usage.calls + pre.usage.calls, hist.usage.seconds + pre.usage.seconds,
                             (hist.usage.cost_usd or 0) + (pre.usage.cost_usd or 0))
        res = SummaryResult(text, usage, hist.summarizer, hist.prompt + "\n\n" + pre.prompt, hist.error or pre.error,
                            hist.fell_back or pre.fell_back)
    else:
        res = summarizer.summarize(hist_req)
    r, m = prep.fileOps.lists()
    return SummaryResult(res.text + format_file_operations(r, m), res.usage, res.summarizer, res.prompt, res.error,
                         res.fell_back)
