"""Codex CLI rollouts imported into the pi session model."""

from __future__ import annotations

import json

import pytest

from inspector import build_session_context
from inspector.importers import detect_format, load_any, parse_any
from inspector.importers.codex import ENCRYPTED_SUMMARY, recorded_context_window
from inspector.replay import ReplaySettings, replay

from .support.paths import REPO

SAMPLE = REPO / "sample_sessions" / "codex-session.jsonl"
LEGACY = REPO / "sample_sessions" / "codex-legacy.jsonl"


def _messages(s, role: str) -> list:  # type: ignore[no-untyped-def]
    return [e.message for e in s.entries if getattr(getattr(e, "message", None), "role", "") == role]


def test_detected_by_content_without_stealing_other_formats() -> None:
    assert detect_format(SAMPLE.read_bytes()) == "codex"
    assert detect_format(LEGACY.read_bytes()) == "codex"
    assert detect_format((REPO / "sample_sessions" / "small-tutorial.jsonl").read_bytes()) == "pi"
    assert (
        detect_format((REPO / "sample_sessions" / "claude-code-session.jsonl").read_bytes()) == "claude-code"
    )
    assert detect_format(b'{"type": "message", "payload": 1}\n') == "unknown"


def test_tree_messages_tool_pairing_usage_and_model() -> None:
    s = load_any(SAMPLE)
    assert s.format == "codex" and len(s.fork_points) == 1 and len(s.leaves) == 2  # a rolled-back turn
    assert s.header.id == "0199a7c1-0000-7000-8000-00000000c0de" and s.header.cwd == "/home/dev/tasklane"
    c = s.counts_by_type()
    # 15 model calls (2 in the turn rolled back); 5 prompts + 2 re-emitted by the compaction; the environment
    # context as a custom message
    assert (c["message/assistant"], c["message/toolResult"], c["message/user"], c["custom_message"]) == (
        15,
        10,
        7,
        1,
    )
    calls = {b.id: b for m in _messages(s, "assistant") for b in m.content if b.type == "toolCall"}
    results = _messages(s, "toolResult")
    assert [r.toolCallId for r in results] == [f"call_{k:02d}" for k in range(1, 11)]
    assert all(calls[r.toolCallId].name == r.toolName for r in results)
    assert calls["call_01"].arguments["command"] == [
        "bash",
        "-lc",
        "cat -n src/query/lexer.ts",
    ]  # JSON string parsed
    assert calls["call_03"].name == "apply_patch" and calls["call_03"].arguments["input"].startswith(
        "*** Begin Patch"
    )
    assert [r.isError for r in results] == [
        False,
        True,
        False,
        False,
        False,
        False,
        False,
        False,
        True,
        False,
    ]
    first = _messages(s, "assistant")[0]
    assert [b.type for b in first.content] == ["thinking", "toolCall"] and "encrypted" not in json.dumps(
        first.raw()
    )
    u = first.usage  # the token_count after the call: input minus cached, cached as cacheRead
    assert (u.input, u.cacheRead, u.output, u.totalTokens) == (9186, 0, 180, 9366)
    assert _messages(s, "assistant")[1].usage.cacheRead == 9088
    assert [m.model for m in _messages(s, "assistant")][-2:] == ["gpt-5", "gpt-5"]
    assert [e.modelId for e in s.entries if e.type == "model_change"] == ["gpt-5-codex", "gpt-5"]
    assert recorded_context_window(s) == 272000
    assert {i.kind for i in s.issues} == {"format", "not-imported", "rollback"}
    # the undone turn is off the path: the context goes from the README question straight to the new prompt
    texts = [m.message.content[0].text if m.role == "user" else "" for m in build_session_context(s).messages]
    assert texts[-2].startswith("Actually, leave the README alone") and not any(
        "Yes, add it" in t for t in texts
    )


