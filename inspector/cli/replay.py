"""``inspector replay``: pruning and compaction replayed one model call at a time."""

from __future__ import annotations

import argparse

from ..cache import CacheReport, cache_replay
from ..cache.causes import invalidated_by
from ..cache.facts import FactsReader, remember_facts
from ..cache.summaries import RECORDED_SHAPE
from ..info import RECORDED_ALSO_COUNTS, far_above
from ..policies import POLICIES
from ..pruning import REGISTRY
from ..replay import Event, Overflow, Replay, ReplaySettings, replay
from ..replay.streamed import load_for_replay, streamable, streamed_replay
from ..replay_report import replay_table
from ..session.loader import SessionLoadError
from ..session.tree import Session
from ..visible import visible
from ..window import (
    DEFAULT_WINDOW,
    answered_peak,
    assumed_too_small,
    known_window,
    model_windows_from,
    model_windows_said,
    unknown_window_why,
)
from .base import (
    EXIT_FAILED,
    Command,
    fail,
    large_pi_file,
    load_or_exit,
    print_csv,
    print_json_streamed,
    say_unread,
)
from .options import add_cache, add_json, add_replay, replay_settings

SHOWN_EVENTS = ("compaction", "overflow", "branch_summary", "compaction_skipped")
MAX_SHOWN = 40
MAX_DISAGREEMENTS = 10


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_replay(p)
    add_cache(p)
    add_json(p, csv="model call")


def run(args: argparse.Namespace) -> int:
    got = _streamed(args)
    if got is None:
        session = load_or_exit(args.session)
        settings = replay_settings(args, session)
        r = replay(session, settings)
    else:
        session, settings, r = got
    report = cache_replay(r, model="auto", retention=args.cache_retention) if args.cache == "model" else None
    if args.json:
        d = r.as_dict(lazy=True)
        print_json_streamed(report.annotate(d) if report else d)
    elif args.csv:
        print_csv(*replay_table(r, messages=True))
    else:
        print_summary(
            session, settings, r, _window_note(session, settings.context_window, r.metrics.overflows)
        )
        if report is not None:
            print_cache(report)
    return 0


def _streamed(args: argparse.Namespace) -> tuple[Session, ReplaySettings, Replay] | None:
    """The replay of a large pi v3 file from its skeleton and a second read
    (:mod:`inspector.replay.streamed`: the same replay, without holding the messages); None for any
    other file or a replay that reads messages again (then the session is loaded)."""
    if args.csv or args.set or args.compaction != "recorded" or args.strategy not in (None, "none"):
        return None
    if args.counter not in ("pi", "tiktoken") or not large_pi_file(args.session):
        return None
    try:
        skeleton = load_for_replay(args.session)
        if skeleton is None:
            return None
        settings = replay_settings(args, skeleton.session)
        if not streamable(settings):
            return None
        facts = FactsReader() if args.cache == "model" else None  # the answers, for the cache model
        r = streamed_replay(skeleton, settings, facts.add if facts is not None else None)
    except SessionLoadError as e:
        fail(str(e), EXIT_FAILED)
    if r is None:
        return None
    if facts is not None:
        remember_facts(skeleton.session, facts.facts())
    say_unread(skeleton.session, args.session)  # as load_or_exit does for a loaded session
    return skeleton.session, settings, r


def print_cache(c: CacheReport) -> None:
    m = c.metrics()
    rec = m["recordedBilledCostUsd"]
    print(
        f"  billed cost (input, USD, prompt cache priced) {m['billedCostUsd']:,.4f}"
        + (f"   (recorded: {rec:,.4f}, {m['billedCostError']:+.1%} on the calls)" if rec else "")
    )
    if c.summaries:
        guessed = sum(x.shape != RECORDED_SHAPE for x in c.summaries)
        if not guessed:
            known = "as the file records them"
        else:
            some = "" if guessed == len(c.summaries) else f"{guessed} "
            known = f"{some}estimated: the file records no usage for them"
        print(
            f"  of which summarisation {m['summarisationCostUsd']:>14,.4f}   {m['summarisationRequests']} request(s) of "
            f"{len(c.summaries)} compaction(s), {sum(x.prompt for x in c.summaries):,} tokens sent ({known})"
        )
    hit = m["cacheHitRate"]
    print(
        f"  cache hit rate       {'—' if hit is None else f'{hit:.1%}':>14}   sizes: {c.sizes}, retention: {c.retention}"
    )
    if c.start:
        print(f"  first call           {c.start}")
    print(
        f"  invalidations        {m['invalidations']:>14}   rewritten {m['tokensRewritten']:,} tokens, "
        f"premium {m['invalidationPremiumUsd']:,.4f} USD"
    )
    if m["cacheReadError"] is not None:
        print(
            f"  cache reads vs recorded: error {m['cacheReadError']:.1%} (Σ|predicted − recorded| / Σ recorded), "
            f"total {m['cacheReadTotalError']:+.1%}, {len(c.disagreements())} calls disagree"
            + (
                f" (before step {c.departs}: from it on this what-if sends other contexts than the session "
                "did, whose reads the file records: they differ by design, and only the as-recorded replay "
                "checks the model there)"
                if c.departs is not None
                else ""
            )
        )
        if m["serverSideCalls"]:
            print(
                f"    of the total, {m['cacheReadServerSideError']:+.1%} at {m['serverSideCalls']} calls that read "
                "only the shared prefix or an older copy with nothing changed in the file (the provider's cache "
                "servers, as far as the file shows)"
            )
    for row in c.disagreements()[:MAX_DISAGREEMENTS]:
        print(
            f"  step {row['step']:>5} (entry {row['entryIndex']}): cache read {row['predictedRead']:,} predicted, "
            f"{row['recordedRead']:,} recorded: {visible(row['cause'] or '', inline=True)}"
        )
    for row in c.invalidation_rows()[:MAX_SHOWN]:
        again = "written" if c.steps[row["step"]].family == "anthropic" else "sent uncached"
        print(
            f"  step {row['step']:>5} (entry {row['entryIndex']}): cache invalidated by {invalidated_by(row)}: "
            f"{row['tokensRewritten']:,} tokens {again} again, +{row['premiumUsd']:,.4f} USD"
        )
    print("  (cost (input, USD) above is the blended per-token figure; --cache off shows only it)")


