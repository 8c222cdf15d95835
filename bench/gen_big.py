"""Generate one big, realistic pi session for benchmarks (streamed: memory stays small).

    python bench/gen_big.py --entries 50000 --out bench/out/big-50000.jsonl [--seed 1]

The shape of a long coding session: turns of 2–15 tool rounds (reads and bash outputs of
widely varied sizes — most small, about one in sixteen 10–60k characters — edits, greps, tool
errors), a ``/tree`` fork with a branch summary every few thousand entries, and a compaction
roughly every 150k estimated tokens of new content whose ``firstKeptEntryId`` lies about 20k
tokens back on the current path. 50,000 entries come to about 125 MB.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sample_sessions"))

from sessiongen import Writer  # noqa: E402

COMPACT_EVERY_TOKENS = 150_000
KEEP_TOKENS = 20_000


def generate(entries: int, out: Path, seed: int = 1) -> int:
    with open(out, "w", encoding="utf-8") as f:
        w = Writer(lambda line: f.write(line + "\n"), seed=seed, session_id=f"019a7f3e-0000-7000-8000-{seed:012d}")
        rng = w.rng
        recent: list[tuple[str, int]] = []  # (message entry id, cumulative tokens) on the current path
        since_compaction = 0
        next_fork = rng.randint(2000, 5000)
        fork_point: str | None = None
        recent_users: list[str] = []

        def track(eid: str, chars: int) -> None:
            nonlocal since_compaction
            tok = chars // 4
            since_compaction += tok
            recent.append((eid, (recent[-1][1] if recent else 0) + tok))
            if len(recent) > 400:
                del recent[:100]

        while w.n < entries:
            if w.n >= next_fork and len(recent_users) >= 3:
                fork_point = recent_users[-3]  # abandon the last two turns: a short side branch
                # abandon the branch: go back to an earlier user message and summarise what was left
                w.leaf = fork_point
                w.entry("branch_summary", fromId=fork_point,
                        summary=f"## Goal\nExplored {w.words(6)}.\n\n## Progress\n### Done\n- [x] {w.words(10)}\n\n"
                                f"## Next Steps\n1. {w.words(8)}",
                        details={"readFiles": ["src/parser.ts"], "modifiedFiles": []})
                next_fork = w.n + rng.randint(2000, 5000)
                recent.clear()
                recent_users.clear()
            user_id = w.user(f"{w.words(rng.randint(8, 40))}?")
            track(user_id, 200)
            recent_users = [*recent_users[-5:], user_id]
            for _ in range(rng.randint(2, 15)):
                if w.n >= entries:
                    break
                big = rng.random() < 0.06
                tool, args, out_text, err = w.tool_round(big=big)
                if big and tool not in ("read", "bash"):
                    out_text = out_text + "\n" + w.code("generated", rng.randint(200, 900))
                aid, (cid,) = w.assistant("" if rng.random() < 0.6 else w.words(12), [(tool, args)],
                                          thinking=w.words(20) if rng.random() < 0.3 else "")
                track(aid, 300)
                rid = w.tool_result(cid, tool, out_text, is_error=err)
                track(rid, len(out_text))
            aid, _ = w.assistant(f"Done: {w.words(30)}.")
            track(aid, 250)
            if since_compaction >= COMPACT_EVERY_TOKENS and recent:
                total = recent[-1][1]
                first_kept = next((eid for eid, cum in recent if total - cum <= KEEP_TOKENS), recent[-1][0])
                w.compaction(first_kept, ["src/lexer.ts"], ["src/parser.ts", "src/cache.ts"],
                             tokens_before=since_compaction + KEEP_TOKENS)
                since_compaction = 0
    return w.n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--entries", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    n = generate(args.entries, Path(args.out), args.seed)
    print(f"wrote {args.out}: {n:,} entries, {Path(args.out).stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
