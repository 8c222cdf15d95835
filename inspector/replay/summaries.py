"""Summaries of simulated compactions, and the cache callers pass to replays.

There is no module-wide cache: a :class:`SummaryCache` belongs to whoever replays (the app keeps
one for its process, a sweep one for its cells, a single replay its own), so sweep cells and
replays that reach the same preparation share its summary, and a summary made with an LLM is
paid for once.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from typing import Any

from ..compaction import CompactionPreparation, format_file_operations
from ..jsjson import js_stringify
from ..session.tree import Session
from .settings import ReplaySettings

#: what a replay calls to summarise a preparation: (preparation, settings) → the summary record
SummaryFn = Callable[[CompactionPreparation, ReplaySettings], dict[str, Any]]


def prep_key(prep: CompactionPreparation, settings: ReplaySettings, style: str) -> str:
    """Cache key of a summary: entries are named by index (a cache entry is per session object,
    see :class:`SummaryCache`); messages built in memory (summaries of other policies) by content."""
    h = hashlib.sha256()
    key = settings.summarizer_api_key.get_secret_value() if settings.summarizer_api_key is not None else ""
    h.update(
        f"{settings.summarizer}|{settings.summarizer_model}|{settings.summarizer_base_url}|{style}|"
        f"{settings.summarizer_redact}|{hashlib.sha256(key.encode()).hexdigest()}|"
        f"{prep.settings.reserveTokens}|{prep.isSplitTurn}|".encode()
    )
    h.update((prep.previousSummary or "").encode("utf-8", "surrogatepass"))
    for part in (prep.messagesToSummarize, b"|", prep.turnPrefixMessages):
        if isinstance(part, bytes):
            h.update(part)
            continue
        for cm in part:
            if cm.entry_index is None:
                h.update(b"m:" + js_stringify(cm.message.raw()).encode("utf-8", "surrogatepass") + b";")
            else:
                h.update(f"{cm.entry_index};".encode())
    r, m = prep.fileOps.lists()
    h.update(("\n".join(r) + "|" + "\n".join(m)).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def make_summary(prep: CompactionPreparation, settings: ReplaySettings, style: str = "pi") -> dict[str, Any]:
    """Summarise a preparation with the configured summarizer (no cache): the summary record
    (text, label, usage, error, fell_back, seconds)."""
    t0 = time.perf_counter()
    try:
        from ..summarize import get_summarizer, summarize_compaction

        options: dict[str, Any] = {}
        if settings.summarizer != "offline":
            if settings.summarizer_model:
                options["model"] = settings.summarizer_model
            if settings.summarizer_base_url:
                options["base_url"] = settings.summarizer_base_url
            if settings.summarizer_api_key is not None:
                options["api_key"] = settings.summarizer_api_key.get_secret_value()
            options["redact"] = settings.summarizer_redact
        summ = get_summarizer(settings.summarizer, **options)
        res = summarize_compaction(prep, summ, style=style)
        out = {
            "text": res.text,
            "label": res.summarizer if hasattr(res, "summarizer") else settings.summarizer,
            "input_tokens": res.usage.input_tokens,
            "output_tokens": res.usage.output_tokens,
            "calls": res.usage.calls,
            "cost": res.usage.cost_usd or 0.0,
            "error": res.error,
            "fell_back": res.fell_back,
        }
    except ImportError:
        r, m = prep.fileOps.lists()
        n = len(prep.messagesToSummarize) + len(prep.turnPrefixMessages)
        text = f"[placeholder summary of {n} messages]" + format_file_operations(r, m)
        out = {
            "text": text,
            "label": "placeholder",
            "input_tokens": 0,
            "output_tokens": 0,
            "calls": 0,
            "cost": 0.0,
            "error": None,
            "fell_back": False,
        }
    out["seconds"] = time.perf_counter() - t0
    return out


class SummaryCache:
    """Summaries by their input (the preparation, the summarizer's settings and the prompt style),
    each for one session object; at most ``limit`` kept (then it starts afresh)."""

    def __init__(self, limit: int = 4096) -> None:
        self.limit = limit
        self._items: dict[str, tuple[Any, dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def summary(
        self,
        prep: CompactionPreparation,
        settings: ReplaySettings,
        style: str = "pi",
        session: Session | None = None,
    ) -> dict[str, Any]:
        key = prep_key(prep, settings, style)
        hit = self._items.get(key)
        if hit is not None and hit[0] is session:
            return hit[1]
        out = make_summary(prep, settings, style)
        with self._lock:
            if len(self._items) > self.limit:
                self._items.clear()
            self._items[key] = (session, out)
        return out


def default_summary(
    prep: CompactionPreparation,
    settings: ReplaySettings,
    style: str = "pi",
    session: Session | None = None,
    cache: SummaryCache | None = None,
) -> dict[str, Any]:
    """Summarise a preparation with the configured summarizer, through ``cache`` when given."""
    if cache is None:
        return make_summary(prep, settings, style)
    return cache.summary(prep, settings, style, session)