def print_summary(session: Session, settings: ReplaySettings, r: Replay, overflow_note: str = "") -> None:
    m = r.metrics
    pol = POLICIES[settings.compaction]
    print(
        f"replay of {visible(session.source, inline=True)}: {m.steps} model calls, compaction: {pol.title}, "
        f"pruning: {REGISTRY[settings.strategy].title if settings.strategy in REGISTRY else settings.strategy}, "
        f"window {settings.context_window:,}{recorded_window_note(session, settings)}, "
        f"counter {settings.counter}"
    )
    if settings.model_windows:
        said = model_windows_said(settings.model_windows, lambda t: visible(t, inline=True))
        print(
            f"  each call against its model's window, as the agent checks it: {said} ({model_windows_from(session)})"
        )
    print(
        f"  total input tokens   {m.total_input_tokens:>14,}"
        + (f"   (recorded: {m.recorded_total_input:,})" if m.recorded_total_input else "")
    )
    if POLICIES[settings.compaction].as_recorded and far_above(m.recorded_total_input, m.total_input_tokens):
        print(f"{'':>40}({RECORDED_ALSO_COUNTS})")
    print(
        f"  cost (input, USD)    {m.cost_usd:>14,.4f}"
        + (f"   (recorded total incl. output: {m.recorded_cost_usd:,.4f})" if m.recorded_cost_usd else "")
    )
    print(f"  peak / mean context  {m.peak_context:>14,} / {m.mean_context:,.0f}")
    print(
        f"  compactions          {m.compactions:>14}   summarizer tokens this replay spent {m.summary_tokens:,}"
    )
    print(f"  tokens pruned        {m.tokens_pruned:>14,}")
    print(f"  overflows            {m.overflows:>14}{overflow_note}")
    print(f"  re-reads after prune {m.rereads:>14}")
    events = [(s, ev) for s in r.steps for ev in s.events if ev.type in SHOWN_EVENTS]
    for s, ev in events[:MAX_SHOWN]:
        print(f"  step {s.step:>5} (entry {s.entry_index}): {ev.type} {_event_detail(ev)}".rstrip())


def _event_detail(ev: Event) -> str:
    """What an event's line adds: a compaction's reason, or an overflow's sizes."""
    if isinstance(ev, Overflow):
        then = ": compact and retry" if ev.before else ""
        return f"{ev.tokens:,} tokens, as the provider counts the prompt, > window {ev.window:,}{then}"
    return visible(ev.to_json().get("reason") or "", inline=True)


def recorded_window_note(session: Session, settings: ReplaySettings) -> str:
    """Beside the window replayed: the one the session makes known (recorded by Codex, or its
    model's: :func:`inspector.window.known_window`), and how to use it when it is another; or that
    the session's model has no known window, and when a call the provider answered held more than
    the one assumed (:func:`inspector.window.answered_peak`), the window to give instead."""
    known = known_window(session)
    if known is None:
        why = unknown_window_why(session, lambda t: visible(t, inline=True))
        if not why or settings.context_window != DEFAULT_WINDOW:
            return ""
        over = assumed_window_over(session, settings)
        return f" (assumed: {why}{'; ' + over if over else ''})"
    w = known.tokens
    if known.source == "answered":
        return f" ({known.short()})" if w == settings.context_window else f" ({known.short()}: --window {w})"
    if known.source == "recorded":
        return (
            " (the one the session records)"
            if w == settings.context_window
            else f" (the session records {w:,}: --window {w})"
        )
    name = visible(known.model.name(), inline=True) if known.model else "its model"
    return (
        f" ({name}'s window in pi's model list)"
        if w == settings.context_window
        else f" ({name} has {w:,} in pi's model list: --window {w})"
    )


def assumed_window_over(session: Session, settings: ReplaySettings) -> str:
    """When the window replayed is the one assumed and a call the provider answered held more
    (:func:`inspector.window.assumed_too_small`): that, and the ``--window`` to give instead."""
    peak = assumed_too_small(session, settings.context_window)
    if peak is None:
        return ""
    return (
        f"the provider answered a {peak.tokens:,}-token context at entry {peak.entry_index}, so the "
        f"model's window is larger: --window {peak.window_floor()} or more"
    )


def _window_note(session: Session, window: int, overflows: int) -> str:
    """When the session's answered calls went over ``window`` (:mod:`inspector.window`): the
    window given is smaller than its model's, said beside the overflow count."""
    peak = answered_peak(session)
    if not overflows or peak is None or peak.tokens <= window:
        return ""
    return (
        f"   (the provider answered a {peak.tokens:,}-token context at entry {peak.entry_index}: this "
        f"session's model has a larger window than {window:,}; give --window)"
    )


COMMAND = Command("replay", "replay pruning and compaction one model call at a time", add_arguments, run)
