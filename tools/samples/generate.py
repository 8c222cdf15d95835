"""Write the bundled sample sessions (deterministic: the same bytes on every run).

    python -m tools.samples.generate [OUTDIR]      # from the repository root; OUTDIR: sample_sessions/

* ``coding-session.jsonl`` — a realistic coding session in a small TypeScript project (~230
  entries): reads, edits (one with an ``edits`` array), writes, bash, grep, find, ls, a custom
  ``todo`` tool (a float and a nested object in its arguments), tool errors, an image from the
  user and one in a tool result, thinking, a user ``!`` command with a non-zero exit, model and
  thinking-level changes, a cache miss after a long pause, an existing compaction whose
  ``firstKeptEntryId`` is the user message ~20k estimated tokens back, a ``/tree`` branch with a
  branch summary, labels, a session name, a custom entry and a custom message, an aborted and an
  error answer, accents, CJK and an emoji.
* ``small-tutorial.jsonl`` — a short clean linear session (~30 entries) for a first look.
* ``long-session.jsonl`` — a long linear session (~750 entries) whose context passes 100k
  estimated tokens, with no compaction yet: material for what-if compaction and pruning.
* ``hostile-content.jsonl`` — a valid session whose text holds ``<script>``, HTML, markdown links
  with ``javascript:``, ANSI escapes, control characters and a very long line (shown inertly).
* ``claude-code-session.jsonl`` — a Claude Code transcript, for the importer.
* ``broken.jsonl`` — the tutorial with a malformed line, a blank line, a duplicate id, a dangling
  ``parentId`` and a truncated last line, for the loader's reports.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import orjson

from .gen_agents import codex_legacy, codex_session, opencode_session
from .sessiongen import Project, Writer, tiny_png

MAX_SAMPLE_BYTES = 1_000_000
SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
"""Where the samples live (and are written by default)."""

# ---------------------------------------------------------------------------------------------
# hand-written parts of the project that the scripted sessions read and edit
# ---------------------------------------------------------------------------------------------
COMPARATORS = """/** Comparison operators of the query language, mapped to filter ops. */
const COMPARATORS: Record<string, FilterOp> = {
  "<": "gt",
  "<=": "lte",
  ">": "lt",
  ">=": "gte",
  "=": "eq",
  ":": "eq",
};

export function parseComparison(field: string, opText: string, value: string): Filter {
  const op = COMPARATORS[opText];
  if (!op) {
    throw new QueryError(`unknown operator '${opText}' after ${field}`, 0);
  }
  return { field, op, value: field === "due" ? parseDate(value) : value };
}"""
IDENT = "const IDENT = /[A-Za-z_][A-Za-z0-9_-]*/y;"
LEXER_CONSTS = (
    IDENT
    + """
const NUMBER = /\\d+(?:\\.\\d+)?/y;
const DATE = /\\d{4}-\\d{2}-\\d{2}/y;"""
)
TOKENIZE_HEAD = "export function tokenize(src: string): Token[] {"
TOKENIZE = (
    TOKENIZE_HEAD
    + """
  const tokens: Token[] = [];
  let pos = 0;
  while (pos < src.length) {
    const ch = src[pos];
    if (ch === " " || ch === "\\t") {
      pos += 1;
      continue;
    }
    if (ch === ":" || ch === "<" || ch === ">" || ch === "=") {
      const two = src.slice(pos, pos + 2);
      const text = two === "<=" || two === ">=" ? two : ch;
      tokens.push({ kind: "OP", text, pos });
      pos += text.length;
      continue;
    }
    DATE.lastIndex = pos;
    const date = DATE.exec(src);
    if (date) {
      tokens.push({ kind: "DATE", text: date[0], pos });
      pos += date[0].length;
      continue;
    }
    IDENT.lastIndex = pos;
    const m = IDENT.exec(src);
    if (!m) {
      throw new QueryError(`unexpected character '${ch}' at ${pos}`, pos);
    }
    tokens.push({ kind: "WORD", text: m[0], pos });
    pos += m[0].length;
  }
  return tokens;
}"""
)
FORMAT_DUE = """export function formatDue(due: string | null, locale = "en-US"): string {
  if (!due) return "—";
  return new Date(due).toLocaleDateString(locale, { month: "short", day: "numeric" });
}"""
LIST_IMPORTS = """import { openStore } from "../../store/db";
import { parseQuery } from "../../query/parser";
import { renderTable } from "../../output/table";
import { slugify } from "../../utils/slug";"""
LIST_OPTIONS = """export interface ListOptions {
  db: string;
  board: string;
  filter?: string;
  color: boolean;
}"""
LIST_CMD = """export async function listCommand(opts: ListOptions): Promise<number> {
  const store = await openStore(opts.db);
  const boardKey = slugify(opts.board);
  const query = opts.filter ? parseQuery(opts.filter) : undefined;
  const tasks = await store.listTasks(boardKey, query);
  process.stdout.write(renderTable(tasks, { color: opts.color }) + "\\n");
  return 0;
}"""
ARGS_LIST = """  program
    .command("list")
    .description("List the tasks of a board")
    .option("-b, --board <name>", "board to list", "inbox")
    .option("-f, --filter <query>", "only tasks matching a query (see docs/query-language.md)")
    .option("--no-color", "disable colours")
    .action(async (opts) => process.exit(await listCommand(opts)));"""
DOCS_LIST = """## tasklane list

List the tasks of a board.

| option | default | meaning |
|---|---|---|
| `-b, --board <name>` | `inbox` | board to list |
| `-f, --filter <query>` | none | only tasks matching a query, see [the query language](query-language.md) |
| `--no-color` | | disable colours |"""
CACHE_CLASS = """export class TaskCache {
  private readonly byBoard = new Map<string, { tasks: Task[]; loadedAt: number }>();

  constructor(private readonly ttlMs = Number.POSITIVE_INFINITY) {}

  get(boardId: string): Task[] | undefined {
    const hit = this.byBoard.get(boardId);
    if (!hit || Date.now() - hit.loadedAt > this.ttlMs) return undefined;
    return hit.tasks;
  }

  set(boardId: string, tasks: Task[]): void {
    this.byBoard.set(boardId, { tasks, loadedAt: Date.now() });
  }
}

