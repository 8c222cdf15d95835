"""Random valid pi sessions, for the differential test against pi's own code.

``random_session(rng)`` returns the JSONL text of one session. What it covers:

* trees: pi-like navigation (the leaf jumps back to an earlier entry, sometimes with a
  ``branch_summary`` whose ``fromId`` is the new leaf, as ``navigateTree`` writes it), and the
  file's last entry is pi's leaf;
* every entry type (``message``, ``model_change``, ``thinking_level_change``, ``compaction``,
  ``branch_summary``, ``custom``, ``custom_message``, ``label``, ``session_info``) and every
  message role (``user``, ``assistant``, ``toolResult``, ``bashExecution``, ``custom``), with the
  optional fields present, absent, empty, zero or false;
* several compactions, whose ``firstKeptEntryId`` is usually on their own path but sometimes on
  another branch or unknown, with and without ``details``, sometimes ``fromHook``;
* JavaScript edge cases: UTF-16 lengths (astral-plane characters, ZWJ sequences, a surrogate
  pair straddling the 2000-unit tool-result truncation, rarely a lone surrogate), number
  literals that ``JSON.stringify`` prints differently from Python (``1.0``, ``2.5e-7``, ``1e21``,
  ``-0.0``, ints beyond 2**53, ``5e-324``), integer-like keys (``{"b":1,"2":x,"1":y}``, ``"10"``,
  ``"01"``, ``"4294967295"``), ``__proto__`` keys, sort order of paths by UTF-16 units;
* text lengths from 0 to about 20000 characters, so the keep values 2000…40000 cut in
  different places;
* sometimes a legacy v1 file (no version, no ids, ``firstKeptEntryIndex``) or a v2 file with a
  ``hookMessage``, which pi migrates.

Timestamps never decrease (equal ones happen, as when pi writes several entries in one
millisecond). Lines are written compact or spaced, ASCII-escaped or not, like different writers.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

__all__ = ["random_session", "RAW_NUMBERS"]

ASCII = [
    "the",
    "a",
    "function",
    "return",
    "x",
    "const",
    "id",
    "42",
    "foo_bar",
    "path/to",
    "{",
    "}",
    "()",
    "=>",
    "#",
    ";",
    "'",
    "\\",
    '"',
    "\t",
    "\n",
    "  ",
    "<b>",
    "&amp;",
    "</summary>",
    "`",
    "```",
]
UNICODE = [
    "γάμμα",
    "naïve",
    "日本語",
    "ünïcödé",
    "ｆｕｌｌ",
    "e\u0301",
    "\u2028",
    "\u2029",
    "\ufeff",
    "\u00a0",
    "\x00",
    "\x1f",
    "\x7f",
    "\u200b",
    "Ω",
    "ß",
    "İ",
    "ﬁ",
    "\uffff",
    "\ue000",
]
ASTRAL = ["😀", "𝕏", "👩‍💻", "🇫🇷", "𝄞", "\U0010ffff", "🏳️‍🌈", "👍🏽", "𠜎", "\U0001f9d1\u200d\U0001f52c"]
LONE = [
    "\ud800",
    "\udfff",
    "\ud83d",
]  # lone surrogates: JSON-escaped in the file, as JSON.stringify writes them

PATHS = [
    "src/a.ts",
    "src/b.ts",
    "src/B.ts",
    "README.md",
    "a.md",
    "Z.md",
    "docs/😀.md",
    "docs/𝕏.md",
    "docs/ｆ.md",
    "docs/\uffff.md",
    "src/ü.py",
    "/abs/x.py",
    "./rel",
    "dir/",
    "a b.txt",
    "src/a.ts ",
]
TOOLS = ["read", "write", "edit", "bash", "grep", "ls", "find", "mcp__x__y", "Read", ""]
KEYS = [
    "b",
    "2",
    "1",
    "a",
    "10",
    "01",
    "-1",
    "1.5",
    "0",
    "4294967294",
    "4294967295",
    "9007199254740993",
    "",
    " 1",
    "path",
    "𝕏",
    "__proto__",
    "constructor",
    "z",
    "A",
]
# Number literals as they can appear in a session file, with the value JSON.parse gives them.
RAW_NUMBERS = [
    "1.0",
    "2.5e-7",
    "2.5e-07",
    "1e21",
    "1e+21",
    "1E21",
    "1e20",
    "1e-7",
    "0.000001",
    "0.1",
    "0.30000000000000004",
    "-0",
    "-0.0",
    "0.0",
    "5e-324",
    "1.7976931348623157e308",
    "123456789012345678901",
    "9007199254740993",
    "-9007199254740993",
    "18446744073709551616",
    "1e16",
    "123456789.123456789",
    "1.50",
    "100e-2",
    "4.35",
    "1e-6",
    "-1.5e-10",
    "1.7e308",
    "0.1e1",
    "12345678901234567890123456789",
    "7",
    "-12",
]
# Not here: literals beyond the double range such as 1e400 (JSON.parse makes them Infinity, which
# JSON.stringify, hence pi, never writes).
IMG = {
    "type": "image",
    "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "mimeType": "image/png",
}


class _Raw:
    """A number literal written verbatim into the JSON text."""

    def __init__(self, literal: str) -> None:
        self.literal = literal


class _Gen:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.raw: list[str] = []
        # per-session flavour: how long texts are, how exotic
        self.scale = rng.choice([0.15, 0.5, 1.0, 1.0, 2.5])
        self.exotic = rng.choice([0.0, 0.05, 0.2, 0.5])
        self.lone = rng.random() < 0.08
        self.pending: list[tuple[str, str]] = []

    # ----------------------------------------------------------------- texts and values
    def length(self) -> int:
        r = self.rng.random()
        if r < 0.06:
            return 0
        if r < 0.3:
            return self.rng.randint(1, 20)
        if r < 0.65:
            return self.rng.randint(20, 300)
        if r < 0.9:
            return int(self.rng.randint(300, 3000) * self.scale)
        return int(self.rng.randint(3000, 20000) * self.scale)

    def piece(self) -> str:
        r = self.rng.random()
        if r < self.exotic * 0.5:
            return self.rng.choice(ASTRAL)
        if r < self.exotic:
            return self.rng.choice(UNICODE)
        if self.lone and r < self.exotic + 0.002:
            return self.rng.choice(LONE)
        return self.rng.choice(ASCII)

    def text(self, n: int | None = None) -> str:
        n = self.length() if n is None else n
        if n <= 0:
            return ""
        parts: list[str] = []
        size = 0
        while size < n:
            p = self.piece()
            if self.rng.random() < 0.15:
                p = p * self.rng.randint(2, 40)  # runs, so long texts are cheap to make
            parts.append(p)
            parts.append(" " if self.rng.random() < 0.8 else "")
            size += len(p) + 1
        return "".join(parts)[:n]

    def around_2000(self) -> str:
        """A tool-result text of about 2000 UTF-16 units, sometimes with a surrogate pair across unit 2000."""
        n = self.rng.choice([1998, 1999, 2000, 2001, 2002])
        base = "x" * (n - 2) if self.rng.random() < 0.5 else self.text(n - 2)
        return base + self.rng.choice(["𝕏", "😀", "ab", "é", "\n\n"])

    def number(self) -> Any:
        rng = self.rng
        r = rng.random()
        if r < 0.5:
            return _Raw(rng.choice(RAW_NUMBERS))
        if r < 0.7:
            return rng.choice([rng.random() * 10 ** rng.randint(-30, 30), -rng.random(), rng.random() * 1e-5])
        return rng.randint(-(10**12), 10**12)

    def value(self, depth: int = 0) -> Any:
        rng = self.rng
        k = rng.randrange(10 if depth < 3 else 6)
        if k == 0:
            return self.number()
        if k == 1:
            return rng.choice([True, False, None, 0, 1, -1, "", "0", "false", [], {}])
        if k in (2, 3, 4, 5):
            return self.text(rng.choice([0, 1, 5, 30, rng.randint(0, 400)]))
        if k in (6, 7, 8):
            return self.obj(depth + 1)
        return [self.value(depth + 1) for _ in range(rng.randint(0, 4))]

    def obj(self, depth: int = 0) -> dict[str, Any]:
        return {self.rng.choice(KEYS): self.value(depth) for _ in range(self.rng.randint(0, 5))}

    # ----------------------------------------------------------------- message parts
    def path_value(self) -> Any:
        r = self.rng.random()
        if r < 0.85:
            return self.rng.choice(PATHS)
        return self.rng.choice(["", None, 7, ["src/a.ts"], {"p": 1}, True])

    def tool_args(self, name: str) -> dict[str, Any]:
        rng = self.rng
        args: dict[str, Any] = {}
        if rng.random() < 0.4:
            args = self.obj()
        if name in ("read", "write", "edit", "Read") and rng.random() < 0.9:
            args["path"] = self.path_value()
        if name == "read" and rng.random() < 0.5:
            args["offset"], args["limit"] = self.number(), rng.randint(1, 2000)
        elif name == "write":
            args["content"] = self.text()
        elif name == "edit":
            if rng.random() < 0.5:
                args["oldText"], args["newText"] = self.text(), self.text()
            else:
                args["edits"] = [
                    {"oldText": self.text(), "newText": self.text(), "2": 1, "1": 2}
                    for _ in range(rng.randint(0, 3))
                ]
        elif name == "bash":
            args["command"] = self.text(rng.randint(0, 80))
            if rng.random() < 0.5:
                args["timeout"] = self.number()
        if rng.random() < 0.2:  # keys inserted after "path", some integer-like
            args.update({"b": 1, "2": self.value(1), "1": self.value(1)})
        return args

    def details(self, reads: int, writes: int) -> dict[str, Any]:
        d: dict[str, Any] = {
            "readFiles": self.rng.sample(PATHS, self.rng.randint(0, reads)),
            "modifiedFiles": self.rng.sample(PATHS, self.rng.randint(0, writes)),
        }
        if self.rng.random() < 0.2:  # extensions add their own keys; pi prints details as they are
            d.update(self.obj(1))
            d[self.rng.choice(KEYS)] = self.number()
        return d

    def usage(self) -> dict[str, Any]:
        rng = self.rng
        u: dict[str, Any] = {
            "input": rng.choice([0, rng.randint(0, 200000)]),
            "output": rng.randint(0, 8000),
            "cacheRead": rng.choice([0, rng.randint(0, 150000)]),
            "cacheWrite": rng.randint(0, 9000),
        }
        r = rng.random()
        if r < 0.5:
            u["totalTokens"] = u["input"] + u["output"] + u["cacheRead"] + u["cacheWrite"]
        elif r < 0.65:
            u["totalTokens"] = 0
        elif r < 0.75:
            u["totalTokens"] = rng.randint(1, 300000)
        if rng.random() < 0.8:
            u["cost"] = {
                "input": rng.random() / 10,
                "output": 0.00015,
                "cacheRead": 0,
                "cacheWrite": 1e-7,
                "total": self.number() if rng.random() < 0.3 else rng.random(),
            }
        return u

    def assistant(self, ts: int, want_tools: bool) -> dict[str, Any]:
        rng = self.rng
        blocks: list[dict[str, Any]] = []
        calls: list[tuple[str, str]] = []
        order = []
        if rng.random() < 0.4:
            order.append("thinking")
        if rng.random() < 0.75:
            order.append("text")
        n_tools = rng.choice([1, 1, 1, 2, 3, 5]) if want_tools else (1 if rng.random() < 0.1 else 0)
        order += ["toolCall"] * n_tools
        if rng.random() < 0.2:
            rng.shuffle(order)  # pi's serializer groups by kind, whatever the block order
        if rng.random() < 0.1:
            order += rng.choice([["text"], ["thinking"], ["text", "text"]])
        for kind in order:
            if kind == "text":
                blocks.append({"type": "text", "text": self.text()})
            elif kind == "thinking":
                b: dict[str, Any] = {"type": "thinking", "thinking": self.text()}
                if rng.random() < 0.7:
                    b["thinkingSignature"] = "sig" + str(rng.getrandbits(40))
                blocks.append(b)
            else:
                name = rng.choice(TOOLS)
                cid = f"toolu_{rng.getrandbits(48):012x}"
                calls.append((cid, name))
                blocks.append(
                    {"type": "toolCall", "id": cid, "name": name, "arguments": self.tool_args(name)}
                )
        stop = "toolUse" if calls else "stop"
        r = rng.random()
        if r < 0.08:
            stop = "aborted"
        elif r < 0.15:
            stop = "error"
        elif r < 0.18:
            stop = "length"
        msg: dict[str, Any] = {
            "role": "assistant",
            "content": blocks,
            "api": rng.choice(["anthropic-messages", "openai-responses"]),
            "provider": rng.choice(["anthropic", "openai", "google"]),
            "model": rng.choice(["claude-x", "gpt-y", "gemini-z"]),
        }
        if rng.random() < 0.97:  # pi always writes a usage; a message without one is kept rare
            msg["usage"] = self.usage()
        msg["stopReason"] = stop
        if stop == "error":
            msg["errorMessage"] = self.text(rng.randint(0, 60))
        msg["timestamp"] = ts
        self.pending = calls
        return msg

    def user(self, ts: int) -> dict[str, Any]:
        rng = self.rng
        if rng.random() < 0.55:
            content: Any = self.text()
        else:
            content = []
            for _ in range(rng.randint(0, 4)):
                content.append(IMG if rng.random() < 0.3 else {"type": "text", "text": self.text()})
        return {"role": "user", "content": content, "timestamp": ts}

    def tool_result(self, ts: int) -> dict[str, Any]:
        rng = self.rng
        cid, name = (
            self.pending.pop(0) if self.pending else (f"toolu_{rng.getrandbits(32):x}", rng.choice(TOOLS))
        )
        content: list[dict[str, Any]] = []
        for _ in range(rng.choice([0, 1, 1, 1, 2, 3])):
            r = rng.random()
            if r < 0.15:
                content.append(IMG)
            elif r < 0.3:
                content.append({"type": "text", "text": self.around_2000()})
            else:
                content.append({"type": "text", "text": self.text()})
        m: dict[str, Any] = {"role": "toolResult", "toolCallId": cid, "toolName": name, "content": content}
        if rng.random() < 0.3:
            m["details"] = self.obj()
        r = rng.random()
        if r < 0.7:
            m["isError"] = rng.random() < 0.2
        m["timestamp"] = ts
        return m

    def bash(self, ts: int) -> dict[str, Any]:
        rng = self.rng
        m: dict[str, Any] = {
            "role": "bashExecution",
            "command": self.text(rng.randint(0, 120)),
            "output": self.text(),
        }
        if rng.random() < 0.9:
            m["exitCode"] = rng.choice([0, 0, 1, 2, 127, 130, None, -1])
        m["cancelled"] = rng.random() < 0.15
        m["truncated"] = rng.random() < 0.2
        if rng.random() < 0.6:
            m["fullOutputPath"] = rng.choice(["/tmp/pi-bash-1.log", "", "/tmp/𝕏.log"])
        if rng.random() < 0.4:
            m["excludeFromContext"] = rng.random() < 0.5
        m["timestamp"] = ts
        return m

    def custom_content(self) -> Any:
        rng = self.rng
        if rng.random() < 0.5:
            return self.text()
        return [
            IMG if rng.random() < 0.3 else {"type": "text", "text": self.text()}
            for _ in range(rng.randint(0, 3))
        ]

    def custom_role(self, ts: int, role: str = "custom") -> dict[str, Any]:
        m: dict[str, Any] = {
            "role": role,
            "customType": self.rng.choice(["ext", "hook", "note"]),
            "content": self.custom_content(),
            "display": self.rng.random() < 0.6,
        }
        if self.rng.random() < 0.3:
            m["details"] = self.obj()
        m["timestamp"] = ts
        return m

    def message(self, ts: int, prev_role: str | None, v2: bool) -> dict[str, Any]:
        rng = self.rng
        if self.pending and rng.random() < 0.85:
            return self.tool_result(ts)
        if prev_role == "user" and rng.random() < 0.8:
            role = "assistant"
        elif prev_role == "toolResult" and rng.random() < 0.75:
            role = "assistant"
        else:
            role = rng.choices(
                ["user", "assistant", "toolResult", "bashExecution", "custom"], [5, 4, 1, 1, 1]
            )[0]
        if role == "user":
            return self.user(ts)
        if role == "assistant":
            return self.assistant(ts, want_tools=rng.random() < 0.6)
        if role == "toolResult":
            return self.tool_result(ts)
        if role == "bashExecution":
            return self.bash(ts)
        return self.custom_role(ts, "hookMessage" if v2 and rng.random() < 0.7 else "custom")

    # ----------------------------------------------------------------- JSON text
    def encode(self, obj: Any, raw: list[str]) -> Any:
        if isinstance(obj, _Raw):
            raw.append(obj.literal)
            return f"\x00RAW{len(raw) - 1}\x00"
        if isinstance(obj, dict):
            return {k: self.encode(v, raw) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self.encode(v, raw) for v in obj]
        return obj

    def line(self, obj: dict[str, Any]) -> str:
        rng = self.rng
        raw: list[str] = []
        compact = rng.random() < 0.7
        text = json.dumps(
            self.encode(obj, raw),
            ensure_ascii=rng.random() < 0.3 or self.lone,
            separators=(",", ":") if compact else (", ", ": "),
        )
        # a placeholder comes out as "\u0000RAW7\u0000" (json always escapes the NUL)
        return _PLACEHOLDER.sub(lambda m: raw[int(m[1])], text) if raw else text


_PLACEHOLDER = re.compile(r'"\\u0000RAW(\d+)\\u0000"')


def _iso(ms: int) -> str:
    s, milli = divmod(ms, 1000)
    m, sec = divmod(s, 60)
    h, mi = divmod(m, 60)
    d, hh = divmod(h, 24)
    return f"2026-01-{1 + d:02d}T{hh:02d}:{mi:02d}:{sec:02d}.{milli:03d}Z"


def random_session(rng: random.Random) -> str:
    """JSONL text of one random valid pi session: v3 mostly, sometimes v1 or v2 (pi migrates those)."""
    g = _Gen(rng)
    r = rng.random()
    version = 1 if r < 0.12 else (2 if r < 0.2 else 3)
    n = rng.choice([rng.randint(5, 20), rng.randint(5, 150), rng.randint(60, 150)])

    header: dict[str, Any] = {"type": "session"}
    if version >= 2:
        header["version"] = version
    elif rng.random() < 0.3:
        header["version"] = 1
    header["id"] = (
        f"{rng.getrandbits(32):08x}-{rng.getrandbits(16):04x}-4{rng.getrandbits(12):03x}-8000-{rng.getrandbits(48):012x}"
    )
    header["timestamp"] = "2026-01-01T00:00:00.000Z"
    header["cwd"] = rng.choice(["/p", "/home/u/𝕏 project"])
    if version == 1 and rng.random() < 0.5:  # old headers carried these; pi ignores them
        header.update(provider="anthropic", modelId="claude-old", thinkingLevel="high")

    clock = 1767225600000
    entries: list[dict[str, Any]] = []
    parent_of: dict[str, str | None] = {}
    ids: list[str] = []
    leaf: str | None = None
    prev_role: str | None = None

    def path_of(eid: str | None) -> list[str]:
        out = []
        while eid is not None:
            out.append(eid)
            eid = parent_of.get(eid)
        return out[::-1]

    def new_id() -> str:
        while True:
            eid = f"{rng.getrandbits(32):08x}"
            if eid not in parent_of:
                return eid

    def add(kind: str, **fields: Any) -> dict[str, Any]:
        nonlocal clock, leaf
        # equal timestamps happen, but not on the entries pi's oracle finds again by timestamp
        # (the messages pi rebuilds from custom_message, branch_summary and compaction entries)
        clock += rng.choice(
            [1, 7, 1000]
            if kind in ("custom_message", "branch_summary", "compaction")
            else [0, 0, 1, 7, 1000, 1000, 45000, 3_600_000]
        )
        e: dict[str, Any] = {"type": kind}
        if version >= 2:
            eid = new_id()
            e["id"] = eid
            e["parentId"] = leaf
            parent_of[eid] = leaf
            ids.append(eid)
            leaf = eid
        e["timestamp"] = _iso(clock - 1767225600000)
        e.update(fields)
        entries.append(e)
        return e

    kinds = [
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    ]
    weights = [40, 1.5, 1.5, 2.5, 1, 1, 1.5, 1, 1]
    if version == 1:
        kinds, weights = kinds[:4], weights[:4]

    while len(entries) < n:
        # navigation: the leaf goes back to an earlier entry (a new branch starts there)
        if version >= 2 and ids and rng.random() < 0.07:
            leaf = rng.choice(ids)
            g.pending = []
            prev_role = None
            if version == 3 and rng.random() < 0.5:
                summ = rng.choice(["", g.text(rng.randint(1, 600))])
                bs = add("branch_summary", fromId=leaf, summary=summ)
                if rng.random() < 0.6:
                    bs["details"] = g.details(3, 2)
                if rng.random() < 0.2:
                    bs["fromHook"] = True
                continue
        kind = rng.choices(kinds, weights)[0]
        if kind == "compaction" and len(entries) == n - 1:
            kind = "message"  # a session whose leaf is a compaction cannot be described by pi's oracle
        ts = clock + rng.choice([0, 1, 3])
        if kind == "message":
            m = g.message(ts, prev_role, version == 2)
            prev_role = m["role"]
            add("message", message=m)
            continue
        if kind == "model_change":
            add(
                "model_change",
                provider=rng.choice(["anthropic", "openai"]),
                modelId=rng.choice(["m-a", "m-b", "𝕏"]),
            )
        elif kind == "thinking_level_change":
            add(
                "thinking_level_change",
                thinkingLevel=rng.choice(["off", "minimal", "low", "medium", "high", "xhigh"]),
            )
        elif kind == "compaction":
            fields: dict[str, Any] = {"summary": g.text(rng.randint(0, 3000))}
            if version == 1:
                # index into the parsed file, header included (0 = the header itself)
                k = len(entries)
                fields["firstKeptEntryIndex"] = rng.choice(
                    [rng.randint(1, max(1, k)), max(1, k - rng.randint(0, 5)), 0]
                )
            else:
                own = path_of(leaf)
                others = [i for i in ids if i not in set(own)]
                r = rng.random()
                if own and r < 0.75:
                    fk: str = own[max(0, len(own) - 1 - int(rng.expovariate(0.15)))]
                elif others and r < 0.9:
                    fk = rng.choice(others)
                elif own and r < 0.95:
                    fk = own[0]
                else:
                    fk = "ffffffff"
                fields["firstKeptEntryId"] = fk
            fields["tokensBefore"] = rng.randint(0, 250000)
            if rng.random() < 0.7:
                fields["details"] = g.details(4, 3)
            if rng.random() < 0.2:
                fields["fromHook"] = rng.choice([True, False])
            add("compaction", **fields)
            g.pending = []
        elif kind == "branch_summary":
            e = add(
                "branch_summary",
                fromId=rng.choice(ids[:-1] or ["root"]) if rng.random() < 0.3 else (leaf or "root"),
                summary=rng.choice(["", g.text(rng.randint(1, 800))]),
            )
            if rng.random() < 0.5:
                e["details"] = g.details(3, 3)
        elif kind == "custom":
            add(
                "custom", customType=rng.choice(["ext", "todo"]), data=g.obj() if rng.random() < 0.8 else None
            )
        elif kind == "custom_message":
            fields = {
                "customType": rng.choice(["note", "ext"]),
                "content": g.custom_content(),
                "display": rng.random() < 0.5,
            }
            if rng.random() < 0.3:
                fields["details"] = g.obj()
            add("custom_message", **fields)
        elif kind == "label":
            fields = {"targetId": rng.choice(ids) if ids else "none"}
            if rng.random() < 0.8:
                fields["label"] = rng.choice(["", "checkpoint", "😀 mark"])
            add("label", **fields)
        elif kind == "session_info":
            add("session_info", name=rng.choice(["", "name", " padded ", "𝕏"]))
        prev_role = None if kind != "label" else prev_role

    return "".join(g.line(x) + "\n" for x in [header, *entries])
