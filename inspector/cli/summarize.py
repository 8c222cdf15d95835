"""``inspector summarize``: the summary pi's compaction would store at a leaf, by any summarizer.

Prepares the compaction as pi would (``prepare_compaction_at``), then composes the summary as pi's
``compact()`` does (``summarize_compaction``). ``--show-prompt`` prints every prompt exactly as an
LLM summarizer sends it; ``--slices compare`` prints the research note's comparison table.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..compaction import CompactionPreparation, CompactionSettings, prepare_compaction_at
from ..summarize import (
    LABEL,
    compaction_prompts,
    compare_slice_strategies,
    get_summarizer,
    summarize_compaction,
)
from ..summarize.llm import operator_key
from ..summarize.prompts import STYLES
from ..summarize.slices import STRATEGIES, SliceSettings, format_table
from ..whatif import nothing_to_summarise
from .base import EXIT_FAILED, EXIT_USAGE, Command, fail, load_or_exit, print_json, resolve_leaf
from .options import (
    add_budgets,
    add_json,
    add_leaf,
    add_pi_version,
    add_session,
    add_summarizer,
    positive_number,
    ratio,
    retries,
    token_count,
)

NOT_HERE = "pi would not compact here (the branch is empty or ends in a compaction)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_session(p)
    add_leaf(p, "summarize as if this entry were the leaf")
    add_budgets(p)
    add_pi_version(p)
    add_summarizer(p)
    p.add_argument(
        "--api-key-env",
        help="environment variable holding the key (default OPENAI_API_KEY, "
        "OPENROUTER_API_KEY for openrouter.ai, ANTHROPIC_API_KEY)",
    )
    p.add_argument("--timeout", type=positive_number, default=120.0, help="seconds per attempt")
    p.add_argument("--max-retries", type=retries, default=3, help="retries on 429/5xx/timeouts, with backoff")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the summary cache")
    p.add_argument("--style", default="pi", choices=list(STYLES))
    p.add_argument("--instructions", help="custom instructions added to the prompt")
    p.add_argument(
        "--slices",
        choices=[*STRATEGIES, "compare"],
        help="slice strategy for the history summary (default single-shot); 'compare' prints the table",
    )
    p.add_argument("--slice-tokens", type=token_count, default=20000, help="tokens per slice (default 20000)")
    p.add_argument(
        "--overlap-tokens",
        type=token_count,
        default=2000,
        help="tokens each slice repeats of the one before (default 2000; at most half a slice)",
    )
    p.add_argument(
        "--compression-ratio",
        type=ratio,
        default=0.1,
        help="a slice's summary budget: its tokens × this (default 0.1)",
    )
    p.add_argument(
        "--recent-boost",
        type=positive_number,
        default=2.0,
        help="× the budget of the two most recent slices (default 2)",
    )
    p.add_argument("--show-prompt", action="store_true", help="print the exact prompt(s) sent")
    add_json(p)


def run(args: argparse.Namespace) -> int:
    try:  # before the session is read: a bad argument is refused at once
        ss = SliceSettings(args.slice_tokens, args.overlap_tokens, args.compression_ratio, args.recent_boost)
    except ValueError as e:  # the settings together (an overlap as large as a slice)
        fail(str(e), EXIT_USAGE)
    session = load_or_exit(args.session)
    leaf = resolve_leaf(session, args.leaf or "leaf")
    if leaf is None:
        fail("the session has no entries", EXIT_FAILED)
    settings = CompactionSettings(keepRecentTokens=args.keep_recent_tokens, reserveTokens=args.reserve)
    prep = prepare_compaction_at(session, leaf, settings, args.pi_version)
    if prep is None:
        fail(NOT_HERE, EXIT_FAILED)
    summ = summarizer(args)
    if (why := nothing_to_summarise(prep)) is not None:  # pi would still ask for a summary of nothing
        print(
            f"inspector: nothing to summarise: {why}; pi would still ask for a summary of an empty history "
            "(lower --keep-recent-tokens to summarise some)",
            file=sys.stderr,
        )
    if args.slices == "compare":
        print_comparison(args, prep, summ, ss)
    else:
        print_summary(args, prep, summ, ss)
    return 0


def summarizer(args: argparse.Namespace) -> Any:
    """The summarizer the options name, or exit 2 when its extra is not installed."""
    if args.summarizer == "offline":
        return get_summarizer("offline")
    summ = get_summarizer(
        args.summarizer,
        model=args.model or "",
        base_url=args.base_url,
        api_key_env=args.api_key_env,
        timeout=args.timeout,
        max_retries=args.max_retries,
        use_cache=not args.no_cache,
        redact=not args.send_secrets,
        api_key=operator_key(args.summarizer, args.base_url, args.api_key_env),
    )
    missing = summ.missing_extra()
    if missing:
        fail(missing, EXIT_USAGE)
    return summ


def print_comparison(
    args: argparse.Namespace, prep: CompactionPreparation, summ: Any, ss: SliceSettings
) -> None:
    rows = compare_slice_strategies(
        prep, summ, style=args.style, custom_instructions=args.instructions, slice_settings=ss
    )
    if args.json:
        print_json({"summarizer": summ.label, "sliceSettings": ss.__dict__, "table": rows}, indent=2)
        return
    print(
        f"History summary of {len(prep.messagesToSummarize):,} messages by each slice strategy ({summ.label}; "
        f"slices of {ss.slice_tokens:,} tokens, overlap {ss.overlap_tokens:,}, ratio {ss.compression_ratio}, "
        f"recent boost {ss.recent_boost}):\n"
    )
    print(format_table(rows))
    if summ.label == LABEL:
        print(
            "\nOffline extractive: no API is called; tokens are pi estimates of the prompts an LLM would "
            "read and of the texts written, calls are the calls an LLM summarizer would make."
        )
    for r in rows:
        if r["error"]:
            print(f"\n{r['strategy']}: {r['error']}")


def print_summary(
    args: argparse.Namespace, prep: CompactionPreparation, summ: Any, ss: SliceSettings
) -> None:
    res = summarize_compaction(
        prep,
        summ,
        style=args.style,
        custom_instructions=args.instructions,
        slices=args.slices or "single-shot",
        slice_settings=ss,
    )
    sent = bool(res.prompt)
    prompt = res.prompt or compaction_prompts(
        prep, style=args.style, custom_instructions=args.instructions, redact=not args.send_secrets
    )
    if not sent and args.slices and args.slices != "single-shot":
        prompt = f"(single-shot prompts shown; {args.slices} sends one prompt per slice)\n\n" + prompt
    if args.json:
        print_json(
            {
                "summarizer": res.summarizer,
                "style": args.style,
                "slices": args.slices or "single-shot",
                "text": res.text,
                "error": res.error,
                "fellBack": res.fell_back,
                "usage": res.usage.__dict__,
                "firstKeptEntryId": prep.firstKeptEntryId,
                "isSplitTurn": prep.isSplitTurn,
                "prompt": prompt if args.show_prompt else None,
                "promptSent": sent,
            },
            indent=2,
        )
        return
    if args.show_prompt:
        print(
            "(the offline extractive summarizer sends nothing; below is exactly what an LLM summarizer would "
            "be sent)\n"
            if not sent
            else "",
            end="",
        )
        print(prompt + "\n\n===== summary =====")
    u = res.usage
    print(
        f"[{res.summarizer}] {u.calls} call(s), {u.input_tokens:,} in / {u.output_tokens:,} out tokens, "
        f"{u.seconds:.2f} s" + (f", ${u.cost_usd:.4f}" if u.cost_usd else "")
    )
    if res.error:
        print(f"ERROR: {res.error} (the offline extractive summary stands in)")
    print(res.text)


COMMAND = Command(
    "summarize",
    "the summary a compaction at the leaf would get (offline or by an LLM)",
    add_arguments,
    run,
    description="The summary pi's compaction would store at the leaf, by any summarizer. Budgets, as pi's: "
    "0.8 × --reserve for the history summary, 0.5 × for a split turn's prefix.",
)
