"""Out-of-spec values pi still accepts: JSON nested thousands of levels deep, numbers JSON can
write but not hold (``1e400``, ``-0.0``), an assistant message without ``stopReason``.

Every command must work on them (never a RecursionError), and ``oracle-json`` must print what
pi's own code prints (found by the differential test against pi)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from inspector import load_session
from inspector.cli import main
from inspector.deep import deep_call
from inspector.jsjson import js_stringify, js_stringify_indent

from .support.pi_oracle import PiOracle


def _session(depth: int, *, odd_numbers: bool = False) -> str:
    deep = "[" * depth + "]" * depth
    usage = (
        '{"input":1e400,"output":-0.0,"cacheRead":0,"cacheWrite":0,"totalTokens":0}'
        if odd_numbers
        else '{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15}'
    )
    lines = [
        '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}',
        '{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
        '"message":{"role":"user","content":"go","timestamp":1}}',
        '{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z",'
        '"message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{"x":'
        + deep
        + '}}],"api":"x","provider":"p","model":"m","usage":'
        + usage
        + ',"timestamp":2}}',
        '{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:03.000Z",'
        '"message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"ok"}],'
        '"isError":false,"timestamp":3}}',
    ]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("depth", [330, 2000, 20000])
def test_deeply_nested_tool_arguments_load_and_every_command_runs(
    depth: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "deep.jsonl"
    f.write_text(_session(depth))
    s = load_session(f)
    assert not s.issues and len(s.entries) == 3  # orjson stops at 1024 levels; the line is kept anyway
    call = s.entries[1].message.content[0]
    assert js_stringify(call.arguments) == '{"x":' + "[" * depth + "]" * depth + "}"
    for argv in (
        ["info"],
        ["oracle-json"],
        ["compact"],
        ["summarize"],
        ["doctor"],
        ["replay", "--compaction", "pi", "--window", "3000", "--reserve", "1000"],
        *(
            ["prune", "--strategy", name]
            for name in ("opencode", "pi-context-pruning", "turn-aware", "dcp", "context-editing")
        ),
    ):
        assert main([*argv, str(f)]) == 0, argv
    capsys.readouterr()
    out = tmp_path / "copy.jsonl"
    assert main(["export", "session", str(f), "-o", str(out)]) == 0
    assert main(["export", "session", str(f), "--format", "html", "-o", str(tmp_path / "r.html")]) == 0
    for a, b in zip(out.read_text().splitlines(), f.read_text().splitlines(), strict=True):
        assert deep_call(lambda a=a, b=b: json.loads(a) == json.loads(b))


def test_nesting_beyond_the_limit_is_a_located_error_not_a_crash(tmp_path: Path) -> None:
    f = tmp_path / "deeper.jsonl"
    f.write_text(_session(500_000))
    s = load_session(f)
    bad = [i for i in s.issues if i.kind == "malformed-json"]
    assert [i.line for i in bad] == [3] and "levels deep" in bad[0].message
    assert [e.id for e in s.entries] == ["a1", "a3"]  # every other line kept


def test_oracle_json_prints_numbers_as_javascript_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "odd.jsonl"
    f.write_text(_session(1, odd_numbers=True))
    assert main(["oracle-json", str(f)]) == 0
    text = capsys.readouterr().out
    numbers: list[str] = []  # every number as written (the text also holds the file's path)

    def seen(convert):  # type: ignore[no-untyped-def]
        return lambda token: numbers.append(token) or convert(token)

    ours = json.loads(text, parse_int=seen(int), parse_float=seen(float), parse_constant=seen(float))
    assert numbers and not [
        t for t in numbers if t in ("Infinity", "-Infinity", "NaN") or re.fullmatch(r"-0(\.0*)?([eE].*)?", t)
    ]
    answer = next(e for e in ours["entries"] if e.get("role") == "assistant")
    assert answer["usageContextTokens"] is None  # input 1e400 is Infinity in JS; JSON.stringify writes null
    assert "stopReason" not in answer  # absent in the file: pi leaves the key out


def test_pretty_printer_matches_json_stringify_rules() -> None:
    v = {"b": [1, 2.5, {}], "10": None, "2": -0.0, "a": [], "big": 1e21, "inf": float("inf"), "s": "é\ud800"}
    assert js_stringify_indent(v, 1) == (
        '{\n "2": 0,\n "10": null,\n "b": [\n  1,\n  2.5,\n  {}\n ],\n "a": [],\n "big": 1e+21,\n'
        ' "inf": null,\n "s": "é\\ud800"\n}'
    )


@pytest.mark.oracle
@pytest.mark.parametrize("depth", [1, 2000])
def test_odd_values_agree_with_pi(
    depth: int, tmp_path: Path, pi_oracle: PiOracle, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "odd.jsonl"
    f.write_text(_session(depth, odd_numbers=True))
    assert main(["oracle-json", str(f)]) == 0
    ours = deep_call(json.loads, capsys.readouterr().out)
    pi = pi_oracle.run(str(f)) if depth < 1000 else deep_call(pi_oracle.run, str(f))
    for key in (
        "entries",
        "path",
        "context",
        "contextTokens",
        "compaction",
        "shouldCompact",
        "serializeWholeContext",
    ):
        assert ours[key] == pi[key], key
