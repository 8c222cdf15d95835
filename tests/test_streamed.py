"""Large files without holding them (issue 16, flood memory): ``export session`` of a pi v3 file
reads one entry at a time (:func:`inspector.session.loader.stream_session`) and writes exactly the
bytes the export of the loaded session writes; ``info`` of a large one summarises its skeleton
(:func:`~inspector.session.loader.load_skeleton`) and a second read, and says exactly what the
summary of the loaded session says. Other files go through the load as before."""

from __future__ import annotations

import contextlib
import gc
import io
import json
import weakref
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import main
from inspector.export import ExportError, stream_session_jsonl, write_session_jsonl
from inspector.importers import load_any
from inspector.info import session_info, streamed_session_info
from inspector.session.loader import SessionLoadError, load_session, load_skeleton, stream_session
from inspector.session.models import MessageEntry, OpaqueEntry
from inspector.tokens import get_counter

from .support.paths import FIXTURES, REPO

HEADER = '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}\n'
USER = '{"type":"message","id":"u%d","parentId":%s,"timestamp":"2026-01-01T00:00:0%d.000Z","message":{"role":"user","content":"hi %d"}}\n'


def _users(n: int) -> str:
    return "".join(USER % (i, "null" if i == 0 else f'"u{i - 1}"', i % 10, i) for i in range(n))


# Odd but loadable v3 files: every line kind the loader treats specially.
ODD = {
    "plain": HEADER + _users(3),
    "crlf-bom-blank": "\ufeff" + HEADER.replace("\n", "\r\n") + "\n\n" + _users(2),
    "bad-lines": HEADER + "not json\n[1,2]\n" + _users(2) + '{"type":"message","id":"x","message":5}\n',
    "second-header": HEADER + _users(1) + HEADER + _users(2),
    "truncated-last": HEADER + _users(2) + '{"type":"message","id":"cut"',
    "secrets": HEADER + '{"type":"message","id":"k","parentId":null,"message":{"role":"user",'
    '"content":"key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789 and postgres://u:pw@h/db"}}\n',
    "unknown-and-extras": HEADER
    + '{"type":"hologram","id":"h","parentId":null,"beam":[1,{"x":2.5}]}\n'
    + '{"type":"message","id":"m","parentId":"h","message":{"role":"user","content":"hi","mood":"ok"},"extra":true}\n',
    "dangling-and-duplicate": HEADER + _users(2) + USER % (0, '"nowhere"', 5, 9),
    "lone-surrogate-and-big-int": HEADER
    + '{"type":"message","id":"z","parentId":null,"message":{"role":"user","content":"\\udc00",'
    '"timestamp":' + "9" * 400 + "}}\n",
}


def _v3_files() -> list[Path]:
    return sorted((REPO / "sample_sessions").glob("*.jsonl")) + sorted(FIXTURES.glob("*.jsonl"))


def _both(src: Path, tmp_path: Path, redact: bool) -> tuple[bytes | None, bytes]:
    streamed = tmp_path / "streamed.jsonl"
    loaded = tmp_path / "loaded.jsonl"
    r = stream_session_jsonl(src, streamed, redact=redact)
    write_session_jsonl(load_any(src), loaded, redact=redact)
    return (streamed.read_bytes() if r is not None else None), loaded.read_bytes()


@pytest.mark.parametrize("redact", [True, False], ids=["redacted", "kept"])
@pytest.mark.parametrize("name", sorted(ODD))
def test_streamed_export_writes_the_loaded_sessions_bytes(name: str, redact: bool, tmp_path: Path) -> None:
    src = tmp_path / "s.jsonl"
    src.write_text(ODD[name], encoding="utf-8", errors="surrogatepass")
    streamed, loaded = _both(src, tmp_path, redact)
    assert streamed is not None
    assert streamed == loaded


@pytest.mark.parametrize("path", _v3_files(), ids=lambda p: p.name)
def test_streamed_export_matches_on_samples_and_fixtures(path: Path, tmp_path: Path) -> None:
    streamed, loaded = _both(path, tmp_path, True)
    if streamed is None:  # not a v3 pi file: the caller loads it
        assert (
            load_any(path).format != "pi" or load_session(path).migrated or load_session(path).header is None
        )
    else:
        assert streamed == loaded


