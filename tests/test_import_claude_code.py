"""Claude Code transcripts imported into the pi session model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from inspector import build_session_context
from inspector.importers import detect_format, load_any, parse_any
from inspector.importers.claude_code import POST_COMPACT_MAX_FILES_TO_RESTORE
from inspector.replay import ReplaySettings, replay
from inspector.session.models import AssistantMessage, ToolCall, ToolResultMessage

from .support.paths import REPO, SHARED

SAMPLE = REPO / "sample_sessions" / "claude-code-session.jsonl"


def test_detected_by_content() -> None:
    assert detect_format(SAMPLE.read_bytes()) == "claude-code"
    assert detect_format((REPO / "sample_sessions" / "small-tutorial.jsonl").read_bytes()) == "pi"
    assert detect_format(b'{"foo": 1}\n') == "unknown"


def test_tree_messages_tool_pairing_and_compaction() -> None:
    s = load_any(SAMPLE)
    assert s.fork_points == () and len(s.leaves) == 1  # parallel tool calls are not forks
    counts = s.counts_by_type()
    # 5 answers (the first written as 3 block lines, merged), 4 tool results, 2 prompts
    assert (
        counts["message/assistant"] == 5 and counts["message/toolResult"] == 4 and counts["message/user"] == 2
    )
    first = next(
        e.message for e in s.entries if getattr(getattr(e, "message", None), "role", "") == "assistant"
    )
    assert [b.type for b in first.content] == ["thinking", "toolCall", "toolCall"]
    assert first.usage.input == 3 and first.usage.cacheRead == 15000 and first.usage.cacheWrite == 13  # once
    results = [
        e.message for e in s.entries if getattr(getattr(e, "message", None), "role", "") == "toolResult"
    ]
    assert [r.toolName for r in results] == ["Read", "Bash", "Edit", "Bash"] and results[1].isError
    comp = next(e for e in s.entries if e.type == "compaction")
    assert comp.tokensBefore == 15130 and comp.summary.startswith("This session is being continued")
    ctx = build_session_context(s)
    # the edited_text_file attachment is sent as Claude Code renders it (a <system-reminder> custom message)
    assert [m.role for m in ctx.messages] == [
        "compactionSummary",
        "custom",
        "user",
        "assistant",
        "toolResult",
        "assistant",
    ]
    assert {i.kind for i in s.issues} >= {"sidechain", "outside-chain"}


def test_replays_as_recorded_and_what_if() -> None:
    s = load_any(SAMPLE)
    r = replay(s)
    assert len(r.steps) == 5 and r.metrics.compactions == 1
    assert r.steps[0].recorded_input == 3 + 15000 + 13
    w = replay(
        s, ReplaySettings(compaction="pi", context_window=1000, reserve_tokens=400, keep_recent_tokens=100)
    )
    assert w.metrics.compactions >= 1


def test_malformed_line_is_located_and_the_rest_loads() -> None:
    data = SAMPLE.read_bytes().split(b"\n")
    data.insert(3, b'{"type":"assistant","uuid": broken')
    s = parse_any(b"\n".join(data), source="x")
    bad = [i for i in s.issues if i.kind == "malformed-json"]
    assert [i.line for i in bad] == [4]
    assert s.counts_by_type()["message/assistant"] == 5


def test_cli_info_reads_a_claude_code_transcript(capsys) -> None:  # type: ignore[no-untyped-def]
    from inspector.cli import main

    assert main(["info", str(SAMPLE)]) == 0
    out = capsys.readouterr().out
    assert "Claude Code transcript" in out and "compactions 1" in out


def test_a_sub_agents_own_file_is_its_conversation() -> None:
    lines = [
        {
            "type": "user",
            "uuid": "s1",
            "parentUuid": None,
            "isSidechain": True,
            "agentId": "a7",
            "sessionId": "x",
            "timestamp": "2026-03-03T10:00:00.000Z",
            "message": {"role": "user", "content": "Find the lexer tests."},
        },
        {
            "type": "assistant",
            "uuid": "s2",
            "parentUuid": "s1",
            "isSidechain": True,
            "agentId": "a7",
            "sessionId": "x",
            "timestamp": "2026-03-03T10:00:02.000Z",
            "message": {
                "id": "m1",
                "role": "assistant",
                "model": "claude-haiku-4-5",
                "stop_reason": "end_turn",
                "content": [{"type": "text", "text": "test/lexer.test.ts"}],
                "usage": {"input_tokens": 10, "output_tokens": 5},
            },
        },
    ]
    import json

    s = parse_any(("\n".join(json.dumps(x) for x in lines) + "\n").encode(), source="agent-a7.jsonl")
    assert [e.message.role for e in s.entries] == ["user", "assistant"]
    assert s.issues[1].kind == "subagent" and "a7" in s.issues[1].message
    assert not any(i.kind == "sidechain" for i in s.issues)


def _cc(lines: list[dict]) -> bytes:  # type: ignore[type-arg]
    import json

    base = {"sessionId": "p", "isSidechain": False, "userType": "external", "cwd": "/w"}
    return ("\n".join(json.dumps({**base, **x}) for x in lines) + "\n").encode()


def _u(uid: str, parent: str | None, text: str, **kw):  # type: ignore[no-untyped-def]
    return {
        "type": "user",
        "uuid": uid,
        "parentUuid": parent,
        "timestamp": "2026-03-03T10:00:00.000Z",
        "message": {"role": "user", "content": text},
        **kw,
    }


def _a(uid: str, parent: str, text: str, mid: str, inp: int):  # type: ignore[no-untyped-def]
    return {
        "type": "assistant",
        "uuid": uid,
        "parentUuid": parent,
        "timestamp": "2026-03-03T10:00:01.000Z",
        "message": {
            "id": mid,
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "stop_reason": "end_turn",
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": inp, "output_tokens": 5},
        },
    }


def _preserved_session(meta_key: str = "preservedSegment") -> bytes:
    boundary = {
        "type": "system",
        "subtype": "compact_boundary",
        "uuid": "b",
        "parentUuid": None,
        "logicalParentUuid": "a3",
        "timestamp": "2026-03-03T10:05:00.000Z",
        "content": "Conversation compacted",
        "compactMetadata": {"trigger": "auto", "preTokens": 150000, "postTokens": 9000},
    }
    if meta_key == "preservedSegment":
        boundary["compactMetadata"]["preservedSegment"] = {
            "headUuid": "u2",
            "anchorUuid": "s",
            "tailUuid": "a3",
        }
    else:
        boundary["compactMetadata"]["preservedMessages"] = {"uuids": ["u2", "a2", "u3", "a3"]}
    return _cc(
        [
            _u("u1", None, "first question"),
            _a("a1", "u1", "first answer", "m1", 100),
            _u("u2", "a1", "second question"),
            _a("a2", "u2", "second answer", "m2", 200),
            _u("u3", "a2", "third question"),
            _a("a3", "u3", "third answer", "m3", 300),
            boundary,
            _u(
                "s",
                "b",
                "This session is being continued from a previous conversation. Summary: q1.",
                isCompactSummary=True,
                isVisibleInTranscriptOnly=True,
            ),
            # on disk the next prompt hangs off the preserved tail (Claude Code relinks it on load)
            _u("u4", "a3", "fourth question"),
            _a("a4", "u4", "fourth answer", "m4", 50),
        ]
    )


def test_a_preserved_segment_stays_after_the_summary() -> None:
    for key in ("preservedSegment", "preservedMessages"):
        s = parse_any(_preserved_session(key), source="p.jsonl")
        comp = next(e for e in s.entries if e.type == "compaction")
        assert comp.firstKeptEntryId == "u2" and comp.parentId == "a3", key
        assert s.fork_points == () and len(s.leaves) == 1, (
            key
        )  # u4 continues after the compaction, not beside it
        ctx = build_session_context(s)
        texts = []
        for cm in ctx.messages:
            m = cm.message
            body = getattr(m, "summary", None) or getattr(m, "content", "")
            texts.append((cm.role, body if isinstance(body, str) else body[0].text))
        assert texts == [
            (
                "compactionSummary",
                "This session is being continued from a previous conversation. Summary: q1.",
            ),
            ("user", "second question"),
            ("assistant", "second answer"),
            ("user", "third question"),
            ("assistant", "third answer"),
            ("user", "fourth question"),
            ("assistant", "fourth answer"),
        ], key
        assert not [i for i in s.issues if i.kind == "preserved-segment"], key


def test_a_preserved_segment_naming_a_missing_message_is_reported() -> None:
    data = _preserved_session().replace(b'"headUuid": "u2"', b'"headUuid": "gone"')
    s = parse_any(data, source="p.jsonl")
    comp = next(e for e in s.entries if e.type == "compaction")
    assert comp.firstKeptEntryId is None
    bad = [i for i in s.issues if i.kind == "preserved-segment"]
    assert len(bad) == 1 and bad[0].line == 7 and "gone" in bad[0].message
    assert [m.role for m in build_session_context(s).messages] == ["compactionSummary", "user", "assistant"]


def test_preserved_messages_written_after_the_summary_follow_it_after_a_rewind() -> None:
    boundary = {
        "type": "system",
        "subtype": "compact_boundary",
        "uuid": "cb",
        "parentUuid": None,
        "logicalParentUuid": "b2a2",
        "timestamp": "2026-03-03T10:30:00.000Z",
        "content": "Conversation compacted",
        "compactMetadata": {
            "trigger": "auto",
            "preTokens": 150000,
            "preservedSegment": {"headUuid": "b2a", "anchorUuid": "cs", "tailUuid": "b2a2"},
            "preservedMessages": {"uuids": ["b2a", "b2u2", "b2a2"]},
        },
    }
    s = parse_any(
        _cc(
            [
                _u("u1", None, "start"),
                _a("a1", "u1", "ready", "m1", 10),
                _u("b1u", "a1", "first attempt"),
                _a("b1a", "b1u", "first answer", "m2", 10),  # rewound
                _u("b2u", "a1", "second attempt"),
                _a("b2a", "b2u", "second answer", "m3", 10),
                _u("b2u2", "b2a", "keep going"),
                boundary,
                _u(
                    "cs",
                    "cb",
                    "This session is being continued from a previous conversation. Plan.",
                    isCompactSummary=True,
                ),
                _a("b2a2", "cs", "kept going", "m4", 10),  # the tail, written after the summary
                _u("p1u", "b2a2", "after compaction"),
                _a("p1a", "p1u", "final answer", "m5", 10),
            ]
        ),
        source="p.jsonl",
    )
    comp = next(e for e in s.entries if e.type == "compaction")
    assert comp.firstKeptEntryId == "b2a" and comp.parentId == "b2u2"
    assert (
        s.entries[s.default_leaf].id == "p1a" and len(s.leaves) == 2
    )  # the rewound attempt is the other leaf
    assert not [i for i in s.issues if i.severity != "info"]
    texts = []
    for cm in build_session_context(s).messages:
        body = getattr(cm.message, "summary", None) or cm.message.content
        texts.append(body if isinstance(body, str) else body[0].text)
    assert texts == [
        "This session is being continued from a previous conversation. Plan.",
        "second answer",
        "keep going",
        "kept going",
        "after compaction",
        "final answer",
    ]


def test_a_recorded_split_summarises_what_the_agent_summarised() -> None:
    from inspector.compaction import prepare_recorded_split
    from inspector.ui.narrate import agent_compaction_story

    s = parse_any(_preserved_session(), source="p.jsonl")
    k = next(i for i, e in enumerate(s.entries) if e.type == "compaction")
    path = s.path(s.parents[k])
    kept = s.index_of("u2")
    prep = prepare_recorded_split(s.entries_at(path), path.index(kept), path_indexes=path)
    assert prep is not None and prep.firstKeptEntryId == "u2"
    assert [m.entry_index for m in prep.messagesToSummarize] == [0, 1]  # first question and answer only
    story = agent_compaction_story(s, k, len(prep.messagesToSummarize))
    assert "150,000 tokens before it and 9,000 right after" in story[-1]
    assert "Claude Code compacted here" in story[0] and "2 messages" in story[0]
    assert any(f"from entry {kept} verbatim" in x and "preservedSegment" in x for x in story)
    everything = prepare_recorded_split(s.entries_at(path), None, path_indexes=path)
    assert everything is not None and len(everything.messagesToSummarize) == 6


def test_an_answer_hanging_off_an_earlier_parallel_result_is_not_a_fork() -> None:
    def tool_use(uid: str, parent: str, tid: str) -> dict:  # type: ignore[type-arg]
        return {
            "type": "assistant",
            "uuid": uid,
            "parentUuid": parent,
            "timestamp": "2026-03-03T10:00:01.000Z",
            "message": {
                "id": "m-par",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "stop_reason": "tool_use",
                "content": [{"type": "tool_use", "id": tid, "name": "Read", "input": {"path": tid}}],
                "usage": {"input_tokens": 100, "output_tokens": 5},
            },
        }

    def result(uid: str, parent: str, tid: str) -> dict:  # type: ignore[type-arg]
        return {
            "type": "user",
            "uuid": uid,
            "parentUuid": parent,
            "timestamp": "2026-03-03T10:00:02.000Z",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": tid, "content": tid}],
            },
        }

    s = parse_any(
        _cc(
            [
                _u("u1", None, "read both"),
                tool_use("A", "u1", "t1"),
                tool_use("B", "u1", "t2"),  # one answer, two lines, both off the prompt
                result("rA", "A", "t1"),
                result("rB", "B", "t2"),
                _a("next", "rA", "both read", "m-next", 120),  # written off the first result, not the last
            ]
        ),
        source="p.jsonl",
    )
    assert s.fork_points == () and len(s.leaves) == 1
    assert [m.role for m in build_session_context(s).messages] == [
        "user",
        "assistant",
        "toolResult",
        "toolResult",
        "assistant",
    ]


def test_attachments_are_counted_as_text_the_transcript_leaves_out() -> None:
    s = load_any(SAMPLE)
    att = [i for i in s.issues if i.kind == "attachments"]
    assert len(att) == 1 and "1 edited_text_file" in att[0].message
    assert any(getattr(e, "customType", "") == "claude-code/attachment:edited_text_file" for e in s.entries)


def test_lines_without_any_parent_links_are_read_in_file_order() -> None:
    s = parse_any(
        _cc(
            [
                _u("u1", None, "q1"),
                _a("a1", "u1", "r1", "m1", 10) | {"parentUuid": None},
                _u("u2", None, "q2"),
                _a("a2", "u2", "r2", "m2", 10) | {"parentUuid": None},
            ]
        ),
        source="p.jsonl",
    )
    assert len(s.roots) == 1 and len(s.leaves) == 1
    assert [cm.role for cm in build_session_context(s).messages] == ["user", "assistant", "user", "assistant"]
    assert any(i.kind == "no-parent-links" for i in s.issues)
    # one real link is enough to trust the links (the others are roots, as the file says)
    s = parse_any(
        _cc([_u("u1", None, "q1"), _a("a1", "u1", "r1", "m1", 10), _u("u2", None, "q2")]), source="p.jsonl"
    )
    assert len(s.roots) == 2 and not any(i.kind == "no-parent-links" for i in s.issues)


def test_a_preserved_segment_in_a_parent_cycle_does_not_hang() -> None:
    boundary = {
        "type": "system",
        "subtype": "compact_boundary",
        "uuid": "b",
        "parentUuid": None,
        "logicalParentUuid": "x",
        "timestamp": "2026-03-03T10:05:00.000Z",
        "compactMetadata": {"preTokens": 1, "preservedSegment": {"headUuid": "h", "tailUuid": "x"}},
    }
    s = parse_any(
        _cc([_u("h", None, "head"), _u("x", "y", "x"), _u("y", "x", "y"), boundary]), source="p.jsonl"
    )
    assert any(i.kind == "preserved-segment" and "not on the conversation" in i.message for i in s.issues)


def _progress(uid: str, parent: str, kind: str = "bash_progress"):  # type: ignore[no-untyped-def]
    return {
        "type": "progress",
        "uuid": uid,
        "parentUuid": parent,
        "timestamp": "2026-03-03T10:00:01.500Z",
        "data": {"type": kind},
    }


def test_a_dead_end_run_of_progress_lines_is_put_in_line_not_a_branch() -> None:
    """Claude Code writes a tool's progress as lines chained off the answer, and the next prompt
    sometimes hangs off the answer instead of the last progress line: a recording artifact, not a
    rewind (the shared transcript b0dc55 has 21 of them and no real fork)."""
    s = parse_any(
        _cc(
            [
                _u("u1", None, "build it"),
                _a("a1", "u1", "building", "m1", 100),
                _progress("p1", "a1"),
                _progress("p2", "p1"),
                _u("u2", "a1", "and now?"),  # off the answer, beside the progress run
                _a("a2", "u2", "done", "m2", 120),
            ]
        ),
        source="p.jsonl",
    )
    assert s.fork_points == () and len(s.leaves) == 1
    by = {e.id: e.parentId for e in s.entries}
    assert (by["p1"], by["p2"], by["u2"]) == ("a1", "p1", "p2")
    assert any(i.kind == "progress-inline" and i.message.startswith("1 dead-end run") for i in s.issues)
    assert [m.role for m in build_session_context(s).messages] == ["user", "assistant", "user", "assistant"]


def test_progress_written_after_the_line_that_continues_stays_a_branch() -> None:
    s = parse_any(
        _cc(
            [
                _u("u1", None, "build it"),
                _a("a1", "u1", "building", "m1", 100),
                _u("u2", "a1", "and now?"),
                _progress("p1", "a1"),  # written after u2: not moved
                _a("a2", "u2", "done", "m2", 120),
            ]
        ),
        source="p.jsonl",
    )
    assert len(s.fork_points) == 1 and len(s.leaves) == 2
    assert not any(i.kind == "progress-inline" for i in s.issues)


def test_two_prompts_off_one_answer_stay_a_fork_beside_a_progress_run() -> None:
    s = parse_any(
        _cc(
            [
                _u("u1", None, "build it"),
                _a("a1", "u1", "building", "m1", 100),
                _progress("p1", "a1"),
                _u("u2", "a1", "one way"),
                _u("u3", "a1", "another way"),  # a real rewind: two prompts off the answer
            ]
        ),
        source="p.jsonl",
    )
    assert len(s.leaves) == 3 and not any(i.kind == "progress-inline" for i in s.issues)


def test_progress_lines_that_repeat_an_id_do_not_hang_the_import() -> None:
    s = parse_any(
        _cc(
            [
                _u("u1", None, "hi"),
                _progress("x", "u1"),
                _progress("x", "x"),  # the same id, its own parent
                _u("u2", "u1", "again"),
            ]
        ),
        source="p.jsonl",
    )
    assert len(s.entries) == 4 and any(i.kind == "duplicate-id" for i in s.issues)


def _every_entry(entries: list[Any], first_kept: str | None) -> tuple[list[int], list[str]]:
    """The reads a compaction attaches again, as :class:`_Reads` states the rule, from every entry
    written so far (the importer reads only what was added since the last compaction)."""
    paths: dict[str, str] = {}
    for e in entries:
        m = getattr(e, "message", None)
        for b in m.content if isinstance(m, AssistantMessage) else []:
            if isinstance(b, ToolCall) and b.name == "Read" and isinstance(b.arguments, dict):
                p = b.arguments.get("file_path")
                if isinstance(p, str) and p:
                    paths[b.id] = p
    kept = (
        next((k for k, e in enumerate(entries) if e.id == first_kept), len(entries))
        if first_kept
        else len(entries)
    )
    files: list[str] = []
    out: list[int] = []
    for k in range(kept - 1, -1, -1):
        m = getattr(entries[k], "message", None)
        p = paths.get(m.toolCallId) if isinstance(m, ToolResultMessage) and not m.isError else None
        if p is not None and p not in files:
            files.append(p)
            out.append(k)
            if len(out) == POST_COMPACT_MAX_FILES_TO_RESTORE:
                break
    return out, files


@pytest.mark.parametrize(
    "path",
    [
        REPO / "sample_sessions" / "claude-code-session.jsonl",
        *sorted((SHARED / "real-sessions" / "claude-code").glob("*.jsonl")),
    ],
    ids=lambda p: p.name,
)
def test_the_reads_each_compaction_attaches_again_are_those_of_every_entry_so_far(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At each compaction the importer reads only the entries added (or merged into) since the
    last one; it finds what reading every entry written so far finds."""
    from inspector.importers import claude_code

    data = path.read_bytes()
    copies = b"".join(  # the file three times over, each copy continuing the last: more compactions
        data.replace(b'"uuid":"', b'"uuid":"c%d-' % k).replace(b'"parentUuid":"', b'"parentUuid":"c%d-' % k)
        for k in range(3)
    )
    asked = []
    fast = claude_code._Reads.reinjected

    def both(self, entries, first_kept):  # type: ignore[no-untyped-def]
        got = fast(self, entries, first_kept)
        assert got == _every_entry(entries, first_kept)
        asked.append(got)
        return got

    monkeypatch.setattr(claude_code._Reads, "reinjected", both)
    for text in (data, copies):
        parse_any(text, source=path.name)
    if path == SAMPLE:  # its compactions attach reads again
        assert any(reads for reads, _ in asked)