def test_compaction_and_the_replacement_history_as_the_context_after_it() -> None:
    s = load_any(SAMPLE)
    k = next(i for i, e in enumerate(s.entries) if e.type == "compaction")
    comp = s.entries[k]
    assert comp.summary.startswith("Another language model started") and comp.tokensBefore == 10545 + 70
    replaced = [e for e in s.entries[k + 1 :] if (e.__pydantic_extra__ or {}).get("codex")]
    assert [e.message.content[0].text[:18] for e in replaced] == ["`tasklane list -f ", "Now add `--format "]
    ctx = build_session_context(s, k + 2).messages  # right after the compaction: summary + the user messages
    assert [m.role for m in ctx] == ["compactionSummary", "user", "user"]
    assert ctx[0].message.summary == comp.summary  # the summary item of the history is not repeated
    full = build_session_context(s).messages
    assert not any(m.role == "toolResult" and m.message.toolCallId == "call_01" for m in full)


def test_replays_as_recorded_and_with_codex_policy() -> None:
    s = load_any(SAMPLE)
    r = replay(s)
    assert len(r.steps) == 13 and r.metrics.compactions == 1  # the path's calls, not the rolled-back turn's
    assert r.steps[0].recorded_input == 9186  # input incl. cached, as the usage recorded it
    w = replay(s, ReplaySettings(compaction="codex", context_window=2000))
    assert w.metrics.compactions >= 1


def test_legacy_layout() -> None:
    s = load_any(LEGACY)
    assert s.format == "codex" and s.header.id == "5f0c3a2e-0000-4000-8000-00000000000a"
    c = s.counts_by_type()
    assert (c["message/assistant"], c["message/toolResult"], c["message/user"], c["custom_message"]) == (
        2,
        1,
        1,
        1,
    )
    assert "legacy" in s.issues[0].message and "2 state marker" in s.issues[-1].message
    assert _messages(s, "toolResult")[0].content[0].text == "Tests: 43 passed, 43 total"
    assert len(replay(s).steps) == 2


def test_encrypted_server_side_compaction_and_an_orphan_output() -> None:
    lines = [
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "x", "cwd": "/w"}},
        {
            "timestamp": "2026-01-01T00:00:01Z",
            "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        },
        {
            "timestamp": "2026-01-01T00:00:02Z",
            "type": "response_item",
            "payload": {"type": "compaction", "encrypted_content": "gAAAA"},
        },
        {
            "timestamp": "2026-01-01T00:00:03Z",
            "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": "nope", "output": "x"},
        },
    ]
    s = parse_any(("\n".join(json.dumps(x) for x in lines) + "\n").encode())
    comp = next(e for e in s.entries if e.type == "compaction")
    assert comp.summary == ENCRYPTED_SUMMARY and comp.details["encrypted"] is True
    assert [(i.kind, i.line) for i in s.issues if i.severity == "warning"] == [("orphan-output", 4)]


