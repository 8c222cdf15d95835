"""The options commands share, each declared once (``add_*``), and the values read from them.

A command builds its parser from these: ``add_session(p); add_leaf(p); add_json(p)`` — so a flag
has one name, one type and one default everywhere it appears.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from pydantic import BaseModel, ValidationError

from ..policies import POLICIES
from ..pruning import REGISTRY, get_strategy, parse_settings
from ..replay import ReplaySettings, default_strategy
from ..session.tree import Session
from ..summarize import SUMMARIZERS
from ..tokens import COUNTERS
from ..window import MIN_WINDOW
from .base import EXIT_USAGE, error_text, fail, resolve_leaf

PI_VERSIONS = ("0.73", "0.58")

# ---------------------------------------------------------------------------------------------
# argument types
# ---------------------------------------------------------------------------------------------


def _whole_number(text: str, least: int, rule: str, unit: str = "tokens") -> int:
    """``text`` as a whole number (of ``unit``), at least ``least`` (else ``rule``, a phrase, says why)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a whole number{' of ' + unit if unit else ''}: {text!r}"
        ) from None
    if n < least:
        raise argparse.ArgumentTypeError(f"{rule}, not {n:,}")
    return n


def window_tokens(text: str) -> int:
    """``--window``: a context window, at least :data:`inspector.window.MIN_WINDOW` tokens (as
    :class:`inspector.replay.ReplaySettings` and the doctor's options require)."""
    return _whole_number(text, MIN_WINDOW, f"a context window is at least {MIN_WINDOW:,} tokens")


def token_count(text: str) -> int:
    """``--keep-recent-tokens``, ``--reserve``: a whole number of tokens, 0 or more."""
    return _whole_number(text, 0, "a number of tokens is 0 or more")


def worker_count(text: str) -> int:
    """``--workers``: 0 or more worker processes."""
    return _whole_number(text, 0, "the number of workers is 0 or more", "workers")


def limit(text: str) -> int:
    """``--limit``: how many rows to show, 0 or more (a negative one had cut rows off the end)."""
    return _whole_number(text, 0, "a limit is 0 or more", "")


def retries(text: str) -> int:
    """``--max-retries``: 0 or more."""
    return _whole_number(text, 0, "retries are 0 or more", "retries")


def positive_number(text: str) -> float:
    """``--timeout``, ``--recent-boost``: a finite number above 0."""
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(x) and x > 0):
        raise argparse.ArgumentTypeError(f"a positive number, not {text}")
    return x


def ratio(text: str) -> float:
    """``--compression-ratio``: a number above 0 and at most 1."""
    x = positive_number(text)
    if x > 1:
        raise argparse.ArgumentTypeError(f"a ratio is at most 1, not {text}")
    return x


def numbers(text: str) -> list[int]:
    """``--keep 2000,5000``: integers separated by commas."""
    out = []
    for x in text.split(","):
        x = x.strip()
        if not x:
            continue
        out.append(token_count(x))
    return out


def counter_names(text: str) -> list[str]:
    """``--counters pi,tiktoken``: token counters by name."""
    names = [x for x in text.split(",") if x]
    unknown = [n for n in names if n not in COUNTERS]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown token counter {unknown[0]!r}; choose from {', '.join(COUNTERS)}"
        )
    return names


# ---------------------------------------------------------------------------------------------
# declarations
# ---------------------------------------------------------------------------------------------


def session_path(text: str) -> str:
    """A session file's path: not empty (``"$SESSION"`` unset had read as the current folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("a session file's path, not an empty value")
    return text


def add_session(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "session",
        type=session_path,
        help="a session file: pi's JSONL, or Claude Code's, Codex's or OpenCode's",
    )


def leaf_ref(text: str) -> str:
    """``--leaf``: not empty (``--leaf "$LEAF"`` with ``LEAF`` unset had meant pi's leaf to some
    commands and no entry to others)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an entry id, @INDEX or 'leaf', not an empty value")
    return text


def add_leaf(p: argparse.ArgumentParser, what: str = "the branch ending at this entry") -> None:
    p.add_argument(
        "--leaf",
        type=leaf_ref,
        help=f"{what}: an entry id, @INDEX or 'leaf' (default: pi's leaf, the last entry)",
    )


