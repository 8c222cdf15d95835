"""Write the bundled sample sessions (deterministic: the same bytes on every run).

    python sample_sessions/generate.py [OUTDIR]

* ``coding-session.jsonl`` — a realistic coding session: reads, edits, writes, bash, grep,
  tool errors, images (in a tool result and from the user), thinking, a user ``!`` bash run,
  a model change, thinking-level changes, an existing compaction, a ``/tree`` branch with a
  branch summary, labels, a session name, a custom entry and a custom message, an aborted and
  an error answer, non-ASCII text, a float and a nested object in tool arguments.
* ``small-tutorial.jsonl`` — a short clean linear session for first steps.
* ``long-session.jsonl`` — a long linear session whose context passes 100k tokens, with no
  compaction yet: material for what-if compaction and pruning.
* ``hostile-content.jsonl`` — a valid session whose text holds HTML, ``<script>``, markdown
  links, ANSI escapes and control characters (the app must show it inertly).
* ``broken.jsonl`` — a small session with a malformed line, a blank line, a duplicate id, a
  dangling ``parentId`` and a truncated last line, for the loader's reports.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sessiongen import TINY_PNG, Writer  # noqa: E402


def write(path: Path, build) -> None:  # type: ignore[no-untyped-def]
    lines: list[str] = []
    build(lines.append)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def coding_session(emit) -> None:  # type: ignore[no-untyped-def]
    w = Writer(emit, seed=7, session_id="019a7f3e-5c2b-7d41-9e8a-3f6b2c1d0e9f")
    w.entry("session_info", name="Streaming parser + cache fixes")
    w.entry("thinking_level_change", thinkingLevel="medium")
    first = w.user("The parser chokes on large inputs. Make `src/parser.ts` stream tokens from the lexer, "
                   "and keep the session cache consistent. Tests: `npm test`.")
    _, (c,) = w.assistant("Let me look at the parser first.", [("read", {"path": "src/parser.ts"})],
                          thinking="Start with the parser and the lexer interface.")
    w.tool_result(c, "read", w.code("src/parser.ts", 220))
    _, (c,) = w.assistant("", [("read", {"path": "src/lexer.ts", "offset": 1, "limit": 400})])
    w.tool_result(c, "read", w.code("src/lexer.ts", 380))
    _, (c,) = w.assistant("", [("grep", {"pattern": "tokenize\\(", "path": "src"})])
    w.tool_result(c, "grep", "src/parser.ts:12: const tokens = tokenize(input)\nsrc/cache.ts:88: tokenize(key)")
    _, (c,) = w.assistant("The lexer returns an array; I'll turn it into a generator.",
                          [("edit", {"path": "src/lexer.ts", "oldText": "export function tokenize(input: string): Token[] {",
                                     "newText": "export function* tokenize(input: string): Generator<Token> {"})])
    w.tool_result(c, "edit", "Successfully replaced text in src/lexer.ts.")
    _, (c,) = w.assistant("", [("bash", {"command": "npm test", "timeout": 120.0})])
    w.tool_result(c, "bash", "FAIL test/lexer.test.ts\n  ● tokenize › returns an array\n    expected Array, got Generator\n"
                  + "\n".join(f"    at Object.<anonymous> (test/lexer.test.ts:{40 + i}:5)" for i in range(30))
                  + "\n\nTests: 1 failed, 41 passed", is_error=True)
    _, (c,) = w.assistant("One test expects an array. Updating it.",
                          [("edit", {"path": "test/lexer.test.ts", "oldText": "expect(tokenize(src)).toEqual(",
                                     "newText": "expect([...tokenize(src)]).toEqual("})])
    w.tool_result(c, "edit", "Successfully replaced text in test/lexer.test.ts.")
    w.assistant("The lexer now streams tokens and the tests pass. Next, the cache.")
    w.entry("label", targetId=first, label="task start")
    # a screenshot from the user, and a render check that returns an image
    w.user([{"type": "text", "text": "Here is the error the UI shows — résumé of the crash (日本語のログも):"},
            {"type": "image", "data": TINY_PNG, "mimeType": "image/png"}])
    _, (c,) = w.assistant("", [("bash", {"command": "node scripts/render-error.js --png", "timeout": 30})])
    w.tool_result(c, "bash", "rendered error panel (1 image)", image=True)
    for _ in range(3):
        w.turn(f"Now fix the {w.rng.choice(['cache', 'router', 'config'])} bug: {w.words(12)}", rounds=w.rng.randint(4, 9),
               big_every=4)
    kept = w.user("Make `src/cache.ts` invalidate entries when the config changes.")
    for _ in range(4):
        tool, args, out, err = w.tool_round()
        _, (c,) = w.assistant("", [(tool, args)])
        w.tool_result(c, tool, out, is_error=err)
    _, (c,) = w.assistant("", [("write", {"path": "src/cache.ts", "content": w.code("src/cache.ts", 60)})])
    w.tool_result(c, "write", "Successfully wrote 2311 bytes to src/cache.ts")
    w.assistant("Cache invalidation is in place. 🎉")
    w.compaction(kept, ["src/lexer.ts", "src/parser.ts"], ["src/lexer.ts", "test/lexer.test.ts"], tokens_before=61234)
    w.entry("model_change", provider="anthropic", modelId="claude-opus-4-5")
    w.bash("git status --short", " M src/cache.ts\n M src/lexer.ts\n M test/lexer.test.ts", 0)
    w.bash("npm run lint", "src/cache.ts:14:7 error 'unused' is assigned a value but never used", 1)
    fork = w.user("Add a `--stream` flag to the CLI that uses the new lexer.")
    # branch A (abandoned): tries the wrong file, gets an aborted and an error answer
    _, (c,) = w.assistant("", [("read", {"path": "src/cli.ts"})])
    w.tool_result(c, "read", "ENOENT: no such file or directory, open 'src/cli.ts'", is_error=True)
    w.assistant("Retrying with a different approach…", stop="aborted")
    w.assistant("", stop="error", error="overloaded_error: the model is overloaded, try again")
    w.entry("custom", customType="todo-extension", data={"todos": [{"text": "add --stream", "done": False}]})
    # back to the fork point with a branch summary (pi: parent and fromId are the entry we return to)
    w.leaf = fork
    w.entry("branch_summary", fromId=fork,
            summary="## Goal\nAdd a --stream flag.\n\n## Progress\n### Done\n- [x] Looked for src/cli.ts (it does not "
                    "exist; the CLI lives in src/index.ts)\n\n## Next Steps\n1. Edit src/index.ts",
            details={"readFiles": ["src/cli.ts"], "modifiedFiles": []})
    w.entry("thinking_level_change", thinkingLevel="high")
    w.entry("custom_message", customType="reminder", content="Remember: the CLI entry point is src/index.ts.",
            display=True, details={"source": "todo-extension"})
    _, (c,) = w.assistant("", [("read", {"path": "src/index.ts"})], thinking="The CLI is in src/index.ts.")
    w.tool_result(c, "read", w.code("src/index.ts", 160))
    _, (c,) = w.assistant("", [("edit", {"path": "src/index.ts", "oldText": "const args = parse(argv)",
                                         "newText": "const args = parse(argv, { stream: { type: 'boolean', default: false } })"})])
    w.tool_result(c, "edit", "Successfully replaced text in src/index.ts.")
    _, (c,) = w.assistant("", [("bash", {"command": "npm test -- --runInBand", "timeout": 300,
                                         "env": {"CI": "1", "NODE_OPTIONS": {"max_old_space_size": 4096}}})])
    w.tool_result(c, "bash", "Tests: 43 passed, 43 total\nTime: 4.812 s")
    last = w.assistant("`--stream` is wired to the generator lexer; all 43 tests pass.")[0]
    w.entry("label", targetId=last, label="stream flag done")


def small_tutorial(emit) -> None:  # type: ignore[no-untyped-def]
    w = Writer(emit, seed=3, session_id="019a7f3e-0000-7000-8000-000000000001")
    w.entry("session_info", name="Rename a helper")
    w.user("Rename `slugify` to `toSlug` in src/utils/strings.ts and update its callers.")
    _, (c,) = w.assistant("Let me find the callers.", [("grep", {"pattern": "slugify", "path": "src"})])
    w.tool_result(c, "grep", "src/utils/strings.ts:3: export function slugify(s: string)\nsrc/router.ts:21: slugify(title)")
    _, (c,) = w.assistant("", [("read", {"path": "src/utils/strings.ts"})])
    w.tool_result(c, "read", w.code("src/utils/strings.ts", 30))
    for path, old in (("src/utils/strings.ts", "export function slugify("), ("src/router.ts", "slugify(title)")):
        _, (c,) = w.assistant("", [("edit", {"path": path, "oldText": old, "newText": old.replace("slugify", "toSlug")})])
        w.tool_result(c, "edit", f"Successfully replaced text in {path}.")
    _, (c,) = w.assistant("", [("bash", {"command": "npm test"})])
    w.tool_result(c, "bash", "Tests: 12 passed, 12 total")
    w.assistant("Renamed `slugify` to `toSlug` and updated the one caller in src/router.ts. Tests pass.")
    w.user("Thanks. Also add a unit test for toSlug with accents: “Crème brûlée” → crème-brûlée.")
    _, (c,) = w.assistant("", [("write", {"path": "test/strings.test.ts",
                                          "content": "test('accents', () => expect(toSlug('Crème brûlée')).toBe('crème-brûlée'))\n"})])
    w.tool_result(c, "write", "Successfully wrote 79 bytes to test/strings.test.ts")
    _, (c,) = w.assistant("", [("bash", {"command": "npm test"})])
    w.tool_result(c, "bash", "Tests: 13 passed, 13 total")
    w.assistant("Added test/strings.test.ts; 13 tests pass.")


def long_session(emit) -> None:  # type: ignore[no-untyped-def]
    w = Writer(emit, seed=11, session_id="019a7f3e-0000-7000-8000-000000000002")
    w.entry("session_info", name="Long refactor (no compaction yet)")
    for k in range(34):
        w.turn(f"Step {k + 1}: refactor the {w.rng.choice(['parser', 'lexer', 'cache', 'router'])} — {w.words(14)}",
               rounds=w.rng.randint(3, 12), big_every=0, think=k % 3 == 0)


def hostile(emit) -> None:  # type: ignore[no-untyped-def]
    w = Writer(emit, seed=5, session_id="019a7f3e-0000-7000-8000-000000000003")
    w.entry("session_info", name="<b>bold</b> <script>alert('name')</script>")
    w.user("Please check this page: <script>alert(1)</script> <img src=x onerror=alert(2)> "
           "[click](javascript:alert(3)) **not bold** <iframe src='https://example.invalid'></iframe>")
    _, (c,) = w.assistant("<h1>Heading?</h1> [link](javascript:alert(4)) $x^2$ `code`",
                          [("bash", {"command": "cat page.html; printf '\\033[31mred\\033[0m'"})])
    w.tool_result(c, "bash", "<html><body onload=alert(5)><script>document.title='pwned'</script>"
                  "\x1b[31mred text\x1b[0m\x07\x08 nul-free control chars \x0b\x0c\x1b]0;title\x07 done</body></html>")
    _, (c,) = w.assistant("", [("read", {"path": "<script>alert(6)</script>.ts"})])
    w.tool_result(c, "read", "A very long line: " + "<b>x</b>" * 2000)
    w.assistant("Done. </div></div><style>body{display:none}</style> Everything is shown as text.")


def broken(emit) -> None:  # type: ignore[no-untyped-def]
    lines: list[str] = []
    small_tutorial(lines.append)
    lines.insert(4, '{"type":"message","id":"zz","parentId": oops this is not json')
    lines.insert(6, "")
    lines.append(lines[3])  # a duplicate id
    lines.append('{"type":"message","id":"dangle01","parentId":"nowhere","timestamp":"2026-03-02T10:00:00.000Z",'
                 '"message":{"role":"user","content":"my parent is missing","timestamp":1772445600000}}')
    for ln in lines:
        emit(ln)
    emit(lines[7][:60])  # a truncated last line (no newline is added after it below)


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent
    out.mkdir(parents=True, exist_ok=True)
    write(out / "coding-session.jsonl", coding_session)
    write(out / "small-tutorial.jsonl", small_tutorial)
    write(out / "long-session.jsonl", long_session)
    write(out / "hostile-content.jsonl", hostile)
    lines: list[str] = []
    broken(lines.append)
    (out / "broken.jsonl").write_text("\n".join(lines), encoding="utf-8")
    for f in sorted(out.glob("*.jsonl")):
        print(f"{f.name:<24} {f.stat().st_size:>9,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
