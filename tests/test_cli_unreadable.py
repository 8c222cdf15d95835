"""A file that holds no session makes a command fail with one clear line (status 1) instead of
printing an empty result; a file read in part is used, with a line on stderr naming the lines
skipped; a compressed session is named as such (the commands and the app's upload)."""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import lzma
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.importers import compressed_kind, parse_any

from .support.paths import SAMPLES

QUIET = ["replay", "compact", "check", "retention", "summarize", "sweep"]
"""Commands that would have printed an empty result (sweep with a grid)."""


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as e:  # fail() exits
            code = int(e.code or 0)
    return code, out.getvalue(), err.getvalue()


def _args(command: str, path: Path) -> list[str]:
    extra = ["--grid", "keep_recent_tokens=10000,20000"] if command == "sweep" else []
    return [command, str(path), *extra]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"", "the file is empty: not a pi session"),
        (b"hello world\n", "the format is not recognised: tried pi session"),
        (b'{"name": "x", "version": "1.0"}\n', "the format is not recognised: tried pi session"),
    ],
    ids=["empty", "text", "other-json"],
)
@pytest.mark.parametrize("command", QUIET)
def test_a_file_with_no_session_fails_with_why(
    command: str, content: bytes, says: str, tmp_path: Path
) -> None:
    f = tmp_path / "s.jsonl"
    f.write_bytes(content)
    code, out, err = _run(*_args(command, f))
    assert code == 1 and out == ""
    assert f"inspector: {f}: nothing in it could be read as a session: {says}" in err
    assert f"`inspector info {f}` lists the load issues" in err


@pytest.mark.parametrize("command", ["info", "doctor", "oracle-json"])
def test_info_doctor_and_the_oracle_shape_still_read_it(command: str, tmp_path: Path) -> None:
    """info and doctor list the load issues themselves; oracle-json prints what pi's harness does
    with a file pi reads as no entries."""
    f = tmp_path / "s.jsonl"
    f.write_bytes(b"hello world\n")
    code, out, err = _run(command, str(f))
    assert code == 0 and out and err == ""
    if command != "oracle-json":
        assert "not a pi session: no line is a JSON object" in out


def test_a_damaged_file_is_used_and_the_lines_skipped_are_named(tmp_path: Path) -> None:
    broken = SAMPLES / "broken.jsonl"
    code, out, err = _run("replay", str(broken), "--cache", "off")
    assert code == 0 and "model calls" in out
    assert err == (
        f"inspector: {broken}: 2 load error(s) (lines 5, 27); the rest of the file is used "
        f"(`inspector info {broken}` lists the load issues)\n"
    )
    assert _run("info", str(broken))[2] == ""  # info lists them on stdout
    # a pi file whose header line is lost: its entries are kept, as the app keeps them
    headless = tmp_path / "headless.jsonl"
    headless.write_text("".join((SAMPLES / "small-tutorial.jsonl").read_text().splitlines(True)[1:]))
    code, out, err = _run("replay", str(headless), "--cache", "off")
    assert code == 0 and "13 model calls" in out and "the rest of the file is used" in err
    code, out, err = _run("replay", str(SAMPLES / "coding-session.jsonl"), "--cache", "off")
    assert code == 0 and err == ""


