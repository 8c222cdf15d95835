"""Sample sessions in other agents' formats (Codex CLI rollouts, an OpenCode export), written
here for the importers. Deterministic: fixed ids and timestamps, no randomness.

Each function returns the file's bytes; ``generate.py`` writes them with the other samples.
The project (a small TypeScript CLI, "tasklane") and every text are invented.
"""

from __future__ import annotations

import json
from typing import Any

CWD = "/home/dev/tasklane"
T0_MS = 1772532000000  # 2026-03-03T10:00:00Z


def _iso(ms: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _dumps(lines: list[dict[str, Any]]) -> bytes:
    return ("\n".join(json.dumps(x, ensure_ascii=False, separators=(",", ":")) for x in lines) + "\n").encode(
        "utf-8"
    )


# ---------------------------------------------------------------------------------------------
# Codex CLI rollout (current envelope layout)
# ---------------------------------------------------------------------------------------------

LEXER = "\n".join(
    f"{i + 1}\t" + line
    for i, line in enumerate(
        [
            "export function tokenize(src: string): Token[] {",
            "  const out: Token[] = [];",
            "  let i = 0;",
            "  while (i < src.length) {",
            "    const c = src[i];",
            "    if (/\\s/.test(c)) { i++; continue; }",
            "    if (c === '<' || c === '>') { out.push({ kind: 'op', text: c }); i++; continue; }",
            "    const m = /^[a-z]+/.exec(src.slice(i));",
            "    if (!m) throw new QueryError(`unexpected character '${c}'`, i);",
            "    out.push({ kind: 'word', text: m[0] }); i += m[0].length;",
            "  }",
            "  return out;",
            "}",
        ]
        * 6
    )
)


def codex_session() -> bytes:
    t = [T0_MS]
    out: list[dict[str, Any]] = []

    def at(step: int = 1500) -> str:
        t[0] += step
        return _iso(t[0])

    def line(kind: str, payload: dict[str, Any], step: int = 1500) -> None:
        out.append({"timestamp": at(step), "type": kind, "payload": payload})

    def item(payload: dict[str, Any], step: int = 1500) -> None:
        line("response_item", payload, step)

    def user(text: str) -> None:
        item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}, 20_000)
        line("event_msg", {"type": "user_message", "message": text, "images": []}, 0)

    def say(text: str) -> None:
        item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]})
        line("event_msg", {"type": "agent_message", "message": text}, 0)

    def think(text: str) -> None:
        item(
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": text}],
                "encrypted_content": "gAAAAB" + "x" * 40,
            }
        )

    def shell(cid: str, cmd: list[str]) -> None:
        item(
            {
                "type": "function_call",
                "name": "shell",
                "arguments": json.dumps({"command": cmd, "workdir": CWD}),
                "call_id": cid,
            }
        )

    def shell_out(cid: str, output: str, code: int = 0) -> None:
        item(
            {
                "type": "function_call_output",
                "call_id": cid,
                "output": json.dumps(
                    {"output": output, "metadata": {"exit_code": code, "duration_seconds": 0.4}}
                ),
            },
            2500,
        )

    def patch(cid: str, path: str, minus: str, plus: str) -> None:
        item(
            {
                "type": "custom_tool_call",
                "status": "completed",
                "call_id": cid,
                "name": "apply_patch",
                "input": f"*** Begin Patch\n*** Update File: {path}\n@@\n-{minus}\n+{plus}\n*** End Patch",
            }
        )

    def patched(cid: str, path: str) -> None:
        item(
            {
                "type": "custom_tool_call_output",
                "call_id": cid,
                "output": json.dumps(
                    {
                        "output": f"Success. Updated the following files:\nM {path}",
                        "metadata": {"exit_code": 0, "duration_seconds": 0.0},
                    }
                ),
            },
            800,
        )

    def usage(inp: int, cached: int, outp: int, reasoning: int = 0) -> None:
        last = {
            "input_tokens": inp,
            "cached_input_tokens": cached,
            "output_tokens": outp,
            "reasoning_output_tokens": reasoning,
            "total_tokens": inp + outp,
        }
        usage.total = {k: usage.total.get(k, 0) + v for k, v in last.items()}  # type: ignore[attr-defined]
        line(
            "event_msg",
            {
                "type": "token_count",
                "info": {
                    "total_token_usage": usage.total,  # type: ignore[attr-defined]
                    "last_token_usage": last,
                    "model_context_window": 272000,
                },
                "rate_limits": None,
            },
            10,
        )

    usage.total = {}  # type: ignore[attr-defined]
    line(
        "session_meta",
        {
            "id": "0199a7c1-0000-7000-8000-00000000c0de",
            "timestamp": _iso(T0_MS),
            "cwd": CWD,
            "originator": "codex_cli_rs",
            "cli_version": "0.128.0",
            "source": "cli",
            "model_provider": "openai",
            "base_instructions": {"text": "You are Codex, ..."},
            "git": {"commit_hash": "4f2c9e1", "branch": "main", "repository_url": None},
        },
        0,
    )
    line(
        "turn_context",
        {
            "cwd": CWD,
            "model": "gpt-5-codex",
            "approval_policy": "on-request",
            "sandbox_policy": {"mode": "workspace-write"},
            "effort": "medium",
            "summary": "auto",
        },
        10,
    )
    item(
        {
            "type": "message",
            "role": "user",
            "content": [
                {
                    "type": "input_text",
                    "text": "<environment_context>\n  <cwd>/home/dev/tasklane</cwd>\n  <approval_policy>on-request</approval_policy>\n"
                    "  <sandbox_mode>workspace-write</sandbox_mode>\n  <shell>bash</shell>\n</environment_context>",
                }
            ],
        },
        10,
    )
    line("event_msg", {"type": "task_started", "model_context_window": 272000}, 10)
    user(
        "`tasklane list -f tag:café` throws QueryError: unexpected character 'é'. Find out why and fix it. "
        "Don't change the public API of the parser."
    )
    think("The lexer probably only accepts ASCII letters. Read it first.")
    shell("call_01", ["bash", "-lc", "cat -n src/query/lexer.ts"])
    usage(9186, 0, 180, 64)
    shell_out("call_01", LEXER)
    think("The word regex is /^[a-z]+/: no Unicode letters, no digits, no ':' for tag:.")
    shell("call_02", ["bash", "-lc", "npm test -- query"])
    usage(10202, 9088, 120, 40)
    shell_out(
        "call_02",
        "FAIL test/query.test.ts\n  lexer › accepts accented tags\n    QueryError: unexpected "
        "character 'é' at 4\nTests: 1 failed, 42 passed, 43 total",
        1,
    )
    patch(
        "call_03",
        "src/query/lexer.ts",
        "    const m = /^[a-z]+/.exec(src.slice(i));",
        "    const m = /^[\\p{L}\\p{N}_:-]+/u.exec(src.slice(i));",
    )
    usage(10285, 10112, 210, 90)
    patched("call_03", "src/query/lexer.ts")
    shell("call_04", ["bash", "-lc", "npm test -- query"])
    usage(10367, 10240, 90, 20)
    shell_out("call_04", "PASS test/query.test.ts\nTests: 43 passed, 43 total")
    say(
        "Fixed: the lexer's word pattern only matched ASCII letters. It now uses a Unicode-aware pattern "
        "(`\\p{L}\\p{N}_:-` with the `u` flag); the parser's API is unchanged and all 43 tests pass."
    )
    usage(10404, 10240, 75, 0)
    line("event_msg", {"type": "task_complete", "last_agent_message": "Fixed"}, 10)

    user("Now add `--format json` to `tasklane list`. Keep the table output as the default.")
    think("Find where list renders its output.")
    shell("call_05", ["bash", "-lc", 'rg -n "renderTable" src'])
    # a new turn: the model (before GPT-5.6) drops the previous turn's reasoning, so the cache is read
    # only up to where it began, the first call's 9,186-token prompt (in 128-token steps)
    usage(10476, 9088, 95, 30)
    shell_out(
        "call_05",
        'src/cli/commands/list.ts:3:import { renderTable } from "../../output/table";\n'
        "src/cli/commands/list.ts:41:  process.stdout.write(renderTable(tasks));",
    )
    shell("call_06", ["bash", "-lc", "sed -n 1,80p src/cli/commands/list.ts"])
    usage(10545, 10368, 70, 0)
    shell_out(
        "call_06",
        "\n".join(f"{i}\t// list.ts line {i}: options, filters and rendering" for i in range(1, 81)),
    )
    # Codex compacts here (auto, at its limit): the history is replaced
    summary = (
        "Another language model started to solve this problem and produced a summary of its thinking process. "
        "You also have access to the state of the tools that were used by that language model. Use this to "
        "build on the work that has already been done and avoid duplicating work. Here is the summary "
        "produced by the other language model, use the information in this summary to assist with your own "
        "analysis:\n"
        "- Fixed the lexer for accented tags (Unicode word pattern); 43 tests pass.\n"
        "- Now adding `--format json` to `tasklane list` (src/cli/commands/list.ts renders with renderTable "
        "at line 41); table stays the default."
    )
    line("event_msg", {"type": "context_compacted"}, 100)
    out.append(
        {
            "timestamp": at(2000),
            "type": "compacted",
            "payload": {
                "message": summary,
                "replacement_history": [
                    {
                        "type": "message",
                        "role": "user",
                        "content": [
                            {
                                "type": "input_text",
                                "text": "`tasklane list -f tag:café` throws QueryError: unexpected character 'é'. Find out why and fix it. "
                                "Don't change the public API of the parser.",
                            }
                        ],
                    },
                    {
                        "type": "message",
                        "role": "user",
                        "content": [
                            {
                                "type": "input_text",
                                "text": "Now add `--format json` to `tasklane list`. Keep the table output as the default.",
                            }
                        ],
                    },
                    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": summary}]},
                ],
            },
        }
    )
    line(
        "turn_context",
        {
            "cwd": CWD,
            "model": "gpt-5-codex",
            "approval_policy": "on-request",
            "sandbox_policy": {"mode": "workspace-write"},
            "effort": "medium",
            "summary": "auto",
        },
        10,
    )
    patch(
        "call_07",
        "src/cli/commands/list.ts",
        "  process.stdout.write(renderTable(tasks));",
        '  process.stdout.write(opts.format === "json" ? JSON.stringify(tasks, null, 2) + "\\n" : '
        "renderTable(tasks));",
    )
    usage(9288, 9088, 160, 60)
    patched("call_07", "src/cli/commands/list.ts")
    shell("call_08", ["bash", "-lc", "npm run build && node dist/cli.js list --format json | head -5"])
    usage(9373, 9216, 60, 0)
    shell_out("call_08", '[\n  {\n    "id": 1,\n    "title": "write docs",\n    "tags": ["café"]')
    say(
        "`tasklane list --format json` now prints the tasks as JSON; without the flag the table is printed as "
        "before."
    )
    usage(9433, 9344, 40, 0)
    line(
        "turn_context",
        {
            "cwd": CWD,
            "model": "gpt-5",
            "approval_policy": "on-request",
            "sandbox_policy": {"mode": "workspace-write"},
            "effort": "high",
            "summary": "auto",
        },
        10,
    )
    user("Thanks. Does the README mention --format?")
    shell("call_09", ["bash", "-lc", "rg -n -- '--format' README.md"])
    usage(9467, 0, 50, 10)  # the first call of another model: each model has its own cache
    shell_out("call_09", "", 1)
    say('No: the README does not mention `--format` yet. Shall I add a line under "Listing tasks"?')
    usage(9494, 9344, 35, 0)
    user("Yes, add it.")
    patch(
        "call_10",
        "README.md",
        "Listing tasks: `tasklane list`",
        "Listing tasks: `tasklane list` (add `--format json` for JSON)",
    )
    usage(9540, 9472, 80, 20)
    patched("call_10", "README.md")
    say('Added a sentence about `--format json` under "Listing tasks".')
    usage(9610, 9472, 30, 0)
    # the user undoes that turn (/undo): Codex drops it from the history and the session goes on
    line("event_msg", {"type": "thread_rolled_back", "num_turns": 1}, 5000)
    user("Actually, leave the README alone; the help text of `tasklane list` is enough.")
    say("Understood: the README stays as it is. `tasklane list --help` already documents `--format`.")
    usage(9536, 9472, 40, 0)
    return _dumps(out)


