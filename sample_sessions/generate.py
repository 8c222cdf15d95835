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


def claude_code_session(emit) -> None:  # type: ignore[no-untyped-def]
    """A Claude Code transcript: one line per content block, parallel tool calls, a compaction."""
    import json

    sid = "7d1c2b3a-0000-4000-8000-00000000cc01"
    n = [0]

    def line(type_: str, parent: str | None, **kw) -> str:  # type: ignore[no-untyped-def]
        n[0] += 1
        uid = f"cc000000-0000-4000-8000-{n[0]:012d}"
        obj = {"type": type_, "uuid": uid, "parentUuid": parent, "isSidechain": False, "userType": "external",
               "cwd": "/home/dev/project", "sessionId": sid, "version": "2.1.3",
               "timestamp": f"2026-03-03T10:{n[0] // 60:02d}:{n[0] % 60:02d}.000Z", **kw}
        emit(json.dumps(obj, ensure_ascii=False))
        return uid

    def usage(i: int, o: int, r: int) -> dict:  # type: ignore[type-arg]
        return {"input_tokens": i, "output_tokens": o, "cache_read_input_tokens": r,
                "cache_creation_input_tokens": 120, "service_tier": "standard"}

    emit(json.dumps({"type": "file-history-snapshot", "messageId": "x", "snapshot": {}}))
    u1 = line("user", None, message={"role": "user", "content": "Find why `npm test` fails in src/lexer.ts and fix it."})
    a1 = line("assistant", u1, requestId="req_1", message={"id": "msg_1", "type": "message", "role": "assistant",
              "model": "claude-sonnet-4-5", "content": [{"type": "thinking", "thinking": "Read the lexer and the test.",
                                                          "signature": "s"}],
              "stop_reason": None, "usage": usage(900, 210, 14000)})
    a1b = line("assistant", a1, requestId="req_1", message={"id": "msg_1", "type": "message", "role": "assistant",
               "model": "claude-sonnet-4-5", "content": [{"type": "tool_use", "id": "toolu_01", "name": "Read",
                                                           "input": {"file_path": "/home/dev/project/src/lexer.ts"}}],
               "stop_reason": None, "usage": usage(900, 210, 14000)})
    a1c = line("assistant", a1b, requestId="req_1", message={"id": "msg_1", "type": "message", "role": "assistant",
               "model": "claude-sonnet-4-5", "content": [{"type": "tool_use", "id": "toolu_02", "name": "Bash",
                                                           "input": {"command": "npm test", "timeout": 120000}}],
               "stop_reason": "tool_use", "usage": usage(900, 210, 14000)})
    line("user", a1b, message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01",
              "content": "1\texport function* tokenize(src: string) {\n" * 60}]},
              toolUseResult={"type": "text", "file": {"filePath": "/home/dev/project/src/lexer.ts"}})
    r2 = line("user", a1c, message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_02",
              "content": "FAIL test/lexer.test.ts\n  expected Array, got Generator", "is_error": True}]})
    a2 = line("assistant", r2, requestId="req_2", message={"id": "msg_2", "type": "message", "role": "assistant",
              "model": "claude-sonnet-4-5", "content": [{"type": "tool_use", "id": "toolu_03", "name": "Edit",
                                                          "input": {"file_path": "/home/dev/project/test/lexer.test.ts",
                                                                    "old_string": "tokenize(src)", "new_string": "[...tokenize(src)]"}}],
              "stop_reason": "tool_use", "usage": usage(1200, 90, 16000)})
    r3 = line("user", a2, message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_03",
              "content": "The file has been updated."}]})
    a3 = line("assistant", r3, requestId="req_3", message={"id": "msg_3", "type": "message", "role": "assistant",
              "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": "Fixed: the test now spreads the generator."}],
              "stop_reason": "end_turn", "usage": usage(1300, 20, 16500)})
    td = line("system", a3, subtype="turn_duration", content="", durationMs=5231)
    # a sub-agent line (kept apart) and an auto compaction
    emit(json.dumps({"type": "user", "uuid": "side-1", "parentUuid": None, "isSidechain": True, "sessionId": sid,
                     "agentId": "a1", "message": {"role": "user", "content": "sub-agent task"},
                     "timestamp": "2026-03-03T10:05:00.000Z"}))
    b = line("system", None, subtype="compact_boundary", content="Conversation compacted", logicalParentUuid=td,
             compactMetadata={"trigger": "auto", "preTokens": 167000})
    s1 = line("user", b, isCompactSummary=True, isVisibleInTranscriptOnly=True, message={"role": "user", "content":
              "This session is being continued from a previous conversation that ran out of context. Summary:\n"
              "1. Primary Request and Intent: fix npm test in src/lexer.ts\n8. Current Work: test updated"})
    u2 = line("user", s1, message={"role": "user", "content": "Now run the whole suite again."})
    a4 = line("assistant", u2, requestId="req_4", message={"id": "msg_4", "type": "message", "role": "assistant",
              "model": "claude-sonnet-4-5", "content": [{"type": "tool_use", "id": "toolu_04", "name": "Bash",
                                                          "input": {"command": "npm test"}}],
              "stop_reason": "tool_use", "usage": usage(600, 30, 3000)})
    r4 = line("user", a4, message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_04",
              "content": "Tests: 43 passed, 43 total"}]})
    line("assistant", r4, requestId="req_5", message={"id": "msg_5", "type": "message", "role": "assistant",
         "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": "All 43 tests pass."}],
         "stop_reason": "end_turn", "usage": usage(700, 12, 3100)})
    emit(json.dumps({"type": "last-prompt", "lastPrompt": "Now run the whole suite again.", "sessionId": sid}))


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent
    out.mkdir(parents=True, exist_ok=True)
    write(out / "coding-session.jsonl", coding_session)
    write(out / "small-tutorial.jsonl", small_tutorial)
    write(out / "long-session.jsonl", long_session)
    write(out / "hostile-content.jsonl", hostile)
    write(out / "claude-code-session.jsonl", claude_code_session)
    lines: list[str] = []
    broken(lines.append)
    (out / "broken.jsonl").write_text("\n".join(lines), encoding="utf-8")
    for f in sorted(out.glob("*.jsonl")):
        print(f"{f.name:<24} {f.stat().st_size:>9,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