@pytest.mark.parametrize("cut", ["middle", "truncated"])
def test_a_malformed_line_is_located_and_the_rest_loads(cut: str) -> None:
    rows = SAMPLE.read_bytes().split(b"\n")[:-1]
    if cut == "middle":
        rows.insert(5, b'{"timestamp": "2026", "type": "response_item", "payload": {broken')
        data = b"\n".join(rows) + b"\n"
        kind, line = "malformed-json", 6
    else:
        data = b"\n".join(rows) + b"\n" + rows[10][: len(rows[10]) // 2]
        kind, line = "truncated-line", len(rows) + 1
    s = parse_any(data, source="x")
    assert [(i.kind, i.line) for i in s.issues if i.severity == "error"] == [(kind, line)]
    assert s.counts_by_type()["message/assistant"] == 15


def test_cli_reads_a_rollout(capsys) -> None:  # type: ignore[no-untyped-def]
    from inspector.cli import main

    assert main(["info", str(SAMPLE)]) == 0
    out = capsys.readouterr().out
    assert "Codex CLI rollout" in out and "compactions 1" in out
    assert main(["replay", str(SAMPLE), "--compaction", "codex", "--window", "272000"]) == 0


def test_tool_outputs_written_as_content_items_become_blocks() -> None:
    def line(kind: str, payload: dict) -> str:  # type: ignore[type-arg]
        return json.dumps({"timestamp": "2026-01-02T03:04:05.000Z", "type": kind, "payload": payload})

    img = "data:image/png;base64,iVBORw0KGgo="
    data = (
        "\n".join(
            [
                line("session_meta", {"id": "s", "cwd": "/w", "originator": "codex_cli_rs"}),
                line(
                    "response_item",
                    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
                ),
                line(
                    "response_item",
                    {
                        "type": "custom_tool_call",
                        "name": "apply_patch",
                        "input": "*** Begin Patch",
                        "call_id": "c1",
                    },
                ),
                line(
                    "response_item",
                    {
                        "type": "custom_tool_call_output",
                        "call_id": "c1",
                        "output": [{"type": "output_text", "text": "Done!"}],
                    },
                ),
                line(
                    "response_item",
                    {"type": "function_call", "name": "view_image", "arguments": "{}", "call_id": "c2"},
                ),
                line(
                    "response_item",
                    {
                        "type": "function_call_output",
                        "call_id": "c2",
                        "output": {
                            "content": [
                                {"type": "input_text", "text": "here"},
                                {"type": "input_image", "image_url": img},
                            ],
                            "success": False,
                        },
                    },
                ),
                line(
                    "response_item",
                    {"type": "function_call", "name": "x", "arguments": "{}", "call_id": "c3"},
                ),
                line("response_item", {"type": "function_call_output", "call_id": "c3", "output": [1, 2]}),
            ]
        ).encode()
        + b"\n"
    )
    s = parse_any(data, source="r.jsonl")
    results = [
        e.message for e in s.entries if getattr(getattr(e, "message", None), "role", "") == "toolResult"
    ]
    assert [b.text for b in results[0].content] == ["Done!"] and not results[0].isError
    assert [b.type for b in results[1].content] == ["text", "image"] and results[1].isError
    assert results[1].content[1].mimeType == "image/png" and results[1].content[1].data == "iVBORw0KGgo="
    assert results[2].content[0].text == "[1, 2]"  # an unknown shape is kept as its JSON


def _rollout(*items: tuple[str, dict]) -> bytes:  # type: ignore[type-arg]
    rows = [
        {"timestamp": f"2026-01-02T03:04:{k:02d}.000Z", "type": kind, "payload": p}
        for k, (kind, p) in enumerate([("session_meta", {"id": "s", "cwd": "/w"}), *items])
    ]
    return ("\n".join(json.dumps(r) for r in rows) + "\n").encode()


def _user(text: str) -> tuple[str, dict]:  # type: ignore[type-arg]
    return (
        "response_item",
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]},
    )


def _say(text: str) -> tuple[str, dict]:  # type: ignore[type-arg]
    return (
        "response_item",
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]},
    )


def _env() -> tuple[str, dict]:  # type: ignore[type-arg]
    return (
        "response_item",
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "<environment_context>cwd=/w</environment_context>"}],
        },
    )


def _texts(s) -> list[str]:  # type: ignore[no-untyped-def]
    out = []
    for cm in build_session_context(s).messages:
        m = cm.message
        body = getattr(m, "summary", None) or m.content
        out.append(body if isinstance(body, str) else "".join(getattr(b, "text", "") for b in body))
    return out


def test_a_rollback_drops_the_newest_turns_into_an_abandoned_branch() -> None:
    s = parse_any(
        _rollout(
            _env(),
            _user("one"),
            _say("1"),
            _user("two"),
            _say("2"),
            _env(),
            _user("three"),
            _say("3"),
            ("event_msg", {"type": "thread_rolled_back", "num_turns": 2}),
            _user("four"),
            _say("4"),
        ),
        source="r.jsonl",
    )
    assert _texts(s) == ["<environment_context>cwd=/w</environment_context>", "one", "1", "four", "4"]
    assert len(s.leaves) == 2 and len(s.fork_points) == 1  # "two" … "3" kept as the abandoned branch
    info = [i for i in s.issues if i.kind == "rollback"]
    assert len(info) == 1 and info[0].line == 10 and "2 turn(s)" in info[0].message
    # more turns than there are: everything from the first user message goes, the context before it stays
    s = parse_any(
        _rollout(
            _env(),
            _user("one"),
            _say("1"),
            ("event_msg", {"type": "thread_rolled_back", "num_turns": 5}),
            _user("again"),
            _say("a"),
        ),
        source="r.jsonl",
    )
    assert _texts(s) == ["<environment_context>cwd=/w</environment_context>", "again", "a"]