@pytest.mark.parametrize(
    ("pack", "kind", "command"),
    [
        (gzip.compress, "gzip", "gunzip -k"),
        (bz2.compress, "bzip2", "bunzip2 -k"),
        (lzma.compress, "xz", "unxz -k"),
    ],
)
def test_a_compressed_session_is_named_as_such(pack, kind: str, command: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    data = pack((SAMPLES / "coding-session.jsonl").read_bytes())
    f = tmp_path / "s.jsonl.x"
    f.write_bytes(data)
    for argv in (["info", str(f)], ["replay", str(f)], ["doctor", str(f)]):
        code, out, err = _run(*argv)
        assert (code, out) == (1, "")
        assert (
            err
            == f"inspector: {f} is {kind}-compressed, not a session file: decompress it first ({command} {f})\n"
        )
    s = parse_any(data, source="upload/s.jsonl.x")  # the app's upload: one issue, not a line each
    assert s.entries == () and [(i.kind, i.severity) for i in s.issues] == [("compressed-file", "error")]
    assert f"s.jsonl.x is {kind}-compressed" in s.issues[0].message


def test_compressed_magic_needs_its_whole_header() -> None:
    assert compressed_kind(b"\x28\xb5\x2f\xfd\x00") == ("zstd", "zstd -d")
    assert compressed_kind(b"PK\x03\x04rest") == ("zip", "unzip")
    assert compressed_kind(bz2.compress(b"x")) == ("bzip2", "bunzip2 -k")
    assert compressed_kind(b"BZhello there") is None  # a text that starts like bzip2's magic
    assert compressed_kind(b'{"type":"session"}') is None


@pytest.mark.parametrize(
    ("encode", "enc"),
    [
        (lambda t: b"\xff\xfe" + t.encode("utf-16-le"), "UTF-16"),
        (lambda t: t.encode("utf-16-le"), "UTF-16LE"),  # PowerShell 5's `>` writes it with a mark
        (lambda t: t.encode("utf-16-be"), "UTF-16BE"),
    ],
    ids=["bom", "le", "be"],
)
def test_a_utf16_copy_of_a_session_says_how_to_convert_it(encode, enc: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    data = encode((SAMPLES / "small-tutorial.jsonl").read_text(encoding="utf-8"))
    f = tmp_path / "s.jsonl"
    f.write_bytes(data)
    code, out, err = _run("replay", str(f))
    assert (code, out) == (1, "")
    assert (
        err
        == f"inspector: {f} is UTF-16 text, and sessions are UTF-8: convert it first (iconv -f {enc} -t UTF-8 {f} > utf8.jsonl)\n"
    )
    s = parse_any(data, source="s.jsonl")
    assert [(i.kind, i.severity) for i in s.issues] == [("utf16-file", "error")]
    # converted as it says, it is the session
    g = tmp_path / "utf8.jsonl"
    g.write_bytes(
        data.decode({"UTF-16": "utf-16", "UTF-16LE": "utf-16-le", "UTF-16BE": "utf-16-be"}[enc]).encode()
    )
    assert _run("replay", str(g), "--cache", "off")[0] == 0


def test_the_corpus_fails_a_file_with_no_session_as_the_commands_do(tmp_path: Path) -> None:
    """Another kind of JSON had been a corpus row of a 'pi' session with no calls; it is a failed
    row with the reason, as an empty file was; a damaged session is still a row."""
    from inspector.corpus.overview import overview_task

    other = tmp_path / "package.json"
    other.write_text('{"name": "x", "version": "1.0"}\n')
    row = overview_task(str(other), None)
    assert row["error"].startswith("ValueError: not a session: the format is not recognised")
    assert overview_task(str(SAMPLES / "broken.jsonl"), None)["error"] is None


@pytest.mark.parametrize("argv", [["replay"], ["info"], ["doctor"], ["corpus"], ["sweep", "--agents"]])
def test_an_empty_session_path_is_a_bad_argument(argv: list[str]) -> None:
    """``"$SESSION"`` unset: it had read as the current folder ("cannot read ."; a corpus searched
    it whole)."""
    code, out, err = _run(argv[0], "", *argv[1:])
    assert (code, out) == (2, "")
    assert "a session file's path, not an empty value" in err


def test_the_command_it_suggests_quotes_the_name(tmp_path: Path) -> None:
    f = tmp_path / "my session; rm -rf x.jsonl"
    f.write_bytes(gzip.compress(b"{}"))
    code, _, err = _run("replay", str(f))
    assert code == 1 and f"(gunzip -k '{f}')" in err