def add_json(p: argparse.ArgumentParser, *, csv: str = "") -> None:
    """``--json`` (with ``csv``, what a CSV row is: ``--json`` or ``--csv``)."""
    g = p.add_mutually_exclusive_group() if csv else p
    g.add_argument("--json", action="store_true", help="print JSON instead of text")
    if csv:
        g.add_argument("--csv", action="store_true", help=f"print CSV (one row per {csv}) instead of text")


def add_counter(p: argparse.ArgumentParser, *, usage: bool = True) -> None:
    p.add_argument(
        "--counter",
        default="pi",
        choices=[*COUNTERS, *(["usage"] if usage else [])],
        help="pi estimate, tiktoken, calibrated (tiktoken × the session's own ratio and per-message cost, fitted "
        "to its recorded usage)" + (", or usage (pi's usage-based context size)" if usage else ""),
    )


def add_counters(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--counters",
        default="pi,tiktoken",
        type=counter_names,
        help="token counters to report (default pi,tiktoken)",
    )


def add_window(p: argparse.ArgumentParser, purpose: str = "") -> None:
    p.add_argument(
        "--window",
        type=window_tokens,
        help=f"context window{purpose} (default: the one the session records (Codex), else its model's in "
        "pi's model list, else 200000; Claude Code: 200000, or 1000000 when an answered call held more)",
    )


def add_reserve(p: argparse.ArgumentParser) -> None:
    p.add_argument("--reserve", type=token_count, default=16384, help="pi reserveTokens (default 16384)")


def add_budgets(p: argparse.ArgumentParser) -> None:
    """pi's compaction settings: ``--keep-recent-tokens`` and ``--reserve``."""
    p.add_argument(
        "--keep-recent-tokens", type=token_count, default=20000, help="pi keepRecentTokens (default 20000)"
    )
    add_reserve(p)


def add_pi_version(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--pi-version", choices=PI_VERSIONS, default="0.73", help="pi's prepareCompaction rule (default 0.73)"
    )


def add_strategy(p: argparse.ArgumentParser, *, required: bool = False) -> None:
    """``--strategy`` (a pruning strategy) and its ``--set KEY=VALUE`` settings."""
    p.add_argument(
        "--strategy",
        required=required,
        default=None,
        choices=list(REGISTRY),
        metavar="STRATEGY",
        help=f"pruning strategy: {', '.join(REGISTRY)}"
        + (
            ""
            if required
            else " (default: as recorded — the agent's own pruning in another agent's file, none in "
            "pi's, which records none; see `inspector prune --help`)"
        ),
    )
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="a pruning setting (repeatable)")


def add_summarizer(p: argparse.ArgumentParser, purpose: str = "") -> None:
    """``--summarizer`` and what an LLM one needs: ``--model``, ``--base-url``, ``--send-secrets``."""
    p.add_argument(
        "--summarizer",
        default="offline",
        choices=list(SUMMARIZERS),
        help=f"summarizer{purpose} (default offline)",
    )
    p.add_argument("--model", help="LLM summarizer: the model to ask")
    p.add_argument(
        "--base-url",
        help="OpenAI-compatible summarizer: the endpoint (OpenRouter, Ollama, vLLM, LM Studio, "
        "llama.cpp; e.g. http://127.0.0.1:11434/v1)",
    )
    p.add_argument(
        "--send-secrets",
        action="store_true",
        help="LLM summarizer: send the session's text without redacting secrets (redacted by default)",
    )


def add_keep_secrets(p: argparse.ArgumentParser, when: str = "") -> None:
    p.add_argument(
        "--keep-secrets",
        action="store_true",
        help=f"{when}do not redact secrets (API keys, tokens, passwords, private keys, …)",
    )


def add_output(p: argparse.ArgumentParser, help: str, *, required: bool = False) -> None:
    p.add_argument("-o", "--output", required=required, help=help)
    add_force(p)


def add_force(p: argparse.ArgumentParser) -> None:
    """``--force``: replace an output file that holds a session (:func:`inspector.importers.session_held`)."""
    p.add_argument(
        "--force",
        action="store_true",
        help="replace the output file even when it holds a session (any agent's session file, or an "
        "SQLite database); without it such a file is never written over",
    )


def add_cache(p: argparse.ArgumentParser) -> None:
    """``--cache off|model`` and ``--cache-retention``: price calls with the provider's prompt cache."""
    from ..cache import RETENTIONS

    p.add_argument(
        "--cache",
        default="model",
        choices=["off", "model"],
        help="model: billed cost with each provider's prompt cache (read, write, uncached); "
        "off: only the blended per-token cost (default model)",
    )
    p.add_argument(
        "--cache-retention",
        default="auto",
        choices=list(RETENTIONS),
        help="cache lifetime: short (Anthropic 5 min, OpenAI 10 min), long (1 h, 24 h), none, or "
        "auto: long where the session's recorded reads show it (default auto)",
    )


