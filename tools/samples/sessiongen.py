"""Building blocks for realistic, deterministic pi v3 sessions (the samples and the benchmarks).

* :class:`Project` — a virtual TypeScript project ("tasklane", a task-board CLI) whose files are
  synthesised on first use from a seed. Reads return the current text, edits really replace text
  in it (so a later read shows the edit), greps search it, ``ls``/``find`` list it.
* tool-output builders — vitest, tsc, eslint, git, npm, curl... in the shapes those tools print,
  with pi's own result conventions (``Command exited with code N``, the 50 KB / 2000-line
  truncation notices, ``Successfully replaced 1 block(s) in ...``).
* :class:`Writer` — appends entries the way pi's ``SessionManager`` does (each entry a child of
  the current leaf, pi's key order, ISO timestamps with milliseconds) and streams every line to
  ``emit`` as it is made, so a 200,000-entry session never sits in memory. It follows the
  context on the current path (compactions and ``/tree`` branches included) with pi's
  chars/4 estimate, and gives every assistant message a realistic Anthropic ``usage``: prompt
  caching (``cacheRead`` = the previous call's prompt, ``cacheWrite`` = what is new since, a
  handful of uncached ``input`` tokens), cache misses after a model change, a long pause, a
  compaction or a branch, and the cost in dollars at the model's list prices.
* :meth:`Writer.random_turn` — a user request answered by several tool rounds (explore, edit,
  test, fix), the unit the long samples and the benchmark generator are made of.

Everything comes from seeded ``random.Random`` instances: the same seed, the same bytes.
Standard library and ``orjson`` only.
"""

from __future__ import annotations

import base64
import fnmatch
import math
import random
import re
import struct
import zlib
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import orjson

# ---------------------------------------------------------------------------------------------
# constants
# ---------------------------------------------------------------------------------------------
START_MS = int(datetime(2026, 3, 2, 9, 14, 7, tzinfo=UTC).timestamp() * 1000)
CWD = "/home/dev/tasklane"

