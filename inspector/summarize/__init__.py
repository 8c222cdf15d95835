"""Summaries for compactions and branch summaries: offline extractive by default, LLMs optional.

:func:`summarize_compaction` reproduces pi's ``compact()`` (``core/compaction/compaction.ts``):
the history summary with a budget of floor(0.8 × reserveTokens) — or the literal
"No prior history." when a split turn has nothing before it — and, for a split turn, a separate
turn-prefix summary (floor(0.5 × reserveTokens); no custom instructions, no previous summary), the
two made concurrently (pi's ``Promise.all``) and joined under ``**Turn Context (split turn):**``;
then the ``<read-files>`` / ``<modified-files>`` blocks. :func:`summarize_branch` reproduces
``generateBranchSummary``: "No content to summarize" for nothing, else the summary (2048 output
tokens) behind pi's branch preamble, then the file blocks.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..branch_summary import BranchPreparation
from ..compaction import CompactionPreparation, format_file_operations
from ..redact import redact_text
from .base import Summarizer, SummaryRequest, SummaryResult, SummaryUsage
from .llm import AnthropicSummarizer, MissingExtra, OpenAISummarizer
from .offline import LABEL, OfflineSummarizer
from .prompts import BRANCH_SUMMARY_PREAMBLE, STYLES, present, render_prompt
from .slices import SliceSettings
from .slices import compare as compare_slices
from .slices import run as run_slices

SPLIT_TURN_SEPARATOR = "\n\n---\n\n**Turn Context (split turn):**\n\n"
NO_PRIOR_HISTORY = "No prior history."
NO_BRANCH_CONTENT = "No content to summarize"
BRANCH_MAX_TOKENS = 2048
SUMMARIZERS: dict[str, type] = {
    "offline": OfflineSummarizer,
    "openai": OpenAISummarizer,
    "anthropic": AnthropicSummarizer,
}

__all__ = [
    "LABEL",
    "NO_BRANCH_CONTENT",
    "NO_PRIOR_HISTORY",
    "SPLIT_TURN_SEPARATOR",
    "STYLES",
    "MissingExtra",
    "SliceSettings",
    "Summarizer",
    "SummaryRequest",
    "SummaryResult",
    "SummaryUsage",
    "compaction_prompts",
    "compare_slice_strategies",
    "get_summarizer",
    "summarize_branch",
    "summarize_compaction",
]


def get_summarizer(name: str = "offline", **options: Any) -> Any:
    """``offline`` (no options), ``openai`` or ``anthropic`` (model, base_url, api_key_env, timeout,
    max_retries, use_cache, cancel, input_price, output_price). The LLM SDKs load on first use."""
    try:
        cls = SUMMARIZERS[name]
    except KeyError:
        raise ValueError(f"unknown summarizer {name!r}; available: {', '.join(SUMMARIZERS)}") from None
    return cls() if name == "offline" else cls(**options)


def _titled(title: str, prompt: str) -> str:
    return f"===== {title} =====\n{prompt}"


def _combine(
    parts: list[SummaryResult],
    text: str,
    label: str,
    prompt: str,
    seconds: float,
    titles: list[str] | None = None,
) -> SummaryResult:
    usage = sum((p.usage for p in parts), SummaryUsage()).wall(seconds)
    named = len(parts) > 1 and titles is not None
    errors = [
        f"{t}: {p.error}" if named else p.error
        for t, p in zip(titles or [""] * len(parts), parts, strict=True)
        if p.error
    ]
    return SummaryResult(
        text,
        usage,
        parts[0].summarizer if parts else label,
        prompt,
        "; ".join(errors) or None,
        any(p.fell_back for p in parts),
    )


def _present(style: str, parts: list[SummaryResult], text: str) -> str:
    """Codex's summary prefix goes on text a model wrote in the codex style (not on offline text)."""
    return text if any(p.fell_back or p.summarizer == LABEL for p in parts) else present(style, text)


def _requests(
    prep: CompactionPreparation, style: str, custom_instructions: str | None
) -> tuple[SummaryRequest, SummaryRequest | None]:
    """pi's two requests: history (0.8 × reserve) and, for a split turn, turn prefix (0.5 × reserve)."""
    reserve = prep.settings.reserveTokens
    hist = SummaryRequest(
        prep.messagesToSummarize,
        prep.previousSummary,
        custom_instructions,
        int(0.8 * reserve),
        "history",
        style,
    )
    pre = (
        SummaryRequest(prep.turnPrefixMessages, None, None, int(0.5 * reserve), "turn_prefix", style)
        if prep.isSplitTurn and prep.turnPrefixMessages
        else None
    )
    return hist, pre