def codex_legacy() -> bytes:
    """A rollout from before September 2025: a bare first line, bare items, state markers."""
    out: list[dict[str, Any]] = [
        {
            "id": "5f0c3a2e-0000-4000-8000-00000000000a",
            "timestamp": "2025-08-12T09:30:00.000Z",
            "instructions": "Be concise.",
            "git": {"commit_hash": "9b1d2e3", "branch": "main"},
        },
        {"record_type": "state"},
        {
            "type": "message",
            "role": "user",
            "content": [
                {
                    "type": "input_text",
                    "text": "<environment_context>\n  <cwd>/home/dev/tasklane</cwd>\n</environment_context>",
                }
            ],
        },
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "How many tests are there?"}],
        },
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAB"},
        {
            "type": "function_call",
            "name": "shell",
            "arguments": '{"command":["npm","test"]}',
            "call_id": "c1",
        },
        {"record_type": "state"},
        {
            "type": "function_call_output",
            "call_id": "c1",
            "output": '{"output":"Tests: 43 passed, 43 total","metadata":{"exit_code":0}}',
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "43 tests, all passing."}],
        },
    ]
    return _dumps(out)


# ---------------------------------------------------------------------------------------------
# OpenCode export (`opencode export <session>`)
# ---------------------------------------------------------------------------------------------


