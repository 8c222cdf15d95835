"""The streaming session export (issue 16, flood memory): ``export session`` of a pi v3 file reads
one entry at a time (:func:`inspector.session.loader.stream_session`) and writes exactly the bytes
the export of the loaded session writes; other files go through the load as before."""

from __future__ import annotations

import contextlib
import gc
import io
import json
import weakref
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.export import ExportError, stream_session_jsonl, write_session_jsonl
from inspector.importers import load_any
from inspector.session.loader import SessionLoadError, load_session, stream_session
from inspector.session.models import MessageEntry, OpaqueEntry

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
    code, stdout, _ = _cli("export", "session", str(src), "-o", str(out), "--keep-secrets")
    assert code == 0 and stdout.endswith("(secrets kept)\n")
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == ["s", "k", "u1"]


def test_cli_export_session_of_a_missing_file_fails_as_before(tmp_path: Path) -> None:
    code, _, err = _cli("export", "session", str(tmp_path / "nope.jsonl"), "-o", str(tmp_path / "o.jsonl"))
    assert code == 1 and "cannot read" in err