def add_corpus(p: argparse.ArgumentParser, what: str = "") -> None:
    """``CORPUS…``: session files, folders, globs or ``@AGENT`` (see :mod:`inspector.corpus.items`)."""
    p.add_argument(
        "session",
        nargs="+",
        type=session_path,
        metavar="CORPUS",
        help=f"{what}session files, folders (searched recursively; hidden folders and subagents/ are skipped), "
        "globs ('runs/**/*.jsonl'), or @pi, "
        "@claude-code, @codex, @opencode, @all: the sessions `inspector sessions` finds",
    )


def add_engine(p: argparse.ArgumentParser) -> None:
    """Where a corpus runs: ``--engine``, ``--workers``, ``--scheduler``."""
    p.add_argument(
        "--engine",
        choices=["local", "dask"],
        default=None,
        help="local: a process pool on this machine (default); dask: Dask distributed (a LocalCluster, "
        "or the cluster --scheduler names; needs the [dask] extra)",
    )
    p.add_argument(
        "--workers",
        type=worker_count,
        default=None,
        help="worker processes (default: this machine's cores; 0 = in this process)",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDR",
        help="a running Dask scheduler, e.g. tcp://10.0.0.5:8786 (implies --engine dask)",
    )


def add_replay(p: argparse.ArgumentParser, *, corpus: bool = False) -> None:
    """Everything a replay depends on (``replay``, ``sweep``, ``export``): the session and the settings.
    With ``corpus``, the session argument takes several sessions (:func:`add_corpus`)."""
    if corpus:
        add_corpus(p, "a session file, or a corpus: ")
    else:
        add_session(p)
    add_strategy(p)
    p.add_argument(
        "--compaction",
        default="recorded",
        choices=list(POLICIES),
        help="compaction policy (default: as recorded)",
    )
    add_window(p)
    add_budgets(p)
    add_counter(p)
    add_summarizer(p, " for simulated compactions")
    add_pi_version(p)
    add_leaf(p, "replay the branch ending at this entry")


# ---------------------------------------------------------------------------------------------
# values
# ---------------------------------------------------------------------------------------------


def key_values(values: list[str] | None) -> dict[str, str]:
    """``--set KEY=VALUE`` (repeated) as a dict, or exit 2."""
    out: dict[str, str] = {}
    for v in values or []:
        if "=" not in v:
            fail(f"--set {v!r}: expected KEY=VALUE", EXIT_USAGE)
        k, _, val = v.partition("=")
        out[k.strip()] = val.strip()
    return out


def strategy_settings(name: str, values: dict[str, str]) -> BaseModel:
    """The settings model of pruning strategy ``name`` from ``--set`` values, or exit 2."""
    try:
        return parse_settings(get_strategy(name), values)
    except (KeyError, ValueError) as e:
        fail(error_text(e), EXIT_USAGE)


def replay_settings(args: argparse.Namespace, session: Session) -> ReplaySettings:
    """The :class:`ReplaySettings` the options of :func:`add_replay` describe, or exit 2."""
    from ..summarize.llm import operator_key
    from ..window import window_settings

    sets = key_values(args.set)
    if sets and args.strategy in (None, "none"):
        fail("--set needs a --strategy", EXIT_USAGE)
    strategy: dict[str, Any] = strategy_settings(args.strategy, sets).model_dump() if sets else {}
    try:
        return ReplaySettings(
            summarizer_api_key=operator_key(args.summarizer, args.base_url),
            summarizer_redact=not args.send_secrets,
            compaction=args.compaction,
            strategy=default_strategy(session) if args.strategy is None else args.strategy,
            strategy_settings=tuple(sorted(strategy.items())),
            **window_settings(session, args.window),
            reserve_tokens=args.reserve,
            keep_recent_tokens=args.keep_recent_tokens,
            counter=args.counter,
            summarizer=args.summarizer,
            summarizer_model=args.model,
            summarizer_base_url=args.base_url,
            pi_version=args.pi_version,
            leaf=resolve_leaf(session, args.leaf),
        )
    except ValidationError as e:
        err = e.errors()[0]
        fail(f"{'.'.join(map(str, err['loc']))}: {err['msg']}", EXIT_USAGE)
