"""The loader: every kind of bad input gets a located report, and every valid entry survives."""

from __future__ import annotations

import json
import os
import stat

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector import load_session, parse_session
from inspector.session.models import MessageEntry, OpaqueEntry

from .support.builder import SessionBuilder

HEADER = '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}'


def entry(i: int, parent: int | None = None, text: str = "hi") -> str:
    pid = f'"e{parent}"' if parent is not None else "null"
    return (
        '{"type":"message","id":"e%d","parentId":%s,"timestamp":"2026-01-01T00:00:%02d.000Z",'
        '"message":{"role":"user","content":"%s"}}'
    ) % (i, pid, i, text)


def kinds(s) -> dict[str, list[int | None]]:
    out: dict[str, list[int | None]] = {}
    for i in s.issues:
        out.setdefault(i.kind, []).append(i.line)
    return out


def test_clean_file_has_no_issues() -> None:
    s = parse_session("\n".join([HEADER, entry(1), entry(2, 1)]) + "\n")
    assert s.issues == () and len(s) == 2 and s.path() == [0, 1]


def test_malformed_line_is_reported_with_its_number_and_the_rest_loads() -> None:
    s = parse_session("\n".join([HEADER, entry(1), "{not json", entry(2, 1)]) + "\n")
    assert kinds(s) == {"malformed-json": [3]}
    assert [e.id for e in s.entries] == ["e1", "e2"]
    assert s.path() == [0, 1]


def test_truncated_last_line_is_called_truncated() -> None:
    s = parse_session("\n".join([HEADER, entry(1), entry(2, 1)[:40]]))
    assert kinds(s) == {"truncated-line": [3]}
    assert "cut off" in s.issues[0].message
    assert len(s) == 1


def test_blank_lines_are_skipped_and_listed() -> None:
    s = parse_session("\n".join([HEADER, "", entry(1), "   ", entry(2, 1)]) + "\n")
    assert kinds(s) == {"blank-lines": [2]}
    assert "2, 4" in s.issues[0].message and len(s) == 2


def test_bom_and_crlf_are_tolerated_and_noted() -> None:
    text = "\ufeff" + "\r\n".join([HEADER, entry(1), entry(2, 1)]) + "\r\n"
    s = parse_session(text.encode("utf-8"))
    assert set(kinds(s)) == {"bom", "crlf"}
    assert s.header is not None and s.header.id == "s1" and len(s) == 2


def test_invalid_utf8_is_replaced_like_node_and_located() -> None:
    data = ("\n".join([HEADER, entry(1)]) + "\n").encode() + entry(2, 1, "caf\xe9").encode("latin-1") + b"\n"
    s = parse_session(data)
    assert kinds(s) == {"invalid-utf8": [3]}
    m = s.entries[1]
    assert isinstance(m, MessageEntry) and m.message.content == "caf\ufffd"


def test_duplicate_ids_keep_both_entries_and_links_reach_the_last() -> None:
    s = parse_session("\n".join([HEADER, entry(1), entry(1), entry(2, 1)]) + "\n")
    assert kinds(s) == {"duplicate-id": [3]}
    assert len(s) == 3
    assert s.parents[2] == 1  # pi's Map keeps the later entry under the id


def test_dangling_parent_makes_a_root_and_is_reported() -> None:
    s = parse_session("\n".join([HEADER, entry(1), entry(2, 9)]) + "\n")
    assert kinds(s) == {"dangling-parent": [3]}
    assert s.roots == (0, 1)


def test_parent_cycle_is_broken_and_reported_instead_of_hanging() -> None:
    lines = [HEADER, entry(1, 3), entry(2, 1), entry(3, 2), entry(4, 3)]
    s = parse_session("\n".join(lines) + "\n")
    # e1 -> e3 -> e2 -> e1: walking from e1, the link e2 -> e1 closes the cycle and is cut.
    assert kinds(s) == {"parent-cycle": [3]}
    assert s.roots == (1,)
    assert s.path(0) == [1, 2, 0] and s.path(3) == [1, 2, 3]


def test_self_parent_is_a_cycle_too() -> None:
    s = parse_session("\n".join([HEADER, entry(1, 1)]) + "\n")
    assert "parent-cycle" in kinds(s) and s.path(0) == [0]


def test_empty_file_says_so() -> None:
    for data in (b"", b"\n\n"):
        s = parse_session(data)
        assert len(s) == 0 and any(i.kind == "empty-file" for i in s.issues)


def test_non_pi_jsonl_says_not_a_pi_session_with_line_one() -> None:
    text = '{"type":"user","uuid":"u1","parentUuid":null,"message":{"role":"user","content":"hi"}}\n'
    s = parse_session(text)
    assert s.header is None
    (issue,) = [i for i in s.issues if i.kind == "not-a-session"]
    assert issue.line == 1 and issue.message.startswith(
        "not a pi session: line 1 is a JSON object with type 'user'"
    )