# USD per million tokens: input, output, cache read, cache write (list prices)
MODELS: dict[str, dict[str, Any]] = {
    "claude-sonnet-4-5": {
        "api": "anthropic-messages",
        "provider": "anthropic",
        "price": (3.0, 15.0, 0.30, 3.75),
    },
    "claude-opus-4-5": {
        "api": "anthropic-messages",
        "provider": "anthropic",
        "price": (5.0, 25.0, 0.50, 6.25),
    },
    "claude-haiku-4-5": {
        "api": "anthropic-messages",
        "provider": "anthropic",
        "price": (1.0, 5.0, 0.10, 1.25),
    },
}
MAX_BYTES = 50 * 1024  # pi's DEFAULT_MAX_BYTES for read / bash output
MAX_LINES = 2000  # pi's DEFAULT_MAX_LINES
CACHE_TTL_MS = 5 * 60 * 1000
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def iso(ms: int) -> str:
    """``2026-03-02T09:14:07.123Z`` — what ``new Date(ms).toISOString()`` prints."""
    return datetime.fromtimestamp(ms // 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}Z"


def dumps(obj: Any) -> bytes:
    return orjson.dumps(obj)


def cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def plural(s: str) -> str:
    if s.endswith("y") and s[-2:-1] not in "aeiou":
        return s[:-1] + "ies"
    if s.endswith(("s", "x", "ch", "sh")):
        return s + "es"
    return s + "s"


def past(v: str) -> str:
    if v.endswith("e"):
        return v + "d"
    if v.endswith("y"):
        return v[:-1] + "ied"
    return v + "ed"


def fmt_size(n: int) -> str:
    """pi's ``formatSize``."""
    if n < 1024:
        return f"{n}B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f}KB"
    return f"{n / 1024 / 1024:.1f}MB"


def tiny_png(width: int = 24, height: int = 16, seed: int = 1) -> str:
    """A real (decodable) little PNG, base64: a few coloured stripes, deterministic."""
    rng = random.Random(seed)
    colours = [tuple(rng.randrange(40, 250) for _ in range(3)) for _ in range(4)]
    raw = bytearray()
    for y in range(height):
        raw.append(0)
        for x in range(width):
            raw.extend(colours[(x // 6 + y // 8) % len(colours)])

    def chunk(tag: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)
        )

    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(bytes(raw), 9))
        + chunk(b"IEND", b"")
    )
    return base64.b64encode(png).decode("ascii")


def truncate_head(
    text: str, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES
) -> tuple[str, dict[str, Any] | None]:
    """pi's ``truncateHead`` (reads): complete lines from the start within both limits."""
    total_bytes = len(text.encode("utf-8"))
    lines = text.split("\n")
    if len(lines) <= max_lines and total_bytes <= max_bytes:
        return text, None
    out: list[str] = []
    size = 0
    by = "lines"
    for i, line in enumerate(lines[:max_lines]):
        b = len(line.encode("utf-8")) + (1 if i else 0)
        if size + b > max_bytes:
            by = "bytes"
            break
        out.append(line)
        size += b
    content = "\n".join(out)
    return content, {
        "content": content,
        "truncated": True,
        "truncatedBy": by,
        "totalLines": len(lines),
        "totalBytes": total_bytes,
        "outputLines": len(out),
        "outputBytes": len(content.encode("utf-8")),
        "lastLinePartial": False,
        "firstLineExceedsLimit": False,
        "maxLines": max_lines,
        "maxBytes": max_bytes,
    }


def truncate_tail(
    text: str, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES
) -> tuple[str, dict[str, Any] | None]:
    """pi's ``truncateTail`` (bash): complete lines from the end within both limits."""
    total_bytes = len(text.encode("utf-8"))
    lines = text.split("\n")
    if len(lines) <= max_lines and total_bytes <= max_bytes:
        return text, None
    out: list[str] = []
    size = 0
    by = "lines"
    partial = False
    for line in reversed(lines[-max_lines:]):
        raw = line.encode("utf-8")
        b = len(raw) + (1 if out else 0)
        if size + b > max_bytes:
            by = "bytes"
            if not out:  # the last line alone is too long: keep its end
                out.append(raw[-max_bytes:].decode("utf-8", "ignore"))
                partial = True
            break
        out.append(line)
        size += b
    out.reverse()
    content = "\n".join(out)
    return content, {
        "content": content,
        "truncated": True,
        "truncatedBy": by,
        "totalLines": len(lines),
        "totalBytes": total_bytes,
        "outputLines": len(out),
        "outputBytes": len(content.encode("utf-8")),
        "lastLinePartial": partial,
        "firstLineExceedsLimit": False,
        "maxLines": max_lines,
        "maxBytes": max_bytes,
    }


# ---------------------------------------------------------------------------------------------
# vocabulary
# ---------------------------------------------------------------------------------------------
NOUNS = [
    "task",
    "board",
    "column",
    "tag",
    "filter",
    "query",
    "token",
    "cache",
    "entry",
    "store",
    "route",
    "session",
    "event",
    "report",
    "reminder",
    "comment",
    "project",
    "view",
    "cursor",
    "batch",
    "job",
    "schedule",
    "member",
    "attachment",
    "field",
    "rule",
    "snapshot",
    "change",
    "webhook",
    "template",
]
VERBS = [
    "parse",
    "load",
    "save",
    "build",
    "resolve",
    "normalize",
    "validate",
    "format",
    "render",
    "apply",
    "merge",
    "find",
    "list",
    "create",
    "update",
    "remove",
    "sync",
    "encode",
    "decode",
    "compare",
    "collect",
    "flush",
    "invalidate",
    "schedule",
    "match",
    "expand",
    "sort",
    "group",
    "diff",
    "hydrate",
]
FIELDS = [
    ("title", "string"),
    ("status", "TaskStatus"),
    ("due", "string | null"),
    ("tags", "string[]"),
    ("createdAt", "string"),
    ("updatedAt", "string"),
    ("boardId", "string"),
    ("position", "number"),
    ("priority", "Priority"),
    ("assignee", "string | undefined"),
    ("archived", "boolean"),
    ("estimate", "number | null"),
    ("parentId", "string | null"),
    ("version", "number"),
    ("labels", "readonly Label[]"),
    ("meta", "Record<string, unknown>"),
    ("expiresAt", "number"),
    ("hits", "number"),
    ("ttlMs", "number"),
    ("key", "string"),
    ("columnId", "string"),
    ("timezone", "string"),
    ("weight", "number"),
    ("source", "'cli' | 'http' | 'sync'"),
]
COMMON = {
    "import",
    "export",
    "string",
    "number",
    "return",
    "logger",
    "options",
    "Record",
    "function",
    "boolean",
    "undefined",
    "unknown",
    "readonly",
    "private",
    "describe",
    "expect",
    "toBeDefined",
    "makeTask",
    "parseQuery",
    "matches",
    "updatedAt",
    "createdAt",
    "status",
    "strict",
    "continue",
    "duplicate",
    "length",
    "throw",
    "toISOString",
    "debug",
}
ERRORS = ["QueryError", "StoreError", "ValidationError", "NotFoundError", "ConflictError", "TypeError"]
TAG_WORDS = [
    "bug",
    "ops",
    "ui",
    "backend",
    "café",
    "urgent",
    "docs",
    "infra",
    "q2",
    "naïve-search",
    "日本語",
    "design",
    "mobile",
    "perf",
    "security",
    "résumé",
]
TITLES = [
    "Fix flaky sync test",
    "Write release notes",
    "Migrate boards to v3 schema",
    "Triage inbox",
    "Review PR #412",
    "Update café menu board",
    "Plan Q2 roadmap",
    "Rotate API keys",
    "Draft onboarding doc",
    "日本語のラベルを修正",
    "Investigate slow list query",
    "Archive done columns",
    "Résumé template polish",
    "Add due-date reminders",
    "Bump TypeScript to 5.7",
    "Clean up stale webhooks",
    "Export CSV for finance",
    "Pair on parser refactor",
    "Backfill createdAt",
    "Check Zoë's access request",
]


def _pick(r: random.Random, seq: Sequence[Any]) -> Any:
    return seq[int(r.random() * len(seq))]


# ---------------------------------------------------------------------------------------------
# synthetic file contents
# ---------------------------------------------------------------------------------------------
class Synth:
    """Plausible TypeScript, tests, markdown and JSON, grown to a target size."""

    def __init__(self, r: random.Random) -> None:
        self.r = r

    # -- typescript --------------------------------------------------------------------------
    def ts_module(self, path: str, target: int, anchors: Sequence[str] = ()) -> str:
        r = self.r
        stem = path.rsplit("/", 1)[-1].split(".")[0]
        noun = stem.split("-")[0]
        others = r.sample(NOUNS, 3)
        depth = path.count("/") - 1
        up = "../" * depth if depth > 0 else "./"
        out = [
            "/**",
            f" * {cap(noun)} {_pick(r, ['helpers', 'primitives', 'service', 'logic', 'module'])} for tasklane.",
            " *",
            f" * {self.sentence()}",
            " */",
            f'import {{ {cap(others[0])}, type {cap(others[1])} }} from "{up}model/{others[0]}";',
            f'import {{ logger }} from "{up}utils/logger";',
            f'import type {{ {cap(noun)}Options }} from "{up}types";',
        ]
        out += [a for a in anchors if a.startswith("import ")] + [""]
        anchors = [a for a in anchors if not a.startswith("import ")]
        size = sum(len(x) + 1 for x in out)
        blocks = [
            self._interface,
            self._function,
            self._function,
            self._class,
            self._table,
            self._async_fn,
            self._switch_fn,
            self._const_re,
            self._arrow,
        ]
        placed = 0
        while size < target or placed < len(anchors):
            if (
                anchors
                and placed < len(anchors)
                and (size > target * (placed + 1) / (len(anchors) + 1) or size >= target)
            ):
                block = anchors[placed].split("\n") + [""]
                placed += 1
            else:
                block = _pick(r, blocks)(_pick(r, NOUNS))
            out.extend(block)
            size += sum(len(x) + 1 for x in block)
        return "\n".join(out)

    def _interface(self, noun: str) -> list[str]:
        r = self.r
        lines = [f"export interface {cap(noun)}Record {{", "  id: string;"]
        for name, typ in r.sample(FIELDS, r.randint(3, 8)):
            lines.append(f"  {name}{'?' if r.random() < 0.25 else ''}: {typ};")
        return lines + ["}", ""]

    def _function(self, noun: str) -> list[str]:
        r = self.r
        verb = _pick(r, VERBS)
        n = cap(noun)
        arg = noun
        f1, f2 = (x[0] for x in r.sample(FIELDS, 2))
        err = _pick(r, ERRORS)
        lines = [
            "/**",
            f" * {self.sentence()}",
            f" * @throws {err} when the {noun} has no `{f1}`.",
            " */",
            f"export function {verb}{n}({arg}: {n}Record, options: {n}Options = {{}}): {n}Record {{",
            f"  const {f1} = {arg}.{f1} ?? options.{f1};",
            f"  if ({f1} === undefined || {f1} === null) {{",
            f"    throw new {err}(`{noun} ${{{arg}.id}} has no {f1}`);",
            "  }",
        ]
        for _ in range(r.randint(1, 4)):
            k = r.randrange(5)
            v = _pick(r, ["next", "item", "row", "candidate", "current"])
            if k == 0:
                lines += [
                    f"  for (const {v} of options.{plural(noun)} ?? []) {{",
                    f"    if ({v}.{f2} === {arg}.{f2}) {{",
                    f'      logger.debug("{verb} {noun}: duplicate {f2}", {{ id: {v}.id }});',
                    "      continue;",
                    "    }",
                    f"    {v}.{f1} = {f1};",
                    "  }",
                ]
            elif k == 1:
                lines += [f"  const {v} = options.{f2} ? normalize{cap(f2)}(options.{f2}) : {arg}.{f2};"]
            elif k == 2:
                lines += [
                    f"  if (options.strict && !{arg}.{f2}) {{",
                    f'    logger.warn("{noun} without {f2}", {{ id: {arg}.id }});',
                    "  }",
                ]
            elif k == 3:
                lines += [f"  // {self.sentence().rstrip('.')}"]
            else:
                lines += [
                    f"  const {v}Count = ({arg}.{f2} as unknown as unknown[] | undefined)?.length ?? 0;"
                ]
        lines += [f"  return {{ ...{arg}, {f1}, updatedAt: new Date().toISOString() }};", "}", ""]
        return lines

    def _class(self, noun: str) -> list[str]:
        r = self.r
        n = cap(noun)
        lines = [
            f"export class {n}Registry {{",
            f"  private readonly items = new Map<string, {n}Record>();",
            "  private version = 0;",
            "",
            f"  constructor(private readonly store: Store, private readonly ttlMs = {r.choice([500, 1000, 30000, 60000])}) {{}}",
            "",
        ]
        for verb in r.sample(
            ["get", "set", "delete", "has", "clear", "refresh", "snapshot"], r.randint(2, 4)
        ):
            if verb == "get":
                lines += [
                    f"  get(id: string): {n}Record | undefined {{",
                    "    const hit = this.items.get(id);",
                    "    if (hit && hit.expiresAt > Date.now()) return hit;",
                    "    this.items.delete(id);",
                    "    return undefined;",
                    "  }",
                    "",
                ]
            elif verb == "set":
                lines += [
                    f"  set(id: string, value: {n}Record): void {{",
                    "    this.items.set(id, { ...value, expiresAt: Date.now() + this.ttlMs });",
                    "    this.version += 1;",
                    "  }",
                    "",
                ]
            elif verb == "refresh":
                lines += [
                    f"  async refresh(id: string): Promise<{n}Record | undefined> {{",
                    f'    const row = await this.store.get<{n}Record>("{plural(noun)}", id);',
                    "    if (row) this.set(id, row);",
                    "    return row;",
                    "  }",
                    "",
                ]
            else:
                lines += [
                    f"  {verb}(id: string): boolean {{",
                    f"    // {self.sentence().rstrip('.')}",
                    "    return this.items.delete(id);",
                    "  }",
                    "",
                ]
        return lines[:-1] + ["}", ""]

    def _table(self, noun: str) -> list[str]:
        r = self.r
        keys = r.sample(
            ["open", "todo", "doing", "blocked", "done", "archived", "wontfix", "review", "draft"],
            r.randint(4, 7),
        )
        lines = [f"export const {noun.upper()}_ALIASES: Record<string, {cap(noun)}Kind> = {{"]
        lines += [f'  "{k}": "{_pick(r, ["todo", "doing", "done", "blocked"])}",' for k in keys]
        return lines + ["};", ""]

    def _async_fn(self, noun: str) -> list[str]:
        r = self.r
        n = cap(noun)
        cols = ", ".join(x[0] for x in r.sample(FIELDS, 4))
        return [
            f"export async function load{n}s(db: Database, boardId: string, limit = {r.choice([50, 100, 500])}): Promise<{n}Record[]> {{",
            "  try {",
            f"    const rows = await db.all<{n}Row>(",
            f'      "SELECT id, {cols} FROM {plural(noun)} WHERE board_id = ? ORDER BY position LIMIT ?",',
            "      [boardId, limit],",
            "    );",
            f"    return rows.map(rowTo{n});",
            "  } catch (err) {",
            f'    logger.error("load{n}s failed", {{ boardId, err }});',
            f"    throw new StoreError(`cannot load {plural(noun)} for board ${{boardId}}`, {{ cause: err }});",
            "  }",
            "}",
            "",
        ]

    def _switch_fn(self, noun: str) -> list[str]:
        r = self.r
        kinds = r.sample(
            ["WORD", "STRING", "NUMBER", "DATE", "COLON", "LT", "GT", "LPAREN", "RPAREN", "NOT"], 4
        )
        lines = [f"function describe{cap(noun)}Token(token: Token): string {{", "  switch (token.kind) {"]
        for k in kinds:
            lines += [
                f'    case "{k}":',
                f"      return `{k.lower()} ${{JSON.stringify(token.text)}} at ${{token.pos}}`;",
            ]
        return lines + ["    default:", "      return `token at ${token.pos}`;", "  }", "}", ""]

    def _const_re(self, noun: str) -> list[str]:
        r = self.r
        pat = _pick(
            r,
            [
                r"/^\d{4}-\d{2}-\d{2}$/",
                r"/[A-Za-z_][\w-]*/y",
                r"/\s+/g",
                r"/^#[0-9a-f]{6}$/i",
                r"/^(?<field>[a-z]+)(?<op>[:<>=]{1,2})(?<value>.+)$/",
            ],
        )
        return [
            f"const {noun.upper()}_{_pick(r, ['PATTERN', 'RE', 'MATCHER'])} = {pat};",
            f"const DEFAULT_{noun.upper()}_LIMIT = {r.choice([20, 50, 100, 250])};",
            "",
        ]

    def _arrow(self, noun: str) -> list[str]:
        r = self.r
        f1 = _pick(r, FIELDS)[0]
        return [
            f"export const by{cap(f1)} = (a: {cap(noun)}Record, b: {cap(noun)}Record): number =>",
            f'  String(a.{f1} ?? "").localeCompare(String(b.{f1} ?? ""), "en", {{ numeric: true }});',
            "",
        ]

    # -- tests ---------------------------------------------------------------------------------
    def test_module(self, path: str, target: int, anchors: Sequence[str] = ()) -> str:
        r = self.r
        stem = path.rsplit("/", 1)[-1].split(".")[0]
        out = [
            'import { describe, expect, it, beforeEach } from "vitest";',
            f'import {{ parseQuery, tokenize }} from "../src/query/{_pick(r, ["parser", "lexer"])}";',
            'import { makeTask, makeBoard } from "./helpers";',
            "",
        ]
        size = sum(len(x) + 1 for x in out)
        anchors = list(anchors)
        while size < target or anchors:
            if anchors and (size > target / 2 or size >= target):
                block = anchors.pop(0).split("\n") + [""]
            else:
                block = [f'describe("{stem} {_pick(r, VERBS)} {_pick(r, NOUNS)}", () => {{']
                if r.random() < 0.3:
                    block += [
                        "  let board: Board;",
                        "  beforeEach(() => {",
                        '    board = makeBoard({ name: "Inbox" });',
                        "  });",
                        "",
                    ]
                for _ in range(r.randint(2, 6)):
                    f1, _t = _pick(r, FIELDS)
                    tag = _pick(r, TAG_WORDS)
                    block += [
                        f'  it("{self.behaviour()}", () => {{',
                        f'    const task = makeTask({{ title: "{_pick(r, TITLES)}", tags: ["{tag}"] }});',
                        f'    const q = parseQuery("{_pick(r, ["tag", "status", "due", "title"])}:{tag}");',
                        f"    expect(q.matches(task)).toBe({_pick(r, ['true', 'false'])});",
                        f"    expect(task.{f1}).{_pick(r, ['toBeDefined()', 'not.toBeNull()', 'toMatchSnapshot()'])};",
                        "  });",
                        "",
                    ]
                block = block[:-1] + ["});", ""]
            out.extend(block)
            size += sum(len(x) + 1 for x in block)
        return "\n".join(out)

    def behaviour(self) -> str:
        r = self.r
        return _pick(
            r,
            [
                "parses {a} filters",
                "keeps {a} order stable",
                "rejects an empty {a}",
                "treats {a} case-insensitively",
                "handles unicode in {a} names",
                "returns no {a} when the board is empty",
                "invalidates the {a} after an edit",
                "round-trips {a} through JSON",
                "sorts {a} by due date then position",
            ],
        ).format(a=plural(_pick(r, NOUNS)))

    # -- prose -----------------------------------------------------------------------------------
    def sentence(self) -> str:
        r = self.r
        t = _pick(
            r,
            [
                "The {n} is {vd} before it is written to the store, so readers never see a half-built {n}.",
                "Use `--{f}` to {v} only the {ns} that match a query.",
                "Each {n} keeps a `version` counter; a stale write fails with `ConflictError`.",
                "{N}s are cached for `ttlMs` milliseconds and dropped on the next write to the same board.",
                "Dates are stored as ISO strings in UTC and shown in the user's timezone.",
                "When the {n} comes from the HTTP API, its `source` field is set to `http`.",
                "This keeps the hot path allocation-free for boards with thousands of {ns}.",
                "Unknown fields are kept as-is so that older clients do not lose data.",
                "{N} ids are ULIDs: they sort by creation time.",
                "Errors carry the offending position so the CLI can underline it.",
                "The {n} list is {vd} lazily the first time a view needs it.",
                "Tags are compared after NFC normalisation, so `café` and `café` are the same tag.",
            ],
        )
        n = _pick(r, NOUNS)
        v = _pick(r, VERBS)
        return t.format(n=n, N=cap(n), ns=plural(n), v=v, vd=past(v), f=_pick(r, FIELDS)[0].lower())

    def markdown(self, title: str, target: int, anchors: Sequence[str] = ()) -> str:
        r = self.r
        out = [f"# {title}", "", " ".join(self.sentence() for _ in range(3)), ""]
        size = sum(len(x) + 1 for x in out)
        anchors = list(anchors)
        while size < target or anchors:
            if anchors and size > target / 2:
                block = anchors.pop(0).split("\n") + [""]
            else:
                k = r.randrange(4)
                n = _pick(r, NOUNS)
                if k == 0:
                    block = [
                        f"## {cap(_pick(r, VERBS))} {plural(n)}",
                        "",
                        " ".join(self.sentence() for _ in range(r.randint(2, 5))),
                        "",
                    ]
                elif k == 1:
                    block = [
                        "```sh",
                        f"tasklane {_pick(r, ['list', 'add', 'edit', 'move', 'export'])} "
                        f"--{_pick(r, FIELDS)[0].lower()} {_pick(r, TAG_WORDS)} --board {_pick(r, ['inbox', 'ops', 'café'])}",
                        "```",
                        "",
                    ]
                elif k == 2:
                    block = ["| option | default | meaning |", "|---|---|---|"]
                    for f, _t in r.sample(FIELDS, r.randint(3, 7)):
                        block.append(
                            f"| `--{f.lower()}` | `{_pick(r, ['none', '50', 'false', 'utc', 'table'])}` | {self.sentence()} |"
                        )
                    block.append("")
                else:
                    block = [f"- {self.sentence()}" for _ in range(r.randint(2, 5))] + [""]
            out.extend(block)
            size += sum(len(x) + 1 for x in block)
        return "\n".join(out)

    def changelog(self, target: int) -> str:
        r = self.r
        out = ["# Changelog", ""]
        major, minor, patch = 0, 14, 3
        size = 20
        while size < target:
            block = [f"## {major}.{minor}.{patch} — 2026-0{r.randint(1, 2)}-{r.randint(10, 28)}", ""]
            for _ in range(r.randint(2, 6)):
                block.append(f"- {_pick(r, ['Fixed', 'Added', 'Changed', 'Removed'])}: {self.sentence()}")
            block.append("")
            out.extend(block)
            size += sum(len(x) + 1 for x in block)
            patch -= 1
            if patch < 0:
                minor, patch = minor - 1, r.randint(2, 6)
        return "\n".join(out)

    def task_json(self, n: int) -> str:
        r = self.r
        items = []
        for i in range(n):
            items.append(
                {
                    "id": "01J" + "".join(r.choices(CROCKFORD, k=23)),
                    "title": _pick(r, TITLES),
                    "status": _pick(r, ["todo", "doing", "done", "blocked"]),
                    "due": None if r.random() < 0.3 else f"2026-0{r.randint(3, 6)}-{r.randint(10, 28)}",
                    "tags": r.sample(TAG_WORDS, r.randint(0, 3)),
                    "position": i,
                    "estimate": None if r.random() < 0.5 else round(r.uniform(0.5, 8), 1),
                    "createdAt": f"2026-02-{r.randint(10, 28)}T{r.randint(8, 18):02d}:{r.randint(0, 59):02d}:00.000Z",
                }
            )
        return orjson.dumps(items, option=orjson.OPT_INDENT_2).decode()


# ---------------------------------------------------------------------------------------------
# the virtual project
# ---------------------------------------------------------------------------------------------
# path, kind, approximate size in bytes
CORE_FILES: list[tuple[str, str, int]] = [
    ("package.json", "package", 0),
    ("tsconfig.json", "tsconfig", 0),
    ("README.md", "md", 5200),
    ("CHANGELOG.md", "changelog", 7000),
    ("docs/cli.md", "md", 21000),
    ("docs/query-language.md", "md", 11000),
    ("src/cli.ts", "ts", 4200),
    ("src/cli/args.ts", "ts", 6500),
    ("src/cli/commands/list.ts", "ts", 5200),
    ("src/cli/commands/edit.ts", "ts", 4800),
    ("src/cli/commands/export.ts", "ts", 3600),
    ("src/query/lexer.ts", "ts", 9500),
    ("src/query/parser.ts", "ts", 27000),
    ("src/query/eval.ts", "ts", 8200),
    ("src/store/db.ts", "ts", 17000),
    ("src/store/cache.ts", "ts", 13500),
    ("src/store/migrations.ts", "ts", 10500),
    ("src/model/task.ts", "ts", 3800),
    ("src/model/board.ts", "ts", 4400),
    ("src/output/table.ts", "ts", 16000),
    ("src/output/csv.ts", "ts", 3100),
    ("src/ui/board.ts", "ts", 12500),
    ("src/ui/format.ts", "ts", 5200),
    ("src/utils/dates.ts", "ts", 4600),
    ("src/utils/slug.ts", "ts", 1800),
    ("src/utils/logger.ts", "ts", 2600),
    ("src/types.ts", "ts", 3000),
    ("test/query.test.ts", "test", 10500),
    ("test/lexer.test.ts", "test", 5600),
    ("test/cache.test.ts", "test", 6200),
    ("test/cli.test.ts", "test", 7400),
    ("test/helpers.ts", "ts", 2400),
    ("test/fixtures/tasks.json", "fixture", 36000),
    ("scripts/render-board.mjs", "ts", 2800),
]
AREAS = ["server", "sync", "plugins", "reports", "api", "jobs", "importers", "notify", "search", "auth"]


class Project:
    """A deterministic virtual TypeScript project; files are synthesised lazily and then mutated."""

    def __init__(
        self,
        seed: int,
        extra_modules: int = 0,
        anchors: dict[str, list[str]] | None = None,
        scale: float = 1.0,
    ) -> None:
        self.seed = seed
        self.anchors = anchors or {}
        self.specs: dict[str, tuple[str, int]] = {p: (k, int(s * scale)) for p, k, s in CORE_FILES}
        r = random.Random(seed * 7919 + 1)
        for _ in range(extra_modules):
            area = _pick(r, AREAS)
            name = f"src/{area}/{_pick(r, NOUNS)}-{_pick(r, VERBS)}.ts"
            size = int(min(90000, max(500, r.lognormvariate(7.9, 0.95))))
            self.specs.setdefault(name, ("ts", size))
            if r.random() < 0.35:
                self.specs.setdefault(
                    f"test/{area}/{name.rsplit('/', 1)[-1][:-3]}.test.ts", ("test", size // 2 + 800)
                )
        self.files: dict[str, str] = {}
        self.modified: list[str] = []  # in order of first modification (for git status)
        self.paths = sorted(self.specs)
        self.tests = [x for x in self.paths if x.endswith(".test.ts")]

    def exists(self, path: str) -> bool:
        return path in self.specs or path in self.files

    def text(self, path: str) -> str:
        t = self.files.get(path)
        if t is None:
            kind, size = self.specs[path]
            syn = Synth(random.Random(zlib.crc32(f"{self.seed}:{path}".encode())))
            anchors = self.anchors.get(path, [])
            if kind == "ts":
                t = syn.ts_module(path, size, anchors)
            elif kind == "test":
                t = syn.test_module(path, size, anchors)
            elif kind == "md":
                t = syn.markdown(
                    _pick(syn.r, ["tasklane", "The tasklane CLI", "Query language"])
                    if path != "README.md"
                    else "tasklane",
                    size,
                    anchors,
                )
            elif kind == "changelog":
                t = syn.changelog(size)
            elif kind == "fixture":
                t = syn.task_json(max(5, size // 260))
            elif kind == "package":
                t = PACKAGE_JSON
            else:
                t = TSCONFIG
            self.files[path] = t
        return t

    def write(self, path: str, content: str) -> None:
        if path not in self.specs:
            self.specs[path] = ("ts", len(content))
            self.paths = sorted(self.specs)
            self.tests = [x for x in self.paths if x.endswith(".test.ts")]
        self.files[path] = content
        self._touch(path)

    def _touch(self, path: str) -> None:
        if path not in self.modified:
            self.modified.append(path)

    def replace(self, path: str, old: str, new: str) -> bool:
        t = self.text(path)
        if t.count(old) != 1:
            return False
        self.files[path] = t.replace(old, new, 1)
        self._touch(path)
        return True

    def pick_edit(self, r: random.Random, path: str) -> tuple[str, str]:
        """A unique snippet of ``path`` (1–4 lines) and a plausible replacement."""
        lines = self.text(path).split("\n")
        for _ in range(30):
            i = r.randrange(len(lines))
            n = r.randint(1, 4)
            old = "\n".join(lines[i : i + n])
            if len(old.strip()) < 12 or self.files[path].count(old) != 1:
                continue
            k = r.randrange(6)
            if k == 5 and n > 1:
                new = lines[i]  # drop the following lines
            elif k == 5 or k == 0:
                new = (
                    old.replace("===", "!==", 1)
                    if "===" in old
                    else old + "\n  // keep in sync with docs/cli.md"
                )
            elif k == 1:
                new = (
                    old.replace("const ", "let ", 1)
                    if "const " in old
                    else old.rstrip() + " // TODO: revisit"
                )
            elif k == 2:
                ind = re.match(r"\s*", lines[i]).group(0)  # type: ignore[union-attr]
                new = f"{ind}if (options.dryRun) return undefined;\n" + old
            elif k == 3:
                new = re.sub(
                    r"\b(\w+)\b",
                    lambda m: m.group(1) + "Next" if m.group(1) in NOUNS else m.group(1),
                    old,
                    count=1,
                )
                if new == old:
                    new = old + "\n"
            else:
                ind = re.match(r"\s*", lines[i]).group(0)  # type: ignore[union-attr]
                new = old + f'\n{ind}logger.debug("{_pick(r, VERBS)} done", {{ ms: Date.now() - started }});'
            if new != old:
                return old, new
        return lines[0], lines[0] + "\n// tasklane"

    def listdir(self, d: str) -> list[str]:
        d = d.strip("/").removeprefix("./").strip("/")
        d = "" if d in ("", ".") else d
        pre = d + "/" if d else ""
        out: set[str] = set()
        for p in self.paths:
            if p.startswith(pre):
                rest = p[len(pre) :]
                out.add(rest.split("/", 1)[0] + ("/" if "/" in rest else ""))
        if not d:
            out |= {
                ".git/",
                ".gitignore",
                "node_modules/",
                "dist/",
                ".eslintrc.cjs",
                "vitest.config.ts",
                "package-lock.json",
                ".pi/",
            }
        return sorted(out, key=str.lower)

    def find(self, pattern: str) -> list[str]:
        full = re.compile(fnmatch.translate(pattern))
        base = re.compile(fnmatch.translate(pattern.removeprefix("**/")))
        return [p for p in self.paths if full.match(p) or base.match(p.rsplit("/", 1)[-1])]

    def grep(self, pattern: str, under: str = "", limit: int = 100) -> list[str]:
        out = []
        for p in self.paths:
            if under and not p.startswith(under.rstrip("/") + "/") and p != under:
                continue
            t = self.files.get(p)
            if t is None:
                if self.specs[p][1] > 40000 and len(out) > 20:
                    continue
                t = self.text(p)
            if pattern not in t:
                continue
            for i, line in enumerate(t.split("\n")):
                if pattern in line:
                    out.append(f"{p}:{i + 1}: {line if len(line) <= 500 else line[:500] + '... [truncated]'}")
                    if len(out) >= limit:
                        return out
        return out


PACKAGE_JSON = """{
  "name": "tasklane",
  "version": "0.14.3",
  "description": "Task boards in your terminal",
  "type": "module",
  "bin": { "tasklane": "dist/cli.js" },
  "scripts": {
    "build": "tsc -p tsconfig.json",
    "test": "vitest run",
    "lint": "eslint 'src/**/*.ts' 'test/**/*.ts'",
    "dev": "tsx src/cli.ts"
  },
  "dependencies": {
    "better-sqlite3": "^11.7.0",
    "commander": "^12.1.0",
    "picocolors": "^1.1.1"
  },
  "devDependencies": {
    "@types/better-sqlite3": "^7.6.12",
    "@types/node": "^22.10.2",
    "eslint": "^9.17.0",
    "tsx": "^4.19.2",
    "typescript": "^5.7.2",
    "typescript-eslint": "^8.18.1",
    "vitest": "^2.1.8"
  }
}"""
TSCONFIG = """{
  "compilerOptions": {
    "target": "ES2022",
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "strict": true,
    "outDir": "dist",
    "rootDir": "src",
    "declaration": true,
    "sourceMap": true,
    "skipLibCheck": true
  },
  "include": ["src"]
}"""


# ---------------------------------------------------------------------------------------------
# command outputs
# ---------------------------------------------------------------------------------------------
class Outputs:
    """What common commands print, built from the project."""

    def __init__(self, r: random.Random, project: Project) -> None:
        self.r = r
        self.p = project
        self.syn = Synth(r)
        self._counts: dict[str, tuple[str, int]] = {}  # test file -> (its text, number of tests)

    def clock(self, ms: int) -> str:
        return datetime.fromtimestamp(ms // 1000, UTC).strftime("%H:%M:%S")

    def vitest(
        self,
        ms: int,
        failures: Sequence[dict[str, Any]] = (),
        verbose: bool = False,
        files: Sequence[str] | None = None,
    ) -> str:
        r = self.r
        tests = files or self.p.tests
        lines = ["", f" RUN  v2.1.8 {CWD}", ""]
        total = failed = 0
        failed_files = {f["file"] for f in failures}
        for t in tests:
            body = self.p.text(t) if self.p.exists(t) else ""
            hit = self._counts.get(t)
            if hit is not None and hit[0] is body:
                n = hit[1]
            else:
                n = body.count(" it(") + body.count(" it.each(") or 4 + zlib.crc32(t.encode()) % 27
                self._counts[t] = (body, n)
            total += n
            nf = sum(1 for f in failures if f["file"] == t)
            failed += nf
            dur = r.randint(3, 90)
            if nf:
                lines.append(f" ❯ {t} ({n} tests | {nf} failed) {dur}ms")
            else:
                lines.append(f" ✓ {t} ({n} tests) {dur}ms")
            if verbose or nf:
                for _ in range(n if verbose else 0):
                    lines.append(f"   ✓ {self.syn.behaviour()} {r.randint(0, 9)}ms")
                for f in failures:
                    if f["file"] == t:
                        lines.append(f"   × {f['suite']} > {f['name']} {r.randint(1, 12)}ms")
                        lines.append(f"     → {f['message']}")
        for f in failures:
            lines += [
                "",
                "⎯" * 24 + f" Failed Tests {len(failures)} " + "⎯" * 24,
                "",
                f" FAIL  {f['file']} > {f['suite']} > {f['name']}",
                f"{f['error']}: {f['message']}",
                "",
            ]
            if "expected" in f:
                lines += (
                    ["- Expected", "+ Received", ""]
                    + [f"- {x}" for x in f["expected"]]
                    + [f"+ {x}" for x in f["received"]]
                    + [""]
                )
            lines.append(f" ❯ {f['file']}:{f['line']}:{f.get('col', 21)}")
            for k, src in enumerate(f.get("source", []), start=f["line"] - len(f.get("source", [])) + 1):
                lines.append(f"    {k:>3}| {src}")
            lines.append("       |" + " " * f.get("col", 21) + "^")
            lines.append("")
        nfiles = len(tests)
        lines += [
            "",
            f" Test Files  {str(len(failed_files)) + ' failed | ' if failed_files else ''}{nfiles - len(failed_files)} passed ({nfiles})",
            f"      Tests  {str(failed) + ' failed | ' if failed else ''}{total - failed} passed ({total})",
            f"   Start at  {self.clock(ms)}",
            f"   Duration  {r.uniform(0.8, 4.5):.2f}s (transform {r.randint(90, 400)}ms, setup 0ms, collect "
            f"{r.randint(200, 900)}ms, tests {r.randint(20, 300)}ms, environment 0ms, prepare {r.randint(100, 500)}ms)",
            "",
        ]
        return "\n".join(lines)

    def random_failure(self) -> dict[str, Any]:
        r = self.r
        t = _pick(r, self.p.tests)
        f1 = _pick(r, FIELDS)[0]
        line = r.randint(12, 240)
        return {
            "file": t,
            "suite": f"{_pick(r, VERBS)}{cap(_pick(r, NOUNS))}",
            "name": self.syn.behaviour(),
            "error": "AssertionError",
            "message": f"expected '{_pick(r, TAG_WORDS)}' to be '{_pick(r, TAG_WORDS)}' // Object.is equality",
            "expected": [f'"{_pick(r, TAG_WORDS)}"'],
            "received": [f'"{_pick(r, TAG_WORDS)}"'],
            "line": line,
            "col": 24,
            "source": [
                f'  it("{self.syn.behaviour()}", () => {{',
                f'    const got = run("{f1}")',
                f"    expect(got.{f1}).toBe(expected.{f1})",
            ],
        }

    def tsc(self, errors: Sequence[tuple[str, int, int, str]]) -> str:
        return "\n".join(f"{p}({ln},{col}): error {msg}" for p, ln, col, msg in errors) + (
            f"\n\nFound {len(errors)} error{'s' if len(errors) != 1 else ''} in {len({e[0] for e in errors})} file"
            f"{'s' if len({e[0] for e in errors}) != 1 else ''}.\n"
            if errors
            else ""
        )

    def random_tsc_errors(self, n: int) -> list[tuple[str, int, int, str]]:
        r = self.r
        src = [p for p in self.p.paths if p.startswith("src/") and p.endswith(".ts")]
        msgs = [
            "TS2339: Property '{f}' does not exist on type '{N}Record'.",
            "TS2345: Argument of type 'string | undefined' is not assignable to parameter of type 'string'.\n  Type 'undefined' is not assignable to type 'string'.",
            "TS2322: Type 'number | null' is not assignable to type 'number'.",
            "TS7006: Parameter '{n}' implicitly has an 'any' type.",
            "TS2554: Expected 2 arguments, but got 1.",
            "TS18048: '{n}.{f}' is possibly 'undefined'.",
        ]
        out = []
        for _ in range(n):
            n_ = _pick(r, NOUNS)
            out.append(
                (
                    _pick(r, src),
                    r.randint(5, 400),
                    r.randint(3, 40),
                    _pick(r, msgs).format(f=_pick(r, FIELDS)[0], N=cap(n_), n=n_),
                )
            )
        return out

    def eslint(self, problems: Sequence[tuple[str, int, int, str, str, str]]) -> str:
        out = [""]
        by: dict[str, list[tuple[str, int, int, str, str, str]]] = {}
        for pr in problems:
            by.setdefault(pr[0], []).append(pr)
        for path, items in by.items():
            out.append(f"{CWD}/{path}")
            for _, ln, col, sev, msg, rule in items:
                out.append(f"  {f'{ln}:{col}':<7} {sev:<7}  {msg:<52}  {rule}")
            out.append("")
        errs = sum(1 for p in problems if p[3] == "error")
        warns = len(problems) - errs
        out.append(
            f"✖ {len(problems)} problems ({errs} error{'s' if errs != 1 else ''}, {warns} warning{'s' if warns != 1 else ''})"
        )
        if errs:
            out.append(f"  {errs} error and 0 warnings potentially fixable with the `--fix` option.")
        return "\n".join(out) + "\n"

    def git_status(self) -> str:
        mods = self.p.modified[-12:]
        lines = [
            "On branch fix/query-due-filter",
            "Your branch is up to date with 'origin/fix/query-due-filter'.",
            "",
        ]
        if not mods:
            return "\n".join(lines + ["nothing to commit, working tree clean"])
        lines += [
            "Changes not staged for commit:",
            '  (use "git add <file>..." to update what will be committed)',
            '  (use "git restore <file>..." to discard changes in working directory)',
        ]
        lines += [f"\tmodified:   {m}" for m in mods]
        return "\n".join(lines + ["", 'no changes added to commit (use "git add" and/or "git commit -a")'])

    def git_diff(self, paths: Sequence[str], hunks: int = 2) -> str:
        r = self.r
        out = []
        for p in paths:
            lines = self.p.text(p).split("\n")
            out += [
                f"diff --git a/{p} b/{p}",
                f"index {r.getrandbits(28):07x}..{r.getrandbits(28):07x} 100644",
                f"--- a/{p}",
                f"+++ b/{p}",
            ]
            for _ in range(hunks):
                i = r.randrange(max(1, len(lines) - 10))
                ctx = lines[i : i + 7]
                out.append(
                    f"@@ -{i + 1},{len(ctx)} +{i + 1},{len(ctx) + 1} @@ {_pick(r, ['export function', 'class', 'describe('])}"
                )
                for k, line in enumerate(ctx):
                    if k == 3:
                        out.append(f"-{line}")
                        out.append(f"+{line.replace('const', 'let')}  // changed")
                        out.append(f'+  logger.debug("{_pick(r, VERBS)}")')
                    else:
                        out.append(f" {line}")
        return "\n".join(out)

    def git_log(self, n: int) -> str:
        r = self.r
        return "\n".join(
            f"{r.getrandbits(28):07x} {_pick(r, ['fix', 'feat', 'chore', 'docs', 'test', 'refactor'])}"
            f"({_pick(r, ['query', 'store', 'cli', 'ui', 'sync'])}): {self.syn.sentence()[:-1].lower()}"
            for _ in range(n)
        )

    def npm_install(self, lines_n: int) -> str:
        r = self.r
        out = []
        for _ in range(lines_n):
            k = r.randrange(4)
            pkg = _pick(
                r,
                [
                    "inflight",
                    "glob",
                    "rimraf",
                    "@humanwhocodes/config-array",
                    "are-we-there-yet",
                    "gauge",
                    "npmlog",
                    "uuid",
                    "querystring",
                    "sourcemap-codec",
                    "abab",
                    "domexception",
                ],
            )
            if k == 0:
                out.append(
                    f"npm warn deprecated {pkg}@{r.randint(1, 9)}.{r.randint(0, 20)}.{r.randint(0, 9)}: "
                    "This module is not supported, and leaks memory. Do not use it."
                )
            elif k == 1:
                out.append(
                    f"npm http fetch GET 200 https://registry.npmjs.org/{pkg} {r.randint(8, 900)}ms (cache revalidated)"
                )
            elif k == 2:
                out.append(
                    f"npm info run {pkg}@{r.randint(1, 5)}.{r.randint(0, 9)}.0 install node_modules/{pkg} node-gyp-build"
                )
            else:
                out.append(f"npm timing reifyNode:node_modules/{pkg} Completed in {r.randint(1, 400)}ms")
        out += [
            "",
            f"added {r.randint(180, 420)} packages, and audited {r.randint(420, 520)} packages in {r.randint(4, 40)}s",
            "",
            f"{r.randint(60, 120)} packages are looking for funding",
            "  run `npm fund` for details",
            "",
            "found 0 vulnerabilities",
        ]
        return "\n".join(out)

    def tasks_json(self, n: int) -> str:
        return self.syn.task_json(n)

    def bench(self) -> str:
        r = self.r
        rows = ["query                         ops/s      p50      p99", "-" * 56]
        for q in [
            "status:open",
            "tag:café",
            "due<2026-04-01",
            'title:"release notes"',
            "tag:日本語 OR tag:ui",
            "not status:done and due>today",
        ]:
            rows.append(
                f"{q:<28} {r.randint(8000, 240000):>7,}  {r.uniform(0.003, 0.4):.3f}ms  {r.uniform(0.05, 3):.3f}ms"
            )
        return "\n".join(rows)

    def build(self) -> str:
        return "\n> tasklane@0.14.3 build\n> tsc -p tsconfig.json\n"


# ---------------------------------------------------------------------------------------------
# token estimate (pi's estimateTokens, chars/4 rounded up)
# ---------------------------------------------------------------------------------------------
def _jslen(s: str) -> int:
    """Length in UTF-16 code units, as JavaScript counts it."""
    return len(s) if s.isascii() else len(s.encode("utf-16-le")) // 2


def estimate(msg: dict[str, Any]) -> int:
    role = msg["role"]
    chars = 0
    if role == "user":
        c = msg["content"]
        chars = _jslen(c) if isinstance(c, str) else sum(_jslen(b["text"]) for b in c if b["type"] == "text")
    elif role == "assistant":
        for b in msg["content"]:
            t = b["type"]
            if t == "text":
                chars += _jslen(b["text"])
            elif t == "thinking":
                chars += _jslen(b["thinking"])
            elif t == "toolCall":
                chars += len(b["name"]) + _jslen(orjson.dumps(b["arguments"]).decode())
    elif role in ("toolResult", "custom"):
        c = msg["content"]
        if isinstance(c, str):
            chars = _jslen(c)
        else:
            for b in c:
                if b["type"] == "text":
                    chars += _jslen(b["text"])
                elif b["type"] == "image":
                    chars += 4800
    elif role == "bashExecution":
        chars = _jslen(msg["command"]) + _jslen(msg["output"])
    elif role in ("branchSummary", "compactionSummary"):
        chars = _jslen(msg["summary"])
    return math.ceil(chars / 4)


# ---------------------------------------------------------------------------------------------
# the writer
# ---------------------------------------------------------------------------------------------
class _Item:
    """One entry on the current path: its id, the cumulative context estimate, and what it did."""

    __slots__ = ("id", "cum", "kind", "reads", "mods", "usage_total", "est")

    def __init__(self, id_: str, cum: int, kind: str, est: int = 0) -> None:
        self.id = id_
        self.cum = cum
        self.kind = kind
        self.est = est
        self.reads: tuple[str, ...] = ()
        self.mods: tuple[str, ...] = ()
        self.usage_total = 0


class Writer:
    """Appends pi v3 entries and streams each line (bytes, no newline) to ``emit``."""

    def __init__(
        self,
        emit: Callable[[bytes], None],
        seed: int,
        session_id: str,
        id_prefix: str,
        project: Project | None = None,
        model: str = "claude-sonnet-4-5",
        system_tokens: int = 3400,
        sig_bytes: tuple[int, int] = (96, 320),
    ) -> None:
        self.emit = emit
        self.rng = random.Random(seed)
        self.project = project or Project(seed)
        self.out = Outputs(self.rng, self.project)
        self.syn = Synth(self.rng)
        self.prefix = id_prefix
        self.width = 8 - len(id_prefix)
        self.n = 0
        self.ms = START_MS
        self.leaf: str | None = None
        self.model = model
        self.system_tokens = system_tokens
        self.sig_bytes = sig_bytes
        self.partial = 0.2
        self.requests: list[str] = []  # recent user requests (for generated summaries)
        self.ratio = 1.06  # real tokenizer tokens per chars/4 estimate, for this kind of content
        self.cached = 0  # prompt tokens in the provider's cache for the current prefix
        self.last_call_end = 0
        self.path: list[_Item] = []
        self.base = 0  # context = base + path[-1].cum
        self.last_compaction_pos = -1
        self.read_set: set[str] = set()
        self.mod_set: set[str] = set()
        self.stats = {"entries": 0, "compactions": 0, "branches": 0}
        self.emit(
            dumps({"type": "session", "version": 3, "id": session_id, "timestamp": iso(self.ms), "cwd": CWD})
        )

    # -- low level ---------------------------------------------------------------------------
    def new_id(self) -> str:
        self.n += 1
        return f"{self.prefix}{self.n:0{self.width}x}"

    def _append(self, obj: dict[str, Any], kind: str, est: int = 0) -> str:
        self.emit(dumps(obj))
        self.leaf = obj["id"]
        cum = (self.path[-1].cum if self.path else 0) + est
        self.path.append(_Item(obj["id"], cum, kind, est))
        self.stats["entries"] += 1
        return obj["id"]

    def _head(self, type_: str, ms: int | None = None) -> dict[str, Any]:
        return {
            "type": type_,
            "id": self.new_id(),
            "parentId": self.leaf,
            "timestamp": iso(self.ms if ms is None else ms),
        }

    def wait(self, lo_s: float, hi_s: float) -> None:
        self.ms += int(self.rng.uniform(lo_s, hi_s) * 1000)

    def context_tokens(self) -> int:
        return self.base + (self.path[-1].cum if self.path else 0)

    def call_id(self) -> str:
        return "toolu_01" + "".join(self.rng.choices(B62, k=22))

    def signature(self) -> str:
        return base64.b64encode(self.rng.randbytes(self.rng.randint(*self.sig_bytes))).decode()

    # -- plain entries -------------------------------------------------------------------------
    def model_change(self, model: str) -> str:
        self.wait(2, 9)
        if model != self.model:
            self.cached = 0
        self.model = model
        obj = self._head("model_change")
        obj["provider"] = MODELS[model]["provider"]
        obj["modelId"] = model
        return self._append(obj, "setting")

    def thinking_level(self, level: str) -> str:
        self.wait(1, 5)
        obj = self._head("thinking_level_change")
        obj["thinkingLevel"] = level
        return self._append(obj, "setting")

    def session_info(self, name: str) -> str:
        self.wait(2, 12)
        obj = self._head("session_info")
        obj["name"] = name
        return self._append(obj, "info")

    def label(self, target: str, label: str) -> str:
        self.wait(1, 6)
        obj = self._head("label")
        obj["targetId"] = target
        obj["label"] = label
        return self._append(obj, "label")

    def custom(self, custom_type: str, data: Any) -> str:
        self.ms += self.rng.randint(5, 60)
        head = self._head("custom")
        obj = {
            "type": "custom",
            "customType": custom_type,
            "data": data,
            "id": head["id"],
            "parentId": head["parentId"],
            "timestamp": head["timestamp"],
        }
        return self._append(obj, "custom")

    def custom_message(
        self, custom_type: str, content: str | list[dict[str, Any]], display: bool = True, details: Any = None
    ) -> str:
        self.ms += self.rng.randint(5, 60)
        head = self._head("custom_message")
        obj = {"type": "custom_message", "customType": custom_type, "content": content, "display": display}
        if details is not None:
            obj["details"] = details
        obj.update(id=head["id"], parentId=head["parentId"], timestamp=head["timestamp"])
        return self._append(obj, "custom", estimate({"role": "custom", "content": content}))

    # -- messages --------------------------------------------------------------------------------
    def _message(self, msg: dict[str, Any], kind: str, entry_ms: int | None = None) -> str:
        if entry_ms is not None:
            self.ms = max(self.ms, entry_ms)
        obj = self._head("message")
        obj["message"] = msg
        return self._append(obj, kind, estimate(msg))

    def user(self, content: str | list[dict[str, Any]], pause: tuple[float, float] = (15, 140)) -> str:
        self.wait(*pause)
        return self._message({"role": "user", "content": content, "timestamp": self.ms}, "user", self.ms + 2)

    def bash(
        self, command: str, output: str, exit_code: int = 0, pause: tuple[float, float] = (8, 40)
    ) -> str:
        """A command the user ran with ``!`` (a bashExecution message)."""
        self.wait(*pause)
        self.ms += self.rng.randint(300, 6000)
        msg = {
            "role": "bashExecution",
            "command": command,
            "output": output,
            "exitCode": exit_code,
            "cancelled": False,
            "truncated": False,
            "timestamp": self.ms,
        }
        return self._message(msg, "bash", self.ms + 1)

    def assistant(
        self,
        text: str = "",
        calls: Sequence[tuple[str, dict[str, Any]]] = (),
        thinking: str = "",
        stop: str | None = None,
        error: str | None = None,
    ) -> tuple[str, list[str]]:
        """An assistant message (usage computed from the context); returns its id and the tool call ids."""
        rng = self.rng
        content: list[dict[str, Any]] = []
        if thinking:
            content.append({"type": "thinking", "thinking": thinking, "thinkingSignature": self.signature()})
        if text:
            content.append({"type": "text", "text": text})
        ids = []
        for name, args in calls:
            cid = self.call_id()
            ids.append(cid)
            content.append({"type": "toolCall", "id": cid, "name": name, "arguments": args})
        stop_reason = stop or ("toolUse" if calls else "stop")
        start = self.ms + rng.randint(150, 900)
        if start - self.last_call_end > CACHE_TTL_MS and self.last_call_end:
            self.cached = 0
        m = MODELS[self.model]
        prompt = int((self.system_tokens + self.context_tokens()) * self.ratio)
        out_chars = len(text) + len(thinking) + sum(len(n) + len(orjson.dumps(a)) + 40 for n, a in calls)
        output = max(1, int(out_chars / 3.6) + rng.randint(2, 30))
        if stop_reason == "error":
            usage_vals = (0, 0, 0, 0)
            output = 0
        else:
            cache_read = min(self.cached, prompt - 1)
            fresh = rng.randint(1, 9)
            cache_write = max(0, prompt - cache_read - fresh)
            if stop_reason == "aborted":
                output = rng.randint(1, 40)
            usage_vals = (fresh, output, cache_read, cache_write)
        inp, outp, cr, cw = usage_vals
        pi, po, pr, pw = m["price"]
        cost = {
            "input": inp * pi / 1e6,
            "output": outp * po / 1e6,
            "cacheRead": cr * pr / 1e6,
            "cacheWrite": cw * pw / 1e6,
        }
        cost["total"] = cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"]
        usage = {
            "input": inp,
            "output": outp,
            "cacheRead": cr,
            "cacheWrite": cw,
            "totalTokens": inp + outp + cr + cw,
            "cost": cost,
        }
        duration = 700 + output * rng.randint(9, 16) if stop_reason != "error" else rng.randint(400, 2500)
        self.ms = start + duration
        msg: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "api": m["api"],
            "provider": m["provider"],
            "model": self.model,
            "usage": usage,
            "stopReason": stop_reason,
            "timestamp": start,
        }
        if stop_reason not in ("error",):
            msg["responseId"] = "msg_01" + "".join(rng.choices(B62, k=22))
        if error:
            msg["errorMessage"] = error
        if stop_reason != "error":
            self.cached = prompt
            self.last_call_end = self.ms
        eid = self._message(msg, "assistant", self.ms + rng.randint(1, 20))
        item = self.path[-1]
        if stop_reason not in ("error", "aborted"):
            item.usage_total = usage["totalTokens"]
        item.reads = tuple(a["path"] for n, a in calls if n == "read" and "path" in a)
        item.mods = tuple(a["path"] for n, a in calls if n in ("edit", "write") and "path" in a)
        return eid, ids

    def tool_result(
        self,
        call_id: str,
        tool: str,
        content: str | list[dict[str, Any]],
        is_error: bool = False,
        details: Any = None,
        run_ms: int | None = None,
    ) -> str:
        self.ms += run_ms if run_ms is not None else self.rng.randint(4, 60)
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        msg: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": tool,
            "content": blocks,
        }
        if details is not None:
            msg["details"] = details
        msg["isError"] = is_error
        msg["timestamp"] = self.ms
        return self._message(msg, "toolResult", self.ms + 1)

    # -- tools: run a call against the project ------------------------------------------------------
    def run(self, name: str, args: dict[str, Any]) -> tuple[str | list[dict[str, Any]], bool, Any, int]:
        """The realistic result of a tool call: (content, isError, details, run time in ms)."""
        p = self.project
        rng = self.rng
        if name == "read":
            path = args["path"]
            if path.endswith(".png"):
                return (
                    [
                        {"type": "text", "text": "Read image file [image/png]"},
                        {"type": "image", "data": tiny_png(seed=len(path)), "mimeType": "image/png"},
                    ],
                    False,
                    None,
                    12,
                )
            if not p.exists(path):
                return f"ENOENT: no such file or directory, access '{CWD}/{path}'", True, None, 3
            lines = p.text(path).split("\n")
            start = max(0, int(args.get("offset", 1)) - 1)
            if start >= len(lines):
                return (
                    f"Offset {args['offset']} is beyond end of file ({len(lines)} lines total)",
                    True,
                    None,
                    3,
                )
            limit = args.get("limit")
            sel = lines[start : start + limit] if limit else lines[start:]
            text, trunc = truncate_head("\n".join(sel))
            if trunc:
                end = start + trunc["outputLines"]
                how = "" if trunc["truncatedBy"] == "lines" else f" ({fmt_size(MAX_BYTES)} limit)"
                text += f"\n\n[Showing lines {start + 1}-{end} of {len(lines)}{how}. Use offset={end + 1} to continue.]"
                return text, False, {"truncation": trunc}, rng.randint(3, 30)
            if limit and start + limit < len(lines):
                text += f"\n\n[{len(lines) - start - limit} more lines in file. Use offset={start + limit + 1} to continue.]"
            return text, False, None, rng.randint(2, 25)
        if name == "edit":
            path = args["path"]
            edits = args.get("edits") or [{"oldText": args["oldText"], "newText": args["newText"]}]
            if not p.exists(path):
                return f"Could not edit file: {path}. Error code: ENOENT.", True, None, 2
            text = p.text(path)
            for e in edits:
                n = text.count(e["oldText"])
                if n == 0:
                    return (
                        (
                            f"Could not find the exact text in {path}. The old text must match exactly including all "
                            "whitespace and newlines."
                        ),
                        True,
                        None,
                        3,
                    )
                if n > 1:
                    return (
                        (
                            f"Found {n} occurrences of the text in {path}. The text must be unique. Please provide "
                            "more context to make it unique."
                        ),
                        True,
                        None,
                        3,
                    )
            first = text.index(edits[0]["oldText"])
            for e in edits:
                p.replace(path, e["oldText"], e["newText"])
            line = text.count("\n", 0, first) + 1
            diff = _diff(text, edits, line)
            return (
                f"Successfully replaced {len(edits)} block(s) in {path}.",
                False,
                {"diff": diff, "firstChangedLine": line},
                rng.randint(4, 20),
            )
        if name == "write":
            p.write(args["path"], args["content"])
            return (
                f"Successfully wrote {_jslen(args['content'])} bytes to {args['path']}",
                False,
                None,
                rng.randint(2, 9),
            )
        if name == "ls":
            d = args.get("path", ".")
            entries = p.listdir(d)
            return ("\n".join(entries) if entries else "(empty directory)"), False, None, rng.randint(2, 8)
        if name == "find":
            hits = p.find(args["pattern"])
            return (
                ("\n".join(hits) if hits else "No files found matching pattern"),
                False,
                None,
                rng.randint(20, 120),
            )
        if name == "grep":
            hits = p.grep(args["pattern"], args.get("path", ""))
            if not hits:
                return "No matches found", False, None, rng.randint(20, 90)
            text = "\n".join(hits)
            if len(hits) >= 100:
                text += "\n\n[100 matches limit reached. Use limit=200 for more, or refine pattern]"
                return text, False, {"matchLimitReached": 100}, rng.randint(20, 90)
            return text, False, None, rng.randint(20, 90)
        raise ValueError(f"no canned runner for {name}; pass the result explicitly")

    def bash_result(self, output: str, exit_code: int = 0) -> tuple[str, bool, Any]:
        """pi's bash tool result for an output and exit code (tail truncation, the exit-code line)."""
        text, trunc = truncate_tail(output)
        details = None
        if trunc:
            full = f"/tmp/pi-bash-{self.rng.getrandbits(48):012x}.log"
            details = {"truncation": trunc, "fullOutputPath": full}
            s, e = trunc["totalLines"] - trunc["outputLines"] + 1, trunc["totalLines"]
            how = "" if trunc["truncatedBy"] == "lines" else f" ({fmt_size(MAX_BYTES)} limit)"
            if trunc["lastLinePartial"]:
                line_size = fmt_size(len(output.rsplit("\n", 1)[-1].encode("utf-8")))
                text += (
                    f"\n\n[Showing last {fmt_size(trunc['outputBytes'])} of line {e} (line is {line_size}). "
                    f"Full output: {full}]"
                )
            else:
                text += f"\n\n[Showing lines {s}-{e} of {trunc['totalLines']}{how}. Full output: {full}]"
        text = text or "(no output)"
        if exit_code:
            return f"{text}\n\nCommand exited with code {exit_code}", True, details
        return text, False, details

    def step(
        self,
        calls: Sequence[tuple[str, dict[str, Any]] | tuple[str, dict[str, Any], Any]] = (),
        text: str = "",
        thinking: str = "",
        stop: str | None = None,
        error: str | None = None,
    ) -> str:
        """One model call and its tool results. A call may carry its result: a ``(output, exitCode)``
        pair for bash, a string or content list, or a dict with content/isError/details/ms."""
        plain = [(c[0], c[1]) for c in calls]
        aid, ids = self.assistant(text, plain, thinking, stop, error)
        for cid, c in zip(ids, calls, strict=True):
            name, args = c[0], c[1]
            given = c[2] if len(c) > 2 else None
            if given is None:
                content, err, details, run_ms = self.run(name, args)
            elif isinstance(given, tuple):
                content, err, details = self.bash_result(*given)
                run_ms = self.rng.randint(400, 9000)
            elif isinstance(given, dict):
                content, err, details = given["content"], given.get("isError", False), given.get("details")
                run_ms = given.get("ms", self.rng.randint(5, 900))
            else:
                content, err, details, run_ms = given, False, None, self.rng.randint(5, 900)
            self.tool_result(cid, name, content, err, details, run_ms)
        return aid

    # -- compaction and branches ----------------------------------------------------------------------
    def pick_first_kept(self, keep_tokens: int = 20000) -> int:
        """Index on the path of the user message nearest to ``keep_tokens`` back from the leaf."""
        total = self.path[-1].cum
        best, best_d = -1, None
        lo = self.last_compaction_pos + 1
        for i in range(len(self.path) - 1, lo - 1, -1):
            it = self.path[i]
            if it.kind != "user":
                continue
            kept = total - (self.path[i - 1].cum if i else 0)
            d = abs(kept - keep_tokens) + (0 if kept >= keep_tokens * 0.6 else keep_tokens)
            if best_d is None or d < best_d:
                best, best_d = i, d
            if kept > keep_tokens * 2:
                break
        return best

    def tokens_before(self) -> int:
        """pi's estimateContextTokens: the last assistant usage on the path plus the estimate of what follows."""
        trailing = 0
        for it in reversed(self.path[self.last_compaction_pos + 1 :]):
            if it.kind == "assistant" and it.usage_total:
                return it.usage_total + trailing
            trailing += it.est
        return self.context_tokens()

    def compaction(self, summary: str, first_kept_index: int, tokens_before: int | None = None) -> str:
        """Append a compaction; ``summary`` gets pi's <read-files>/<modified-files> blocks appended."""
        k = first_kept_index
        for it in self.path[:k]:  # pi >= 0.73 summarises from the previous firstKept on
            self.read_set.update(it.reads)
            self.mod_set.update(it.mods)
        read = sorted(self.read_set - self.mod_set)
        mods = sorted(self.mod_set)
        summary += file_blocks(read, mods)
        tb = tokens_before if tokens_before is not None else self.tokens_before()
        self.ms += self.rng.randint(15000, 60000)  # the summarising call
        obj = self._head("compaction")
        obj.update(
            summary=summary,
            firstKeptEntryId=self.path[k].id,
            tokensBefore=tb,
            details={"readFiles": read, "modifiedFiles": mods},
        )
        before_k = self.path[k - 1].cum if k else 0
        self.path = self.path[k:]
        eid = self._append(obj, "compaction", 0)
        self.base = math.ceil(_jslen(summary) / 4) - before_k
        self.last_compaction_pos = len(self.path) - 1
        self.cached = min(self.cached, self.system_tokens)
        self.stats["compactions"] += 1
        return eid

    def branch_back_to_user(self, user_index: int, summary: str, label: str | None = None) -> str:
        """``/tree`` to the user message at ``user_index`` with a summary: the leaf becomes its parent and
        a branch_summary (parentId = fromId = that parent) starts the new branch."""
        assert self.path[user_index].kind == "user" and user_index - 1 > self.last_compaction_pos
        target = self.path[user_index - 1]
        reads: set[str] = set()
        mods: set[str] = set()
        for it in self.path[user_index:]:
            reads.update(it.reads)
            mods.update(it.mods)
        self.path = self.path[:user_index]
        self.leaf = target.id
        self.wait(20, 90)
        summary += file_blocks(sorted(reads - mods), sorted(mods))
        obj = self._head("branch_summary")
        obj.update(
            fromId=target.id,
            summary=summary,
            details={"readFiles": sorted(reads - mods), "modifiedFiles": sorted(mods)},
        )
        eid = self._append(obj, "branch", math.ceil(_jslen(summary) / 4))
        self.cached = min(self.cached, self.system_tokens)
        self.stats["branches"] += 1
        if label:
            self.label(eid, label)
        return eid

    def user_indexes(self) -> list[int]:
        return [i for i in range(self.last_compaction_pos + 2, len(self.path)) if self.path[i].kind == "user"]

    # -- random, realistic turns ------------------------------------------------------------------------
    def random_turn(
        self,
        rounds: int,
        think: float = 0.5,
        big: float = 0.06,
        parallel: float = 0.18,
        partial: float = 0.2,
        request: str | None = None,
        focus: Sequence[str] | None = None,
        stop_when: Callable[[], bool] | None = None,
    ) -> str:
        """A user request and ``rounds`` model calls (explore, edit, test, fix), then an answer.
        ``big`` is the chance that a read or bash output is 10–50 KB, ``partial`` that a read has an
        offset and a limit; ``stop_when`` ends the turn early (the context is full). Returns the
        user entry id."""
        rng = self.rng
        p = self.project
        self.partial = partial
        src = [x for x in p.paths if x.startswith("src/")]
        focus = list(focus) if focus else rng.sample(src, min(len(src), rng.randint(1, 3)))
        topic = _pick(rng, NOUNS)
        request = request or self.request(focus, topic)
        self.requests.append(request)
        del self.requests[:-40]
        uid = self.user(request)
        failed_edit: str | None = None
        tests_failing = rng.random() < 0.5
        for r in range(rounds):
            if stop_when is not None and stop_when():
                break
            phase = r / max(1, rounds - 1)
            calls: list[Any] = []
            if failed_edit:
                calls.append(("read", {"path": failed_edit}))
                failed_edit = None
            elif phase < 0.35:
                k = rng.random()
                if k < parallel:
                    calls += [("read", {"path": x}) for x in rng.sample(src, rng.randint(2, 3))]
                elif k < 0.45:
                    calls.append(("read", self.read_args(_pick(rng, focus), big)))
                elif k < 0.6:
                    calls.append(("grep", {"pattern": self.grep_pattern(_pick(rng, focus)), "path": "src"}))
                elif k < 0.7:
                    calls.append(
                        ("find", {"pattern": _pick(rng, ["*.test.ts", "src/**/*.ts", "**/*cache*", "*.md"])})
                    )
                elif k < 0.78:
                    calls.append(("ls", {"path": _pick(rng, ["src", "src/query", "test", ".", "src/store"])}))
                else:
                    calls.append(self.random_bash(big, tests_failing))
            elif phase < 0.8:
                k = rng.random()
                target = _pick(rng, focus)
                if k < 0.55:
                    old, new = p.pick_edit(rng, target)
                    if rng.random() < 0.08:
                        old = old.replace("(", "( ", 1) if "(" in old else old + " "
                        failed_edit = target
                    calls.append(("edit", {"path": target, "oldText": old, "newText": new}))
                elif k < 0.65:
                    name = f"test/{target.split('/')[-1].removesuffix('.ts')}.test.ts"
                    if len(p.tests) >= 60 and name not in p.tests:
                        name = _pick(rng, p.tests)  # rewrite an existing test file
                    calls.append(
                        (
                            "write",
                            {"path": name, "content": self.syn.test_module(name, rng.randint(600, 3000))},
                        )
                    )
                elif k < 0.85:
                    calls.append(("read", self.read_args(target, big)))
                else:
                    calls.append(self.random_bash(big, tests_failing))
            else:
                if tests_failing and rng.random() < 0.5:
                    target = _pick(rng, focus)
                    old, new = p.pick_edit(rng, target)
                    calls.append(("edit", {"path": target, "oldText": old, "newText": new}))
                    tests_failing = False
                else:
                    calls.append(self.random_bash(big, tests_failing, prefer_test=True))
            thinking = self.thinking(calls, topic) if rng.random() < think else ""
            text = self.narration(calls) if rng.random() < 0.35 else ""
            self.step(calls, text=text, thinking=thinking)
        self.step(
            text=self.answer(focus, topic),
            thinking=self.thinking([], topic) if rng.random() < think * 0.5 else "",
        )
        return uid

    def read_args(self, path: str, big: float) -> dict[str, Any]:
        rng = self.rng
        if rng.random() < self.partial:
            n = len(self.project.text(path).split("\n"))
            off = rng.randint(1, max(1, n - 20))
            return {"path": path, "offset": off, "limit": rng.choice([40, 80, 120, 200])}
        if rng.random() < big:
            bigs = [x for x in self.project.paths if self.project.specs[x][1] >= 10000]
            if bigs:
                return {"path": _pick(rng, bigs)}
        return {"path": path}

    def grep_pattern(self, path: str) -> str:
        rng = self.rng
        text = self.project.text(path)
        start = rng.randrange(max(1, len(text) - 3000))
        words = [
            x for x in re.findall(r"[A-Za-z_][A-Za-z0-9_]{5,}", text[start : start + 3000]) if x not in COMMON
        ]
        return _pick(rng, words) if words else _pick(rng, NOUNS) + "Registry"

    def random_bash(
        self, big: float, failing: bool, prefer_test: bool = False
    ) -> tuple[str, dict[str, Any], Any]:
        rng = self.rng
        o = self.out
        if rng.random() < big:
            k = rng.randrange(5)
            if k == 0:
                return (
                    "bash",
                    {"command": "npm install", "timeout": 300},
                    (o.npm_install(rng.randint(150, 700)), 0),
                )
            if k == 1:
                return (
                    "bash",
                    {"command": "npx vitest run --reporter=verbose"},
                    (o.vitest(self.ms, verbose=True), 0),
                )
            if k == 2:
                n = rng.randint(40, 160)
                return (
                    "bash",
                    {"command": f"curl -s 'localhost:4317/api/tasks?limit={n}' | jq ."},
                    (o.tasks_json(n), 0),
                )
            if k == 3:
                mods = self.project.modified[-6:] or self.project.paths[:4]
                return ("bash", {"command": "git diff"}, (o.git_diff(mods, hunks=rng.randint(4, 12)), 0))
            return (
                "bash",
                {"command": "git log -p -n 5 -- src/"},
                (o.git_log(5) + "\n" + o.git_diff(rng.sample(self.project.paths, 4), 6), 0),
            )
        k = rng.random() if not prefer_test else rng.random() * 0.5
        if k < 0.35:
            fails = [o.random_failure() for _ in range(rng.randint(1, 3))] if failing else []
            return (
                "bash",
                {
                    "command": _pick(rng, ["npm test", "npx vitest run", "npm test -- --silent"]),
                    "timeout": 120,
                },
                (o.vitest(self.ms, fails), 1 if fails else 0),
            )
        if k < 0.5:
            errs = o.random_tsc_errors(rng.randint(1, 4)) if failing and rng.random() < 0.6 else []
            return ("bash", {"command": "npx tsc --noEmit"}, (o.tsc(errs), 2 if errs else 0))
        if k < 0.6:
            return ("bash", {"command": "git status"}, (o.git_status(), 0))
        if k < 0.68:
            return ("bash", {"command": "git log --oneline -n 12"}, (o.git_log(12), 0))
        if k < 0.76:
            probs = [
                (
                    _pick(rng, self.project.paths),
                    rng.randint(3, 300),
                    rng.randint(1, 30),
                    _pick(rng, ["error", "warning"]),
                    _pick(
                        rng,
                        [
                            "'opts' is defined but never used",
                            "Unexpected any. Specify a different type",
                            "Missing return type on function",
                            "Prefer const over let",
                        ],
                    ),
                    _pick(
                        rng,
                        [
                            "@typescript-eslint/no-unused-vars",
                            "@typescript-eslint/no-explicit-any",
                            "prefer-const",
                        ],
                    ),
                )
                for _ in range(rng.randint(1, 5))
            ]
            return (
                "bash",
                {"command": "npm run lint"},
                (o.eslint(probs), 1 if any(x[3] == "error" for x in probs) else 0),
            )
        if k < 0.84:
            return ("bash", {"command": "node scripts/bench-query.mjs"}, (o.bench(), 0))
        if k < 0.92:
            return ("bash", {"command": "npm run build"}, (o.build(), 0))
        path = _pick(rng, self.project.paths)
        return (
            "bash",
            {"command": f"wc -l {path} && head -n 30 {path}"},
            (
                f"{self.project.text(path).count(chr(10)) + 1} {path}\n"
                + "\n".join(self.project.text(path).split("\n")[:30]),
                0,
            ),
        )

    def request(self, focus: Sequence[str], topic: str) -> str:
        rng = self.rng
        f = focus[0]
        t = _pick(
            rng,
            [
                "The {t} handling in `{f}` is wrong when the board is empty: `tasklane list` prints nothing and exits 0. "
                'Can you make it print "(no tasks)" and add a test?',
                "Refactor `{f}` so the {t} logic is not duplicated with {g}. Keep the public API the same.",
                "`npm test` is flaky on CI in the {t} tests. Find out why and fix it — I suspect timezones.",
                "Add a `--{t}` option to `tasklane list` (see `{f}`), document it in docs/cli.md.",
                "Why is `{f}` so slow with 10k tasks? Profile it with scripts/bench-query.mjs and fix the hot spot.",
                "Rename `{t}` to `{t}Ref` in `{f}` and everywhere it is used. Don't touch the migrations.",
                "The {t} cache in `{f}` never expires entries; add a TTL (default 30s) and tests.",
                "Please review `{f}` for bugs around {t}s and fix what you find. Run the tests when done.",
                "Tags with accents (`café`, `naïve`) and CJK (`日本語`) break the {t} filter in `{f}`. Fix it.",
                "Make `{f}` handle {t}s with a null due date — they should sort last, not first.",
                "Continue with the {t} work: next is `{f}`. Same approach as before.",
            ],
        )
        return t.format(t=topic, f=f, g=focus[-1] if len(focus) > 1 else "src/store/db.ts")

    def thinking(self, calls: Sequence[Any], topic: str) -> str:
        rng = self.rng
        parts = []
        for c in calls[:3]:
            name, args = c[0], c[1]
            target = args.get("path") or args.get("command") or args.get("pattern")
            parts.append(
                _pick(
                    rng,
                    [
                        f"I need to see `{target}` before changing anything — the {topic} logic probably lives there.",
                        f"Let me {name} `{target}`; if the {topic} handling is where I think it is, the fix is small.",
                        f"The previous output suggests the problem is in how {plural(topic)} are compared. {name} `{target}` next.",
                        f"Running `{target}` will tell me whether the change broke anything else.",
                        f"I'll {name} `{target}` to confirm the hypothesis: the {topic} is normalised twice.",
                    ],
                )
            )
        if not parts:
            parts.append(
                f"Everything the user asked for is done: the {topic} changes are in and the checks pass. "
                "Summarise what changed and mention anything they should double-check."
            )
        for _ in range(rng.randint(0, 3)):
            parts.append(self.syn.sentence())
        return " ".join(parts)

    def narration(self, calls: Sequence[Any]) -> str:
        rng = self.rng
        name, args = calls[0][0], calls[0][1]
        target = args.get("path") or args.get("command") or args.get("pattern")
        return _pick(
            rng,
            [
                f"Let me look at `{target}`.",
                f"Now I'll run `{target}`.",
                f"Checking `{target}`.",
                f"Found it. Updating `{target}`.",
                "Let me check the tests.",
                f"I'll {name} that next.",
            ],
        )

    def answer(self, focus: Sequence[str], topic: str) -> str:
        rng = self.rng
        bullets = "\n".join(f"- `{f}`: {self.syn.sentence()}" for f in focus)
        return _pick(
            rng,
            [
                f"Done. Summary of the {topic} changes:\n\n{bullets}\n\nAll tests pass (`npm test`).",
                f"I've made the change.\n\n{bullets}\n\nI also ran `npx tsc --noEmit` — no type errors.",
                f"Fixed. The root cause was in how {plural(topic)} were compared.\n\n{bullets}\n\n"
                f"One thing to double-check: {self.syn.sentence()}",
            ],
        )


def file_blocks(read: Sequence[str], modified: Sequence[str]) -> str:
    """pi's file lists appended to a summary: ``<read-files>`` and ``<modified-files>``."""
    blocks = []
    if read:
        blocks.append("<read-files>\n" + "\n".join(read) + "\n</read-files>")
    if modified:
        blocks.append("<modified-files>\n" + "\n".join(modified) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(blocks) if blocks else ""


def _diff(text: str, edits: Sequence[dict[str, str]], line: int) -> str:
    """A short diff in the shape pi stores in edit details (±line numbers, 4 lines of context)."""
    lines = text.split("\n")
    e = edits[0]
    old = e["oldText"].split("\n")
    new = e["newText"].split("\n")
    w = len(str(len(lines) + len(new)))
    out = []
    for k in range(max(1, line - 4), line):
        out.append(f" {k:>{w}} {lines[k - 1]}")
    out += [f"-{line + i:>{w}} {x}" for i, x in enumerate(old)]
    out += [f"+{line + i:>{w}} {x}" for i, x in enumerate(new)]
    after = line + len(old)
    for k in range(after, min(len(lines), after + 4) + 1):
        out.append(f" {k - len(old) + len(new):>{w}} {lines[k - 1]}")
    return "\n".join(out)