def test_a_read_merged_into_an_earlier_answer_after_a_compaction_is_found_at_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Lines of one answer (one ``message.id``) join its entry, even after a compaction: a ``Read``
    they add is found at the next compaction, and a call id used twice keeps the file of the call
    written in the later entry, as reading every entry in order does."""
    from inspector.importers import claude_code

    from .support.claude_code import Transcript

    t = Transcript()

    def answer(mid: str, block: dict[str, Any]) -> None:
        usage = {"input_tokens": 100, "output_tokens": 5}
        message = {"id": mid, "role": "assistant", "model": "claude-opus-4-8", "content": [block]}
        t.line("assistant", message={**message, "stop_reason": "tool_use", "usage": usage})

    def read(mid: str, cid: str, path: str) -> None:
        answer(mid, {"type": "tool_use", "id": cid, "name": "Read", "input": {"file_path": path}})

    def result(cid: str) -> None:
        t.user([{"type": "tool_result", "tool_use_id": cid, "content": "ok"}])

    def compact() -> None:
        t.line("system", subtype="compact_boundary", compactMetadata={"trigger": "auto", "preTokens": 900})
        t.line("user", isCompactSummary=True, message={"role": "user", "content": "the summary"})

    t.user("go")
    answer("M", {"type": "text", "text": "looking"})
    read("N", "t1", "/p/b.py")
    result("t1")
    compact()
    read("M", "t1", "/p/a.py")  # joins the first answer, an earlier entry than N's
    read("M", "t2", "/p/c.py")
    result("t2")
    compact()
    asked = []
    fast = claude_code._Reads.reinjected

    def both(self, entries, first_kept):  # type: ignore[no-untyped-def]
        got = fast(self, entries, first_kept)
        assert got == _every_entry(entries, first_kept)
        asked.append(got[1])
        return got

    monkeypatch.setattr(claude_code._Reads, "reinjected", both)
    parse_any(t.bytes(), source="t.jsonl")
    assert asked == [["/p/b.py"], ["/p/c.py", "/p/b.py"]]


def _synthetic(t, text: str, api_error: bool) -> str:  # type: ignore[no-untyped-def]
    """An answer Claude Code wrote itself, as 2.x builds write one."""
    extra = {"error": "server_error", "apiErrorStatus": 529} if api_error else {}
    return t.line(
        "assistant",
        message={
            "id": f"synthetic-{t.n}",
            "role": "assistant",
            "model": "<synthetic>",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "stop_sequence",
            "usage": {
                "input_tokens": 0,
                "output_tokens": 0,
                "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0,
            },
        },
        isApiErrorMessage=api_error,
        **extra,
    )


def test_an_answer_claude_code_wrote_itself_is_no_models_answer() -> None:
    """``<synthetic>`` answers: an API error is a failed call as pi records one (no recorded
    prompt, nothing billed, no model change in the turn); "No response requested." is no call."""
    from inspector.cache import cache_replay
    from inspector.doctor import diagnose

    from .support.claude_code import Transcript

    t = Transcript()
    t.user("go")
    t.answer("first", 20_000)
    t.user("again")
    t.line(
        "assistant",
        message={
            "id": "msg_tool",
            "role": "assistant",
            "model": "claude-opus-4-8",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 20_500, "output_tokens": 5},
        },
    )
    t.user([{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py"}])
    _synthetic(t, "API Error: 529 Overloaded. This is a server-side issue, usually temporary", True)
    t.user("continue")
    t.answer("second", 21_000)
    t.user("thanks")
    _synthetic(t, "No response requested.", False)
    t.user("one more")
    t.answer("third", 22_000)
    s = parse_any(t.bytes(), source="t.jsonl")
    answers = [e.message for e in s.entries if isinstance(getattr(e, "message", None), AssistantMessage)]
    assert [(m.model, m.stopReason) for m in answers] == [
        ("claude-opus-4-8", "stop"),
        ("claude-opus-4-8", "toolUse"),
        ("<synthetic>", "error"),  # mid-turn, after the tool's result
        ("claude-opus-4-8", "stop"),
        ("claude-opus-4-8", "stop"),
    ]
    assert answers[2].errorMessage.startswith("API Error: 529 Overloaded")
    kept = [e for e in s.entries if getattr(e, "customType", None) == "claude-code/synthetic"]
    assert [e.data for e in kept] == [{"text": "No response requested."}]  # nothing lost, in its place
    r = replay(s, ReplaySettings())
    assert [st.stop_reason for st in r.steps] == ["stop", "toolUse", "error", "stop", "stop"]  # 5 calls
    c = cache_replay(r)
    assert c.steps[2].prompt == 0 and c.steps[2].cost == 0  # never answered: nothing billed
    assert not [f for f in diagnose(s).findings if f.kind == "model-change-mid-turn"]