def test_unknown_entry_type_and_role_are_kept_opaque_with_raw_fields() -> None:
    lines = [
        HEADER,
        '{"type":"telemetry","id":"t1","parentId":null,"blob":{"x":[1,2]}}',
        '{"type":"message","id":"m1","parentId":"t1","message":{"role":"robot","beep":true}}',
    ]
    s = parse_session("\n".join(lines) + "\n")
    assert s.issues == ()
    assert isinstance(s.entries[0], OpaqueEntry) and s.entries[0].raw()["blob"] == {"x": [1, 2]}
    assert s.entries[1].message.raw() == {"role": "robot", "beep": True}
    assert s.path() == [0, 1]


def test_entry_of_known_type_with_wrong_field_types_is_kept_opaque_and_located() -> None:
    bad = '{"type":"message","id":"m2","parentId":"e1","message":{"role":"user","content":5}}'
    s = parse_session("\n".join([HEADER, entry(1), bad, entry(3, 2).replace('"e2"', '"m2"')]) + "\n")
    assert kinds(s) == {"invalid-entry": [3]}
    assert isinstance(s.entries[1], OpaqueEntry) and s.entries[1].raw()["message"]["content"] == 5
    assert s.path() == [0, 1, 2]


def test_v1_migration_numbers_ids_and_resolves_first_kept_index() -> None:
    lines = [
        '{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}',
        '{"type":"message","timestamp":"t","message":{"role":"user","content":"a"}}',
        '{"type":"message","timestamp":"t","message":{"role":"hookMessage","content":"h","customType":"x"}}',
        '{"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":2,"tokensBefore":5}',
    ]
    s = parse_session("\n".join(lines) + "\n")
    assert s.migrated and s.original_version == 1
    assert [e.id for e in s.entries] == ["00000001", "00000002", "00000003"]
    assert [e.parentId for e in s.entries] == [None, "00000001", "00000002"]
    comp = s.entries[2].raw()
    assert comp["firstKeptEntryId"] == "00000002" and "firstKeptEntryIndex" not in comp
    assert s.entries[1].message.role == "custom"  # v2 -> v3: hookMessage becomes custom


def test_ids_are_stable_across_loads(tmp_path) -> None:
    p = tmp_path / "v1.jsonl"
    p.write_text(
        '{"type":"session","id":"s"}\n' + '{"type":"message","message":{"role":"user","content":"a"}}\n' * 3
    )
    assert (
        [e.id for e in load_session(p).entries]
        == [e.id for e in load_session(p).entries]
        == ["00000001", "00000002", "00000003"]
    )


def test_loading_never_writes_to_the_file(tmp_path) -> None:
    p = tmp_path / "v1.jsonl"
    text = '{"type":"session","id":"s"}\n{"type":"message","message":{"role":"user","content":"a"}}\n'
    p.write_text(text)
    os.chmod(p, stat.S_IRUSR)  # read-only: any write attempt would raise
    before = p.stat().st_mtime_ns
    s = load_session(p)
    assert s.migrated and p.read_text() == text and p.stat().st_mtime_ns == before


def test_missing_file_raises_a_clear_error(tmp_path) -> None:
    from inspector import SessionLoadError

    try:
        load_session(tmp_path / "nope.jsonl")
    except SessionLoadError as e:
        assert "nope.jsonl" in str(e)
    else:
        raise AssertionError("expected SessionLoadError")


def test_default_leaf_is_last_entry_in_file_order_even_on_another_branch() -> None:
    b = SessionBuilder()
    root = b.user("start")
    b.assistant("a")
    b.user("branch two", parent=root)
    s = b.session()
    assert s.default_leaf == 2 and s.path() == [0, 2] and s.fork_points == (0,)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_loader_never_raises_on_arbitrary_bytes(data: bytes) -> None:
    s = parse_session(data)
    assert isinstance(s.issues, tuple)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                HEADER,
                entry(1),
                entry(2, 1),
                entry(3, 2),
                entry(3, 3),
                "{",
                "[]",
                "null",
                '{"type":"message","id":"x","parentId":"e1","message":null}',
                '{"type":"compaction","id":"c","parentId":"e2","firstKeptEntryId":"e1","summary":1}',
                json.dumps({"type": "label", "id": 7, "parentId": ["x"]}),
            ]
        ),
        max_size=12,
    ),
    st.booleans(),
)
def test_loader_never_raises_on_shuffled_lines(lines: list[str], crlf: bool) -> None:
    from inspector import build_session_context

    s = parse_session(("\r\n" if crlf else "\n").join(lines))
    objects = [json.loads(line) for line in lines if line.startswith("{") and line != "{"]
    # every entry is kept, even a duplicate or one that is not valid (kept opaque), and no header
    assert len(s.entries) == sum(1 for o in objects if o.get("type") != "session")
    reported = {i.line for i in s.issues if i.severity == "error"}
    for n, line in enumerate(lines, 1):
        if not line.startswith("{") or line == "{":  # not an object: reported at its own line
            assert n in reported, (n, line)
    if s.entries:
        build_session_context(s)  # and the context builds
