"""A deterministic corpus of mixed-agent sessions for tests and benchmarks.

:func:`generate_corpus` writes N sessions — pi, Claude Code, Codex CLI and OpenCode — of
realistic, widely varied sizes into a folder. Same ``n`` and ``seed``, same bytes.

Every session is grown by the project's own session generator (``sessiongen.Writer``: a
TypeScript project, reads, greps, edits, test runs, prompt-cached Anthropic usage). pi sessions
are written as it writes them, with pi's automatic compaction whenever the context passes
``window − reserve`` (pi's ``shouldCompact``, ``keepRecentTokens`` kept). For the other agents the
same conversation (the messages on the path) is re-encoded in that agent's file format
(:mod:`inspector.corpus.formats`), and the session ends before it would compact: their
compaction records are not generated.
"""

from __future__ import annotations

import importlib.util
import random
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson

from .formats import claude_code, codex, opencode

#: the mix of agents, in the order the seed's draws pick them
AGENT_MIX: tuple[tuple[str, float], ...] = (
    ("pi", 0.4),
    ("claude-code", 0.25),
    ("codex", 0.2),
    ("opencode", 0.15),
)
#: (share, min calls, max calls): most sessions are short, a few are long and compact many times
SIZE_MIX: tuple[tuple[float, int, int], ...] = ((0.55, 6, 40), (0.33, 40, 160), (0.12, 160, 420))
WINDOW, RESERVE, KEEP_RECENT = 200_000, 16_384, 20_000  # pi's defaults
EXTENSIONS = {"pi": ".jsonl", "claude-code": ".jsonl", "codex": ".jsonl", "opencode": ".json"}


def sessiongen() -> ModuleType:
    """The project's session generator module (``tools/samples/sessiongen.py``), imported by its
    path (no ``sys.path`` change), so it is found whatever the current folder. The one place that
    knows where it lives."""
    name = "tools.samples.sessiongen"
    if name in sys.modules:  # imported already (from the repository root, or by an earlier call)
        return sys.modules[name]
    path = Path(__file__).resolve().parents[2] / "tools" / "samples" / "sessiongen.py"
    spec = importlib.util.spec_from_file_location(name, path) if path.is_file() else None
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(
            "tools/samples/sessiongen.py (the session generator) is not in this checkout: "
            "the corpus generator needs a source checkout"
        )
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up while they are made
    spec.loader.exec_module(module)
    return module


def _pick(r: random.Random, mix: tuple[tuple[Any, float], ...]) -> Any:
    x, acc = r.random(), 0.0
    for value, share in mix:
        acc += share
        if x < acc:
            return value
    return mix[-1][0]


def plan(n: int, seed: int = 0) -> list[tuple[str, int, int]]:
    """(agent, target model calls, session seed) of each of the ``n`` sessions."""
    r = random.Random(seed)
    out = []
    for _ in range(n):
        agent = _pick(r, AGENT_MIX)
        size = _pick(r, tuple(((lo, hi), share) for share, lo, hi in SIZE_MIX))
        out.append((agent, r.randint(*size), r.randrange(1 << 30)))
    return out


def pi_lines(calls: int, seed: int, *, compact: bool = True) -> list[dict[str, Any]]:
    """A pi session of about ``calls`` model calls, as JSON objects (the header first). With
    ``compact``, pi's automatic compaction runs whenever the context passes ``window − reserve``;
    without it the session ends there instead."""
    g = sessiongen()
    lines: list[dict[str, Any]] = []
    w = g.Writer(
        lambda b: lines.append(orjson.loads(b)),
        seed=seed,
        session_id=f"019cae41-0000-7000-8000-{seed:012x}",
        id_prefix="c",
        project=g.Project(seed, scale=0.6),
        sig_bytes=(32, 64),
    )
    rng = w.rng
    threshold = WINDOW - RESERVE

    def full() -> bool:
        return bool(w.tokens_before() > threshold)

    w.model_change(
        rng.choice(["claude-sonnet-4-5", "claude-sonnet-4-5", "claude-opus-4-5", "claude-haiku-4-5"])
    )
    done = 0
    while done < calls:
        rounds = max(1, min(rng.randint(2, 12), calls - done))
        w.random_turn(rounds, think=0.35, big=0.04, partial=0.3, stop_when=full)
        done = sum(1 for x in lines if x.get("type") == "message" and x["message"].get("role") == "assistant")
        if full():
            if not compact:
                break
            idx = w.pick_first_kept(KEEP_RECENT)
            if idx <= 0:
                break
            w.compaction(_summary(w), idx)
    return lines


def _summary(w: Any) -> str:
    reqs = w.requests[-6:] or ["Keep improving tasklane."]
    done = (
        "\n".join(f"- [x] {r.split('. ')[0][:120]}" for r in reqs[:-1]) or "- [x] Read the relevant modules"
    )
    return (
        f"## Goal\n{reqs[-1][:300]}\n\n## Progress\n### Done\n{done}\n\n### In Progress\n- [ ] "
        f"{reqs[-1].split('. ')[0][:120]}\n\n## Next Steps\n1. Run `npm test` again"
    )


def session_bytes(agent: str, calls: int, seed: int) -> bytes:
    """One generated session in ``agent``'s file format."""
    lines = pi_lines(calls, seed, compact=agent == "pi")
    if agent == "pi":
        return b"".join(orjson.dumps(x) + b"\n" for x in lines)
    encode: dict[str, Callable[[list[dict[str, Any]], int], bytes]] = {
        "claude-code": claude_code,
        "codex": codex,
        "opencode": opencode,
    }
    return encode[agent](lines, seed)


def generate_corpus(
    folder: str | Path, n: int, seed: int = 0, progress: Callable[[int, int], None] | None = None
) -> list[Path]:
    """Write ``n`` sessions of mixed agents into ``folder`` (``0007-codex.jsonl``, …); their paths.
    A file already there with the same name is left as it is (the same seed writes the same bytes)."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, (agent, calls, s) in enumerate(plan(n, seed)):
        p = out / f"{i:04d}-{agent}{EXTENSIONS[agent]}"
        if not p.exists():
            p.write_bytes(session_bytes(agent, calls, s))
        paths.append(p)
        if progress is not None:
            progress(i + 1, n)
    return paths


def main(argv: list[str] | None = None) -> int:
    """``python -m inspector.corpus.generate FOLDER N [--seed S]``."""
    import argparse

    ap = argparse.ArgumentParser(
        prog="python -m inspector.corpus.generate", description=__doc__.split("\n")[0]
    )
    ap.add_argument("folder")
    ap.add_argument("n", type=int)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    paths = generate_corpus(args.folder, args.n, args.seed)
    size = sum(p.stat().st_size for p in paths)
    print(f"{len(paths)} sessions in {args.folder} ({size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
