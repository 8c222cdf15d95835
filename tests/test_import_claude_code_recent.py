"""Recent Claude Code transcripts: uuid-less records first, attachments sent as text, a file that
continues an earlier one. The files are written by hand in the shape recent builds write."""

from __future__ import annotations

from inspector import build_session_context
from inspector.importers import detect_format, parse_any
from inspector.importers.claude_code_attachments import attachment_text
from tests.support.claude_code import Transcript


def _leading_bookkeeping(t: Transcript) -> None:
    t.raw(type="last-prompt", lastPrompt="hi", leafUuid="x")
    t.raw(type="mode", mode="normal")
    t.raw(type="permission-mode", permissionMode="default")
    t.raw(type="bridge-session", bridgeSessionId="cse_1", lastSequenceNum=0)


def test_detected_past_leading_records_that_carry_no_uuid() -> None:
    t = Transcript()
    _leading_bookkeeping(t)
    t.user("hello")
    t.answer("hi", prompt=1200)
    assert detect_format(t.bytes()) == "claude-code"
    s = parse_any(t.bytes(), source="t.jsonl")
    assert s.format == "claude-code" and s.counts_by_type()["message/assistant"] == 1
    outside = [i for i in s.issues if i.kind == "outside-chain"]
    assert [i.message for i in outside] == [
        "4 line(s) outside the conversation, without a uuid (1 last-prompt, 1 mode, "
        "1 permission-mode, 1 bridge-session): bookkeeping, not sent to the model, "
        "not imported"
    ]
    assert not [i for i in s.issues if i.severity != "info"]  # no warning per line


def test_a_pi_or_foreign_file_is_not_taken_for_claude_code() -> None:
    t = Transcript()
    _leading_bookkeeping(t)
    t.raw(type="something-else", value=1)
    assert detect_format(t.bytes()) == "unknown"


def test_attachments_are_sent_as_claude_code_renders_them() -> None:
    t = Transcript()
    t.line(
        "attachment",
        attachment={
            "type": "deferred_tools_delta",
            "addedNames": ["WebFetch", "mcp__x__y"],
            "addedLines": ["WebFetch", "mcp__x__y"],
            "removedNames": [],
        },
    )
    t.line(
        "attachment",
        attachment={"type": "skill_listing", "content": "- commit: make a commit", "isInitial": True},
    )
    t.line(
        "attachment",
        attachment={
            "type": "hook_additional_context",
            "hookName": "SessionStart:startup",
            "content": ["Learning mode is on."],
        },
    )
    t.line(
        "attachment",
        attachment={
            "type": "hook_success",
            "hookName": "SessionStart:startup",
            "hookEvent": "SessionStart",
            "content": "",
        },
    )  # empty: Claude Code sends nothing
    t.user("commit this")
    t.answer("done", prompt=5000)
    s = parse_any(t.bytes(), source="t.jsonl")
    ctx = build_session_context(s).messages
    assert [m.role for m in ctx] == ["custom", "custom", "custom", "user", "assistant"]
    assert ctx[0].message.content == (
        "<system-reminder>\nThe following deferred tools are now available via ToolSearch:"
        "\nWebFetch\nmcp__x__y\n</system-reminder>"
    )
    assert ctx[1].message.content == (
        "<system-reminder>\nThe following skills are available for use with the Skill "
        "tool:\n\n- commit: make a commit\n</system-reminder>"
    )
    assert ctx[2].message.content == (
        "<system-reminder>\nSessionStart:startup hook additional context: Learning mode "
        "is on.\n</system-reminder>"
    )
    kinds = {i.message.split(":")[0] for i in s.issues if i.kind == "attachments"}
    assert kinds == {
        "3 attachment line(s) (1 deferred_tools_delta, 1 skill_listing, 1 hook_additional_context)",
        "1 attachment line(s) (1 hook_success)",
    }


def test_removals_and_mcp_instructions_render_their_payload() -> None:
    text = attachment_text(
        {"type": "mcp_instructions_delta", "addedBlocks": ["## srv\nUse it."], "removedNames": ["old"]}
    )
    assert text == (
        "<system-reminder>\n# MCP Server Instructions\n\nThe following MCP servers have provided instructions "
        "for how to use their tools and resources:\n\n## srv\nUse it.\n\nThe following MCP servers have "
        "disconnected. Their instructions above no longer apply:\nold\n</system-reminder>"
    )
    assert attachment_text({"type": "command_permissions", "allowedTools": []}) is None


def test_a_file_that_continues_an_earlier_one_is_said_and_rooted() -> None:
    t = Transcript(parent="ffffffff-0000-4000-8000-00000000dead")  # the earlier file's last line
    t.user("go on")
    t.answer("continuing", prompt=140_000)
    s = parse_any(t.bytes(), source="t.jsonl")
    assert s.header.model_extra["continuesFrom"] == "ffffffff-0000-4000-8000-00000000dead"
    assert s.entries[0].parentId is None and not [i for i in s.issues if i.kind == "dangling-parent"]
    assert [i.line for i in s.issues if i.kind == "continues-earlier"] == [1]
