"""``inspector retention``: what each compaction forgot that the session needed later.

Replays the session under the given settings (as recorded by default; ``--compaction pi`` and the
other what-if policies simulate compactions), then scores every compaction with
:func:`inspector.retention.retention`. ``--json`` prints exactly the issue's Interface;
``--details`` adds the evidence, what was kept and where, the files of the span, the work redone
and the first call that needed a forgotten item; ``--compare`` scores each compaction under the
other summaries of the same span (offline; an LLM summarizer's in each style with
``--summarizer``); ``--probe`` asks that LLM Factory's four probes about each summary
(:mod:`inspector.retention.probe`).
"""

from __future__ import annotations

import argparse
from typing import Any

from ..policies import POLICIES
from ..replay import replay
from ..retention import CATEGORIES, CompactionRetention, compare_summaries, retention
from ..visible import clip, visible
from .base import EXIT_FAILED, EXIT_USAGE, Command, fail, load_or_exit, print_json
from .options import add_json, add_replay, replay_settings
from .replay import recorded_window_note

MAX_SHOWN = 30


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_replay(p)
    add_json(p)
    p.add_argument(
        "--details",
        action="store_true",
        help="with --json: add evidence, kept items and where, the span's files, redone work",
    )
    p.add_argument(
        "--probe",
        action="store_true",
        help="also ask the --summarizer (an LLM) Factory's four probes about each summary (cached; "
        "labelled with the model)",
    )
    p.add_argument(
        "--compare",
        action="store_true",
        help="also score each compaction under the other summaries of the same span (offline; the "
        "--summarizer's in each prompt style when it is an LLM)",
    )


def _recall(c: CompactionRetention) -> str:
    return _recall_of(c.recall())


def _recall_of(r: dict[str, float | None]) -> str:
    return "  ".join(f"{k} {'—' if r[k] is None else f'{r[k]:.0%}'}" for k in CATEGORIES)


def run(args: argparse.Namespace) -> int:
    session = load_or_exit(args.session)
    settings = replay_settings(args, session)
    if args.probe and settings.summarizer == "offline":
        fail("--probe asks an LLM: give --summarizer openai or anthropic", EXIT_USAGE)
    r = replay(session, settings)
    report = retention(r)
    probes = (
        [_probe(settings, c, rec.text) for c, rec in zip(report.compactions, r.summaries, strict=True)]
        if args.probe
        else []
    )
    compared: list[list[CompactionRetention]] = []
    if args.compare:
        llm = settings if settings.summarizer != "offline" else None
        compared = [compare_summaries(r, i, llm) for i in range(len(report.compactions))]
    if args.json:
        out: dict[str, Any] = report.as_dict(details=args.details)
        for d, cs in zip(out["compactions"], compared, strict=False):
            d["compare"] = [
                {
                    "summary": c.summary_label,
                    "recall": c.recall(),
                    "overall": c.overall,
                    "forgotten": len(c.forgotten),
                }
                for c in cs
            ]
        for d, pr in zip(out["compactions"], probes, strict=False):
            d["probe"] = {"label": pr.label, "recall": pr.recall, "answers": pr.answers}
        print_json(out, indent=1)
        return 0
    as_recorded = POLICIES[settings.compaction].as_recorded
    window = (  # the window decides where a simulated policy compacts
        ""
        if as_recorded
        else f", window {settings.context_window:,}{recorded_window_note(session, settings)}"
    )
    print(
        f"retention in {visible(session.source, inline=True)}: {len(report.compactions)} compaction(s), "
        f"compaction: {settings.compaction}{window}"
    )
    if not report.compactions and as_recorded:
        print("  the session records no compaction: --compaction pi (or another policy) simulates one")
    for k, (c, first) in enumerate(zip(report.compactions, report.first_need_steps, strict=True)):
        print(
            f"\ncompaction {k + 1} ({c.span.source}, entry {c.span.entry_index}, before call {c.span.step}): "
            f"{len(c.needed)} needed, {len(c.forgotten)} forgotten"
        )
        if c.span.unread:
            print(f"  note    {c.span.unread}: kept = kept verbatim or put back; the summary is not judged")
        print(f"  recall  {_recall(c)}")
        rd = c.redo
        print(
            f"  redone  {rd.rereads} re-read(s), {rd.reruns} command(s) re-run, {rd.failing_reruns} failing "
            "again" + (f"; first call needing a forgotten item: {first}" if first is not None else "")
        )
        for n in c.forgotten[:MAX_SHOWN]:
            print(
                f"  forgot  {n.kind:<12} {visible(clip(n.item, 100), inline=True)}  "
                f"(entry {n.introduced_at} → {n.needed_at}: {visible(n.evidence, inline=True)})"
            )
        if len(c.forgotten) > MAX_SHOWN:
            print(f"  … {len(c.forgotten) - MAX_SHOWN} more (--json)")
        if probes:
            print(
                f"  probe   {_recall_of(probes[k].recall)}  (LLM probe: {visible(probes[k].label, inline=True)})"
            )
        for alt in compared[k] if compared else []:
            print(
                f"  {visible(alt.summary_label, inline=True):<28} {_recall(alt)}  forgotten {len(alt.forgotten)}"
            )
    return 0


def _probe(settings: Any, c: CompactionRetention, text: str) -> Any:
    from ..retention.probe import probe
    from ..summarize import get_summarizer

    options: dict[str, Any] = {"redact": settings.summarizer_redact}
    if settings.summarizer_model:
        options["model"] = settings.summarizer_model
    if settings.summarizer_base_url:
        options["base_url"] = settings.summarizer_base_url
    if settings.summarizer_api_key is not None:
        options["api_key"] = settings.summarizer_api_key.get_secret_value()
    summ = get_summarizer(settings.summarizer, **options)
    if (msg := summ.missing_extra()) is not None:
        fail(msg, EXIT_USAGE)
    try:
        return probe(c, text, summ)
    except Exception as e:  # noqa: BLE001 - one line, as every failure
        fail(f"the LLM probe failed: {summ._describe(e)}", EXIT_FAILED)


COMMAND = Command(
    "retention",
    "score what each compaction's summary kept of what the session needed later",
    add_arguments,
    run,
)
