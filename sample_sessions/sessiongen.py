"""Building blocks for realistic, deterministic pi v3 sessions (samples and benchmarks).

A :class:`Writer` appends entries the way pi's ``SessionManager`` does (8-hex-digit ids, each
entry a child of the current leaf, ISO timestamps) and streams them to a file or a list, so a
200,000-entry session never sits in memory. Content comes from a seeded ``random.Random``:
the same seed always gives byte-identical files.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

START = datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)
MODEL = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5"}
PRICE = {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}  # USD per 1M tokens

WORDS = (
    "parser token stream buffer config session context window summary compaction branch cache "
    "request handler router schema migration index query result error retry timeout worker queue "
    "event listener render component state reducer effect hook module export import test fixture"
).split()
FILES = [
    "src/index.ts", "src/parser.ts", "src/lexer.ts", "src/config.ts", "src/session.ts", "src/cache.ts",
    "src/router.ts", "src/utils/strings.ts", "src/utils/paths.ts", "test/parser.test.ts",
    "test/lexer.test.ts", "README.md", "package.json", "docs/design.md", "src/server/http.ts",
]


def ts(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


class Writer:
    """Appends pi entries; ``emit`` receives each JSON line (header first)."""

    def __init__(self, emit: Callable[[str], None], seed: int, session_id: str, cwd: str = "/home/dev/project"):
        self.emit = emit
        self.rng = random.Random(seed)
        self.t = START
        self.n = 0
        self.leaf: str | None = None
        self.context_chars = 0  # rough size of the live context, for realistic usage numbers
        self.emit(json.dumps({"type": "session", "version": 3, "id": session_id, "timestamp": ts(self.t),
                              "cwd": cwd}, ensure_ascii=False))

    # -- low level ---------------------------------------------------------------------------
    def tick(self, lo: float = 1, hi: float = 8) -> datetime:
        self.t += timedelta(milliseconds=int(self.rng.uniform(lo, hi) * 1000))
        return self.t

    def entry(self, type_: str, parent: str | None | bool = True, **fields: Any) -> str:
        self.n += 1
        eid = f"{self.n:08x}"
        pid = self.leaf if parent is True else (None if parent is False else parent)
        t = self.tick()
        obj = {"type": type_, "id": eid, "parentId": pid, "timestamp": ts(t), **fields}
        self.emit(json.dumps(obj, ensure_ascii=False))
        self.leaf = eid
        return eid

    def ms(self) -> int:
        return int(self.t.timestamp() * 1000)

    # -- messages ------------------------------------------------------------------------------
    def user(self, text: str | list[dict[str, Any]]) -> str:
        self.context_chars += len(text) if isinstance(text, str) else sum(len(b.get("text", "")) for b in text)
        return self.entry("message", message={"role": "user", "content": text, "timestamp": self.ms() + 1000})

    def assistant(self, text: str = "", tools: list[tuple[str, dict[str, Any]]] = (), thinking: str = "",
                  stop: str | None = None, error: str | None = None) -> tuple[str, list[str]]:
        content: list[dict[str, Any]] = []
        if thinking:
            content.append({"type": "thinking", "thinking": thinking, "thinkingSignature": f"sig{self.n}"})
        if text:
            content.append({"type": "text", "text": text})
        ids = []
        for name, args in tools:
            cid = f"toolu_{self.rng.getrandbits(64):016x}"
            ids.append(cid)
            content.append({"type": "toolCall", "id": cid, "name": name, "arguments": args})
        out_chars = len(text) + len(thinking) + sum(len(json.dumps(a)) + len(n) for n, a in tools)
        prompt = self.context_chars // 4 + 2500  # system prompt and tools
        output = max(1, out_chars // 4)
        cached = int(prompt * self.rng.uniform(0.6, 0.95))
        fresh = prompt - cached
        usage = {"input": fresh, "output": output, "cacheRead": cached, "cacheWrite": 0,
                 "totalTokens": prompt + output}
        usage["cost"] = {k: round(usage[k] * PRICE[k] / 1e6, 6) for k in ("input", "output", "cacheRead", "cacheWrite")}
        usage["cost"]["total"] = round(sum(usage["cost"].values()), 6)
        msg: dict[str, Any] = {"role": "assistant", "content": content, **MODEL, "usage": usage,
                               "stopReason": stop or ("toolUse" if tools else "stop"), "timestamp": self.ms() + 1000}
        if error:
            msg["errorMessage"] = error
        self.context_chars += out_chars
        eid = self.entry("message", message=msg)
        return eid, ids

    def tool_result(self, call_id: str, tool: str, text: str, is_error: bool = False,
                    image: bool = False) -> str:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        if image:
            content.append({"type": "image", "data": TINY_PNG, "mimeType": "image/png"})
        self.context_chars += len(text) + (4800 if image else 0)
        return self.entry("message", message={"role": "toolResult", "toolCallId": call_id, "toolName": tool,
                                              "content": content, "isError": is_error, "timestamp": self.ms() + 1000})

    def bash(self, command: str, output: str, exit_code: int = 0) -> str:
        self.context_chars += len(command) + len(output)
        return self.entry("message", message={"role": "bashExecution", "command": command, "output": output,
                                              "exitCode": exit_code, "cancelled": False, "truncated": False,
                                              "timestamp": self.ms() + 1000})

    # -- content -------------------------------------------------------------------------------
    def words(self, n: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(n))

    def code(self, path: str, lines: int) -> str:
        out = []
        for i in range(lines):
            w = self.rng.choice(WORDS)
            kind = self.rng.randrange(5)
            if kind == 0:
                out.append(f"export function {w}{i}(input: string): {w.capitalize()} {{")
            elif kind == 1:
                out.append(f"  const {w} = await load{w.capitalize()}(input, {{ retries: {i % 5} }});")
            elif kind == 2:
                out.append(f"  if (!{w}) throw new Error(\"{w} missing in {path}\");")
            elif kind == 3:
                out.append(f"  // {self.words(8)}")
            else:
                out.append("}")
        return "\n".join(f"{i + 1:>5}\t{line}" for i, line in enumerate(out))

    def tool_round(self, kind: str | None = None, big: bool = False) -> tuple[str, dict[str, Any], str, bool]:
        """A realistic (tool, args, output, is_error) of the given or a random kind."""
        rng = self.rng
        kind = kind or rng.choices(["read", "bash", "grep", "edit", "ls", "find", "write"],
                                   [30, 22, 12, 18, 6, 5, 7])[0]
        path = rng.choice(FILES)
        if kind == "read":
            lines = rng.choice([40, 80, 150]) if not big else rng.choice([600, 1200, 1800])
            return "read", {"path": path}, self.code(path, lines), False
        if kind == "bash":
            cmd = rng.choice(["npm test", "npm run build", "git status", "git diff --stat", "tsc --noEmit",
                              "ls -la src", "cat package.json"])
            n = rng.choice([3, 10, 40]) if not big else rng.choice([400, 900])
            fail = rng.random() < 0.12
            body = "\n".join(f"{'FAIL' if fail and i == 0 else 'ok'} {self.words(6)}" for i in range(n))
            return "bash", {"command": cmd, "timeout": 120}, body + ("\nexit code 1" if fail else ""), fail
        if kind == "grep":
            pat = rng.choice(WORDS)
            hits = "\n".join(f"{rng.choice(FILES)}:{rng.randrange(1, 400)}: {self.words(7)}"
                             for _ in range(rng.choice([2, 8, 30])))
            return "grep", {"pattern": pat, "path": "src"}, hits, False
        if kind == "edit":
            old, new = self.words(5), self.words(6)
            missing = rng.random() < 0.08
            if missing:
                return "edit", {"path": path, "oldText": old, "newText": new}, \
                    f"Could not find the exact text in {path}. The old text must match exactly.", True
            return "edit", {"path": path, "oldText": old, "newText": new}, f"Successfully replaced text in {path}.", False
        if kind == "write":
            body = self.code(path, rng.choice([20, 60]))
            return "write", {"path": path, "content": body}, f"Successfully wrote {len(body)} bytes to {path}", False
        if kind == "ls":
            return "ls", {"path": "src"}, "\n".join(sorted({f.split("/")[-1] for f in FILES})), False
        return "find", {"pattern": "*.ts"}, "\n".join(f for f in FILES if f.endswith(".ts")), False

    def turn(self, request: str, rounds: int, big_every: int = 0, think: bool = True) -> None:
        """A user request, ``rounds`` tool rounds (one call each), and a final answer."""
        self.user(request)
        for r in range(rounds):
            tool, args, out, err = self.tool_round(big=bool(big_every) and r % big_every == big_every - 1)
            thinking = f"I should {tool} {args.get('path', args.get('command', ''))} next: {self.words(12)}" \
                if think and self.rng.random() < 0.4 else ""
            text = "" if self.rng.random() < 0.6 else f"Let me {tool} that. {self.words(6)}"
            _, (cid,) = self.assistant(text, [(tool, args)], thinking=thinking)
            self.tool_result(cid, tool, out, is_error=err)
        self.assistant(f"Done: {self.words(25)}.\n\nChanged files are listed above; {self.words(10)}.")

    def compaction(self, first_kept: str, read_files: list[str], modified_files: list[str], tokens_before: int) -> str:
        summary = (
            "## Goal\nMake the parser handle streaming input and keep the cache consistent.\n\n"
            "## Constraints & Preferences\n- Keep the public API stable\n- Tests must pass with `npm test`\n\n"
            "## Progress\n### Done\n- [x] Split the lexer from the parser\n- [x] Added retry logic to the session cache\n\n"
            "### In Progress\n- [ ] Streaming mode in `src/parser.ts`\n\n### Blocked\n- (none)\n\n"
            "## Key Decisions\n- **Lexer as a generator**: lets the parser pull tokens lazily\n\n"
            "## Next Steps\n1. Finish streaming mode\n2. Update `test/parser.test.ts`\n\n"
            "## Critical Context\n- `npm test` fails on `lexer.test.ts:41` until the fixture is regenerated"
        )
        blocks = []
        if read_files:
            blocks.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
        if modified_files:
            blocks.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
        summary += "\n\n" + "\n\n".join(blocks) if blocks else ""
        self.context_chars = len(summary)
        return self.entry("compaction", summary=summary, firstKeptEntryId=first_kept, tokensBefore=tokens_before,
                          details={"readFiles": read_files, "modifiedFiles": modified_files})


TINY_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAF0lEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg=="
)