def opencode_session() -> bytes:
    sid = "ses_5c1a9e0d7ffeQzTasklane01"
    t = [T0_MS]
    n = [0]
    messages: list[dict[str, Any]] = []
    model = {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}

    def tick(ms: int = 1500) -> int:
        t[0] += ms
        return t[0]

    def ident(prefix: str) -> str:
        n[0] += 1
        return f"{prefix}_{n[0]:04d}a7c3e1f0Tasklane"

    def user(text: str, *, synthetic: bool = False) -> str:
        mid = ident("msg")
        created = tick(30_000)
        part = {"id": ident("prt"), "sessionID": sid, "messageID": mid, "type": "text", "text": text}
        if synthetic:
            part["synthetic"] = True
        messages.append(
            {
                "info": {
                    "id": mid,
                    "sessionID": sid,
                    "role": "user",
                    "time": {"created": created},
                    "agent": "build",
                    "model": model,
                },
                "parts": [part],
            }
        )
        return mid

    def assistant(
        parent: str,
        steps: list[list[dict[str, Any]]],
        usage: list[tuple[int, int, int, int]],
        *,
        summary: bool = False,
    ) -> None:
        mid = ident("msg")
        created = tick()
        parts: list[dict[str, Any]] = []
        tot = {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}
        for step, (inp, out, read, write) in zip(steps, usage, strict=True):
            parts.append({"id": ident("prt"), "sessionID": sid, "messageID": mid, "type": "step-start"})
            for p in step:
                parts.append({"id": ident("prt"), "sessionID": sid, "messageID": mid, **p})
            tokens = {"input": inp, "output": out, "reasoning": 0, "cache": {"read": read, "write": write}}
            tot = {
                "input": inp,
                "output": tot["output"] + out,
                "reasoning": 0,
                "cache": {"read": read, "write": write},
            }
            parts.append(
                {
                    "id": ident("prt"),
                    "sessionID": sid,
                    "messageID": mid,
                    "type": "step-finish",
                    "reason": "tool-calls" if any(p["type"] == "tool" for p in step) else "stop",
                    "cost": round((inp * 3 + read * 0.3 + write * 3.75 + out * 15) / 1e6, 6),
                    "tokens": tokens,
                }
            )
            tick(4000)
        info = {
            "id": mid,
            "sessionID": sid,
            "role": "assistant",
            "time": {"created": created, "completed": t[0]},
            "parentID": parent,
            "modelID": model["modelID"],
            "providerID": model["providerID"],
            "mode": "build",
            "agent": "build",
            "path": {"cwd": CWD, "root": CWD},
            "cost": 0.0,
            "tokens": tot,
            "finish": "stop",
        }
        if summary:
            info["summary"] = True
        messages.append({"info": info, "parts": parts})

    def text(s: str) -> dict[str, Any]:
        return {"type": "text", "text": s, "time": {"start": t[0], "end": t[0] + 900}}

    def think(s: str) -> dict[str, Any]:
        return {"type": "reasoning", "text": s, "time": {"start": t[0], "end": t[0] + 600}}

    def tool(
        call: str,
        name: str,
        inp: dict[str, Any],
        output: str | None = None,
        *,
        error: str | None = None,
        compacted_after: int | None = None,
    ) -> dict[str, Any]:
        start = tick(800)
        if error is not None:
            state: dict[str, Any] = {
                "status": "error",
                "input": inp,
                "error": error,
                "time": {"start": start, "end": start + 300},
            }
        else:
            state = {
                "status": "completed",
                "input": inp,
                "output": output,
                "title": inp.get("filePath") or inp.get("command") or inp.get("pattern") or name,
                "metadata": {},
                "time": {"start": start, "end": start + 700},
            }
            if compacted_after is not None:
                state["time"]["compacted"] = compacted_after
        return {"type": "tool", "callID": call, "tool": name, "state": state}

    store = "\n".join(
        f"{i}\texport class TaskStore {{ /* line {i}: load, save, query, cache */ }}" for i in range(1, 181)
    )
    cli = "\n".join(f"{i}\t// src/cli/commands/edit.ts line {i}" for i in range(1, 121))
    u1 = user("After `tasklane edit 3 --title x`, `tasklane list` still shows the old title. Find out why.")
    prune_at = T0_MS + 60_000  # OpenCode pruned them after the first answer (before the second prompt)
    assistant(
        u1,
        [
            [
                think("Probably a cache in the store."),
                tool(
                    "toolu_01",
                    "grep",
                    {"pattern": "cache", "path": "src"},
                    "src/store/task-store.ts:12: private cache?: Task[];\n"
                    "src/store/task-store.ts:48: if (this.cache) return this.cache;",
                ),
            ],
            [
                tool(
                    "toolu_02",
                    "read",
                    {"filePath": f"{CWD}/src/store/task-store.ts"},
                    store,
                    compacted_after=prune_at,
                )
            ],
            [
                tool(
                    "toolu_03",
                    "read",
                    {"filePath": f"{CWD}/src/cli/commands/edit.ts"},
                    cli,
                    compacted_after=prune_at,
                )
            ],
            [
                text(
                    "`TaskStore.list()` returns `this.cache` once it is set, and `edit` writes the file without clearing "
                    "it, so a long-running process keeps the old list. The fix is to reset the cache in `save()`."
                )
            ],
        ],
        [(3, 120, 0, 13023), (3, 60, 13023, 47), (3, 70, 13070, 3614), (3, 210, 16684, 1574)],
    )
    u2 = user("Fix it, and add a test.")
    assistant(
        u2,
        [
            [
                tool(
                    "toolu_04",
                    "edit",
                    {
                        "filePath": f"{CWD}/src/store/task-store.ts",
                        "oldString": "await writeFile(",
                        "newString": "this.cache = undefined;\n    await writeFile(",
                    },
                    "Edit applied.",
                )
            ],
            [
                tool(
                    "toolu_05",
                    "write",
                    {"filePath": f"{CWD}/test/store-cache.test.ts", "content": "it('...')"},
                    "Wrote file.",
                )
            ],
            [
                tool(
                    "toolu_06",
                    "bash",
                    {"command": "npm test -- store", "description": "run store tests"},
                    error="Command failed: exit code 1\nFAIL test/store-cache.test.ts\n  TypeError: store.save is not a function",
                )
            ],
            [
                think("The test must await load() first."),
                tool(
                    "toolu_07",
                    "edit",
                    {
                        "filePath": f"{CWD}/test/store-cache.test.ts",
                        "oldString": "const store",
                        "newString": "const store = await TaskStore.load(dir)",
                    },
                    "Edit applied.",
                ),
            ],
            [
                tool(
                    "toolu_08",
                    "bash",
                    {"command": "npm test -- store", "description": "run store tests"},
                    "PASS test/store-cache.test.ts\nTests: 44 passed, 44 total",
                )
            ],
            [
                text(
                    "Fixed: `save()` now clears the cache, and `test/store-cache.test.ts` covers edit-then-list."
                )
            ],
        ],
        [
            (3, 140, 13000, 169),  # the outputs OpenCode cleared changed the prompt: system and tools read
            (3, 180, 13169, 37),
            (3, 40, 13206, 25),
            (3, 90, 13231, 39),
            (3, 40, 13270, 44),
            (3, 60, 13314, 31),
        ],
    )
    # OpenCode compacts (auto, overflow of a small model window): request + summary
    creq = ident("msg")
    messages.append(
        {
            "info": {
                "id": creq,
                "sessionID": sid,
                "role": "user",
                "time": {"created": tick(20_000)},
                "agent": "build",
                "model": model,
            },
            "parts": [
                {"id": ident("prt"), "sessionID": sid, "messageID": creq, "type": "compaction", "auto": True}
            ],
        }
    )
    assistant(
        creq,
        [
            [
                text(
                    "## Goal\nFix stale `tasklane list` output after `tasklane edit`.\n\n## Done\n- Found the cause: "
                    "`TaskStore.list()` returned a cache that `save()` never cleared.\n- `save()` now resets the cache; "
                    "`test/store-cache.test.ts` added; 44 tests pass.\n\n## Files\n- src/store/task-store.ts (edited)\n"
                    "- test/store-cache.test.ts (new)\n\n## Next\n- Nothing pending; wait for the user."
                )
            ]
        ],
        [(3, 160, 0, 13617)],  # the compaction agent's own system prompt and no tools: nothing read
        summary=True,
    )
    u3 = user("Also make `tasklane list --json` print ISO dates.")
    assistant(
        u3,
        [
            [
                tool(
                    "toolu_09",
                    "grep",
                    {"pattern": "toLocaleDateString", "path": "src"},
                    "src/output/json.ts:9:    due: t.due?.toLocaleDateString(),",
                )
            ],
            [
                tool(
                    "toolu_10",
                    "edit",
                    {
                        "filePath": f"{CWD}/src/output/json.ts",
                        "oldString": "t.due?.toLocaleDateString()",
                        "newString": "t.due?.toISOString()",
                    },
                    "Edit applied.",
                )
            ],
            [text("Done: `--json` now prints due dates as ISO 8601 (`toISOString()`).")],
        ],
        [(3, 80, 13000, 106), (3, 70, 13106, 28), (3, 40, 13134, 37)],
    )
    user("Thanks!")
    assistant(messages[-1]["info"]["id"], [[text("You're welcome.")]], [(3, 10, 13171, 21)])
    info = {
        "id": sid,
        "slug": "stale-list-after-edit",
        "projectID": "prj_9f8e7d6c5b4a",
        "directory": CWD,
        "title": "Stale list after edit",
        "version": "1.0.120",
        "time": {"created": T0_MS, "updated": t[0]},
    }
    return (json.dumps({"info": info, "messages": messages}, indent=2, ensure_ascii=False) + "\n").encode(
        "utf-8"
    )
