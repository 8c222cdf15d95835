"""Hostile and broken input: no command ever raises, limits give clear messages."""

from __future__ import annotations

import contextlib
import io
import json
import random
import re
from pathlib import Path

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


# -- edge values in every field (numbers JSON can write but not hold, lone surrogates, odd dates) --

EDGE_VALUES = (
    "1e400",
    "-1e400",
    "1e308",
    "-1e308",
    "9" * 400,
    "-" + "9" * 400,
    "18446744073709551616",
    "-0.0",
    "1e-400",
    "0",
    "-1",
    "2.5",
    '"\\udc00"',
    '"a\\ud800b"',
    '"\\ud83d"',
    '"9999-12-31T23:59:59.999-14:00"',
    '"+275760-09-13T00:00:00.000Z"',
    '"\\u001b]0;title\\u0007\\u001b[2J"',
    '"\\u202eevil"',
    '""',
    "null",
    "true",
    "[]",
    "{}",
    '"https://evil.example/x"',
)


def rich_base_lines() -> list[str]:
    """A session with every entry type and message role, and the fields they carry."""
    b = SessionBuilder()
    b.add("session_info", name="my session")
    b.add("model_change", provider="anthropic", modelId="claude-sonnet-4-5")
    b.add("thinking_level_change", thinkingLevel="high")
    b.user("fix the parser in src/p.ts")
    b.assistant(
        "",
        tools=[("read", {"path": "src/p.ts", "offset": 1, "limit": 200})],
        usage=1200,
        thinkingSignature="x",
    )
    b.tool_result("export function parse() {}\n" * 40)
    b.assistant("", tools=[("bash", {"command": "npm test", "timeout": 60})], usage=2400)
    b.tool_result("FAIL src/p.test.ts\n" + "e" * 900, tool="bash", is_error=True)
    b.msg("bashExecution", command="ls", output="a.py\nb.py", exitCode=0)
    b.add("custom_message", customType="note", content=[{"type": "text", "text": "remember"}], display=True)
    b.add("label", targetId="e0000004", label="start")
    b.assistant("done", usage=3000, cost={"input": 0.01, "output": 0.02, "total": 0.03})
    b.add(
        "compaction",
        summary="## Goal\nfix",
        firstKeptEntryId="e0000007",
        tokensBefore=3000,
        details={"readFiles": ["src/p.ts"], "modifiedFiles": []},
    )
    b.user(
        [
            {"type": "text", "text": "and the image"},
            {"type": "image", "data": "aGk=", "mimeType": "image/png"},
        ]
    )
    b.assistant("ok", usage=900, stop="error", errorMessage="overloaded")
    b.add("branch_summary", fromId="e0000005", summary="tried another way", parent="e0000005")
    b.add("custom", customType="ext", data={"k": [1, 2.5, "v"]})
    # the agents' own pruning as their importers record it (read by the "recorded" strategy, the
    # CLI's and the app's default): a cleared output, a microcompacted one, a DCP compress
    b.assistant("", tools=[("read", {"path": "src/q.ts"})], usage=1000)
    b.tool_result("q" * 300, details={"opencode": {"compacted": 1767225618500}})
    b.assistant("", tools=[("grep", {"pattern": "x"})], usage=1100)
    b.tool_result("x" * 300, tool="grep", details={"claudeCode": {"microcompacted": 1767225620500}})
    b.assistant("", tools=[("compress", {"topic": "t"})], usage=1200)
    blocks = [
        {"block": 1, "first": 2, "last": 5, "summary": "one"},
        {"block": 2, "first": 1, "last": 9, "consumes": [1], "summary": "two"},
    ]
    b.tool_result("done", tool="compress", details={"dcp": {"blocks": blocks}})
    b.assistant("end", usage=900)
    return [json.dumps(x, ensure_ascii=False) for x in b.lines]


def _value_paths(v: object, path: tuple = ()) -> list[tuple]:  # type: ignore[type-arg]
    out = [path] if path else []
    if isinstance(v, dict):
        for k, x in v.items():
            out += _value_paths(x, (*path, k))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            out += _value_paths(x, (*path, i))
    return out