export const taskCache = new TaskCache();"""
UPDATE_TASK_TAIL = """    [next.title, next.status, next.due, JSON.stringify(next.tags), next.version, next.updatedAt, id, current.version],
  );
  return next;
}"""
UPDATE_TASK = (
    """export async function updateTask(db: Database, id: string, patch: Partial<Task>): Promise<Task> {
  const current = await getTask(db, id);
  if (!current) throw new NotFoundError(`task ${id} not found`);
  const next = { ...current, ...patch, version: current.version + 1, updatedAt: new Date().toISOString() };
  await db.run(
    "UPDATE tasks SET title = ?, status = ?, due = ?, tags = ?, version = ?, updated_at = ? WHERE id = ? AND version = ?",
"""
    + UPDATE_TASK_TAIL
)
CACHE_TEST = """describe("TaskCache", () => {
  it("drops a board after invalidateBoard", () => {
    const cache = new TaskCache();
    cache.set("inbox", [makeTask({ title: "old" })]);
    cache.invalidateBoard("inbox");
    expect(cache.get("inbox")).toBeUndefined();
  });
});"""
EXPORT_CMD = """export async function exportCommand(opts: ExportOptions): Promise<number> {
  const store = await openStore(opts.db);
  const tasks = await store.listTasks(opts.board);
  process.stdout.write(toCsv(tasks));
  return 0;
}"""
TO_CSV = """export function toCsv(tasks: readonly Task[], columns: readonly (keyof Task)[] = DEFAULT_COLUMNS): string {
  const head = columns.join(",");
  const rows = tasks.map((t) => columns.map((c) => csvCell(t[c])).join(","));
  return [head, ...rows].join("\\n") + "\\n";
}"""
SLUGIFY = """/** Lower-case, dash-separated identifier for board and column names. */
export function slugify(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}"""
BOARD_SLUG = """function columnAnchor(column: Column): string {
  return `#col-${slugify(column.name)}`;
}"""
ANCHORS = {
    "src/query/parser.ts": [COMPARATORS],
    "src/query/lexer.ts": [LEXER_CONSTS, TOKENIZE],
    "src/ui/format.ts": [FORMAT_DUE],
    "src/cli/commands/list.ts": [LIST_IMPORTS, LIST_OPTIONS, LIST_CMD],
    "src/cli/args.ts": [ARGS_LIST],
    "docs/cli.md": [DOCS_LIST],
    "src/store/cache.ts": [CACHE_CLASS],
    "src/store/db.ts": [UPDATE_TASK],
    "test/cache.test.ts": [CACHE_TEST],
    "src/cli/commands/export.ts": [EXPORT_CMD],
    "src/output/csv.ts": [TO_CSV],
    "src/utils/slug.ts": [SLUGIFY],
    "src/ui/board.ts": [BOARD_SLUG],
}


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


# ---------------------------------------------------------------------------------------------
# coding-session.jsonl
# ---------------------------------------------------------------------------------------------
UNICODE_TEST = """import { describe, expect, it } from "vitest";
import { parseQuery, tokenize } from "../src/query/parser";
import { makeTask } from "./helpers";

describe("unicode in queries", () => {
  it.each(["café", "naïve-search", "日本語", "résumé"])("matches tag:%s", (tag) => {
    const task = makeTask({ title: "Update café menu board", tags: [tag] });
    expect(parseQuery(`tag:${tag}`).matches(task)).toBe(true);
  });

  it("treats NFC and NFD spellings of a tag as equal", () => {
    const task = makeTask({ title: "x", tags: ["caf\\u00e9"] });
    expect(parseQuery("tag:cafe\\u0301").matches(task)).toBe(true);
  });

  it("keeps earlier due dates for due<", () => {
    const early = makeTask({ title: "early", due: "2026-03-15" });
    const late = makeTask({ title: "late", due: "2026-04-20" });
    const q = parseQuery("due<2026-04-01");
    expect([early, late].filter((t) => q.matches(t))).toEqual([early]);
  });
});
"""
JSON_TS = """import type { Task } from "../model/task";

export interface JsonOptions {
  board: string;
  pretty?: boolean;
}

/** Tasks as a JSON array: ISO dates, tags sorted, the board name on every task. */
export function renderJson(tasks: readonly Task[], opts: JsonOptions): string {
  const out = tasks.map((t) => ({
    id: t.id,
    board: opts.board,
    title: t.title,
    status: t.status,
    due: t.due ? new Date(t.due).toISOString().slice(0, 10) : null,
    tags: [...t.tags].sort(),
    position: t.position,
  }));
  return JSON.stringify(out, null, opts.pretty === false ? undefined : 2);
}
"""
SUMMARY = """## Goal
Fix two query bugs in tasklane (`due<` matched the wrong dates; tags with accents or CJK failed to \
lex), show due dates in UTC on the board, add `--format json|table` to `tasklane list` with docs, \
then fix stale `list` output after `tasklane edit` (the store's task cache is never invalidated).

## Constraints & Preferences
- Tests run with `npm test` (vitest); `npm run lint` must be clean before the PR
- `table` stays the default output format; no new dependencies
- The user works in America/Bogotá (UTC−5): due dates must not shift by a day

## Progress
### Done
- [x] Swapped `<`/`>` in `COMPARATORS` (src/query/parser.ts)
- [x] Lexer accepts Unicode letters (`\\p{L}`, `u` flag) and NFC-normalises its input
- [x] Added test/query.unicode.test.ts (café, naïve-search, 日本語, résumé)
- [x] `formatDue` formats with `timeZone: "UTC"` (src/ui/format.ts)
- [x] `--format json|table` for `tasklane list`; new src/output/json.ts; docs/cli.md and CHANGELOG.md updated
- [x] Profiled `tasklane list` on 10k tasks (scripts/bench-query.mjs); tightened the hot loop in src/query/eval.ts
- [x] Fixed the double HTML escaping of `&` in the board export (src/ui/board.ts, src/output/table.ts)

### In Progress
- [ ] Cache invalidation: `updateTask` in src/store/db.ts must call `taskCache.invalidateBoard(boardId)`

### Blocked
- (none)

## Key Decisions
- **Unicode property escapes in the lexer**: simpler than a hand-written table; Node ≥ 18 is already required
- **JSON output is an array, not NDJSON**: it matches what the HTTP API returns

## Next Steps
1. Add `TaskCache.invalidateBoard` and call it from `updateTask`
2. Make test/cache.test.ts pass, then run the whole suite and `npm run lint`

## Critical Context
- Branch: fix/query-due-filter
- test/cache.test.ts already contains a test for `invalidateBoard` (written by the user before the session)"""
BRANCH_SUMMARY = """## Goal
Make `tasklane export` stream rows so that it works for 100k tasks.

## Constraints & Preferences
- Reuse src/output/csv.ts; no new dependency

## Progress
### Done
- [x] Wrote src/output/csv-stream.ts (a `Transform` that turns tasks into CSV lines)

### In Progress
- [ ] `store.listTasks` still loads every row into an array, so memory did not go down

### Blocked
- True streaming needs a cursor API in src/store/db.ts, a bigger change than the user wants now

## Key Decisions
- **Streaming abandoned**: the user went back and asked for a simpler `--limit` option instead

## Next Steps
1. Add `--limit <n>` to `tasklane export`"""


def coding_session(emit: Callable[[bytes], None]) -> None:
    p = Project(seed=7, anchors=ANCHORS)
    w = Writer(emit, seed=7, session_id="019cae41-7a2e-7c3b-9f10-4d8e2b6a1c07", id_prefix="c0", project=p)
    o = w.out
    w.model_change("claude-sonnet-4-5")
    w.thinking_level("medium")

    # -- turn 1: two query bugs ------------------------------------------------------------------
    first = w.user(
        "`tasklane list --filter 'due<2026-04-01'` shows the tasks due *after* April 1st, and filtering "
        "by a tag with an accent (`tasklane list -f tag:café`) throws `QueryError: unexpected character "
        "'é' at 7`. Can you fix both? Tests run with `npm test`.",
        pause=(4, 9),
    )
    w.step(
        [("ls", {"path": "src/query"})],
        text="I'll start with the query code.",
        thinking="Two bugs, both in the query language: a comparison that goes the wrong way and a lexer that "
        "rejects non-ASCII letters. Let me see what lives in src/query.",
    )
    w.step([("find", {"pattern": "*.test.ts"}), ("grep", {"pattern": "COMPARATORS", "path": "src"})])
    w.step([("read", {"path": "src/query/parser.ts"})])
    w.step(
        [("read", {"path": "src/query/lexer.ts"})],
        thinking="`COMPARATORS` maps `<` to `gt` and `>` to `lt` — that alone explains the due< bug. For the "
        "accent, the lexer is next.",
    )
    fails = [
        {
            "file": "test/query.test.ts",
            "suite": "parseQuery",
            "name": "due< keeps earlier dates",
            "error": "AssertionError",
            "message": "expected [ …(2) ] to deeply equal [ …(1) ]",
            "expected": ["[", '  { "title": "early", "due": "2026-03-15" },', "]"],
            "received": [
                "[",
                '  { "title": "late", "due": "2026-04-20" },',
                '  { "title": "undated", "due": null },',
                "]",
            ],
            "line": 48,
            "col": 31,
            "source": [
                '  it("due< keeps earlier dates", () => {',
                '    const q = parseQuery("due<2026-04-01");',
                "    expect(tasks.filter((t) => q.matches(t))).toEqual([early]);",
            ],
        },
        {
            "file": "test/query.test.ts",
            "suite": "parseQuery",
            "name": "tag: accepts accented tags",
            "error": "QueryError",
            "message": "unexpected character 'é' at 7",
            "line": 61,
            "col": 12,
            "source": [
                '  it("tag: accepts accented tags", () => {',
                '    const q = parseQuery("tag:café");',
                '    expect(q.filters[0].value).toBe("café");',
            ],
        },
    ]
    w.step(
        [
            (
                "bash",
                {"command": "npm test -- test/query.test.ts", "timeout": 120},
                (o.vitest(w.ms, fails, files=["test/query.test.ts"]), 1),
            )
        ],
        text="Both bugs reproduce in the existing tests.",
    )
    w.step(
        [
            (
                "edit",
                {
                    "path": "src/query/parser.ts",
                    "oldText": '  "<": "gt",\n  "<=": "lte",\n  ">": "lt",',
                    "newText": '  "<": "lt",\n  "<=": "lte",\n  ">": "gt",',
                },
            )
        ],
        thinking="Swap the two entries. `<=`/`>=` are already right, which is why only the strict forms misbehave.",
    )
    w.step(
        [
            (
                "edit",
                {
                    "path": "src/query/lexer.ts",
                    "oldText": "const IDENT = /[A-Za-z_][A-Za-z0-9_]*/y;",
                    "newText": "const IDENT = /[\\p{L}_][\\p{L}\\p{N}_]*/uy;",
                },
            )
        ]
    )
    ln = line_of(p.text("src/query/lexer.ts"), IDENT)
    w.step(
        [("read", {"path": "src/query/lexer.ts", "offset": max(1, ln - 3), "limit": 60})],
        thinking="The old text did not match — the real pattern allows `-` too. Read that part exactly.",
    )
    w.step(
        [
            (
                "edit",
                {
                    "path": "src/query/lexer.ts",
                    "edits": [
                        {"oldText": IDENT, "newText": "const IDENT = /[\\p{L}_][\\p{L}\\p{N}_-]*/uy;"},
                        {
                            "oldText": TOKENIZE_HEAD,
                            "newText": 'export function tokenize(input: string): Token[] {\n  const src = input.normalize("NFC");',
                        },
                    ],
                },
            )
        ],
        text="Unicode letters in identifiers, and NFC-normalised input so `café` typed two ways is one tag.",
    )
    w.step(
        [
            (
                "bash",
                {"command": "npx vitest run test/query.test.ts", "timeout": 90.5},
                (o.vitest(w.ms, files=["test/query.test.ts"]), 0),
            )
        ]
    )
    w.step(
        [("write", {"path": "test/query.unicode.test.ts", "content": UNICODE_TEST})],
        text="Adding regression tests for both cases.",
    )
    w.step([("bash", {"command": "npm test", "timeout": 120}, (o.vitest(w.ms, verbose=True), 0))])
    w.step(
        text="Both fixed:\n\n- **`due<` / `due>`** — `COMPARATORS` in `src/query/parser.ts` had `<` and `>` swapped.\n"
        "- **Accented tags** — the lexer's `IDENT` only allowed ASCII; it now uses Unicode property escapes "
        "(`\\p{L}`, `u` flag), and `tokenize` NFC-normalises its input so `café` typed as `e` + combining "
        "accent is the same tag.\n\nNew tests in `test/query.unicode.test.ts` cover café, naïve-search, 日本語 "
        "and résumé. The whole suite passes."
    )
    w.session_info("Fix due< filter, unicode tags, list --format")
    w.label(first, "bug report")

    # -- turn 2: a screenshot from the user ------------------------------------------------------------
    w.user(
        [
            {
                "type": "text",
                "text": "Thanks! The board view also shows due dates one day early for me (I'm in "
                "America/Bogotá). Screenshot:",
            },
            {"type": "image", "data": tiny_png(40, 24, seed=3), "mimeType": "image/png"},
        ]
    )
    w.step(
        [("grep", {"pattern": "formatDue", "path": "src"})],
        thinking="A date-only string like 2026-04-01 parses as UTC midnight; formatting it in a UTC−5 zone gives "
        'March 31st. `formatDue` probably lacks `timeZone: "UTC"`.',
    )
    w.step([("read", {"path": "src/ui/format.ts"})])
    w.step(
        [
            (
                "edit",
                {
                    "path": "src/ui/format.ts",
                    "oldText": 'toLocaleDateString(locale, { month: "short", day: "numeric" })',
                    "newText": 'toLocaleDateString(locale, { month: "short", day: "numeric", timeZone: "UTC" })',
                },
            )
        ]
    )
    w.step(
        [
            (
                "bash",
                {
                    "command": "TZ=America/Bogota node scripts/render-board.mjs --board inbox --out /tmp/board.png"
                },
                ("rendered board 'inbox' (14 tasks, 4 columns) → /tmp/board.png (640×360)", 0),
            )
        ]
    )
    w.step([("read", {"path": "/tmp/board.png"})], text="Let me look at the rendered board.")
    w.step(
        text="Fixed in `src/ui/format.ts`: due dates are date-only strings, so they are now formatted with "
        '`timeZone: "UTC"` and no longer shift a day west of Greenwich. The re-rendered board (above) shows '
        "Apr 1 where yours showed Mar 31."
    )

    # -- the user runs commands with ! ----------------------------------------------------------------
    w.bash(
        "npm run lint",
        o.eslint(
            [
                (
                    "test/query.unicode.test.ts",
                    2,
                    22,
                    "error",
                    "'tokenize' is defined but never used",
                    "@typescript-eslint/no-unused-vars",
                ),
                (
                    "src/ui/board.ts",
                    88,
                    31,
                    "warning",
                    "Unexpected any. Specify a different type",
                    "@typescript-eslint/no-explicit-any",
                ),
            ]
        ),
        1,
    )
    w.bash(
        "git status --short",
        " M src/query/lexer.ts\n M src/query/parser.ts\n M src/ui/format.ts\n?? test/query.unicode.test.ts",
        0,
        pause=(3, 8),
    )

    # -- turn 3: lint, then list --format ---------------------------------------------------------------
    w.user(
        "Fix that lint error, then add `--format json|table` to `tasklane list` (table stays the default)."
    )
    w.step(
        [
            (
                "edit",
                {
                    "path": "test/query.unicode.test.ts",
                    "oldText": 'import { parseQuery, tokenize } from "../src/query/parser";',
                    "newText": 'import { parseQuery } from "../src/query/parser";',
                },
            )
        ],
        text="First the unused import.",
    )
    w.step(
        [("read", {"path": "src/cli/commands/list.ts"}), ("read", {"path": "src/cli/args.ts"})],
        thinking="The command is wired in args.ts and implemented in commands/list.ts; read both at once.",
    )
    w.step([("read", {"path": "src/output/table.ts"})])
    w.step(
        [("write", {"path": "src/output/json.ts", "content": JSON_TS})],
        text="A JSON renderer next to the table one.",
    )
    w.step(
        [
            (
                "edit",
                {
                    "path": "src/cli/commands/list.ts",
                    "oldText": LIST_IMPORTS.split("\n")[2],
                    "newText": LIST_IMPORTS.split("\n")[2]
                    + '\nimport { renderJson } from "../../output/json";',
                },
            )
        ]
    )
    w.step(
        [
            (
                "edit",
                {
                    "path": "src/cli/commands/list.ts",
                    "oldText": '  process.stdout.write(renderTable(tasks, { color: opts.color }) + "\\n");',
                    "newText": '  const out = opts.format === "json"\n    ? renderJson(tasks, { board: boardKey })\n'
                    '    : renderTable(tasks, { color: opts.color });\n  process.stdout.write(out + "\\n");',
                },
            )
        ]
    )
    w.step(
        [
            (
                "edit",
                {
                    "path": "src/cli/args.ts",
                    "oldText": '    .option("--no-color", "disable colours")\n    .action(async (opts) => process.exit(await listCommand(opts)));',
                    "newText": '    .option("--no-color", "disable colours")\n'
                    '    .addOption(new Option("--format <format>", "output format").choices(["table", "json"]).default("table"))\n'
                    "    .action(async (opts) => process.exit(await listCommand(opts)));",
                },
            )
        ]
    )
    lc = line_of(p.text("src/cli/commands/list.ts"), "opts.format")
    w.step(
        [
            (
                "bash",
                {"command": "npx tsc --noEmit"},
                (
                    o.tsc(
                        [
                            (
                                "src/cli/commands/list.ts",
                                lc,
                                20,
                                "TS2339: Property 'format' does not exist on type 'ListOptions'.",
                            ),
                            (
                                "src/cli/args.ts",
                                line_of(p.text("src/cli/args.ts"), "new Option("),
                                20,
                                "TS2304: Cannot find name 'Option'.",
                            ),
                        ]
                    ),
                    2,
                ),
            )
        ]
    )
    w.step(
        [
            (
                "edit",
                {
                    "path": "src/cli/commands/list.ts",
                    "oldText": "  filter?: string;\n  color: boolean;\n}",
                    "newText": '  filter?: string;\n  color: boolean;\n  format: "json" | "table";\n}',
                },
            ),
            (
                "edit",
                {
                    "path": "src/cli/args.ts",
                    "oldText": '    .command("list")',
                    "newText": '    .command("list")  // Option comes from commander (imported at the top)',
                },
            ),
        ],
        thinking="Two errors: ListOptions needs the field, and `Option` must be imported from commander.",
    )
    w.step([("bash", {"command": "npx tsc --noEmit"}, ("", 0))])
    w.step(
        [
            (
                "todo",
                {
                    "action": "update",
                    "progress": 0.6,
                    "todos": [
                        {"id": 1, "text": "fix due< comparison", "status": "done"},
                        {
                            "id": 2,
                            "text": "unicode tags",
                            "status": "done",
                            "meta": {"tests": ["café", "日本語"], "nfc": True},
                        },
                        {"id": 3, "text": "list --format json", "status": "in_progress"},
                        {"id": 4, "text": "docs + changelog", "status": "todo"},
                    ],
                },
                {"content": "Updated 4 todos (2 done, 1 in progress, 1 to do).", "ms": 3},
            )
        ]
    )
    w.custom(
        "todo",
        {
            "todos": [
                {"id": 1, "done": True},
                {"id": 2, "done": True},
                {"id": 3, "done": False},
                {"id": 4, "done": False},
            ],
            "progress": 0.6,
        },
    )
    w.step(
        [
            (
                "bash",
                {
                    "command": "npm run build && node dist/cli.js list --board inbox --format json",
                    "timeout": 60,
                },
                ("\n> tasklane@0.14.3 build\n> tsc -p tsconfig.json\n\n" + o.tasks_json(34), 0),
            )
        ]
    )
    w.step(
        text="`tasklane list --format json` prints a JSON array (ISO dates, sorted tags, the board on every task); "
        "`table` stays the default. Changes: `src/output/json.ts` (new), `src/cli/commands/list.ts`, "
        "`src/cli/args.ts`. Lint is clean again."
    )

    # -- turn 4: docs (after a long pause: the prompt cache has expired) -----------------------------------
    w.user("Also document it in docs/cli.md and add a CHANGELOG entry.", pause=(420, 700))
    w.step([("grep", {"pattern": "tasklane list", "path": "docs"})])
    w.step([("read", {"path": "docs/cli.md"})])
    w.step(
        [
            (
                "edit",
                {
                    "path": "docs/cli.md",
                    "oldText": "| `--no-color` | | disable colours |",
                    "newText": "| `--no-color` | | disable colours |\n"
                    "| `--format <format>` | `table` | `table` or `json` (an array of tasks, ISO dates) |",
                },
            )
        ]
    )
    w.step([("read", {"path": "CHANGELOG.md", "limit": 30})])
    w.step(
        [
            (
                "edit",
                {
                    "path": "CHANGELOG.md",
                    "oldText": "# Changelog\n\n",
                    "newText": "# Changelog\n\n## Unreleased\n\n- Added: `tasklane list --format json`\n"
                    "- Fixed: `due<` / `due>` compared the wrong way\n"
                    "- Fixed: tags with accents or CJK characters in queries\n"
                    "- Fixed: due dates shown a day early west of UTC\n\n",
                },
            )
        ]
    )
    w.step(
        text="Documented `--format` in the `tasklane list` table of docs/cli.md and added an *Unreleased* "
        "section to CHANGELOG.md with the three fixes and the new option."
    )

    # -- two more requests ---------------------------------------------------------------------------
    w.random_turn(
        9,
        think=0.6,
        big=0.15,
        focus=["src/query/eval.ts", "src/query/parser.ts"],
        request="While you're at it: `tasklane list` feels slow on the load-test board (10k tasks). Profile "
        "it with `node scripts/bench-query.mjs` and fix the hot spot — I suspect src/query/eval.ts.",
    )
    w.random_turn(
        7,
        think=0.5,
        big=0.1,
        focus=["src/ui/board.ts", "src/output/table.ts"],
        request="The board's HTML export escapes `&` twice (`R&D` shows as `R&amp;amp;D`). Check "
        "src/ui/board.ts and the table renderer.",
    )

    # -- turn 5: stale cache (this turn is what the compaction keeps) ----------------------------------------
    kept = w.user(
        "Next: after `tasklane edit <id> --title …`, `tasklane list` keeps showing the old title until I "
        "restart `tasklane serve`. I wrote a failing test in test/cache.test.ts. Look at src/store/cache.ts."
    )
    w.step(
        [("read", {"path": "src/store/cache.ts"})],
        thinking="A cache with an infinite TTL and no invalidation would do exactly this. Read it first.",
    )
    w.step([("grep", {"pattern": "taskCache", "path": "src"})])
    w.step([("read", {"path": "src/store/db.ts"})])
    w.step([("read", {"path": "test/cache.test.ts"}), ("read", {"path": "src/store/migrations.ts"})])
    w.step(
        [("read", {"path": "src/cli/commands/edit.ts"}), ("grep", {"pattern": "listTasks"})],
        thinking="`tasklane edit` goes through updateTask; check that nothing else writes tasks behind the cache.",
    )
    w.step(
        [
            (
                "bash",
                {"command": "git log -p -n 3 --format='%h %s' -- src/store"},
                (
                    o.git_log(3)
                    + "\n"
                    + o.git_diff(["src/store/cache.ts", "src/store/db.ts", "test/cache.test.ts"], 5),
                    0,
                ),
            ),
            ("read", {"path": "src/cli.ts"}),
            ("read", {"path": "src/model/task.ts"}),
        ],
        thinking="When did the cache arrive, and how does `tasklane serve` share it with the commands?",
    )
    w.step(
        [
            (
                "bash",
                {"command": "npx vitest run test/cache.test.ts"},
                (
                    o.vitest(
                        w.ms,
                        [
                            {
                                "file": "test/cache.test.ts",
                                "suite": "TaskCache",
                                "name": "drops a board after invalidateBoard",
                                "error": "TypeError",
                                "message": "cache.invalidateBoard is not a function",
                                "line": 5 + line_of(p.text("test/cache.test.ts"), CACHE_TEST),
                                "col": 11,
                                "source": [
                                    '    cache.set("inbox", [makeTask({ title: "old" })]);',
                                    '    cache.invalidateBoard("inbox");',
                                ],
                            }
                        ],
                        files=["test/cache.test.ts"],
                    ),
                    1,
                ),
            )
        ]
    )
    w.step(
        [
            (
                "edit",
                {
                    "path": "src/store/cache.ts",
                    "oldText": "  set(boardId: string, tasks: Task[]): void {\n"
                    "    this.byBoard.set(boardId, { tasks, loadedAt: Date.now() });\n  }",
                    "newText": "  set(boardId: string, tasks: Task[]): void {\n"
                    "    this.byBoard.set(boardId, { tasks, loadedAt: Date.now() });\n  }\n\n"
                    "  invalidateBoard(boardId: string): void {\n    this.byBoard.delete(boardId);\n  }",
                },
            )
        ]
    )
    w.step(
        [
            (
                "bash",
                {"command": "git diff --stat && git diff src/store"},
                (
                    " src/store/cache.ts | 4 ++++\n 1 file changed, 4 insertions(+)\n\n"
                    + o.git_diff(["src/store/cache.ts", "src/store/db.ts"], 3),
                    0,
                ),
            )
        ]
    )
    w.step(
        [
            (
                "bash",
                {"command": "npx vitest run --reporter=verbose", "timeout": 120},
                (o.vitest(w.ms, verbose=True), 0),
            )
        ],
        text="Cache side done; the whole suite still passes. `updateTask` still has to call it.",
    )

    i_kept = next(i for i, it in enumerate(w.path) if it.id == kept)
    w.compaction(SUMMARY, i_kept)

    # -- after the compaction: another model, more thinking ------------------------------------------------
    w.model_change("claude-opus-4-5")
    w.thinking_level("high")
    w.step(
        [
            (
                "edit",
                {
                    "path": "src/store/db.ts",
                    "oldText": UPDATE_TASK_TAIL,
                    "newText": UPDATE_TASK_TAIL.replace(
                        "  return next;", "  taskCache.invalidateBoard(next.boardId);\n  return next;"
                    ),
                },
            )
        ],
        thinking="Per the summary, the remaining step is calling invalidateBoard from updateTask.",
    )
    w.step([("bash", {"command": "npm test", "timeout": 120}, (o.vitest(w.ms), 0))])
    fork_parent = w.step(
        text="`updateTask` now invalidates the board's cached task list, so `tasklane list` shows "
        "edits right away (the failing test in test/cache.test.ts passes, and so does the rest)."
    )
    w.custom_message(
        "plan-mode",
        "Plan mode is off. Tools that modify files are enabled again.",
        display=True,
        details={"mode": "normal", "previous": "plan"},
    )

    u6 = w.user("Add `tasklane export --since <date>` that writes the matching tasks as CSV to stdout.")
    w.step(
        text="I'll start by reading the export command and the CSV",
        thinking="Export exists already; I need a `--since` filter on `createdAt`. Let me check",
        stop="aborted",
        error="Request was aborted",
    )
    w.user("Sorry — one thing first: reuse src/output/csv.ts, no new dependency. Go ahead. ✅")
    w.step(
        stop="error",
        error='529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},'
        '"request_id":"req_011CVqXh8T9PLr3s6Jc2KzQe"}',
    )
    w.step(
        [("read", {"path": "src/cli/commands/export.ts"}), ("read", {"path": "src/output/csv.ts"})],
        thinking="The export command already uses toCsv; add a `since` option and filter on createdAt.",
    )
    w.step(
        [
            (
                "edit",
                {
                    "path": "src/cli/commands/export.ts",
                    "oldText": "  const tasks = await store.listTasks(opts.board);",
                    "newText": "  const all = await store.listTasks(opts.board);\n"
                    "  const since = opts.since ? Date.parse(opts.since) : Number.NEGATIVE_INFINITY;\n"
                    "  const tasks = all.filter((t) => Date.parse(t.createdAt) >= since);",
                },
            )
        ]
    )
    w.step(
        [
            (
                "bash",
                {
                    "command": "npm run build && node dist/cli.js export --board inbox --since 2026-02-20 | head -n 5"
                },
                (
                    "\n> tasklane@0.14.3 build\n> tsc -p tsconfig.json\n\nid,title,status,due,tags\n"
                    "01JB7Q3ZK2,Update café menu board,todo,2026-04-01,café;ui\n01JB7Q40NX,日本語のラベルを修正,doing,,日本語\n"
                    "01JB7Q4C1M,Résumé template polish,todo,2026-03-20,design\n01JB7Q4J8D,Triage inbox,done,,",
                    0,
                ),
            )
        ]
    )
    w.step(
        text="`tasklane export --since <date>` filters on `createdAt` and reuses `toCsv` from src/output/csv.ts "
        "(no new dependency). Accents and CJK come through unchanged in the CSV."
    )
    # the branch that will be abandoned
    ub = w.user("Now make export stream rows instead of building one big string, so it works for 100k tasks.")
    w.step(
        [("read", {"path": "src/store/db.ts", "offset": 1, "limit": 120})],
        thinking="Streaming needs rows one at a time from the store; check whether db.ts has an iterator.",
    )
    w.step(
        [
            (
                "write",
                {
                    "path": "src/output/csv-stream.ts",
                    "content": 'import { Transform } from "node:stream";\nimport { csvCell, DEFAULT_COLUMNS } from "./csv";\n\n'
                    "export function csvStream(columns = DEFAULT_COLUMNS): Transform {\n  let first = true;\n"
                    "  return new Transform({\n    objectMode: true,\n    transform(task, _enc, done) {\n"
                    '      const head = first ? columns.join(",") + "\\n" : "";\n      first = false;\n'
                    '      done(null, head + columns.map((c) => csvCell(task[c])).join(",") + "\\n");\n    },\n  });\n}\n',
                },
            )
        ]
    )
    w.step(
        [
            (
                "bash",
                {"command": "npx tsc --noEmit"},
                (
                    o.tsc(
                        [
                            (
                                "src/output/csv-stream.ts",
                                2,
                                10,
                                "TS2459: Module '\"./csv\"' declares 'csvCell' locally, but it is not exported.",
                            )
                        ]
                    ),
                    2,
                ),
            )
        ]
    )
    w.step(
        [
            (
                "edit",
                {
                    "path": "src/output/csv.ts",
                    "oldText": "export function toCsv(",
                    "newText": "export { csvCell };\n\nexport function toCsv(",
                },
            )
        ]
    )
    w.step(
        [
            (
                "bash",
                {
                    "command": "node --max-old-space-size=96 dist/cli.js export --board load-test > /tmp/out.csv",
                    "timeout": 300,
                },
                (
                    "\n<--- Last few GCs --->\n\n[48213:0x6b1c000]     4120 ms: Mark-Compact 94.1 (97.3) -> 93.8 (97.8) MB, "
                    "pooled: 0 MB, 812.51 / 0.00 ms  (average mu = 0.121, current mu = 0.034) allocation failure; scavenge might not succeed\n\n"
                    "<--- JS stacktrace --->\n\nFATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n"
                    "----- Native stack trace -----\n\n 1: 0xb8d0a3 node::OOMErrorHandler(char const*, v8::OOMDetails const&) [node]\n"
                    " 2: 0xf06250 v8::Utils::ReportOOMFailure(v8::internal::Isolate*, char const*, v8::OOMDetails const&) [node]",
                    134,
                ),
            )
        ]
    )
    w.step(
        text="The CSV side streams now, but it still runs out of memory: `store.listTasks` loads all 100k rows "
        "into an array before anything is written. Real streaming needs a cursor API in src/store/db.ts."
    )
    w.user("Hmm, that's getting complicated. Let's not do streaming for now.")
    w.step(text="Understood — I'll leave streaming. Want me to revert src/output/csv-stream.ts?")
    # /tree: back to before the streaming request, with a summary of the abandoned branch
    w.branch_back_to_user(next(i for i, it in enumerate(w.path) if it.id == ub), BRANCH_SUMMARY)
    w.user(
        "Instead of streaming, add a `--limit <n>` option to export (default: no limit) and a test for it."
    )
    w.step(
        [
            (
                "edit",
                {
                    "path": "src/cli/commands/export.ts",
                    "oldText": "  process.stdout.write(toCsv(tasks));",
                    "newText": "  const limited = opts.limit === undefined ? tasks : tasks.slice(0, opts.limit);\n"
                    "  process.stdout.write(toCsv(limited));",
                },
            )
        ],
        thinking="Slice after filtering so `--since` and `--limit` compose.",
    )
    w.step([("read", {"path": "test/cli.test.ts", "offset": 1, "limit": 60})])
    w.step(
        [
            (
                "edit",
                {
                    "path": "test/cli.test.ts",
                    "oldText": 'import { describe, expect, it, beforeEach } from "vitest";',
                    "newText": 'import { describe, expect, it, beforeEach } from "vitest";\n'
                    'import { runCli } from "./helpers";\n\n'
                    'describe("export --limit", () => {\n'
                    '  it("writes at most n rows", async () => {\n'
                    '    const out = await runCli(["export", "--board", "inbox", "--limit", "2"]);\n'
                    '    expect(out.trim().split("\\n")).toHaveLength(3); // header + 2\n'
                    "  });\n});",
                },
            )
        ]
    )
    w.step(
        [
            (
                "bash",
                {"command": "npm test && npm run lint", "timeout": 180},
                (o.vitest(w.ms) + "\n\n> tasklane@0.14.3 lint\n> eslint 'src/**/*.ts' 'test/**/*.ts'\n", 0),
            )
        ]
    )
    last = w.step(
        text="Added `--limit <n>` to `tasklane export` (applied after `--since`), with a test in "
        "test/cli.test.ts. Tests and lint pass. 🎉"
    )
    w.label(last, "export --since/--limit done")
    assert u6 and fork_parent


# ---------------------------------------------------------------------------------------------
# small-tutorial.jsonl
# ---------------------------------------------------------------------------------------------
def small_tutorial(emit: Callable[[bytes], None]) -> None:
    p = Project(seed=3, anchors=ANCHORS)
    w = Writer(
        emit,
        seed=3,
        session_id="019cae41-0000-7000-8000-00000000a001",
        id_prefix="a0",
        project=p,
        system_tokens=3100,
    )
    o = w.out
    w.model_change("claude-sonnet-4-5")
    w.thinking_level("low")
    w.user("Rename `slugify` in src/utils/slug.ts to `toSlug` and update every caller.", pause=(3, 6))
    w.step([("grep", {"pattern": "slugify", "path": "src"})], text="Let me find every use first.")
    w.step([("read", {"path": "src/utils/slug.ts"})])
    w.step(
        [
            (
                "edit",
                {
                    "path": "src/utils/slug.ts",
                    "oldText": "export function slugify(name: string): string {",
                    "newText": "export function toSlug(name: string): string {",
                },
            )
        ]
    )
    w.step(
        [
            (
                "edit",
                {
                    "path": "src/ui/board.ts",
                    "oldText": "  return `#col-${slugify(column.name)}`;",
                    "newText": "  return `#col-${toSlug(column.name)}`;",
                },
            ),
            (
                "edit",
                {
                    "path": "src/cli/commands/list.ts",
                    "oldText": "  const boardKey = slugify(opts.board);",
                    "newText": "  const boardKey = toSlug(opts.board);",
                },
            ),
            (
                "edit",
                {
                    "path": "src/cli/commands/list.ts",
                    "oldText": 'import { slugify } from "../../utils/slug";',
                    "newText": 'import { toSlug } from "../../utils/slug";',
                },
            ),
        ],
        text="Updating the callers.",
    )
    w.step([("bash", {"command": "npx tsc --noEmit"}, ("", 0))])
    w.step([("bash", {"command": "npm test", "timeout": 120}, (o.vitest(w.ms), 0))])
    w.step(
        text="Renamed `slugify` to `toSlug` in src/utils/slug.ts and updated its two callers "
        "(src/ui/board.ts, src/cli/commands/list.ts). Type check and tests pass."
    )
    w.session_info("Rename slugify → toSlug")
    w.user("Thanks. Also make toSlug drop accents: “Crème brûlée” should become `creme-brulee`.")
    w.step(
        [
            (
                "read",
                {
                    "path": "src/utils/slug.ts",
                    "offset": line_of(p.text("src/utils/slug.ts"), "export function toSlug"),
                    "limit": 10,
                },
            )
        ],
        thinking="Decompose with NFD and strip combining marks (\\p{M}) before the ASCII replacement.",
    )
    w.step(
        [
            (
                "edit",
                {
                    "path": "src/utils/slug.ts",
                    "oldText": "    .trim()\n    .toLowerCase()",
                    "newText": '    .trim()\n    .normalize("NFD")\n    .replace(/\\p{M}+/gu, "")\n    .toLowerCase()',
                },
            )
        ]
    )
    w.step(
        [
            (
                "write",
                {
                    "path": "test/slug.test.ts",
                    "content": 'import { describe, expect, it } from "vitest";\nimport { toSlug } from "../src/utils/slug";\n\n'
                    'describe("toSlug", () => {\n  it("drops accents", () => {\n'
                    '    expect(toSlug("Crème brûlée")).toBe("creme-brulee");\n  });\n\n'
                    '  it("keeps ASCII words", () => {\n    expect(toSlug("  Q2 Roadmap ")).toBe("q2-roadmap");\n  });\n});\n',
                },
            )
        ]
    )
    w.step(
        [
            (
                "bash",
                {"command": "npx vitest run test/slug.test.ts"},
                (o.vitest(w.ms, files=["test/slug.test.ts"]), 0),
            )
        ]
    )
    w.step(
        text="`toSlug` now NFD-decomposes and strips combining marks, so “Crème brûlée” → `creme-brulee`. "
        "Tests in test/slug.test.ts."
    )
    w.user("What does toSlug do with CJK names like 日本語?")
    w.step(
        text="It returns an empty string: after accents are stripped, everything outside `[a-z0-9]` becomes a "
        'dash and the dashes are trimmed, so `日本語` → `""`. If boards can have CJK names, either keep '
        "letters with `\\p{L}` (slug `日本語`) or fall back to the board id when the slug is empty.",
        thinking="Trace it: NFD leaves CJK unchanged, the [^a-z0-9]+ replacement turns the whole name into one "
        "dash, and the trim removes it.",
    )


# ---------------------------------------------------------------------------------------------
# long-session.jsonl
# ---------------------------------------------------------------------------------------------
def long_session(emit: Callable[[bytes], None]) -> None:
    size = [0]

    def counting(line: bytes) -> None:
        size[0] += len(line) + 1
        emit(line)

    p = Project(seed=11, anchors=ANCHORS, scale=0.5)
    w = Writer(
        counting,
        seed=11,
        session_id="019cae41-0000-7000-8000-00000000b002",
        id_prefix="b0",
        project=p,
        sig_bytes=(40, 90),
    )
    w.model_change("claude-sonnet-4-5")
    w.thinking_level("medium")
    w.session_info("Query engine clean-up (long, not compacted yet)")
    turns = 0
    while w.n < 680 and size[0] < 880_000:
        w.random_turn(rounds=w.rng.randint(3, 15), think=0.35, big=0.02, partial=0.55)
        turns += 1
        if turns == 6:
            w.bash("git log --oneline -n 8", w.out.git_log(8))
        if turns == 14:
            w.label(w.leaf or "", "halfway")


# ---------------------------------------------------------------------------------------------
# hostile-content.jsonl
# ---------------------------------------------------------------------------------------------
def hostile(emit: Callable[[bytes], None]) -> None:
    w = Writer(
        emit,
        seed=5,
        session_id="019cae41-0000-7000-8000-00000000d003",
        id_prefix="d0",
        project=Project(seed=5, anchors=ANCHORS),
    )
    w.model_change("claude-sonnet-4-5")
    w.session_info("<b>bold</b> <script>alert('name')</script> \x1b[1mbold\x1b[0m")
    u = w.user(
        "Please check this page: <script>alert(1)</script> <img src=x onerror=alert(2)> "
        "[click](javascript:alert(3)) **not bold** <iframe src='https://example.invalid'></iframe> "
        '![pixel](https://tracker.example.invalid/p.png) <a href="javascript:alert(9)">link</a> '
        "<svg onload=alert(10)></svg> {{7*7}} ${alert(11)} :red[streamlit colour] $$\\begin{x}$$ "
        "</textarea></code></pre> <!-- comment --> &lt;escaped&gt; &amp; \u202eevil-rtl\u202c zero\u200bwidth",
        pause=(2, 4),
    )
    w.step(
        [
            (
                "bash",
                {"command": "cat page.html; printf '\\033[31mred\\033[0m'"},
                (
                    "<html><body onload=alert(5)><script>document.title='pwned'</script>"
                    "\x1b[31mred text\x1b[0m \x1b[1;4mbold underline\x1b[0m\x07\x08 control chars \x01\x02\x03\x0b\x0c\x0e\x1f\x7f "
                    "\x1b]0;title\x07 \x1b[2J\x1b[H cleared? \r carriage return\ttab</body></html>",
                    0,
                ),
            )
        ],
        text="<h1>Heading?</h1> [link](javascript:alert(4)) $x^2$ `code` <details open><summary>x</summary>y</details>",
        thinking="<script>alert('thinking')</script> ```html\n<b>not a fence end",
    )
    w.step([("read", {"path": "<script>alert(6)</script>.ts"})])
    w.step(
        [
            (
                "bash",
                {"command": "node -e \"console.log('x'.repeat(60000))\""},
                ("A very long line: " + "<b>x</b>&nbsp;" * 2900 + " end of the long line", 0),
            )
        ]
    )
    w.bash(
        "printf '\\033[32mgreen\\033[0m <script>alert(7)</script>'",
        "\x1b[32mgreen\x1b[0m <script>alert(7)</script>",
        3,
    )
    w.label(u, "<img src=x onerror=alert(8)>")
    w.custom_message(
        "note",
        "<style>body{display:none}</style> **markdown** [x](javascript:alert(12))",
        display=True,
        details={"html": "<script>alert(13)</script>"},
    )
    w.step(
        text="Done. </div></div><style>body{display:none}</style> Everything is shown as text. "
        "\x1b[31mstill red?\x1b[0m"
    )


# ---------------------------------------------------------------------------------------------
# broken.jsonl
# ---------------------------------------------------------------------------------------------
def broken() -> bytes:
    lines: list[bytes] = []
    small_tutorial(lines.append)
    lines = lines[:22]
    lines.insert(4, b'{"type":"message","id":"zz00bad1","parentId": oops this is not json')  # line 5
    lines.insert(11, b"")  # a blank line
    lines.append(lines[7])  # a duplicate id
    entry = orjson.loads(lines[9])
    entry.update(id="a0dead01", parentId="a0ffffff")  # a parent that is nowhere
    entry["message"] = {
        "role": "user",
        "content": "My parent entry is missing.",
        "timestamp": entry["message"]["timestamp"],
    }
    lines.insert(16, orjson.dumps(entry))
    tail = lines[12]
    return b"\n".join(lines) + b"\n" + tail[: len(tail) // 2]  # a truncated last line, no newline


# ---------------------------------------------------------------------------------------------
# claude-code-session.jsonl (a Claude Code transcript, for the importer)
# ---------------------------------------------------------------------------------------------
def claude_code_session(emit) -> None:  # type: ignore[no-untyped-def]
    """A Claude Code transcript: one line per content block, parallel tool calls, a microcompact, a compaction."""
    import json

    sid = "7d1c2b3a-0000-4000-8000-00000000cc01"
    n = [0]

    def line(type_: str, parent: str | None, **kw) -> str:  # type: ignore[no-untyped-def]
        n[0] += 1
        uid = f"cc000000-0000-4000-8000-{n[0]:012d}"
        obj = {
            "type": type_,
            "uuid": uid,
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/dev/project",
            "sessionId": sid,
            "version": "2.1.3",
            "timestamp": f"2026-03-03T10:{n[0] // 60:02d}:{n[0] % 60:02d}.000Z",
            **kw,
        }
        emit(json.dumps(obj, ensure_ascii=False))
        return uid

    # each call's prompt: the 15,000 tokens of system prompt, tools and memory every session sends
    # (read from the cache other sessions left), then the conversation, written as it grows
    def usage(i: int, o: int, r: int, w: int) -> dict:  # type: ignore[type-arg]
        return {
            "input_tokens": i,
            "output_tokens": o,
            "cache_read_input_tokens": r,
            "cache_creation_input_tokens": w,
            "service_tier": "standard",
        }

    emit(json.dumps({"type": "file-history-snapshot", "messageId": "x", "snapshot": {}}))
    u1 = line(
        "user",
        None,
        message={"role": "user", "content": "Find why `npm test` fails in src/lexer.ts and fix it."},
    )
    a1 = line(
        "assistant",
        u1,
        requestId="req_1",
        message={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "thinking", "thinking": "Read the lexer and the test.", "signature": "s"}],
            "stop_reason": None,
            "usage": usage(3, 210, 15000, 13),
        },
    )
    a1b = line(
        "assistant",
        a1,
        requestId="req_1",
        message={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_01",
                    "name": "Read",
                    "input": {"file_path": "/home/dev/project/src/lexer.ts"},
                }
            ],
            "stop_reason": None,
            "usage": usage(3, 210, 15000, 13),
        },
    )
    a1c = line(
        "assistant",
        a1b,
        requestId="req_1",
        message={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_02",
                    "name": "Bash",
                    "input": {"command": "npm test", "timeout": 120000},
                }
            ],
            "stop_reason": "tool_use",
            "usage": usage(3, 210, 15000, 13),
        },
    )
    line(
        "user",
        a1b,
        message={
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01",
                    "content": "1\texport function* tokenize(src: string) {\n" * 60,
                }
            ],
        },
        toolUseResult={"type": "text", "file": {"filePath": "/home/dev/project/src/lexer.ts"}},
    )
    r2 = line(
        "user",
        a1c,
        message={
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_02",
                    "content": "FAIL test/lexer.test.ts\n  expected Array, got Generator",
                    "is_error": True,
                }
            ],
        },
    )
    a2 = line(
        "assistant",
        r2,
        requestId="req_2",
        message={
            "id": "msg_2",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_03",
                    "name": "Edit",
                    "input": {
                        "file_path": "/home/dev/project/test/lexer.test.ts",
                        "old_string": "tokenize(src)",
                        "new_string": "[...tokenize(src)]",
                    },
                }
            ],
            "stop_reason": "tool_use",
            "usage": usage(3, 90, 15013, 646),
        },
    )
    r3 = line(
        "user",
        a2,
        message={
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_03", "content": "The file has been updated."}
            ],
        },
    )
    # Claude Code cleared the old Read output before the next call (reported format)
    mc = line(
        "system",
        r3,
        subtype="microcompact_boundary",
        content="Context microcompacted",
        microcompactMetadata={
            "trigger": "auto",
            "preTokens": 15700,
            "tokensSaved": 560,
            "compactedToolIds": ["toolu_01"],
            "clearedAttachmentUUIDs": [],
        },
    )
    a3 = line(
        "assistant",
        mc,
        requestId="req_3",
        message={
            "id": "msg_3",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "Fixed: the test now spreads the generator."}],
            "stop_reason": "end_turn",
            "usage": usage(3, 20, 15000, 103),  # the cleared output broke the prefix
        },
    )
    td = line("system", a3, subtype="turn_duration", content="", durationMs=5231)
    # a sub-agent line (kept apart) and a compaction the user asked for (/compact)
    emit(
        json.dumps(
            {
                "type": "user",
                "uuid": "side-1",
                "parentUuid": None,
                "isSidechain": True,
                "sessionId": sid,
                "agentId": "a1",
                "message": {"role": "user", "content": "sub-agent task"},
                "timestamp": "2026-03-03T10:05:00.000Z",
            }
        )
    )
    b = line(
        "system",
        None,
        subtype="compact_boundary",
        content="Conversation compacted",
        logicalParentUuid=td,
        compactMetadata={"trigger": "manual", "preTokens": 15130},
    )
    s1 = line(
        "user",
        b,
        isCompactSummary=True,
        isVisibleInTranscriptOnly=True,
        message={
            "role": "user",
            "content": "This session is being continued from a previous conversation that ran out of context. Summary:\n"
            "1. Primary Request and Intent: fix npm test in src/lexer.ts\n8. Current Work: test updated",
        },
    )
    # after compacting, Claude Code re-attaches the file it was editing (its text is not in the transcript)
    at = line(
        "attachment",
        s1,
        attachment={"type": "edited_text_file", "filename": "/home/dev/project/test/lexer.test.ts"},
    )
    u2 = line("user", at, message={"role": "user", "content": "Now run the whole suite again."})
    a4 = line(
        "assistant",
        u2,
        requestId="req_4",
        message={
            "id": "msg_4",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [
                {"type": "tool_use", "id": "toolu_04", "name": "Bash", "input": {"command": "npm test"}}
            ],
            "stop_reason": "tool_use",
            "usage": usage(3, 30, 15000, 732),
        },
    )
    r4 = line(
        "user",
        a4,
        message={
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_04", "content": "Tests: 43 passed, 43 total"}
            ],
        },
    )
    line(
        "assistant",
        r4,
        requestId="req_5",
        message={
            "id": "msg_5",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "All 43 tests pass."}],
            "stop_reason": "end_turn",
            "usage": usage(3, 12, 15732, 17),
        },
    )
    emit(
        json.dumps({"type": "last-prompt", "lastPrompt": "Now run the whole suite again.", "sessionId": sid})
    )


def collect(build: Callable[[Callable[[bytes], None]], None]) -> bytes:
    lines: list[bytes] = []
    build(lines.append)
    return b"\n".join(lines) + b"\n"


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else SAMPLES
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "coding-session.jsonl": collect(coding_session),
        "small-tutorial.jsonl": collect(small_tutorial),
        "long-session.jsonl": collect(long_session),
        "hostile-content.jsonl": collect(hostile),
        "broken.jsonl": broken(),
    }
    cc: list[str] = []
    claude_code_session(cc.append)
    files["claude-code-session.jsonl"] = ("\n".join(cc) + "\n").encode("utf-8")
    files["codex-session.jsonl"] = codex_session()
    files["codex-legacy.jsonl"] = codex_legacy()
    files["opencode-session.json"] = opencode_session()
    for name, data in files.items():
        if len(data) > MAX_SAMPLE_BYTES:
            raise SystemExit(f"{name} is {len(data):,} bytes, over the {MAX_SAMPLE_BYTES:,} limit")
        (out / name).write_bytes(data)
        lines = len(data.splitlines())
        print(f"{name:<28} {len(data):>9,} bytes  {lines:>5} lines")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