@pytest.mark.parametrize(
    "text",
    [
        '{"type":"session","version":2,"id":"s"}\n' + _users(1),  # migrated as a whole
        '{"type":"session","id":"s"}\n' + _users(1),  # no version: v1
        _users(2),  # no header: not a pi session
        "",
        "not json\n",
    ],
    ids=["v2", "v1", "no-header", "empty", "garbage"],
)
def test_not_a_v3_file_is_not_streamed_and_nothing_is_written(text: str, tmp_path: Path) -> None:
    src = tmp_path / "s.jsonl"
    src.write_text(text)
    assert stream_session(src) is None
    assert stream_session_jsonl(src, tmp_path / "o.jsonl") is None
    assert not (tmp_path / "o.jsonl").exists()


def test_stream_validates_as_the_loader_and_holds_no_entry(tmp_path: Path) -> None:
    src = tmp_path / "s.jsonl"
    src.write_text(ODD["bad-lines"])
    stream = stream_session(src)
    assert stream is not None and stream.header.id == "s"
    loaded = load_session(src).entries
    seen: list[weakref.ref[object]] = []
    for k, e in enumerate(stream.entries):
        assert e == loaded[k]
        seen.append(weakref.ref(e))
        del e
    gc.collect()
    assert [type(x) for x in loaded] == [MessageEntry, MessageEntry, OpaqueEntry]
    assert len(seen) == 3 and all(r() is None for r in seen)  # each entry dropped once used


def test_stream_closes_the_file_when_closed_early(tmp_path: Path) -> None:
    src = tmp_path / "s.jsonl"
    src.write_text(HEADER + _users(5))
    stream = stream_session(src)
    assert stream is not None
    next(stream.entries)
    frame = stream.entries.gi_frame
    assert frame is not None
    stream.entries.close()
    assert stream.entries.gi_frame is None  # finished: its finally closed the file


def test_stream_keeps_the_loaders_limits(tmp_path: Path) -> None:
    src = tmp_path / "s.jsonl"
    src.write_text(HEADER + _users(3))
    with pytest.raises(SessionLoadError, match="over the limit"):
        stream_session(src, max_bytes=10)
    stream = stream_session(src, max_line_bytes=120)  # the entry lines are over it: skipped, as the load does
    assert stream is not None and list(stream.entries) == []
    with pytest.raises(SessionLoadError, match="cannot read"):
        stream_session(tmp_path / "missing.jsonl")


def test_streamed_export_refuses_the_source_and_leaves_nothing(tmp_path: Path) -> None:
    src = tmp_path / "s.jsonl"
    src.write_text(HEADER + _users(2))
    link = tmp_path / "hard.jsonl"
    link.hardlink_to(src)
    before = src.read_bytes()
    with pytest.raises(ExportError, match="refusing"):
        stream_session_jsonl(src, link)
    assert src.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hard.jsonl", "s.jsonl"]


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
    return code, out.getvalue(), err.getvalue()


def test_cli_export_session_streams_and_says_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "s.jsonl"
    src.write_text(ODD["secrets"] + USER % (1, '"k"', 1, 1))
    out = tmp_path / "o.jsonl"
    import inspector.cli.base as base

    def no_load(path: str) -> None:
        raise AssertionError("a plain export of a v3 file does not load the session")

    monkeypatch.setattr(base, "load_or_exit", no_load)
    monkeypatch.setattr("inspector.cli.export.load_or_exit", no_load)
    code, stdout, _ = _cli("export", "session", str(src), "-o", str(out))
    assert code == 0 and stdout == f"wrote {out}\n"
    assert "sk-ant" not in out.read_text() and "REDACTED" in out.read_text()
    code, stdout, _ = _cli("export", "session", str(src), "-o", str(out), "--keep-secrets", "--force")
    assert code == 0 and stdout.endswith("(secrets kept)\n")  # --force: out holds a session now
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == ["s", "k", "u1"]


def test_cli_export_session_of_a_missing_file_fails_as_before(tmp_path: Path) -> None:
    code, _, err = _cli("export", "session", str(tmp_path / "nope.jsonl"), "-o", str(tmp_path / "o.jsonl"))
    assert code == 1 and "cannot read" in err


# -- info from a skeleton and a second read --------------------------------------------------------