def compaction_prompts(
    prep: CompactionPreparation,
    *,
    style: str = "pi",
    custom_instructions: str | None = None,
    redact: bool = True,
) -> str:
    """Every prompt an LLM summarizer sends for ``prep`` (single-shot), exactly, with titles
    (secrets redacted, as they are sent, unless ``redact`` is off)."""
    hist, pre = _requests(prep, style, custom_instructions)
    parts = (
        [_titled("history summary", render_prompt(hist))] if prep.messagesToSummarize or pre is None else []
    )
    if pre is not None:
        parts.append(_titled("turn-prefix summary", render_prompt(pre)))
    text = "\n\n".join(parts)
    return redact_text(text) if redact else text


def summarize_compaction(
    prep: CompactionPreparation,
    summarizer: Any,
    *,
    style: str = "pi",
    custom_instructions: str | None = None,
    slices: str = "single-shot",
    slice_settings: SliceSettings | None = None,
) -> SummaryResult:
    """The summary pi's ``compact()`` would store for ``prep``. ``slices`` other than single-shot
    makes the history summary with that strategy of the research note. ``prompt`` holds the
    prompts sent (none by the offline summarizer: see :func:`compaction_prompts`)."""
    t0 = time.perf_counter()
    label = getattr(summarizer, "label", LABEL)
    hist_req, pre_req = _requests(prep, style, custom_instructions)

    def history() -> SummaryResult:
        if slices != "single-shot":
            return run_slices(slices, hist_req, summarizer, slice_settings or SliceSettings())
        return summarizer.summarize(hist_req)

    if pre_req is not None:
        if isinstance(summarizer, OfflineSummarizer):  # nothing to wait for: no threads
            hist = history() if prep.messagesToSummarize else None
            pre = summarizer.summarize(pre_req)
        else:
            with ThreadPoolExecutor(max_workers=2, thread_name_prefix="summary") as pool:  # pi: Promise.all
                hist_f = pool.submit(history) if prep.messagesToSummarize else None
                pre = pool.submit(summarizer.summarize, pre_req).result()
                hist = hist_f.result() if hist_f else None
        parts = [hist, pre] if hist else [pre]
        titles = (
            ["history summary" + (f", {slices}" if slices != "single-shot" else "")] if hist else []
        ) + ["turn-prefix summary"]
        text = _present(
            style, parts, (hist.text if hist else NO_PRIOR_HISTORY) + SPLIT_TURN_SEPARATOR + pre.text
        )
    else:
        hist = history()
        parts, titles = [hist], ["history summary" + (f", {slices}" if slices != "single-shot" else "")]
        text = _present(style, parts, hist.text)
    prompt = "\n\n".join(_titled(t, p.prompt) for t, p in zip(titles, parts, strict=True) if p.prompt)
    r, m = prep.fileOps.lists()
    return _combine(
        parts, text + format_file_operations(r, m), label, prompt, time.perf_counter() - t0, titles
    )


def compare_slice_strategies(
    prep: CompactionPreparation,
    summarizer: Any,
    *,
    style: str = "pi",
    custom_instructions: str | None = None,
    slice_settings: SliceSettings | None = None,
) -> list[dict[str, Any]]:
    """The research note's comparison for ``prep``: pi's history request (0.8 × reserve)
    summarised by every slice strategy, one row each (:func:`inspector.summarize.slices.compare`)."""
    hist, _ = _requests(prep, style, custom_instructions)
    return compare_slices(hist, summarizer, slice_settings or SliceSettings())


def summarize_branch(
    prep: BranchPreparation,
    summarizer: Any,
    *,
    style: str = "pi",
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
    max_tokens: int = BRANCH_MAX_TOKENS,
) -> SummaryResult:
    """The summary pi's ``generateBranchSummary`` would store for the entries in ``prep``."""
    label = getattr(summarizer, "label", LABEL)
    if not prep.messages:
        return SummaryResult(NO_BRANCH_CONTENT, summarizer=label)
    t0 = time.perf_counter()
    req = SummaryRequest(
        prep.messages,
        None,
        custom_instructions,
        max_tokens,
        "branch",
        style,
        replace_instructions=replace_instructions,
    )
    res = summarizer.summarize(req)
    r, m = prep.fileOps.lists()
    text = BRANCH_SUMMARY_PREAMBLE + _present(style, [res], res.text) + format_file_operations(r, m)
    return _combine(
        [res],
        text,
        label,
        _titled("branch summary", res.prompt) if res.prompt else "",
        time.perf_counter() - t0,
    )