def test_a_compaction_without_replacement_history_keeps_the_user_messages_codex_rebuilds() -> None:
    long = "x" * 90_000  # 22,500 tokens by Codex's estimate: more than the 20,000 kept
    s = parse_any(
        _rollout(
            _env(),
            _user(long),
            _say("1"),
            _user("short one"),
            _say("2"),
            ("compacted", {"message": "SUMMARY"}),
            _user("next"),
            _say("3"),
        ),
        source="r.jsonl",
    )
    texts = _texts(s)
    assert texts[0] == "SUMMARY" and texts[-3:] == ["short one", "next", "3"]
    cut = texts[1]
    assert "tokens truncated" in cut and cut.startswith("xxx") and len(cut.encode()) < 80_100
    rebuilt = [e for e in s.entries if getattr(e, "codex", None) == {"rebuiltHistory": True}]
    assert len(rebuilt) == 2


def test_messages_codex_writes_itself_are_context_not_user_turns() -> None:
    marker = (
        "response_item",
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": "<turn_aborted>\nThe user interrupted.</turn_aborted>"}
            ],
        },
    )
    agents = (
        "response_item",
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "# agents.md instructions for /w\n..."}],
        },
    )
    s = parse_any(
        _rollout(
            agents,
            _user("one"),
            _say("1"),
            _user("two"),
            marker,
            ("event_msg", {"type": "thread_rolled_back", "num_turns": 1}),
            _user("three"),
        ),
        source="r.jsonl",
    )
    kinds = [(e.type, getattr(e, "customType", None)) for e in s.entries]
    assert kinds.count(("custom_message", "codex/context")) == 2
    # the abort marker is not a turn: rolling back one turn drops "two" (and the marker after it)
    assert _texts(s) == ["# agents.md instructions for /w\n...", "one", "1", "three"]


def test_a_remote_compaction_is_one_compaction_with_its_kept_messages() -> None:
    hist = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "one"}]},
        {"type": "compaction", "encrypted_content": "gAAAA-secret"},
        {"type": "ghost_snapshot", "ghost_commit": {"id": "abc"}},
    ]
    s = parse_any(
        _rollout(
            _env(),
            _user("one"),
            _say("1"),
            ("compacted", {"message": "", "replacement_history": hist}),
            _user("two"),
            _say("2"),
        ),
        source="r.jsonl",
    )
    comps = [e for e in s.entries if e.type == "compaction"]
    assert len(comps) == 1 and comps[0].summary == ENCRYPTED_SUMMARY and comps[0].details["encrypted"]
    assert _texts(s) == [ENCRYPTED_SUMMARY, "one", "two", "2"]
    assert "gAAAA-secret" not in json.dumps([e.raw() for e in s.entries])


