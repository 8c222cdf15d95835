"""Hostile and broken input: no command ever raises, limits give clear messages."""

from __future__ import annotations

import contextlib
import io
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector import SessionLoadError, load_session
from inspector.cli import main

from .support.builder import SessionBuilder

COMMANDS = [
    ["info"],
    ["info", "--json"],
    ["oracle-json"],
    ["compact"],
    ["doctor"],
    ["replay"],
    ["replay", "--compaction", "pi", "--window", "2000"],
    ["replay", "--compaction", "codex", "--window", "2000", "--json"],
    ["sweep", "--compaction", "opencode", "--window", "3000", "--grid", "keep_recent_tokens=100,1000"],
]


def run_cli(args: list[str]) -> int:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            return main(args)
        except SystemExit as e:  # argparse / load errors exit with a message, never a traceback
            return int(e.code or 0) if isinstance(e.code, int) else 1


def base_lines() -> list[str]:
    b = SessionBuilder()
    b.user("fix <script>alert(1)</script> in a.py")
    b.assistant("", tools=[("read", {"path": "a.py", "limit": 1.5})], usage=1200)
    b.tool_result("\x1b[31mred\x1b[0m " + "x" * 3000)
    b.add("compaction", summary="s", firstKeptEntryId="e0000002", tokensBefore=10)
    b.add("branch_summary", fromId="e0000001", summary="b", parent="e0000001")
    b.assistant("ok", usage=900)
    return [json.dumps(x) for x in b.lines]


def mutate(lines: list[str], rng: random.Random) -> str:
    out = list(lines)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(6)
        i = rng.randrange(len(out))
        if op == 0:
            out[i] = out[i][: rng.randrange(len(out[i]) + 1)]  # truncate
        elif op == 1:
            out.insert(i, out[rng.randrange(len(out))])  # duplicate
        elif op == 2:
            del out[i]
        elif op == 3:
            try:
                obj = json.loads(out[i])
            except ValueError:
                obj = None
            if isinstance(obj, dict) and obj:
                k = rng.choice(list(obj))
                obj[k] = rng.choice([None, 0, -1, 1e308, "", "x", [], {}, True, "e0000001"])
                out[i] = json.dumps(obj)
        elif op == 4:
            rng.shuffle(out)
        else:
            out[i] = out[i].replace('"', "", 1)
    return "\n".join(out) + rng.choice(["", "\n", "\r\n"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 2**32 - 1))
def test_every_command_survives_mutated_sessions(tmp_path, seed: int) -> None:
    rng = random.Random(seed)
    p = tmp_path / f"m{seed}.jsonl"
    p.write_text(mutate(base_lines(), rng), encoding="utf-8")
    for cmd in COMMANDS:
        code = run_cli([cmd[0], str(p), *cmd[1:]])
        assert code in (0, 1, 2), (cmd, code)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300))
def test_every_command_survives_arbitrary_bytes(tmp_path, data: bytes) -> None:
    p = tmp_path / "junk.jsonl"
    p.write_bytes(data)
    for cmd in COMMANDS:
        assert run_cli([cmd[0], str(p), *cmd[1:]]) in (0, 1, 2), cmd


def test_file_size_limit_is_a_clear_error(tmp_path, monkeypatch) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join(base_lines()) + "\n")
    with pytest.raises(SessionLoadError, match="over the limit of 100 bytes"):
        load_session(p, max_bytes=100)
    monkeypatch.setenv("INSPECTOR_MAX_BYTES", "100")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as e:
        main(["info", str(p)])
    assert e.value.code == 1 and "INSPECTOR_MAX_BYTES" in err.getvalue()


def test_line_length_limit_skips_the_line_with_a_located_issue(tmp_path) -> None:
    lines = base_lines()
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join(lines) + "\n")
    s = load_session(p, max_line_bytes=2000)
    (issue,) = [i for i in s.issues if i.kind == "line-too-long"]
    assert issue.line == 4 and "over the limit of 2,000" in issue.message
    assert len(s.entries) == len(lines) - 2


def test_directory_and_missing_paths_are_clear_errors(tmp_path) -> None:
    for p, msg in ((tmp_path, "not a regular file"), (tmp_path / "nope", "No such file")):
        with pytest.raises(SessionLoadError, match=msg):
            load_session(p)


def test_app_paths_outside_the_roots_are_refused_even_through_symlinks(tmp_path) -> None:
    from inspector.ui.sources import PathRefused, check_path

    root = tmp_path / "root"
    root.mkdir()
    (root / "ok.jsonl").write_text("{}\n")
    secret = tmp_path / "secret.jsonl"
    secret.write_text("{}\n")
    (root / "link.jsonl").symlink_to(secret)
    assert check_path(str(root / "ok.jsonl"), [root.resolve()]) == (root / "ok.jsonl").resolve()
    for bad in (str(root / "link.jsonl"), str(root / ".." / "secret.jsonl"), str(secret)):
        with pytest.raises(PathRefused, match="outside the allowed folders"):
            check_path(bad, [root.resolve()])
