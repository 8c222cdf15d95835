"""``inspector summarize``: the summary pi's compaction would get at the leaf, by any summarizer."""

from __future__ import annotations

import argparse
from typing import Any

from ..cli import load_or_exit, print_json
from ..compaction import CompactionSettings, prepare_compaction
from . import get_summarizer, summarize_compaction
from .base import SummaryRequest
from .prompts import STYLES, build_prompt
from .slices import STRATEGIES, SliceSettings, compare, run


def cmd_summarize(args: argparse.Namespace) -> int:
    session = load_or_exit(args.session)
    try:
        leaf = session.resolve(args.leaf or "leaf")
    except KeyError as e:
        raise SystemExit(f"inspector: {e.args[0]}") from None
    if leaf is None:
        raise SystemExit("inspector: the session has no entries")
    path = session.path(leaf)
    settings = CompactionSettings(keepRecentTokens=args.keep_recent_tokens, reserveTokens=args.reserve)
    prep = prepare_compaction(session.entries_at(path), settings, path_indexes=path)
    if prep is None:
        raise SystemExit("inspector: pi would not compact here (the branch ends in a compaction)")
    opts: dict[str, Any] = {}
    if args.summarizer != "offline":
        opts = {"model": args.model or "", "base_url": args.base_url, "use_cache": not args.no_cache,
                "timeout": args.timeout}
    try:
        summ = get_summarizer(args.summarizer, **opts)
    except ValueError as e:
        raise SystemExit(f"inspector: {e}") from None
    budget = int(0.8 * settings.reserveTokens)
    if args.compare_slices:
        rows = compare(prep.messagesToSummarize, summ, budget, SliceSettings(), args.style)
        if args.json:
            print_json({"table": rows}, indent=2)
        else:
            print(f"{'strategy':<24} {'input tokens':>12} {'output tokens':>13} {'calls':>6} {'time ms':>8}")
            for r in rows:
                print(f"{r['strategy']:<24} {r['inputTokens']:>12,} {r['outputTokens']:>13,} {r['calls']:>6} {r['timeMs']:>8,}")
        return 0
    if args.slices and args.slices != "single-shot":
        res = run(args.slices, prep.messagesToSummarize, summ, budget, SliceSettings(), args.style)
    else:
        res = summarize_compaction(prep, summ, style=args.style, custom_instructions=args.instructions)
    prompt = build_prompt(SummaryRequest(prep.messagesToSummarize, prep.previousSummary, args.instructions, budget,
                                         "history", args.style))
    if args.json:
        print_json({"summarizer": res.summarizer, "text": res.text, "error": res.error, "fellBack": res.fell_back,
                    "usage": res.usage.__dict__, "firstKeptEntryId": prep.firstKeptEntryId,
                    "prompt": {"system": prompt[0], "user": prompt[1]} if args.show_prompt else None}, indent=2)
        return 0
    if args.show_prompt:
        print("=== prompt (system) ===\n" + prompt[0] + "\n=== prompt (user) ===\n" + prompt[1] + "\n=== summary ===")
    print(f"[{res.summarizer}]" + (f"  ERROR: {res.error}" if res.error else ""))
    print(res.text)
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("summarize", help="the summary a compaction at the leaf would get")
    p.add_argument("session")
    p.add_argument("--leaf")
    p.add_argument("--keep-recent-tokens", type=int, default=20000)
    p.add_argument("--reserve", type=int, default=16384)
    p.add_argument("--summarizer", default="offline", choices=["offline", "openai", "anthropic"])
    p.add_argument("--model", help="model name for an LLM summarizer")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint (OpenRouter, Ollama, vLLM, LM Studio, llama.cpp)")
    p.add_argument("--timeout", type=float, default=120.0)
    p.add_argument("--style", default="pi", choices=list(STYLES))
    p.add_argument("--instructions", help="custom instructions added to the prompt")
    p.add_argument("--slices", choices=list(STRATEGIES), help="slice strategy (default single-shot)")
    p.add_argument("--compare-slices", action="store_true", help="print the research note's table for every strategy")
    p.add_argument("--show-prompt", action="store_true", help="print the exact prompt sent")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the summary cache")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_summarize)