A = '{"type":"message","id":"%s","parentId":%s,"timestamp":"2026-01-01T00:00:%02d.000Z","message":%s}\n'


def _msg(eid: str, parent: str | None, sec: int, message: str) -> str:
    return A % (eid, "null" if parent is None else f'"{parent}"', sec, message)


def _answer(usage: str = '{"input":100,"output":5,"totalTokens":105}', stop: str = "stop") -> str:
    return (
        '{"role":"assistant","content":[{"type":"text","text":"done it"}],"provider":"p","model":"m1",'
        f'"usage":{usage},"stopReason":"{stop}"}}'
    )


INFO_FILES = {
    **ODD,
    # a compaction keeping from an earlier entry, settings changes, every message kind
    "compacted": HEADER
    + _msg("a", None, 1, '{"role":"user","content":"first question"}')
    + _msg("b", "a", 2, _answer())
    + '{"type":"thinking_level_change","id":"t","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z","thinkingLevel":"high"}\n'
    + _msg("c", "t", 4, '{"role":"user","content":"second question, longer text here"}')
    + _msg("d", "c", 5, _answer('{"input":300,"output":9,"cacheRead":50,"totalTokens":0}'))
    + '{"type":"compaction","id":"k","parentId":"d","timestamp":"2026-01-01T00:00:06.000Z",'
    '"summary":"they asked two questions","firstKeptEntryId":"c","tokensBefore":400}\n'
    + '{"type":"model_change","id":"mc","parentId":"k","timestamp":"2026-01-01T00:00:07.000Z","provider":"q","modelId":"m2"}\n'
    + _msg("e", "mc", 8, '{"role":"bashExecution","command":"ls","output":"a b","exitCode":0}')
    + '{"type":"custom_message","id":"cm","parentId":"e","timestamp":"2026-01-01T00:00:09.000Z",'
    '"customType":"note","content":"a note","display":true}\n'
    + '{"type":"branch_summary","id":"bs","parentId":"cm","timestamp":"2026-01-01T00:00:10.000Z","fromId":"x","summary":"other"}\n'
    + _msg("f", "bs", 11, _answer(stop="aborted"))
    + '{"type":"label","id":"l","parentId":"f","timestamp":"2026-01-01T00:00:12.000Z","targetId":"c","label":"here"}\n'
    + '{"type":"session_info","id":"si","parentId":"l","timestamp":"2026-01-01T00:00:13.000Z","name":" named "}\n',
    # the path is not in file order: children written before their parents; a fork
    "out-of-order": HEADER
    + _msg("z", "y", 5, _answer('{"input":7,"output":1,"totalTokens":8}'))
    + _msg("y", "x", 4, '{"role":"user","content":"later words"}')
    + _msg("x", "w", 3, _answer('{"input":70,"output":1,"totalTokens":71}'))
    + _msg("w", None, 1, '{"role":"user","content":"hello there"}')
    + _msg("v", "w", 2, '{"role":"user","content":"a fork"}')
    + _msg(
        "u",
        "z",
        6,
        '{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"x = 1"}]}',
    )
    + _msg("leaf", "u", 7, '{"role":"user","content":"the end of the path"}'),
    "no-usage": HEADER + _users(4),
    "out-of-range-numbers": HEADER
    + _msg("a", None, 1, '{"role":"user","content":"q"}')
    + _msg("b", "a", 2, _answer('{"input":1e400,"output":1,"totalTokens":' + "9" * 30 + "}"))
    + '{"type":"compaction","id":"k","parentId":"b","summary":"s","firstKeptEntryId":"a","tokensBefore":1e300}\n',
    "foreign-line": HEADER
    + _users(2)
    + '{"type":"user","uuid":"1","sessionId":"s","message":{"role":"user","content":"hi"}}\n',
}


def _write(tmp_path: Path, name: str) -> Path:
    src = tmp_path / f"{name}.jsonl"
    src.write_text(INFO_FILES[name], encoding="utf-8", errors="surrogatepass")
    return src