def edge_mutate(lines: list[str], rng: random.Random) -> str:
    """One to three values, anywhere in the file (any field, at any depth, a whole object too),
    replaced by an edge value written as JSON text."""
    out = list(lines)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(out))
        try:
            obj = json.loads(out[i])
        except ValueError:
            continue
        paths = _value_paths(obj)
        if not paths:
            continue
        *head, last = rng.choice(paths)
        node = obj
        for k in head:
            node = node[k]
        node[last] = "@@EDGE@@"
        out[i] = json.dumps(obj, ensure_ascii=False).replace('"@@EDGE@@"', rng.choice(EDGE_VALUES))
    return "\n".join(out) + "\n"


#: Every command, with ``{s}`` for the session file and ``{o}`` for an output path prefix.
FUZZ_COMMANDS: list[list[str]] = [
    ["info", "{s}"],
    ["info", "{s}", "--json"],
    ["info", "{s}", "--counters", "pi"],
    ["oracle-json", "{s}"],
    ["oracle-json", "{s}", "--dump-migrated", "{o}m.jsonl"],
    ["compact", "{s}"],
    ["compact", "{s}", "--json"],
    ["doctor", "{s}"],
    ["doctor", "{s}", "--json"],
    ["replay", "{s}"],
    ["replay", "{s}", "--counter", "usage", "--json"],
    ["replay", "{s}", "--counter", "tiktoken", "--csv"],
    [
        "replay",
        "{s}",
        "--compaction",
        "pi",
        "--window",
        "2000",
        "--reserve",
        "500",
        "--keep-recent-tokens",
        "300",
    ],
    ["replay", "{s}", "--compaction", "codex", "--window", "2000", "--json"],
    ["replay", "{s}", "--compaction", "opencode", "--strategy", "opencode", "--window", "3000"],
    [
        "replay",
        "{s}",
        "--compaction",
        "claude-code",
        "--strategy",
        "claude-code-microcompact",
        "--window",
        "3000",
    ],
    ["prune", "{s}", "--strategy", "opencode"],
    ["prune", "{s}", "--strategy", "pi-context-pruning", "--json"],
    ["prune", "{s}", "--strategy", "turn-aware"],
    ["prune", "{s}", "--strategy", "dcp"],
    ["prune", "{s}", "--strategy", "context-editing"],
    ["prune", "{s}", "--strategy", "recorded"],
    ["sweep", "{s}", "--compaction", "pi", "--window", "3000", "--grid", "keep_recent_tokens=100,1000"],
    ["sweep", "{s}", "--agents", "--window", "3000"],
    ["summarize", "{s}"],
    ["summarize", "{s}", "--show-prompt", "--style", "claude-code", "--json"],
    ["export", "session", "{s}", "-o", "{o}.jsonl"],
    ["export", "session", "{s}", "--compact", "--keep-recent-tokens", "200", "-o", "{o}c.jsonl"],
    ["export", "replay", "{s}", "-o", "{o}.json"],
    ["export", "replay", "{s}", "-o", "{o}.csv"],
    ["export", "replay", "{s}", "--compaction", "pi", "--window", "2000", "-o", "{o}.html"],
    ["export", "doctor", "{s}", "-o", "{o}d.html"],
    ["export", "doctor", "{s}", "-o", "{o}d.json"],
    ["export", "doctor", "{s}", "-o", "{o}d.csv"],
    ["check", "{s}"],
    ["check", "{s}", "--json"],
    ["retention", "{s}", "--json", "--details"],
    ["retention", "{s}", "--compaction", "pi", "--window", "2000", "--keep-recent-tokens", "300"],
    ["replay", "{s}", "--cache", "model", "--json"],
]
_UNSAFE_OUTPUT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _strict_json(text: str) -> None:
    def refuse(name: str) -> None:
        raise ValueError(f"{name} in JSON output")

    json.loads(text, parse_constant=refuse)


