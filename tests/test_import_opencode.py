"""OpenCode exports imported into the pi session model."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from inspector import build_session_context
from inspector.importers import detect_format, load_any, parse_any
from inspector.importers.discover import opencode_db_export
from inspector.importers.opencode import ABORTED, CLEARED, recorded_pruned_call_ids
from inspector.replay import ReplaySettings, prune_at, replay

from .support.paths import REPO, SHARED

SAMPLE = REPO / "sample_sessions" / "opencode-session.json"


def _of(s, role: str) -> list:  # type: ignore[no-untyped-def]
    return [e.message for e in s.entries if getattr(getattr(e, "message", None), "role", "") == role]


def test_detected_by_content() -> None:
    data = SAMPLE.read_bytes()
    assert detect_format(data) == "opencode"
    assert detect_format(json.dumps(json.loads(data)).encode()) == "opencode"  # one-line export
    assert detect_format((REPO / "sample_sessions" / "small-tutorial.jsonl").read_bytes()) == "pi"
    assert detect_format((REPO / "sample_sessions" / "codex-session.jsonl").read_bytes()) == "codex"
    assert detect_format(b'{\n  "hello": "world"\n}\n') == "unknown"


def test_steps_become_model_calls_with_their_usage_and_tools_pair() -> None:
    s = load_any(SAMPLE)
    assert (
        s.format == "opencode" and s.name == "Stale list after edit" and s.header.cwd == "/home/dev/tasklane"
    )
    assert s.fork_points == () and len(s.leaves) == 1
    c = s.counts_by_type()
    assert (c["message/assistant"], c["message/toolResult"], c["message/user"], c["compaction"]) == (
        14,
        10,
        4,
        1,
    )
    answers = _of(s, "assistant")
    assert [b.type for b in answers[0].content] == ["thinking", "toolCall"]  # step 1 of the first answer
    u = answers[0].usage
    assert (u.input, u.output, u.cacheRead, u.cacheWrite, u.totalTokens) == (3, 120, 0, 13023, 13146)
    calls = {b.id: b.name for m in answers for b in m.content if b.type == "toolCall"}
    results = _of(s, "toolResult")
    assert [r.toolCallId for r in results] == [f"toolu_{k:02d}" for k in range(1, 11)]
    assert all(calls[r.toolCallId] == r.toolName for r in results)
    assert [r.toolCallId for r in results if r.isError] == ["toolu_06"]
    assert "TypeError" in results[5].content[0].text


def test_pruned_outputs_are_kept_and_shown_cleared_as_recorded() -> None:
    s = load_any(SAMPLE)
    pruned = recorded_pruned_call_ids(s)
    assert sorted(pruned) == ["toolu_02", "toolu_03"]
    read = next(r for r in _of(s, "toolResult") if r.toolCallId == "toolu_02")
    assert "TaskStore" in read.content[0].text  # the original output is kept for what-if replays
    r = replay(s, ReplaySettings(strategy="recorded"))
    cleared_at = [
        k for k in range(len(r.steps)) if any(d.action == "pruned" for d in r.step_detail(k).prune.decisions)
    ]
    assert cleared_at == [4, 5, 6, 7, 8, 9]  # from the second prompt's first call until the compaction
    d = next(d for d in r.step_detail(4).prune.decisions if d.action == "pruned")
    assert d.marker == CLEARED and "OpenCode" in d.reason


def test_compaction_request_and_summary_become_one_compaction() -> None:
    s = load_any(SAMPLE)
    k = next(i for i, e in enumerate(s.entries) if e.type == "compaction")
    comp = s.entries[k]
    assert comp.summary.startswith("## Goal\nFix stale") and comp.details == {
        "agent": "opencode",
        "auto": True,
        "summaryUsage": {  # the summarising request's own tokens, as the summary answer records them
            "input": 3,
            "output": 160,
            "cacheRead": 0,
            "cacheWrite": 13617,
            "totalTokens": 13780,
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
        },
    }
    assert comp.tokensBefore == 3 + 13314 + 31  # the last step's input + cache read + cache write
    ctx = build_session_context(s).messages
    assert [m.role for m in ctx][:2] == ["compactionSummary", "user"]
    assert not any(m.role == "toolResult" and m.message.toolCallId == "toolu_02" for m in ctx)


def test_replays_as_recorded_and_with_opencode_policies() -> None:
    s = load_any(SAMPLE)
    r = replay(s)
    assert len(r.steps) == 14 and r.metrics.compactions == 1
    assert r.steps[0].recorded_input == 3 + 0 + 13023
    w = replay(s, ReplaySettings(compaction="opencode", strategy="opencode", context_window=34000))
    assert w.metrics.compactions >= 1
    assert (
        prune_at(s, "opencode", {"prune_protect": "100", "prune_minimum": "100"}, at_step=13).stats
        is not None
    )


def test_invalid_json_is_located_and_a_bad_message_is_skipped() -> None:
    data = SAMPLE.read_bytes()
    broken = data[: len(data) // 2]
    s = parse_any(broken + b"\n", source="x")  # detected from the head; the document is cut inside a string
    (bad,) = [i for i in s.issues if i.severity == "error"]
    assert bad.kind == "malformed-json" and bad.line == broken.count(b"\n") + 1 and s.entries == ()
    doc = json.loads(data)
    doc["messages"].insert(1, {"info": {"id": "msg_bad", "role": "robot"}, "parts": []})
    text = json.dumps(doc, indent=2)
    s = parse_any(text.encode(), source="y")
    (warn,) = [i for i in s.issues if i.severity == "warning"]
    assert warn.kind == "invalid-message" and text.splitlines()[warn.line - 1].strip() == '"id": "msg_bad",'
    assert s.counts_by_type()["message/assistant"] == 14


def test_a_session_from_opencodes_database_imports(tmp_path: Path) -> None:
    """The database layout (session/message/part rows, each row's JSON in ``data``) written as an
    export, then imported: the same session as the export file."""
    doc = json.loads(SAMPLE.read_bytes())
    db = tmp_path / "opencode.db"
    con = sqlite3.connect(db)
    con.executescript(
        "create table session (id text primary key, project_id text, directory text, title text, version text,"
        " time_created integer, time_updated integer);"
        "create table message (id text primary key, session_id text, time_created integer, data text);"
        "create table part (id text primary key, message_id text, session_id text, time_created integer, data text);"
    )
    info = doc["info"]
    con.execute(
        "insert into session values (?,?,?,?,?,?,?)",
        (
            info["id"],
            info["projectID"],
            info["directory"],
            info["title"],
            info["version"],
            info["time"]["created"],
            info["time"]["updated"],
        ),
    )
    for m in doc["messages"]:
        mi = dict(m["info"])
        mid = mi.pop("id")
        mi.pop("sessionID")
        con.execute("insert into message values (?,?,?,?)", (mid, info["id"], 0, json.dumps(mi)))
        for p in m["parts"]:
            p = dict(p)
            pid = p.pop("id")
            p.pop("sessionID")
            p.pop("messageID")
            con.execute("insert into part values (?,?,?,?,?)", (pid, mid, info["id"], 0, json.dumps(p)))
    con.commit()
    con.close()
    s = parse_any(opencode_db_export(db, info["id"]), source="db")
    ref = load_any(SAMPLE)
    assert s.format == "opencode" and s.counts_by_type() == ref.counts_by_type()
    assert [e.raw() for e in s.entries] == [e.raw() for e in ref.entries]


def test_cli_reads_an_export(capsys) -> None:  # type: ignore[no-untyped-def]
    from inspector.cli import main

    assert main(["info", str(SAMPLE)]) == 0
    out = capsys.readouterr().out
    assert "OpenCode session export" in out and "compactions 1" in out


def test_a_file_of_no_known_format_says_which_formats_were_tried(tmp_path: Path) -> None:
    for data in (b'{"foo": 1}\n{"bar": 2}\n', b'{\n  "a": 1\n}\n'):
        f = tmp_path / "x.json"
        f.write_bytes(data)
        for s in (parse_any(data), load_any(f)):
            first = s.issues[0]
            assert first.kind == "format-unrecognised" and first.severity == "error"
            assert all(x in first.message for x in ("pi session", "Claude Code", "Codex", "OpenCode"))
    assert load_any(SAMPLE).issues[0].kind == "format"  # a recognised file says what it is instead


def _tail_export(tail: str | None) -> bytes:
    def user(mid: str, text: str, t: int, *parts: dict) -> dict:  # type: ignore[type-arg]
        return {
            "info": {"id": mid, "sessionID": "ses_t", "role": "user", "time": {"created": t}},
            "parts": [{"type": "text", "text": text}] if text else list(parts),
        }

    def answer(mid: str, parent: str, text: str, t: int, *, summary: bool = False) -> dict:  # type: ignore[type-arg]
        tokens = {"input": 100 * t, "output": 10, "reasoning": 0, "cache": {"read": 0, "write": 0}}
        info = {
            "id": mid,
            "sessionID": "ses_t",
            "role": "assistant",
            "parentID": parent,
            "time": {"created": t},
            "modelID": "m",
            "providerID": "p",
            "finish": "stop",
            "tokens": tokens,
            "cost": 0,
        }
        if summary:
            info["summary"] = True
        return {
            "info": info,
            "parts": [
                {"type": "step-start"},
                {"type": "text", "text": text},
                {"type": "step-finish", "tokens": tokens},
            ],
        }

    comp = {"type": "compaction", "auto": True}
    if tail is not None:
        comp["tail_start_id"] = tail
    doc = {
        "info": {"id": "ses_t", "title": "tail", "directory": "/w"},
        "messages": [
            user("msg_1", "first", 1),
            answer("msg_2", "msg_1", "one", 2),
            user("msg_3", "second", 3),
            answer("msg_4", "msg_3", "two", 4),
            user("msg_5", "", 5, comp),
            answer("msg_6", "msg_5", "SUMMARY of first", 6, summary=True),
            user("msg_7", "third", 7),
            answer("msg_8", "msg_7", "three", 8),
        ],
    }
    return json.dumps(doc, indent=2).encode()


def _texts(s) -> list[str]:  # type: ignore[no-untyped-def]
    out = []
    for cm in build_session_context(s).messages:
        m = cm.message
        body = getattr(m, "summary", None) or m.content
        out.append(body if isinstance(body, str) else body[0].text)
    return out


def test_a_retained_tail_stays_after_the_summary() -> None:
    s = parse_any(_tail_export("msg_3"), source="t.json")
    comp = next(e for e in s.entries if e.type == "compaction")
    assert comp.firstKeptEntryId is not None and comp.details["tailStartId"] == "msg_3"
    assert _texts(s) == ["SUMMARY of first", "second", "two", "third", "three"]
    assert not [i for i in s.issues if i.kind == "retained-tail"]
    # without a tail, or with the tail starting at the request itself, nothing is kept
    for tail in (None, "msg_5"):
        s = parse_any(_tail_export(tail), source="t.json")
        assert _texts(s) == ["SUMMARY of first", "third", "three"], tail
        assert not [i for i in s.issues if i.kind == "retained-tail"], tail


def test_a_retained_tail_naming_no_earlier_message_is_reported() -> None:
    s = parse_any(_tail_export("msg_404"), source="t.json")
    assert _texts(s) == ["SUMMARY of first", "third", "three"]
    bad = [i for i in s.issues if i.kind == "retained-tail"]
    assert len(bad) == 1 and "msg_404" in bad[0].message and bad[0].line is not None and bad[0].line > 1


def test_a_pending_undo_is_reported_at_its_message() -> None:
    doc = json.loads(_tail_export(None))
    doc["info"]["revert"] = {"messageID": "msg_7", "snapshot": "abc"}
    data = json.dumps(doc, indent=2).encode()
    s = parse_any(data, source="t.json")
    rv = [i for i in s.issues if i.kind == "revert"]
    assert len(rv) == 1 and "1 after it" in rv[0].message
    assert data.decode().splitlines()[rv[0].line - 1].strip() == '"id": "msg_7",'
    assert _texts(s)[-2:] == ["third", "three"]  # kept as recorded


def test_ids_are_located_whatever_the_spacing_and_escaping() -> None:
    from inspector.importers.opencode import _Locator

    text = '{\n"id": "a",\n"x": {"id":"b"},\n"id"  :  "c\\u00e9",\n"id": "a"\n}'
    loc = _Locator(text)
    assert [loc.line_of("a"), loc.line_of("b"), loc.line_of("cé"), loc.line_of("a")] == [2, 3, 4, 5]
    assert loc.line_of("b") == 3 and loc.line_of("missing") == 1  # before the previous hit: from the start


def test_user_parts_are_sent_as_opencode_sends_them() -> None:
    doc = json.loads(_tail_export(None))
    doc["messages"][0]["parts"] = [
        {"type": "text", "text": "look at these"},
        {"type": "text", "text": "Called the Read tool: notes.txt says hi", "synthetic": True},
        {"type": "file", "mime": "text/plain", "url": "file:///w/notes.txt", "filename": "notes.txt"},
        {"type": "file", "mime": "application/x-directory", "url": "file:///w/src", "filename": "src"},
        {
            "type": "file",
            "mime": "image/png",
            "url": "data:image/png;base64,iVBORw0KGgo=",
            "filename": "a.png",
        },
        {"type": "subtask", "prompt": "p", "description": "d", "agent": "general"},
        {"type": "text", "text": "hidden", "ignored": True},
    ]
    s = parse_any(json.dumps(doc).encode(), source="t.json")
    first = next(e.message for e in s.entries if getattr(getattr(e, "message", None), "role", "") == "user")
    assert [(b.type, getattr(b, "text", None)) for b in first.content] == [
        ("text", "look at these"),
        ("text", "Called the Read tool: notes.txt says hi"),
        ("image", None),
        ("text", "The following tool was executed by the user"),
    ]


def test_an_interrupted_tool_run_sends_what_it_printed() -> None:
    doc = json.loads(_tail_export(None))
    doc["messages"][1]["parts"].insert(
        2,
        {
            "type": "tool",
            "id": "prt_x",
            "callID": "c1",
            "tool": "bash",
            "state": {
                "status": "error",
                "input": {"command": "npm test"},
                "error": "Tool execution aborted",
                "metadata": {"interrupted": True, "output": "PASS a.test.ts\n(interrupted)"},
                "time": {"start": 1, "end": 2},
            },
        },
    )
    doc["messages"][1]["parts"].insert(
        3,
        {
            "type": "tool",
            "id": "prt_y",
            "callID": "c2",
            "tool": "read",
            "state": {
                "status": "error",
                "input": {"path": "x"},
                "error": "File not found",
                "time": {"start": 1, "end": 2},
            },
        },
    )
    s = parse_any(json.dumps(doc).encode(), source="t.json")
    results = [
        e.message for e in s.entries if getattr(getattr(e, "message", None), "role", "") == "toolResult"
    ]
    assert [(r.content[0].text, r.isError) for r in results] == [
        ("PASS a.test.ts\n(interrupted)", False),
        ("File not found", True),
    ]


def test_a_steps_patch_part_is_no_model_call_of_its_own() -> None:
    """OpenCode writes a step's ``patch`` (the files it changed) right after its ``step-finish``:
    part of the step that finished, not a step of its own. The shared OpenCode + DCP export has 9
    such parts, each of which had become an empty answer without usage: a model call never made."""
    doc = json.loads(_tail_export(None))
    tok = {"input": 10, "output": 5, "reasoning": 0, "cache": {"read": 100, "write": 0}}
    patch = {"type": "patch", "hash": "abc", "files": ["/w/a.py"]}
    doc["messages"][1]["parts"] = [
        {"type": "snapshot", "snapshot": "abc"},  # before the first step: part of it
        {"type": "step-start"},
        {
            "type": "tool",
            "id": "prt_1",
            "callID": "c1",
            "tool": "edit",
            "state": {"status": "completed", "input": {}, "output": "ok", "time": {"start": 1, "end": 2}},
        },
        {"type": "step-finish", "tokens": tok},
        patch,
        {"type": "step-start"},
        {"type": "text", "text": "edited"},
        {"type": "step-finish", "tokens": {**tok, "input": 20}},
        patch,
    ]
    doc["messages"][3]["parts"] += [patch, {"type": "text", "text": "and a text with no step-start"}]
    s = parse_any(json.dumps(doc).encode(), source="t.json")
    answers = _of(s, "assistant")
    assert [([b.type for b in m.content], m.usage.input if m.usage else None) for m in answers[:4]] == [
        (["toolCall"], 10),
        (["text"], 20),
        (["text"], 400),  # "two", its step-finish's tokens
        (["text"], None),  # a part of the model's after a step-finish still starts a step (its usage unknown)
    ]
    said = next(i.message for i in s.issues if i.kind == "not-imported")
    assert "3 patch part" in said and "1 snapshot part" in said  # skipped, and said
    shared = SHARED / "real-sessions" / "opencode" / "shaheislam-dotfiles-e9150c5ddd-0.json"
    if shared.exists():  # beside the clone: each of its 102 calls records its usage
        r = replay(load_any(shared), ReplaySettings())
        assert len(r.steps) == 102 and all(st.recorded_input is not None for st in r.steps)


def test_an_answer_that_failed_is_not_sent_again_unless_it_was_interrupted_after_writing() -> None:
    """OpenCode's ``toModelMessages`` (``session/message-v2.ts``) leaves an answer with an error out
    of every later request — all its steps, their tool calls and results —, unless the error is the
    user's interruption (``MessageAbortedError``) and the answer wrote more than reasoning. The
    importer gives pi's stop reasons (``error``, ``aborted``) and marks what is left out; the
    prompt rebuilt as sent (:class:`inspector.sent.SentCounter`) leaves it out."""
    from inspector.context import ContextMessage
    from inspector.importers.opencode import WITHHELD
    from inspector.sent import SentCounter
    from inspector.tokens import get_counter

    def user(mid: str, text: str) -> dict:  # type: ignore[type-arg]
        return {
            "info": {"id": mid, "role": "user", "time": {"created": 1}},
            "parts": [{"type": "text", "text": text}],
        }

    def answer(mid: str, parts: list, error: str | None = None) -> dict:  # type: ignore[type-arg]
        info = {"id": mid, "role": "assistant", "time": {"created": 2}, "modelID": "m", "providerID": "p"}
        if error:
            info["error"] = {"name": error, "data": {"message": f"{error} here"}}
        return {"info": info, "parts": [{"id": f"{mid}_{k}", **p} for k, p in enumerate(parts)]}

    tok = {"input": 100, "output": 5, "reasoning": 0, "cache": {"read": 0, "write": 0}}
    tool = {
        "type": "tool",
        "callID": "c1",
        "tool": "read",
        "state": {
            "status": "completed",
            "input": {"path": "a"},
            "output": "x" * 4000,
            "time": {"start": 1, "end": 2},
        },
    }
    doc = {
        "info": {"id": "ses_e", "title": "errors", "directory": "/w"},
        "messages": [
            user("msg_1", "first"),
            answer(
                "msg_2",
                [
                    {"type": "step-start"},
                    tool,
                    {"type": "step-finish", "tokens": tok},
                    {"type": "step-start"},
                    {"type": "text", "text": "and then"},
                ],
                "APIError",
            ),
            user("msg_3", "second"),
            answer("msg_4", [{"type": "step-start"}, {"type": "reasoning", "text": "hm"}], ABORTED),
            user("msg_5", "third"),
            answer("msg_6", [{"type": "step-start"}, {"type": "text", "text": "half an answer"}], ABORTED),
            user("msg_7", "fourth"),
            answer(
                "msg_8",
                [
                    {"type": "step-start"},
                    {"type": "text", "text": "done"},
                    {"type": "step-finish", "tokens": tok},
                ],
            ),
        ],
    }
    s = parse_any(json.dumps(doc).encode(), source="e.json")
    said = [
        (m.role, getattr(m, "stopReason", None), bool((m.__pydantic_extra__ or {}).get(WITHHELD)))
        for e in s.entries
        if (m := getattr(e, "message", None)) is not None
    ]
    assert said == [
        ("user", None, False),
        ("assistant", "toolUse", True),  # the failed answer's first step, its tool call and result
        ("toolResult", None, True),
        ("assistant", "error", True),
        ("user", None, False),
        ("assistant", "aborted", True),  # interrupted while it reasoned: nothing to keep
        ("user", None, False),
        ("assistant", "aborted", False),  # interrupted after it wrote: sent again
        ("user", None, False),
        ("assistant", "stop", False),
    ]
    context = [ContextMessage(e.message, i) for i, e in enumerate(s.entries) if hasattr(e, "message")]
    counter = get_counter("pi")
    sent = SentCounter(s, counter).count(context[:-1]).tokens
    kept = [c for c, (_, _, out) in zip(context, said, strict=True) if not out][:-1]
    assert sent == sum(counter.count(c.message) for c in kept)
    assert sent < sum(counter.count(c.message) for c in context[:-1]) - 900  # the 4,000-character output