@pytest.mark.parametrize("name", sorted(INFO_FILES))
def test_skeleton_has_the_loaded_sessions_tree_kinds_and_issues(name: str, tmp_path: Path) -> None:
    src = _write(tmp_path, name)
    s, k = load_session(src), load_skeleton(src)
    assert k is not None
    assert k.issues == s.issues
    assert (k.parents, k.by_id, list(k.lines), k.header) == (s.parents, s.by_id, list(s.lines), s.header)
    assert (k.counts_by_type(), k.labels, k.name) == (s.counts_by_type(), s.labels, s.name)
    assert (k.roots, k.leaves, k.fork_points, list(k.children)) == (
        s.roots,
        s.leaves,
        s.fork_points,
        list(s.children),
    )
    for a, b in zip(k.entries, s.entries, strict=True):
        assert (type(a), a.id, a.parentId, a.timestamp) == (type(b), b.id, b.parentId, b.timestamp)
        if not isinstance(a, MessageEntry):
            assert a == b


def _leaves(s: Any) -> list[str]:
    return ["leaf"] + [f"@{i}" for i in range(len(s.entries))]


@pytest.mark.parametrize("name", sorted(INFO_FILES))
def test_streamed_info_says_what_the_loaded_info_says(name: str, tmp_path: Path) -> None:
    src = _write(tmp_path, name)
    s, k = load_session(src), load_skeleton(src)
    assert k is not None
    for leaf in _leaves(s):
        assert streamed_session_info(k, leaf).model_dump() == session_info(s, leaf).model_dump(), leaf


def test_streamed_info_figures_are_not_trivial(tmp_path: Path) -> None:
    """The differential tests above compare real figures: the compaction, settings, message kinds
    and the usage rule are all in play."""
    k = load_skeleton(_write(tmp_path, "compacted"))
    assert k is not None
    info = streamed_session_info(k)
    assert info.compactions[0].onCurrentPath and info.compactions[0].firstKeptEntryIndex == 3
    assert (info.thinkingLevel, info.model) == ("high", {"provider": "p", "modelId": "m1"})  # the last answer
    # summary, c, d, then the bash execution, custom message, branch summary and the aborted answer
    assert info.contextMessages == 7
    pi = get_counter("pi")
    after_d = [e.message if isinstance(e, MessageEntry) else None for e in load_session(k.source).entries[7:]]
    assert info.usageContextTokens is not None and info.usageContextTokens > 359  # d's usage + what follows
    assert after_d[0] is not None and pi.count(after_d[0]) > 0
    k2 = load_skeleton(_write(tmp_path, "out-of-order"))
    assert k2 is not None
    i2 = streamed_session_info(k2)
    assert (i2.pathLength, i2.forkPoints) == (6, [3])
    assert (
        i2.usageContextTokens is not None and i2.usageContextTokens > 8
    )  # z's usage, the latest on the path


@pytest.mark.parametrize("path", _v3_files(), ids=lambda p: p.name)
def test_streamed_info_matches_on_samples_and_fixtures(path: Path) -> None:
    k = load_skeleton(path)
    if k is None:
        return  # not a pi v3 file: summarised from its load
    s = load_session(path)
    for leaf in ["leaf", *(f"@{i}" for i in range(0, len(s.entries), max(1, len(s.entries) // 5)))]:
        assert streamed_session_info(k, leaf).model_dump() == session_info(s, leaf).model_dump(), leaf


def test_skeleton_of_a_file_that_is_not_v3_is_none(tmp_path: Path) -> None:
    for text in ('{"type":"session","version":2,"id":"s"}\n' + _users(1), _users(2), "", "x\n"):
        src = tmp_path / "s.jsonl"
        src.write_text(text)
        assert load_skeleton(src) is None


def test_cli_info_of_a_large_file_streams_and_prints_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _write(tmp_path, "compacted")
    loaded = _cli("info", str(src), "--json")
    text = _cli("info", str(src), "--leaf", "c")
    import inspector.cli.base as cli_base
    import inspector.cli.info as info_cli

    monkeypatch.setattr(cli_base, "STREAM_BYTES", 0)

    def no_load(path: str) -> None:
        raise AssertionError("a large v3 file is summarised without loading it")

    monkeypatch.setattr(info_cli, "load_or_exit", no_load)
    assert _cli("info", str(src), "--json") == loaded
    assert _cli("info", str(src), "--leaf", "c") == text
    code, _, err = _cli("info", str(src), "--leaf", "nope")
    assert code == 2 and "nope" in err