def check_command(argv: list[str]) -> str | None:
    """Run one CLI command in process; what went wrong (an exception, an exit status other than
    0/1/2, invalid JSON from --json, a raw control character reaching the terminal), or None."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 1
                if isinstance(e.code, str):
                    err.write(e.code)
    except Exception as e:  # noqa: BLE001 - that is what we look for
        return f"{type(e).__name__}: {e}"[:300]
    if code not in (0, 1, 2):
        return f"exit status {code}"
    text = out.getvalue()
    if code == 0 and "--json" in argv and argv[0] != "oracle-json":
        try:
            _strict_json(text)
        except ValueError as e:
            return f"invalid JSON: {e}"[:300]
    if _UNSAFE_OUTPUT.search(text + err.getvalue()):
        return "a raw control character reached the terminal"
    return None


def command_argv(cmd: list[str], session: str, out_prefix: str) -> list[str]:
    return [a.replace("{s}", session).replace("{o}", out_prefix) for a in cmd]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 2**32 - 1))
def test_edge_values_in_any_field_never_break_a_command(tmp_path, seed: int) -> None:
    rng = random.Random(seed)
    p = tmp_path / f"e{seed}.jsonl"
    p.write_text(edge_mutate(rich_base_lines(), rng), encoding="utf-8", errors="surrogatepass")
    for cmd in rng.sample(FUZZ_COMMANDS, 6):
        if any(c.endswith(".html") for c in cmd) and rng.random() < 0.7:
            continue  # the report inlines plotly.js (4 MB): a few are enough
        problem = check_command(command_argv(cmd, str(p), str(tmp_path / "out")))
        assert problem is None, (cmd, problem, p.read_text(encoding="utf-8", errors="surrogatepass")[:2000])


APP_PAGES = ("load", "replay", "tree", "summaries", "compare", "doctor")
REPO = Path(__file__).resolve().parents[1]


def check_app(path: str, compaction: str = "pi") -> str | None:
    """Open a session file in the app (AppTest) and draw every page; what failed, or None.
    ``path`` must be under ``$INSPECTOR_ROOTS``."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=300)
    at.query_params["compaction"] = compaction
    at.query_params["window"] = "3000"
    at.run()
    at.text_input(key="local_path").input(path)
    at.button(key="load_path").click().run()
    for name in APP_PAGES:
        at.switch_page(f"inspector/ui/pages/{name}.py").run()
        if at.exception:
            return f"{name} page: {at.exception[0].value}"[:300]
    return None


@pytest.mark.parametrize("seed", [3, 17])
def test_app_pages_survive_edge_values(tmp_path, monkeypatch, seed: int) -> None:
    monkeypatch.setenv("INSPECTOR_ROOTS", str(tmp_path))
    p = tmp_path / "edge.jsonl"
    p.write_text(
        edge_mutate(rich_base_lines(), random.Random(seed)), encoding="utf-8", errors="surrogatepass"
    )
    assert check_app(str(p)) is None


def test_fuzz_finds_of_2026_11_26(tmp_path) -> None:
    """Two inputs the 100k fuzz run of 2026-11-26 broke (seed 2611): a compaction whose
    ``details.modifiedFiles`` is a number (retention, through ``doctor``), and a message timestamp
    that is a 400-digit integer (the turn-aware strategy ordered requests by it)."""
    lines = [json.loads(x) for x in base_lines()]
    comp = next(x for x in lines if x["type"] == "compaction")
    comp["details"] = {"readFiles": ["a.py"], "modifiedFiles": 1.5}
    for x in lines:
        if x["type"] == "message":
            x["message"]["timestamp"] = 10**400
    p = tmp_path / "finds.jsonl"
    p.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    for argv in (
        ["doctor", str(p)],
        ["doctor", str(p), "--json"],
        ["prune", str(p), "--strategy", "turn-aware"],
    ):
        assert check_command(argv) is None, argv


