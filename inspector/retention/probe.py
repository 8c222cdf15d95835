"""The optional LLM probe mode: Factory's four probes of a compaction summary, asked of the
configured LLM summarizer's provider (never needed by the offline scores or by tests).

Factory's write-up on evaluating context compression probes a summary for **recall** (specific
facts: errors, names, values), **artifacts** (the files touched), **continuation** (what to do
next) and **decisions** (what was decided and must be respected). Here the model gets only the
summary and the four questions (our own wording), answers under one heading per probe, and each
needed item of :mod:`inspector.retention.score` is graded against the answer of its probe with the
same matching rules as the offline scores: files → artifacts, identifiers and errors → recall,
instructions → decisions, the open task → continuation.

How it differs from the offline scores: those ask whether the summary *names* an item; the probe
asks whether a model *reading only the summary* can produce it when asked — a paraphrase that the
word heuristics miss can pass, and an item buried in a file list a model overlooks can fail. It
costs one LLM call per summary, is cached on disk like summaries (:mod:`inspector.summarize.cache`)
and every result is labelled with the model that answered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..summarize import cache
from .score import CATEGORIES, CompactionRetention, Span, Survivors, where

PROBES = {
    "recall": "Which specific errors, error messages, functions, classes, variables and values from the earlier "
    "work does the summary state? List each one exactly as written.",
    "artifacts": "Which files were read, created or modified? List every path.",
    "continuation": "What task was in progress, and what is the very next step?",
    "decisions": "Which instructions, constraints and decisions from the user must later work respect?",
}
PROBE_OF = {
    "files": "artifacts",
    "identifiers": "recall",
    "errors": "recall",
    "instructions": "decisions",
    "task": "continuation",
}
SYSTEM = (
    "You are given only the summary a coding agent wrote when it compacted an earlier part of a session. "
    "Answer every question from the summary alone. When the summary does not say, answer 'not stated'. "
    "Answer under the headings ## recall, ## artifacts, ## continuation and ## decisions, in that order."
)
_HEAD = re.compile(r"^#+\s*(recall|artifacts|continuation|decisions)\b.*$", re.I | re.M)


@dataclass(frozen=True)
class ProbeResult:
    label: str
    """The model that answered (``(cached)`` when the answer came from the cache)."""
    answers: dict[str, str]
    recall: dict[str, float | None]
    kept: tuple[tuple[str, str, bool], ...]
    """(kind, item, answered) per needed item."""


def prompt(summary_text: str) -> tuple[str, str]:
    questions = "\n".join(f"{i + 1}. {k}: {q}" for i, (k, q) in enumerate(PROBES.items()))
    return SYSTEM, f"<summary>\n{summary_text}\n</summary>\n\nQuestions:\n{questions}"


def answers_of(raw: str) -> dict[str, str]:
    """The answer under each probe's heading (empty when missing)."""
    out = {k: "" for k in PROBES}
    marks = list(_HEAD.finditer(raw))
    for m, nxt in zip(marks, [*marks[1:], None], strict=True):
        out[m.group(1).lower()] = raw[m.end() : nxt.start() if nxt else len(raw)].strip()
    return out


def _survivors(text: str) -> Survivors:
    from .extract import identifiers_in, norm, paths_in, words

    empty: frozenset[str] = frozenset()
    return Survivors(
        norm(text).lower(),
        frozenset(paths_in(text)),
        frozenset(identifiers_in(text)),
        frozenset(words(text)),
        empty,
        empty,
        empty,
        empty,
        empty,
        "",
        empty,
    )


def grade(c: CompactionRetention, answers: dict[str, str], label: str) -> ProbeResult:
    """Each needed item of ``c`` against the answer of its probe."""
    sv = {k: _survivors(v) for k, v in answers.items()}
    kept = tuple((n.kind, n.item, bool(where(n.kind, n.item, sv[PROBE_OF[n.kind]]))) for n in c.needed)
    recall: dict[str, float | None] = {}
    for cat in CATEGORIES:
        got = [k for kind, _, k in kept if kind == cat]
        recall[cat] = round(sum(got) / len(got), 4) if got else None
    return ProbeResult(label, answers, recall, kept)


def probe(c: CompactionRetention, summary_text: str, summarizer: Any, use_cache: bool = True) -> ProbeResult:
    """Ask ``summarizer`` (an LLM summarizer of :mod:`inspector.summarize.llm`) the four probes about
    ``summary_text``, and grade ``c``'s needed items against the answers. Secrets are redacted
    from the text sent unless the summarizer was made with ``redact=False``."""
    from ..redact import redact_text

    system, user = prompt(summary_text)
    if getattr(summarizer, "redact", True):
        system, user = redact_text(system), redact_text(user)
    key = cache.cache_key(
        "retention-probe", summarizer.provider, summarizer.model, summarizer.base_url, system, user
    )
    hit = cache.get(key) if use_cache else None
    if hit is not None and isinstance(hit.get("text"), str):
        return grade(c, answers_of(hit["text"]), f"{summarizer.label} (cached)")
    raw, _, _ = summarizer._run(lambda: summarizer._request(system, user, 2000))
    if use_cache:
        cache.put(key, {"text": raw, "model": summarizer.model})
    return grade(c, answers_of(raw), summarizer.label)


__all__ = ["PROBES", "PROBE_OF", "ProbeResult", "Span", "answers_of", "grade", "probe", "prompt"]
