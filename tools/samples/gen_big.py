"""Generate one big, realistic pi session for benchmarks (streamed: memory stays small).

    python -m tools.samples.gen_big --entries 50000 --out bench/out/big-50000.jsonl [--seed 1]

The shape of a long coding session in a ~200-file TypeScript project: turns of 3–15 model
calls (reads and bash outputs of widely varied sizes — most a few hundred bytes to a few KB,
about one in twelve 10–50 KB, pi's own output limit —, edits with diffs, writes, greps, tool
errors, parallel reads), user ``!`` commands, labels, model and thinking-level changes, aborted
and overloaded answers, extension entries; a ``/tree`` fork with a branch summary every few
thousand entries; and an automatic compaction whenever the context passes pi's threshold
(200k window − 16k reserve), i.e. roughly every 150k estimated tokens of new content, whose
``firstKeptEntryId`` is the user message about 20k tokens back on the current path.
Every line is written as soon as it is made. 50,000 entries come to about 110 MB.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from .sessiongen import Project, Writer

CONTEXT_WINDOW = 200_000
RESERVE_TOKENS = 16_384
KEEP_RECENT_TOKENS = 20_000


def compaction_summary(w: Writer) -> str:
    rng = w.rng
    reqs = w.requests[-12:] or ["Keep improving tasklane."]
    done = (
        "\n".join(f"- [x] {r.split('. ')[0][:160]}" for r in reqs[:-1]) or "- [x] Read the relevant modules"
    )
    mods = w.project.modified[-6:]
    return (
        f"## Goal\n{reqs[-1][:400]}\n\n"
        "## Constraints & Preferences\n- Tests run with `npm test` (vitest); `npm run lint` must stay clean\n"
        f"- Keep the public API of `{rng.choice(w.project.paths)}` stable\n- No new dependencies\n\n"
        f"## Progress\n### Done\n{done}\n\n### In Progress\n- [ ] {reqs[-1].split('. ')[0][:160]}\n\n"
        f"### Blocked\n- {rng.choice(['(none)', 'CI is red on an unrelated flaky sync test', '(none)'])}\n\n"
        f"## Key Decisions\n- **{w.syn.sentence()[:-1]}**: {w.syn.sentence()}\n"
        f"- **Dates stay ISO strings in UTC**: {w.syn.sentence()}\n\n"
        "## Next Steps\n"
        + "".join(f"{i + 1}. Finish `{m}` and run its tests\n" for i, m in enumerate(mods[:3]))
        + "\n## Critical Context\n"
        f"- Last test run: {rng.randint(300, 900)} passed, {rng.choice([0, 0, 1, 2])} failed\n"
        f"- {w.syn.sentence()}"
    )


def branch_summary(w: Writer, abandoned: str) -> str:
    return (
        f"## Goal\n{abandoned[:300]}\n\n## Progress\n### Done\n- [x] {w.syn.sentence()}\n\n"
        f"### In Progress\n- [ ] {w.syn.sentence()}\n\n### Blocked\n- The approach needed changes in "
        f"`{w.rng.choice(w.project.paths)}` the user did not want\n\n## Key Decisions\n"
        "- **Abandoned this branch**: the user went back to try something simpler\n\n"
        f"## Next Steps\n1. {w.syn.sentence()}"
    )


def generate(entries: int, out: Path, seed: int = 1) -> dict[str, int]:
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb", buffering=1 << 20) as f:
        write = f.write

        def emit(line: bytes) -> None:
            write(line)
            write(b"\n")

        w = Writer(
            emit,
            seed=seed,
            session_id=f"019cae41-0000-7000-8000-{seed:012x}",
            id_prefix="e",
            project=Project(seed, extra_modules=170),
            sig_bytes=(64, 256),
        )
        rng = w.rng
        threshold = CONTEXT_WINDOW - RESERVE_TOKENS

        def full() -> bool:
            return w.tokens_before() > threshold

        w.model_change("claude-sonnet-4-5")
        w.thinking_level("medium")
        next_fork = rng.randint(2000, 5000)
        while w.n < entries:
            left = entries - w.n
            users = w.user_indexes()
            if w.n >= next_fork and len(users) >= 3:
                # /tree back to the second-to-last request: the last two turns become a side branch
                i = users[-2]
                w.branch_back_to_user(
                    i, branch_summary(w, w.requests[-2]), label="retry" if rng.random() < 0.3 else None
                )
                next_fork = w.n + rng.randint(2000, 5000)
            rounds = max(1, min(rng.randint(3, 15), (left - 2) // 2))
            w.random_turn(rounds, think=0.4, big=0.045, partial=0.2, stop_when=full)
            x = rng.random()
            if x < 0.03:
                w.bash(
                    rng.choice(["git status", "npm test", "git stash list", "ls dist"]),
                    w.out.git_status() if rng.random() < 0.5 else w.out.vitest(w.ms),
                    rng.choice([0, 0, 0, 1]),
                )
            elif x < 0.04:
                w.label(w.leaf or "", rng.choice(["checkpoint", "works", "before refactor", "review me"]))
            elif x < 0.045:
                w.thinking_level(rng.choice(["low", "medium", "high", "xhigh"]))
            elif x < 0.048:
                w.model_change(rng.choice(["claude-sonnet-4-5", "claude-opus-4-5"]))
            elif x < 0.056:
                w.user(
                    "Also "
                    + w.request(rng.sample(w.project.paths, 1), rng.choice(["cache", "query", "board"]))
                )
                w.step(
                    text="I'll start by",
                    thinking="First I need to",
                    stop="aborted",
                    error="Request was aborted",
                )
            elif x < 0.06:
                w.user("Go on.")
                w.step(
                    stop="error",
                    error='529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
                )
            elif x < 0.065:
                w.custom(
                    "todo",
                    {"todos": [{"id": k, "done": rng.random() < 0.5} for k in range(rng.randint(1, 6))]},
                )
            elif x < 0.068:
                w.custom_message("reminder", f"Reminder: {w.syn.sentence()}", display=True)
            if full():
                idx = w.pick_first_kept(KEEP_RECENT_TOKENS)
                if idx > 0:
                    w.compaction(compaction_summary(w), idx)
    w.stats["entries"] = w.n
    return w.stats


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--entries", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    t = time.perf_counter()
    st = generate(args.entries, Path(args.out), args.seed)
    print(
        f"wrote {args.out}: {st['entries']:,} entries, {Path(args.out).stat().st_size / 1e6:.1f} MB, "
        f"{st['compactions']} compactions, {st['branches']} branches, {time.perf_counter() - t:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