def test_a_compaction_s_file_lists_keep_only_names() -> None:
    from inspector.retention import _file_lists

    class S:
        entries = [type("E", (), {"details": {"readFiles": ["a.py", 3], "modifiedFiles": 1.5}})()]

    assert _file_lists(S(), 0) == (("a.py",), ())


@pytest.mark.parametrize("value", ["9" * 400])
def test_usage_integers_no_float_holds_never_break_the_reconstruction_check(
    tmp_path: Path, value: str
) -> None:
    """The check read an answer's cacheRead with ``float()``: a 400-digit integer (JSON holds one; the
    loader keeps it, as it refuses 1e400 and NaN) stopped it (bench/fuzz.py seed 14 found one)."""
    b = SessionBuilder()
    b.user("go")
    for k in range(3):
        b.assistant(f"step {k}", tools=[("read", {"path": f"f{k}.py"})], usage=2000 + 500 * k)
        b.tool_result("x = 1\n" * 50)
    first = next(x for x in b.lines if x.get("message", {}).get("role") == "assistant")
    first["message"]["content"].insert(0, {"type": "thinking", "thinking": "", "thinkingSignature": "s"})
    text = "\n".join(json.dumps(x) for x in b.lines)
    for field in ("cacheRead", "output"):
        text = text.replace(f'"{field}": 0', f'"{field}": @@', 1)
    p = tmp_path / "usage.jsonl"
    p.write_text(text.replace("@@", value) + "\n", encoding="utf-8")
    for cmd in (
        ["check", "{s}"],
        ["check", "{s}", "--json"],
        ["replay", "{s}", "--cache", "model", "--json"],
    ):
        assert check_command(command_argv(cmd, str(p), str(tmp_path / "o"))) is None


def test_fuzz_find_of_2026_11_27(tmp_path, monkeypatch) -> None:
    """An input the fuzz run of 2026-11-27 broke (seed 21): a label entry whose ``targetId`` is a
    list (the entry is kept opaque) made the Tree page's entry table fail looking it up."""
    from inspector.ui import views

    lines = [json.loads(x) for x in base_lines()]
    last = lines[-1]
    label = {"type": "label", "id": "lbl-x", "parentId": last["id"], "timestamp": last["timestamp"]}
    lines.append({**label, "targetId": [last["id"]], "label": "odd"})
    p = tmp_path / "label.jsonl"
    p.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    s = load_session(p)
    assert s.entries[-1].type == "label" and s.index_of([last["id"]]) is None and s.index_of(7) is None
    rows = views.tree_rows(s, s.path(s.default_leaf))
    assert rows[-1]["tree"].endswith("→ entry None: 'odd'")
    monkeypatch.setenv("INSPECTOR_ROOTS", str(tmp_path))
    assert check_app(str(p)) is None


@pytest.mark.parametrize("at", [-1e308, 1e300, 253402300800000.0])
def test_an_agents_clearing_time_out_of_a_dates_range_is_shown_as_a_number(tmp_path, at: float) -> None:
    """The fuzz run of 2026-11-27 (seed 21): an output OpenCode cleared at ``time.compacted`` =
    -1e308 (finite, but before year 1) stopped ``inspector prune --strategy recorded``, which
    writes the time it was cleared at."""
    from inspector.numbers import utc_of_ms

    b = SessionBuilder()
    b.user("read a.py")
    b.assistant("", tools=[("read", {"path": "a.py"})], usage=1200)
    b.tool_result("x" * 3000, details={"opencode": {"compacted": at}})
    b.assistant("done", usage=1300)
    p = tmp_path / "cleared.jsonl"
    p.write_text(b.text(), encoding="utf-8")
    assert utc_of_ms(at) is None and utc_of_ms(1_767_225_600_000).year == 2026  # type: ignore[union-attr]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["prune", str(p), "--strategy", "recorded"]) == 0
    assert (f"OpenCode cleared it at time {at:g} ms (recorded)" in out.getvalue()) == (at < 0)  # a later
    # time is a clearing still to come: the output is kept, and only what changed is listed