def test_each_agent_replays_its_own_way_from_the_cli(capsys) -> None:  # type: ignore[no-untyped-def]
    from inspector.cli import main
    from inspector.replay import compare_agents

    s = load_any(SAMPLE)
    cells = compare_agents(s, ReplaySettings(context_window=4000))
    assert [c.values["agent"] for c in cells] == ["recorded", "pi", "codex", "opencode", "claude-code"]
    assert [(c.settings.compaction, c.settings.strategy) for c in cells][-1] == (
        "claude-code",
        "claude-code-microcompact",
    )
    by = {c.values["agent"]: c.metrics for c in cells}
    assert by["recorded"].compactions == 1  # the rollout's own
    with pytest.raises(ValueError, match="unknown agent"):
        compare_agents(s, ReplaySettings(), ["pi", "nope"])
    assert main(["sweep", str(SAMPLE), "--agents", "recorded,codex", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [a["agent"] for a in out["agents"]] == ["recorded", "codex"] and out["agents"][0][
        "compactions"
    ] == 1
    assert main(["sweep", str(SAMPLE), "--agents", "--window", "20000"]) == 0
    text = capsys.readouterr().out
    assert "Codex CLI" in text and "note: OpenCode compacts at -12,000 tokens" in text
    assert "window 20,000 (the session records 272,000: --window 272000)" in text.splitlines()[0]


def test_tool_outputs_are_cut_as_codex_cuts_them_into_its_history() -> None:
    def run(policy: dict | None) -> object:  # type: ignore[type-arg]
        ctx = (
            "turn_context",
            {"cwd": "/w", "model": "gpt-5-codex", **({"truncation_policy": policy} if policy else {})},
        )
        out = "".join(f"line {k:04d}\n" for k in range(400))  # 4,000 bytes
        return parse_any(
            _rollout(
                ctx,
                _user("go"),
                (
                    "response_item",
                    {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"},
                ),
                ("response_item", {"type": "function_call_output", "call_id": "c1", "output": out}),
            ),
            source="r.jsonl",
        )

    def result(s):  # type: ignore[no-untyped-def]
        return next(
            e.message for e in s.entries if getattr(getattr(e, "message", None), "role", "") == "toolResult"
        )

    whole = result(run(None))
    assert len(whole.content[0].text) == 4000 and not whole.details
    cut = result(run({"mode": "tokens", "limit": 100}))  # 120 tokens = 480 bytes with the 20% headroom
    text = cut.content[0].text
    assert text.startswith("line 0000") and text.endswith("line 0399\n") and "…880 tokens truncated…" in text
    assert len(text.encode()) < 520 and len(cut.details["codex"]["output"]) == 4000
    cut = result(run({"mode": "bytes", "limit": 1000}))  # 1,200 bytes
    assert "…2800 chars truncated…" in cut.content[0].text
    assert result(run({"mode": "tokens", "limit": 10_000})).details is None  # fits: as written


def test_a_repeated_token_count_is_no_new_call() -> None:
    """Codex re-emits its last ``token_count`` when a turn is interrupted (the totals do not move,
    as in the shared Codex transcript): the answer begun before the interruption made no recorded
    call and gets no usage, instead of the previous call's counted twice."""
    lines = SAMPLE.read_text().splitlines()
    at = next(i for i, x in enumerate(lines) if '"call_id":"call_02","output"' in x)  # after a tool output
    again = lines[at - 1]  # the token_count of the call before it
    assert '"token_count"' in again

    def item(payload: dict) -> str:  # type: ignore[type-arg]
        return json.dumps(
            {"timestamp": "2026-03-03T10:00:31.500Z", "type": "response_item", "payload": payload}
        )

    interrupted = [
        item({"type": "reasoning", "summary": [{"type": "summary_text", "text": "Checking the failure."}]}),
        again,
        item(
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<turn_aborted>"}]}
        ),
    ]
    s = parse_any(("\n".join([*lines[: at + 1], *interrupted, *lines[at + 1 :]]) + "\n").encode(), "x.jsonl")
    answers = _messages(s, "assistant")
    i = next(
        k
        for k, m in enumerate(answers)
        if m.content and m.content[0].type == "thinking" and m.content[0].thinking == "Checking the failure."
    )
    assert answers[i - 1].usage is not None and answers[i - 1].usage.totalTokens == 10202 + 120
    assert answers[i].usage is None
    assert answers[i + 1].usage is not None and answers[i + 1].usage.totalTokens == 10285 + 210


def test_an_answer_cut_off_by_an_interruption_is_aborted() -> None:
    """``turn_aborted`` after an answer whose call recorded no usage (Codex repeats its last
    ``token_count``, as at line 780 of the shared rollout 888ba8): the answer was cut off as it
    streamed, pi's ``stopReason: "aborted"``. Without the event nothing says so; an answer whose
    call finished keeps its reason (the interruption came while its tools ran)."""
    lines = SAMPLE.read_text().splitlines()
    at = next(i for i, x in enumerate(lines) if '"call_id":"call_02","output"' in x)
    again = lines[at - 1]  # the token_count of the call before the output: repeated, no new call

    def line(kind: str, payload: dict) -> str:  # type: ignore[type-arg]
        return json.dumps({"timestamp": "2026-03-03T10:00:31.500Z", "type": kind, "payload": payload})

    cut = [line("response_item", {"type": "reasoning", "summary": []}), again]
    marker = line(
        "response_item",
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<turn_aborted>"}]},
    )
    event = line("event_msg", {"type": "turn_aborted", "turn_id": "t1", "reason": "interrupted"})

    def reasons(at: int, *inserted: str) -> list[str]:
        s = parse_any(("\n".join([*lines[:at], *inserted, *lines[at:]]) + "\n").encode(), "x.jsonl")
        return [m.stopReason for m in _messages(s, "assistant")]

    plain = reasons(at + 1)
    without = reasons(at + 1, *cut, marker)
    k = len(_messages(parse_any(("\n".join(lines[: at + 1]) + "\n").encode(), "x.jsonl"), "assistant"))
    assert without == [*plain[:k], "stop", *plain[k:]]  # no event: an answer as any other
    assert reasons(at + 1, *cut, marker, event) == [*plain[:k], "aborted", *plain[k:]]
    assert plain[k - 1] == "toolUse"
    assert reasons(at, marker, event) == plain  # its call finished: the tool's run was interrupted


def test_a_hosted_web_search_is_a_call_with_no_result_to_wait_for() -> None:
    """OpenAI runs ``web_search_call`` itself: the rollout has no output for it, and the doctor
    does not report one missing (the shared rollout 888ba8 had 12 such warnings)."""
    from inspector.doctor import diagnose

    search = (
        "response_item",
        {
            "type": "web_search_call",
            "id": "ws_1",
            "status": "completed",
            "action": {"type": "search", "query": "otel"},
        },
    )
    call = ("response_item", {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"})
    s = parse_any(
        _rollout(_env(), _user("look it up"), search, call, _say("found"), _user("thanks"), _say("ok")),
        source="r.jsonl",
    )
    calls = [b for m in _messages(s, "assistant") for b in m.content if b.type == "toolCall"]
    assert [(c.name, getattr(c, "serverSide", None)) for c in calls] == [
        ("web_search", True),
        ("shell", None),
    ]
    missing = [f for f in diagnose(s).findings if f.kind == "tool-call-without-result"]
    assert [f.message for f in missing] == ["tool call shell (c1) never got a result on this branch"]


def test_a_rollout_that_switched_models_records_each_models_window() -> None:
    """Codex records ``model_context_window`` at every call: a rollout that switched to a model with
    another window gives each model's, and the replay runs each model's calls against it."""
    from inspector.importers.codex import recorded_model_windows
    from inspector.window import model_windows_of, window_settings

    def counted(window: int, total: int) -> tuple[str, dict]:  # type: ignore[type-arg]
        usage = {
            "input_tokens": total,
            "cached_input_tokens": 0,
            "output_tokens": 10,
            "total_tokens": total + 10,
        }
        info = {"total_token_usage": usage, "last_token_usage": usage, "model_context_window": window}
        return ("event_msg", {"type": "token_count", "info": info})

    s = parse_any(
        _rollout(
            ("turn_context", {"cwd": "/w", "model": "gpt-5.5"}),
            _user("one"),
            _say("1"),
            counted(258_400, 1000),
            ("turn_context", {"cwd": "/w", "model": "gpt-5.4-mini"}),
            _user("two"),
            _say("2"),
            counted(128_000, 2000),
        ),
        source="r.jsonl",
    )
    assert recorded_context_window(s) == 128_000  # the last call's
    assert recorded_model_windows(s) == (("openai", "gpt-5.5", 258_400), ("openai", "gpt-5.4-mini", 128_000))
    assert model_windows_of(s, 128_000) == (("openai", "gpt-5.5", 258_400),)
    r = replay(s, ReplaySettings(**window_settings(s)))
    assert [st.window for st in r.steps] == [258_400, 128_000]
    # one model, or one window: nothing more is recorded
    same = parse_any(_rollout(_user("one"), _say("1"), counted(258_400, 1000)), source="r.jsonl")
    assert recorded_model_windows(same) == () and model_windows_of(same, 258_400) == ()
