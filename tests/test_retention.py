"""Retention scoring (issue 21): hand-built sessions pin each category with one needed item kept
and one forgotten, the exact forgotten list and scores, the work redone, the Interface JSON, the
heuristics one by one, simulated compactions, and the comparison of summaries of one span."""

from __future__ import annotations

import json

import pytest

from inspector.cli import main
from inspector.replay import ReplaySettings, replay
from inspector.retention import (
    compare_summaries,
    first_need_step,
    forget_scores,
    retention,
    score_text,
    spans,
)
from inspector.retention.extract import errors_in, identifiers_in, instructions_in, paths_in, words
from tests.support.builder import SessionBuilder
from tests.support.paths import SAMPLES

SUMMARY = """## Goal
Fix the header bug in parse_header; now also handle empty lines in parse_header.

## Constraints & Preferences
- Do not touch the public API.

## Progress
- The tests in tests/test_parser.py fail with ValueError: bad header field 'x-id'.
- Reading src/parser.py.

<read-files>
src/lexer.py
</read-files>"""


def _session(summary: str = SUMMARY) -> tuple[object, dict[str, int]]:
    """A pi session with one recorded compaction; every category has a needed item the summary
    keeps and one it forgets. Returns the session and the entry index of each named entry."""
    b, ids = _builder(summary)
    s = b.session()
    return s, {k: s.index_of(v) for k, v in ids.items()}


def _builder(summary: str) -> tuple[SessionBuilder, dict[str, str]]:
    b = SessionBuilder()
    ids: dict[str, str] = {}
    ids["ask"] = b.user(
        "Fix the parser bug. Don't touch the public API. Always run pytest before committing."
    )
    b.assistant(
        "Reading the code.",
        tools=[
            ("read", {"path": "src/parser.py"}),
            ("read", {"path": "src/lexer.py"}),
            ("read", {"path": "src/util.py"}),
        ],
    )
    ids["parser_out"] = b.tool_result("def parse_header(line):\n    return tokenize_line(line)\n")
    ids["lexer_out"] = b.tool_result("class TokenStream:\n    pass\n")
    ids["util_out"] = b.tool_result("tmp = 1\n")
    ids["pytest"] = b.assistant(tools=[("bash", {"command": "pytest tests/test_parser.py"})])
    ids["pytest_out"] = b.tool_result(
        "E   ValueError: bad header field 'x-id'\nFAILED tests/test_parser.py::test_header",
        tool="bash",
        is_error=True,
    )
    b.assistant(tools=[("bash", {"command": "npm run lint"})])
    ids["lint_out"] = b.tool_result("error: unused variable 'tmp' in src/util.py", tool="bash", is_error=True)
    ids["task"] = b.user("Now also handle empty lines in parse_header.")
    ids["kept"] = b.assistant(tools=[("read", {"path": "src/parser.py"})])
    b.tool_result("def parse_header(line):\n    return tokenize_line(line)\n")
    ids["comp"] = b.add(
        "compaction",
        summary=summary,
        firstKeptEntryId=ids["kept"],
        tokensBefore=5000,
        details={"readFiles": ["src/lexer.py"], "modifiedFiles": []},
    )
    ids["use"] = b.assistant(
        "Updating parse_header to use TokenStream.",
        tools=[("edit", {"path": "src/parser.py", "oldText": "x", "newText": "y"})],
    )
    b.tool_result("ok", tool="edit")
    ids["rerun"] = b.assistant(tools=[("bash", {"command": "pytest tests/test_parser.py"})])
    ids["again"] = b.tool_result("E   ValueError: bad header field 'x-id'", tool="bash", is_error=True)
    ids["quote"] = b.assistant(
        "Still failing; src/lexer.py splits fields. Also fix the unused variable 'tmp' in src/util.py.",
        tools=[("read", {"path": "src/util.py"})],
    )
    b.tool_result("tmp = 1\n")
    b.assistant("Done.")
    return b, ids


@pytest.fixture(scope="module")
def scored():  # type: ignore[no-untyped-def]
    s, ix = _session()
    r = replay(s, ReplaySettings())
    return s, ix, r, retention(r)


def test_each_category_keeps_one_item_and_forgets_one(scored) -> None:  # type: ignore[no-untyped-def]
    s, ix, r, rep = scored
    (c,) = rep.compactions
    assert c.span.source == "recorded" and c.span.entry_index == ix["comp"]
    assert c.recall() == {"files": 0.75, "identifiers": 0.5, "errors": 0.5, "instructions": 0.5}
    assert len(c.needed) == 11
    assert [(n.kind, n.item, n.introduced_at, n.needed_at) for n in c.forgotten] == [
        ("identifiers", "TokenStream", ix["lexer_out"], ix["use"]),
        ("instructions", "Always run pytest before committing.", ix["ask"], ix["use"]),
        ("files", "src/util.py", ix["util_out"] - 3, ix["quote"]),
        ("errors", "error: unused variable 'tmp' in src/util.py", ix["lint_out"], ix["quote"]),
    ]
    kept = {(n.kind, n.item): n.where for n in c.needed if n.kept}
    assert kept == {
        ("files", "src/parser.py"): ("summary", "kept"),
        ("files", "src/lexer.py"): ("details",),  # only in the file list, not the prose
        ("files", "tests/test_parser.py"): ("summary",),
        ("identifiers", "parse_header"): ("summary", "kept"),
        ("errors", "ValueError: bad header field 'x-id'"): ("summary",),
        ("instructions", "Don't touch the public API."): ("summary",),
        ("task", "now also handle empty lines in parse_header."): ("summary",),
    }


def test_evidence_names_both_entries(scored) -> None:  # type: ignore[no-untyped-def]
    _, ix, _, rep = scored
    ev = {n.item: n.evidence for n in rep.compactions[0].needed}
    assert (
        ev["src/util.py"]
        == f"read src/util.py at entry {ix['util_out'] - 3}; named again at entry {ix['quote']}"
    )
    assert ev["ValueError: bad header field 'x-id'"].endswith(
        f"recurs in the tool output at entry {ix['again']}"
    )
    assert ev["error: unused variable 'tmp' in src/util.py"].endswith(f"referred to at entry {ix['quote']}")
    assert "before any new tool output showed it" in ev["TokenStream"]


def test_work_redone_after_the_cut(scored) -> None:  # type: ignore[no-untyped-def]
    _, ix, _, rep = scored
    rd = rep.compactions[0].redo
    assert (rd.rereads, rd.reruns, rd.failing_reruns) == (1, 1, 1)
    assert {(x["kind"], x["item"], x["redoneAt"]) for x in rd.items} == {
        ("reread", "src/util.py", ix["quote"]),
        ("failing rerun", "pytest tests/test_parser.py", ix["rerun"]),
    }


def test_first_call_that_needed_a_dropped_item(scored) -> None:  # type: ignore[no-untyped-def]
    _, ix, r, rep = scored
    k = rep.first_need_steps[0]
    assert (
        r.steps[k].entry_index == ix["use"]
    )  # TokenStream, used from memory at the first call after the cut
    assert first_need_step(r, rep.compactions[0]) == k


def test_a_summary_that_forgets_the_task_and_the_kept_file(scored) -> None:  # type: ignore[no-untyped-def]
    s, ix, r, rep = scored
    (span,) = spans(r)
    c = score_text(r, span, "## Goal\nFix the parser.", "bare", use_details=False)
    forgotten = {(n.kind, n.item) for n in c.forgotten}
    assert ("task", "now also handle empty lines in parse_header.") in forgotten
    assert ("files", "src/lexer.py") in forgotten  # no details, no mention, not kept
    assert c.recall() == {"files": 0.25, "identifiers": 0.5, "errors": 0.0, "instructions": 0.0}
    # src/parser.py survives in the kept messages only; parse_header too
    assert {n.item: n.where for n in c.needed if n.kept} == {
        "src/parser.py": ("kept",),
        "parse_header": ("kept",),
    }


def test_a_task_is_not_open_when_the_user_asks_anew() -> None:
    b = SessionBuilder()
    b.user("Rename load_config everywhere.")
    b.assistant("Renamed load_config.")
    kept = b.user("Thanks. Now write the changelog.")
    b.assistant("Writing it.")
    b.add("compaction", summary="(nothing)", firstKeptEntryId=kept, tokensBefore=10)
    b.user("And the README?")
    b.assistant("load_config is documented there.")
    s = b.session()
    c = retention(replay(s, ReplaySettings())).compactions[0]
    assert not [n for n in c.needed if n.kind == "task"]  # the last request before the cut is kept verbatim
    assert [(n.kind, n.item) for n in c.forgotten] == [("identifiers", "load_config")]


def test_a_go_or_an_ok_carries_on_the_request_before_it() -> None:
    b = SessionBuilder()
    b.user("Migrate the settings loader to TOML.")
    b.assistant("Reading it.", tools=[("read", {"path": "src/settings.py"})])
    b.tool_result("def load(): ...")
    b.user("ok")  # a carry-on before the cut: not the task
    b.assistant("Migrating.", tools=[("edit", {"path": "src/settings.py"})])
    kept = b.tool_result("edited")
    b.add("compaction", summary="## Goal\nMigrate the settings loader to TOML.", firstKeptEntryId=kept)
    b.user("go")  # after the cut: no new request, the migration is still the task
    b.assistant("Carrying on with the migration.")
    s = b.session()
    (c,) = retention(replay(s, ReplaySettings())).compactions
    task = [(n.item, n.introduced_at, n.needed_at, n.kept) for n in c.needed if n.kind == "task"]
    assert task == [
        ("migrate the settings loader to toml.", 0, len(s.entries) - 1, True)
    ]  # as read: lower case
    # a summary without it forgets it
    (span,) = spans(replay(s, ReplaySettings()))
    bare = score_text(replay(s, ReplaySettings()), span, "## Goal\nSettings.", "bare", use_details=False)
    assert [(n.kind, n.item) for n in bare.forgotten if n.kind == "task"] == [
        ("task", "migrate the settings loader to toml.")
    ]


def test_interface_json_shape(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    s, ix = _session()
    p = tmp_path / "s.jsonl"
    p.write_text(_builder(SUMMARY)[0].text(), encoding="utf-8")
    assert main(["retention", str(p), "--compaction", "recorded", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"compactions"}
    (c,) = out["compactions"]
    assert set(c) == {"entryIndex", "source", "recall", "needed", "forgotten"}
    assert c["entryIndex"] == ix["comp"] and c["source"] == "recorded" and c["needed"] == 11
    assert c["recall"] == {"files": 0.75, "identifiers": 0.5, "errors": 0.5, "instructions": 0.5}
    assert all(set(f) == {"kind", "item", "introducedAt", "neededAt"} for f in c["forgotten"])
    assert [f["item"] for f in c["forgotten"]][0] == "TokenStream"


def test_interface_json_of_simulated_compactions(capsys) -> None:  # type: ignore[no-untyped-def]
    path = str(SAMPLES / "coding-session.jsonl")
    assert main(["retention", path, "--compaction", "pi", "--window", "30000", "--json", "--details"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["compactions"] and all(c["source"] == "simulated" for c in out["compactions"])
    for c in out["compactions"]:
        assert set(c["recall"]) == {"files", "identifiers", "errors", "instructions"}
        assert all(v is None or 0.0 <= v <= 1.0 for v in c["recall"].values())
        assert c["needed"] == len(c["kept"]) + len(c["forgotten"])


def test_simulated_spans_follow_the_replay() -> None:
    from inspector import load_session

    s = load_session(SAMPLES / "coding-session.jsonl")
    r = replay(s, ReplaySettings(compaction="pi", context_window=30000))
    sp = spans(r)
    assert len(sp) == len(r.summaries) >= 2
    for a, b in zip(sp, sp[1:], strict=False):
        assert a.horizon and a.horizon[-1] < b.horizon[0]  # horizons end where the next compaction starts
    for span, rec in zip(sp, r.summaries, strict=True):
        assert set(span.summarised) == set(rec.summarized_entry_indexes)  # pi's preparation, exactly
        assert not set(span.summarised) & set(span.kept)
        assert span.entry_index == r.path[r.path.index(span.horizon[0]) - 1]
    for c in retention(r).compactions:
        for n in c.needed:
            assert n.introduced_at in c.span.summarised and n.needed_at in c.span.horizon


def test_compare_summaries_of_one_span(scored) -> None:  # type: ignore[no-untyped-def]
    _, _, r, rep = scored
    cs = compare_summaries(r, 0)
    assert [c.summary_label for c in cs] == ["recorded", "offline"]
    assert cs[0].recall() == rep.compactions[0].recall()
    assert [n.item for n in cs[0].needed] == [n.item for n in cs[1].needed]  # the same needs, other summaries
    assert cs[1].recall()["files"] == 1.0  # the offline summary lists every file the span touched


# -- the heuristics one by one ------------------------------------------------------------------


def test_paths_and_their_suffixes() -> None:
    assert paths_in("see /repo/src/a.py and README.md, not and/or") >= {
        "/repo/src/a.py",
        "src/a.py",
        "a.py",
        "README.md",
    }
    assert "//example.com/x" not in paths_in("https://example.com/x")


def test_identifiers_are_code_shaped() -> None:
    text = (
        "Call load_config() then TokenStream and parseHeader; self.cache_dir; os.path.join; JavaScript; Hello"
    )
    assert identifiers_in(text) == {"load_config", "TokenStream", "parseHeader", "cache_dir"}


def test_names_any_model_knows_are_not_the_sessions_identifiers() -> None:
    """Python's builtins, a standard-library module's names, JavaScript's globals and the methods of
    builtin types are general knowledge (the shared pi session d04df6 counted ``os.chmod``,
    ``line.strip``, ``ImportError`` forgotten); the session's own names stay."""
    text = (
        "os.path.join os.chmod asyncio.run tempfile.TemporaryDirectory ImportError isinstance "
        "line.strip result.get read_text Path(p).read_text() JSON.stringify console.log foreign_keys stored.version "
        "load_widget_config parseHeader"
    )
    assert identifiers_in(text) == {"foreign_keys", "stored.version", "load_widget_config", "parseHeader"}


def test_products_named_like_identifiers_are_known() -> None:
    """Products and tools with a hump in their name are general knowledge (the shared Codex
    rollout counted ``OpenTelemetry``, ``gRPC`` and ``LangSmith`` forgotten); a name of the session's own that
    starts like one stays."""
    text = (
        "gRPC OpenTelemetry GraphQL MongoDB WebAssembly TensorFlow iCloud LangSmith DeepEval "
        "OpenTelemetryExporter grpcClient"
    )
    assert identifiers_in(text) == {"OpenTelemetryExporter", "grpcClient"}


def test_the_database_apis_methods_are_known() -> None:
    """PEP 249's methods are general knowledge (the shared pi session d04df6 counted
    ``database.rollback`` forgotten under pi compaction at 128k); called on an object of the
    session's own, they name that object."""
    assert identifiers_in("database.rollback cur.fetchone result.rowcount conn.executemany") == set()
    assert identifiers_in("db_session.commit") == {"db_session"}


def test_other_languages_and_the_agents_tools_names_are_known_too() -> None:
    """Go's and Node's standard modules (and their own names), testify, JavaScript's builtin
    methods, Node's fs functions, React's hooks, Jest's API, Python's special names and the agents'
    own tool option values are general knowledge (the shared sessions counted ``fmt.Printf``,
    ``messages.push``, ``useState``, ``__init__``, ``files_with_matches`` and ``in_progress``
    forgotten, the pi-mono fixture ``child_process``, ``readFileSync``, ``beforeEach``); the
    session's own names stay, a call of one included."""
    known = (
        "fmt.Printf strconv.Itoa assert.deepEqual require.NoError fs.readFileSync messages.push "
        "seen.has items.length useState useEffect __init__ __init__( __all__ node_modules "
        "files_with_matches in_progress child_process readFileSync( beforeEach expect.not.toBeNull "
        "toMatchSnapshot"
    )
    assert identifiers_in(known) == set()
    own = "env.GetCommitCount sidecar.handleRequest pending_jobs useWidgetState _private_helper("
    assert identifiers_in(f"{known} {own}") == {
        "env.GetCommitCount",
        "sidecar.handleRequest",
        "pending_jobs",
        "useWidgetState",
        "_private_helper",
    }
    # a general method called on the session's own object names that object
    calls = "sidecar.activeSessions.has(id) self.seen_ids.add(x) runs_by_id.get(k) os.path.join(a)"
    assert identifiers_in(calls) == {"sidecar.activeSessions", "seen_ids", "runs_by_id"}


def test_a_failed_command_with_no_output_is_no_error() -> None:
    """pi's and OpenCode's "(no output)" and the agents' exit-status lines name no error: a failed
    call's error is its first other line (Codex's exec output header skipped), or none."""
    assert errors_in("(no output)\n\nCommand exited with code 1", True) == ()
    codex = (
        "Chunk ID: 890419\nWall time: 0.4746 seconds\nProcess exited with code 1\nOriginal token count: 12\n"
        "Output:\nzsh:1: no matches found: plugins/*/package.json\n"
    )
    assert errors_in(codex, True) == ("zsh:1: no matches found: plugins/*/package.json",)
    assert errors_in("something odd happened\nCommand exited with code 2", True) == (
        "something odd happened",
    )


def test_error_lines() -> None:
    out = "ok\nE   KeyError: 'x'\nTraceback (most recent call last):\nbash: foo: command not found\n"
    assert errors_in(out, False) == ("KeyError: 'x'", "bash: foo: command not found")
    assert errors_in("it broke\nmore", True) == ("it broke",)
    assert errors_in("all good", False) == ()
    # a character whose lower case is longer ("İ") shifts no position
    assert errors_in("İstanbul İİ\nE   KeyError: 'x'\n", False) == ("KeyError: 'x'",)


def test_instructions() -> None:
    assert instructions_in("Fix it. Never use print debugging.\nWe decided to keep SQLite. Thanks!") == (
        "Never use print debugging.",
        "We decided to keep SQLite.",
    )
    assert words("Don't touch the public APIs") == {"touch", "public", "api"}
    # a question is no instruction, though it holds the words (two such were counted on the shared sessions)
    assert instructions_in(
        "We don't have a staging backend? Never push to main. Will we always stay fast?"
    ) == ("Never push to main.",)


def test_dont_never_and_always_are_instructions_only_where_they_tell_someone() -> None:
    """A statement about something ("the patterns don't cause …", pasted review text on the shared
    Claude Code transcript; "the cache never expires entries", three on the bundled long session)
    was taken for a standing instruction; an imperative, a lead-in word, or a person as subject
    still gives one, and the other markers count wherever they stand."""
    statements = [
        "Non-Go languages to ensure the trivial patterns don't cause false negatives",
        "The filter cache in `src/types.ts` never expires entries; add a TTL (default 30s) and tests.",
        "The tests always fail on CI.",
    ]
    told = [
        "Don't change the public API of the parser.",
        "- Don't touch the lockfile",
        "Produce a report of your findings, but don't implement yet.",
        "So I just want an otel collector so we don't need Phoenix.",
        "You should always run tests.",
        "IMPORTANT: never run migrations on prod.",
        "Make sure the tests never fail.",
        "The API must stay backwards compatible.",
    ]
    assert [instructions_in(t) for t in statements] == [(), (), ()]
    assert [instructions_in(t) for t in told] == [(t,) for t in told]


def test_highlights_are_the_kept_names_in_the_summary(scored) -> None:  # type: ignore[no-untyped-def]
    from inspector.ui.retention_view import highlight_spans

    _, _, r, rep = scored
    text = r.summaries[0].text
    marked = {text[a:b] for a, b, _ in highlight_spans(text, rep.compactions[0])}
    assert marked == {
        "parse_header",
        "src/parser.py",
        "tests/test_parser.py",
        "src/lexer.py",
        "bad header field 'x-id'",
    }


def test_doctor_flags_low_retention() -> None:
    from inspector.doctor import DoctorOptions, diagnose

    s, ix = _session()
    low = [
        f for f in diagnose(s, options=DoctorOptions(retention_min=0.7)).findings if f.kind == "low-retention"
    ]
    assert [(f.severity, f.entries) for f in low] == [("warning", [ix["comp"], ix["use"], ix["quote"]])]
    assert low[0].message.startswith(
        "compaction kept 7 of 11 items the session needed later (64%); forgot "
        "identifier TokenStream, instruction Always run pytest"
    )
    assert not [f for f in diagnose(s).findings if f.kind == "low-retention"]  # 64% ≥ the default 50%


def test_a_compaction_whose_summary_the_file_does_not_hold_says_so(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A Codex remote compaction records an empty message (the shared rollout's), a server-side one
    an encrypted item: the doctor warned "kept 4 of 16 items" as if the summary had been read. The
    CLI, the JSON's details and the doctor now say what was counted; a readable summary says nothing."""
    from inspector.doctor import DoctorOptions, diagnose

    for summary, details, why in (
        ("", None, "the file records no text of its summary"),
        (
            "(server-side compaction)",
            {"encrypted": True},
            "its summary was made on the server and stored encrypted",
        ),
        (SUMMARY, {"readFiles": ["src/lexer.py"], "modifiedFiles": []}, None),
    ):
        b, ids = _builder(summary)
        if details is not None:
            comp = next(e for e in b.lines if e.get("id") == ids["comp"])
            comp["details"] = details
        s = b.session()
        (c,) = retention(replay(s, ReplaySettings())).compactions
        assert c.span.unread == why
        assert c.as_dict(True).get("summaryUnread") == why and "summaryUnread" not in c.as_dict()
        (low,) = [
            f
            for f in diagnose(s, options=DoctorOptions(retention_min=1.0)).findings
            if f.kind == "low-retention"
        ]
        assert (f"({why}: only what was kept verbatim or put back counts)" in low.message) == (
            why is not None
        )
        assert why is None or low.message.endswith("counts)")
        p = tmp_path / "s.jsonl"
        p.write_text(b.text())
        assert main(["retention", str(p)]) == 0
        assert (f"  note    {why}: kept = kept verbatim or put back" in capsys.readouterr().out) == (
            why is not None
        )


class _FakeLlm:
    """Stands in for an LLM summarizer: answers the probes from a canned text, counts the calls."""

    provider, model, base_url, label, redact = "fake", "m", None, "fake:m", True

    def __init__(self, answer: str) -> None:
        self.answer, self.calls, self.sent = answer, 0, ""

    def _run(self, fn):  # type: ignore[no-untyped-def]
        return fn()

    def _request(self, system: str, user: str, max_tokens: int) -> tuple[str, int, int]:
        self.calls += 1
        self.sent = user
        return self.answer, 1, 1


def test_llm_probe_grades_each_item_against_its_probe(scored) -> None:  # type: ignore[no-untyped-def]
    from inspector.retention.probe import probe

    _, _, r, rep = scored
    c = rep.compactions[0]
    fake = _FakeLlm(
        "## recall\nparse_header, TokenStream; ValueError: bad header field 'x-id'\n"
        "## artifacts\nsrc/parser.py and src/lexer.py\n## continuation\nnot stated\n"
        "## decisions\nDo not touch the public API; always run pytest before committing."
    )
    res = probe(c, r.summaries[0].text, fake, use_cache=False)
    assert fake.calls == 1 and "<summary>" in fake.sent and res.label == "fake:m"
    assert res.recall == {"files": 0.5, "identifiers": 1.0, "errors": 0.5, "instructions": 1.0}
    assert ("task", "now also handle empty lines in parse_header.", False) in res.kept


def test_other_agents_file_and_shell_tools() -> None:
    from inspector.retention.extract import facts_of
    from inspector.session.models import AssistantMessage

    m = AssistantMessage(
        content=[
            {"type": "toolCall", "id": "1", "name": "Read", "arguments": {"file_path": "/r/a.py"}},
            {
                "type": "toolCall",
                "id": "2",
                "name": "edit",
                "arguments": {"filePath": "/r/b.ts", "oldString": "x"},
            },
            {
                "type": "toolCall",
                "id": "3",
                "name": "apply_patch",
                "arguments": {
                    "input": "*** Begin Patch\n*** Update File: src/c.rs\n@@\n*** Add File: src/d.rs\n"
                },
            },
            {
                "type": "toolCall",
                "id": "4",
                "name": "exec_command",
                "arguments": {"cmd": ["cat", "docs/e.md"]},
            },
            {"type": "toolCall", "id": "5", "name": "grep", "arguments": {"path": "/r/not-a-touch.py"}},
        ]
    )
    f = facts_of(m)
    assert f.touches == (
        ("/r/a.py", "read"),
        ("/r/b.ts", "edit"),
        ("src/c.rs", "edit"),
        ("src/d.rs", "write"),
        ("docs/e.md", "bash"),
    )
    assert f.commands == (("4", "cat docs/e.md"),)


def _codex_rollout(*items: tuple[str, dict]) -> bytes:  # type: ignore[type-arg]
    rows = [
        {"timestamp": f"2026-01-02T03:04:{k:02d}.000Z", "type": kind, "payload": p}
        for k, (kind, p) in enumerate([("session_meta", {"id": "s", "cwd": "/w"}), *items])
    ]
    return ("\n".join(json.dumps(r) for r in rows) + "\n").encode()


def _codex_message(role: str, text: str) -> dict:  # type: ignore[type-arg]
    kind = "input_text" if role == "user" else "output_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


@pytest.mark.parametrize("history", [True, False])
def test_what_codex_puts_back_after_its_compaction_is_kept_not_used(history: bool) -> None:
    """Codex re-emits its replacement_history (or, without one, the user messages it rebuilds) right
    after the compaction: the model has those messages because the compaction kept them. They count
    as kept messages, not as the first later use of what the span said."""
    from inspector.importers import parse_any

    ask = "Always run the tests with uv run pytest. The bug is in load_settings_file."
    compacted = {"message": "Fixing a config bug."}
    if history:
        compacted["replacement_history"] = [_codex_message("user", ask)]
    s = parse_any(
        _codex_rollout(
            ("response_item", _codex_message("user", ask)),
            ("response_item", _codex_message("assistant", "The cache lives in cfg_loader_cache.")),
            ("compacted", compacted),
            ("response_item", _codex_message("user", "go on")),
            (
                "response_item",
                _codex_message("assistant", "Reading load_settings_file and cfg_loader_cache."),
            ),
        ),
        source="r.jsonl",
    )
    r = replay(s, ReplaySettings())
    (span,) = spans(r)
    carried = [i for i, e in enumerate(s.entries) if isinstance(getattr(e, "codex", None), dict)]
    assert len(carried) == 1 and span.kept == tuple(carried)
    assert carried[0] not in span.horizon
    (c,) = retention(r).compactions
    by = {(n.kind, n.item): n for n in c.needed}
    assert by[("identifiers", "load_settings_file")].where == ("kept",)
    assert by[("instructions", "Always run the tests with uv run pytest.")].where == ("kept",)
    assert [(n.kind, n.item) for n in c.forgotten] == [("identifiers", "cfg_loader_cache")]
    assert by[("identifiers", "cfg_loader_cache")].needed_at == len(s.entries) - 1


def test_the_story_of_each_codex_compaction_counts_what_it_put_back() -> None:
    from inspector.importers import parse_any
    from inspector.ui.narrate import agent_compaction_story

    ask = _codex_message("user", "Always run the tests with uv run pytest.")
    s = parse_any(
        _codex_rollout(
            ("response_item", ask),
            ("response_item", _codex_message("assistant", "ok")),
            ("compacted", {"message": "one", "replacement_history": [ask]}),
            ("response_item", _codex_message("assistant", "ok")),
            ("compacted", {"message": "two", "replacement_history": [ask, ask]}),
            ("response_item", _codex_message("assistant", "ok")),
        ),
        source="r.jsonl",
    )
    first, second = [i for i, e in enumerate(s.entries) if e.type == "compaction"]
    assert "Codex continued with 1 message after it" in agent_compaction_story(s, first, 2)[1]
    assert "Codex continued with 2 messages after it" in agent_compaction_story(s, second, 2)[1]


def test_the_reads_claude_code_attaches_again_after_its_compaction_are_kept() -> None:
    """After a compaction Claude Code reads the most recently read files again and attaches them:
    what the last read of such a file showed is kept (the importer's estimate of the reads)."""
    from inspector.importers import parse_any

    def line(o: dict) -> str:  # type: ignore[type-arg]
        base = {"sessionId": "p", "isSidechain": False, "userType": "external", "cwd": "/w"}
        return json.dumps({**base, "timestamp": "2026-03-03T10:00:00.000Z", **o})

    def said(uid: str, parent: str, mid: str, content: list) -> dict:  # type: ignore[type-arg]
        return {
            "type": "assistant",
            "uuid": uid,
            "parentUuid": parent,
            "message": {"id": mid, "role": "assistant", "model": "claude-sonnet-4-5", "content": content},
        }

    def user(uid: str, parent: str | None, content: object, **kw: object) -> dict:  # type: ignore[type-arg]
        return {
            "type": "user",
            "uuid": uid,
            "parentUuid": parent,
            "message": {"role": "user", "content": content},
            **kw,
        }

    read = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/w/widget.py"}}
    lines = [
        user("u1", None, "fix the widget loader"),
        said("a1", "u1", "m1", [read]),
        user(
            "r1",
            "a1",
            [{"type": "tool_result", "tool_use_id": "t1", "content": "def load_widget_config(p): ..."}],
        ),
        said("a2", "r1", "m2", [{"type": "text", "text": "The cache key is in cfg_loader_cache."}]),
        {
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": "b",
            "parentUuid": None,
            "logicalParentUuid": "a2",
            "content": "Conversation compacted",
            "compactMetadata": {"trigger": "auto", "preTokens": 1000},
        },
        user(
            "s",
            "b",
            "This session is being continued from a previous conversation. Fixing.",
            isCompactSummary=True,
        ),
        user("u2", "s", "go on"),
        said(
            "a3",
            "u2",
            "m3",
            [{"type": "text", "text": "Calling load_widget_config in widget.py; cfg_loader_cache next."}],
        ),
    ]
    s = parse_any(("\n".join(map(line, lines)) + "\n").encode(), source="cc.jsonl")
    comp = next(e for e in s.entries if e.type == "compaction")
    r1 = next(i for i, e in enumerate(s.entries) if getattr(e.message, "role", "") == "toolResult")
    assert comp.details["claudeCode"]["reinjectedReads"] == [r1]
    assert comp.details["claudeCode"]["reinjectedFiles"] == ["/w/widget.py"]
    (c,) = retention(replay(s, ReplaySettings())).compactions
    assert c.span.kept == (r1,) and r1 in c.span.summarised
    by = {(n.kind, n.item): n.where for n in c.needed}
    assert by[("identifiers", "load_widget_config")] == ("kept",)
    assert by[("files", "/w/widget.py")] == ("kept",)
    # "go on" carries on: the task stays open, and the summary ("Fixing.") does not name it
    assert [(n.kind, n.item) for n in c.forgotten] == [
        ("identifiers", "cfg_loader_cache"),
        ("task", "fix the widget loader"),
    ]
    from inspector.ui.narrate import agent_compaction_story

    story = agent_compaction_story(s, s.entries.index(comp), 3)
    assert story[1].startswith("It kept no message verbatim")
    assert "reads again the file read most recently and attaches it after the summary (widget.py)" in story[2]


SEARCH_TEXTS = [
    "Call load_config() then TokenStream and parseHeader; self.cache_dir; os.path.join; JavaScript; Hello",
    "my_load_config(x) load_config_v2 src/load_config.py a((b_c d-load_config+e ~/x/y.ts(",
    "naïve_ident café_au_lait(1) façadeCall \u00a0tab\tsep_x\x1cfs_y  β.γδ src/ü.py\nX.Y.Z",
    "see /repo/src/a.py and README.md, not and/or; data.py a.py( ./b/c.tsx //example.com/x.js",
]


@pytest.mark.parametrize("text", SEARCH_TEXTS)
def test_searching_a_text_finds_exactly_what_reading_every_token_does(text: str) -> None:
    from inspector.retention.extract import _scan, find_ident, find_path, rfind_ident

    paths, idents = _scan(text)  # the chunked reading: the same sets as the plain rules
    assert (paths, idents) == (frozenset(paths_in(text)), frozenset(identifiers_in(text)))
    names = {w.strip("();,") for w in text.replace("/", " / ").split()} | {"load_config", "a.py", "c.tsx"}
    for name in sorted(names | idents | paths):
        if not name:
            continue
        assert (find_ident(text, name) >= 0) == (name in idents), name
        assert (rfind_ident(text, name) >= 0) == (name in idents), name
        assert (find_path(text, name) >= 0) == (name in paths), name


@pytest.mark.parametrize("text", SEARCH_TEXTS)
def test_one_scan_for_many_names_finds_what_a_search_per_name_does(text: str) -> None:
    """first_hits (one Aho-Corasick scan, in blocks) gives each name the position find_ident /
    find_path give it, overlapping occurrences and non-ASCII texts included, and drops a name at
    its ``until``."""
    import re

    from inspector.retention import search
    from inspector.retention.extract import find_ident, find_path, ident_at, path_at

    paths, idents = paths_in(text), identifiers_in(text)
    names = sorted(
        {w.strip("();,") for w in text.split()} | idents | paths | {"load_config", "a.py", "_c"} - {""}
    )
    # many copies, so that the names fall in later blocks too (the first block is made small)
    long = "\x00".join([text] * 40)
    old = search.FIRST_BLOCK
    search.FIRST_BLOCK = 64
    try:
        got = search.first_hits(long, {x: (x,) for x in names}, lambda x, p: ident_at(long, p, x))
        want = {x: p for x in names if (p := find_ident(long, x)) >= 0}
        assert got == want
        got = search.first_hits(long, {x: (x,) for x in names}, lambda x, p: path_at(long, p, {x}))
        assert got == {x: p for x in names if (p := find_path(long, x)) >= 0}
        late = {x: 3 * len(text) for x in names}  # found only in the first three copies
        got = search.first_hits(long, {x: (x,) for x in names}, lambda x, p: ident_at(long, p, x), until=late)
        assert {x: p for x, p in got.items() if p < late[x]} == want
        # names=True (identifiers: word characters and dots): no overlapping matches; the same token
        # (not always the same occurrence in it)
        words_only = [x for x in names if re.fullmatch(r"[\w.]+", x)]
        got = search.first_hits(
            long, {x: (x,) for x in words_only}, lambda x, p: ident_at(long, p, x), names=True
        )
        assert {x: _token_start(long, p) for x, p in got.items()} == {
            x: _token_start(long, want[x]) for x in words_only if x in want
        }
    finally:
        search.FIRST_BLOCK = old


def test_joined_entries_find_each_name_in_its_first_entry() -> None:
    """The texts of entries searched at once (each encoded on its own, the joined characters made
    only for a non-ASCII name): each name in the first entry find_ident finds it in, before its
    ``until``."""
    from inspector.retention.extract import Facts, find_ident
    from inspector.retention.score import _Texts

    texts = [*SEARCH_TEXTS, "", "x = façadeCall(); load_config", *reversed(SEARCH_TEXTS)]
    facts = [Facts("toolResult", source=t) for t in texts]
    names = sorted(set().union(*(identifiers_in(t) for t in texts)) | {"naïve", "not_there", "γδ"})
    for order in (list(range(len(texts))), list(range(2, len(texts)))):
        joined = _Texts(facts, order)
        for until in (None, {x: joined.end(4) for x in names}):  # all, or only the first four entries
            among = order if until is None else order[:4]
            want = {
                x: k
                for x in names
                if (k := next((k for k in among if find_ident(texts[k], x) >= 0), None)) is not None
            }
            got = {x: order[joined.entry(p)] for x, p in joined.first(names, until).items()}
            assert got == want, until


def test_a_quote_is_found_in_the_first_message_that_holds_it() -> None:
    """An error's words quoted by the user or the assistant: the first message whose normalised,
    lower-cased text holds them, found through the messages' texts lower-cased and joined (where
    lower-casing changes a length, or a word appears un-normalised, too)."""
    from inspector.retention.extract import Facts
    from inspector.retention.score import _first_quote, _Uses

    texts = [
        "İstanbul  ModuleNotFoundError:\tNo module named 'x' İİİİİİİİİİİİ",
        "OSError: disk quota exceeded",
        "ΣΟΦΟΣ says: no module named 'x'",
        "nothing here",
        "KeyError: 'missing_key' raised\nagain",
        "the   KEYERROR: 'MISSING_KEY' RAISED",
        "σοφος σοφοσ Ünïcode wörds here",
    ]
    u = _Uses()
    for i, t in enumerate(texts):
        u.said.append((10 + i, Facts("user", source=t)))
    keys = [
        "no module named 'x'",
        "keyerror: 'missing_key' raised",
        "σοφος says:",
        "σοφοσ says:",
        "ünïcode wörds",
    ]
    keys += ["'missing_key' raised again", "nothing here at all", "i̇stanbul modulenotfounderror:", "short"]
    keys += ["disk quota exceeded"]
    for key in keys:
        want = next((i for i, f in u.said if key in f.text), None) if len(key) >= 8 else None
        assert _first_quote(key, u) == want, key
    assert _first_quote("keyerror: 'missing_key' raised", u) == 14
    assert _first_quote("disk quota exceeded", u) == 11


def test_a_phrase_is_in_the_kept_texts_as_in_their_normalised_join() -> None:
    """Said (the kept texts, normalised only where a phrase may be): ``phrase in said`` is
    ``phrase in "\\n".join(texts)``: a text cut at its limit, a character lower-cased into two,
    a final sigma, a phrase across two texts, the empty phrase."""
    from inspector.retention.extract import Facts
    from inspector.retention.score import Said

    facts = [
        Facts("toolResult", source="İİİİ ΑΣ x  OSError:\tdisk quota exceeded ΟΔΟΣ", source_limit=40),
        Facts("user", source="Use   the Σ-KEY, never the other one"),
        Facts("assistant", source="ΟΔΟΣ done\n\n  the end"),
        Facts("toolResult", source="y ΑΣΑ", source_limit=4),  # cut after the sigma: final there
    ]
    joined = "\n".join(f.text for f in facts)
    phrases = ["disk quota exceeded", "oserror: disk quota", "ασ x", "οδος", "οδοσ", "use the σ-key, never"]
    phrases += [
        "one\nοδος done",
        "never the other one\nοδος",
        "the end",
        "the  end",
        "",
        "i̇i̇",
        "absent words",
        "y ας",
    ]
    for phrase in phrases:
        assert (phrase in Said(facts)) == (phrase in joined), phrase
    assert Said(facts).first("the end") == 2 and Said([]).first("x") is None and "" in Said([])
    assert " " in Said(facts) and " " not in Said([]) and Said(facts[3:]).first(" ") == 0
    # without İ: ASCII words looked for in the texts as bytes, other words in the characters
    more = [
        Facts("toolResult", source="naïve café: \u212aeyError raised"),  # the Kelvin sign: k
        Facts("user", source="ΣΟΦΟΣ said: KeyError raised; café  naïve"),
        Facts("assistant", source="no keyerror here?"),
    ]
    phrases = ["keyerror raised", "café naïve", "naïve café:", "σοφος said:", "here?", "raised; café", "x?"]
    assert Said(more).first("keyerror raised") == 0 and Said(more[1:]).first("keyerror raised") == 0
    for texts in (more, more[:1], more[1:], more[2:]):
        joined = "\n".join(f.text for f in texts)
        for phrase in phrases:
            assert (phrase in Said(texts)) == (phrase in joined), phrase


def _token_start(text: str, p: int) -> int:
    from inspector.retention.extract import _TOKEN_ASCII

    while p > 0 and ((c := text[p - 1]) in _TOKEN_ASCII or (c > "\x7f" and c.isalnum())):
        p -= 1
    return p


OVERLAPS = [
    "my_foo_bar-foo_bar x",  # foo_bar inside the longer name's match, and a part after it
    "self.foo_bar this.fooBar cls.x_y_z",  # a name right after a dot the longer match holds
    "task.title task.titleLower task.title_x(",  # one name the start of another, at one place
    "a.b_c.d_e b_c.d_e d_e_f .d_e_f.. b_c",
    "self.cache_dir; os.path.join",  # only inside the longer names' matches
]


@pytest.mark.parametrize("text", OVERLAPS)
def test_names_hidden_by_a_longer_match_are_found(text: str) -> None:
    """The non-overlapping search (names=True) finds each name in the token find_ident finds it in,
    where a longer name's match covers it too."""
    from inspector.retention.extract import find_ident, ident_at
    from inspector.retention.search import first_hits

    extra = {
        "foo_bar",
        "my_foo_bar",
        "x_y_z",
        "fooBar",
        "d_e",
        "d_e_f",
        "b_c.d_e",
        "self.cache_dir",
        "path.join",
    }
    names = sorted(identifiers_in(text) | extra | {"os.path"})
    for pick in (names, [n for n in names if len(n) > 5], [n for n in names if "." in n or len(n) < 6]):
        got = first_hits(text, {x: (x,) for x in pick}, lambda x, p: ident_at(text, p, x), names=True)
        want = {x: p for x in pick if (p := find_ident(text, x)) >= 0}
        assert {x: _token_start(text, p) for x, p in got.items()} == {
            x: _token_start(text, p) for x, p in want.items()
        }, pick


def test_one_scan_reports_overlapping_occurrences() -> None:
    from inspector.retention.search import first_hits

    text = "aa_aa_aa foo_bar_baz bar_baz"
    got = first_hits(text, {"aa_aa": ("x",), "bar_baz": ("y",), "foo_bar": ("z",)}, lambda k, p: True)
    assert got == {"x": 0, "z": 9, "y": 13}
    assert first_hits(text, {"aa_aa": ("x",)}, lambda k, p: p > 0) == {"x": 3}  # the next one, overlapping
    assert first_hits(text, {"é_x": ("x",)}, lambda k, p: True) == {}  # a non-ASCII name in an ASCII text


@pytest.mark.parametrize("lines", [0, 7, 799, 800, 801, 3000])
def test_error_hint_lines_in_one_scan_as_word_by_word(lines: int) -> None:
    """The lines holding an error word, found in one scan for all the words: the lines one search
    per word finds, past its cap too (4 * MAX_ERROR_LINES lines, gathered word by word)."""
    import random

    from inspector.retention.extract import ERROR_WORDS, _hint_spans, _hint_spans_per_word

    rng = random.Random(lines)
    words = [*ERROR_WORDS, "errors", "failfatal", "no such", "ok", "x", "", "not  found", "exceptional"]
    text = "\n".join(" ".join(rng.choice(words) for _ in range(rng.randint(0, 4))) for _ in range(lines))
    low = text.encode().lower()
    assert _hint_spans(low) == _hint_spans_per_word(low)


def test_a_summary_read_line_by_line_as_a_whole() -> None:
    """read_prose (each distinct line read once): the normalised text, paths, identifiers and
    words of the whole text."""
    from inspector.retention.extract import norm_lower, read_prose, scan, words

    texts = [
        *SEARCH_TEXTS,
        "\n".join(SEARCH_TEXTS),
        "ΟΔΟΣ\nΑΣ x\n\n  \n\u2028a_b.c\r\nİ\x1cx_y",
        "",
        "\n",
        "a\n\na",
    ]
    for text in texts:
        assert read_prose(text) == (norm_lower(text), *scan(text), words(text)), text


def test_word_runs_and_lower_casing_match_the_plain_rules() -> None:
    import random
    import re

    from inspector.retention.extract import _WORD, _hint_lines, _lines_with, _words_raw, norm, norm_lower

    rng = random.Random(7)
    alpha = [
        "a",
        "Bc",
        "9",
        "_",
        "'",
        "-",
        " ",
        "\t",
        "\n",
        "\x1c",
        "\xa0",
        "é",
        "İ",
        "K",
        "✓",
        "error",
        "FAIL",
    ]
    for _ in range(3000):
        t = "".join(rng.choice(alpha) for _ in range(rng.randint(0, 40)))
        assert _words_raw(t) == set(_WORD.findall(t)), t
        assert norm_lower(t) == norm(t).lower(), t
        if not re.search("[Kſ]", t):  # case-folding specials the regex matches and lower() does not
            assert _hint_lines(t) == _lines_with(t), t


def test_scores_are_the_same_with_every_token_read(scored) -> None:  # type: ignore[no-untyped-def]
    """Scoring searches the texts for the later session's names, or (every token read, as the app
    does in the background) compares sets: one answer."""
    from inspector.retention.extract import facts_for, facts_ready

    rep = scored[3]
    s = _session()[0]  # its own session: the shared one stays as it is
    fresh = retention(replay(s, ReplaySettings()))
    assert not facts_ready(s)
    facts_for(s, deep=True)
    assert facts_ready(s)
    forget_scores(s)  # scored again, from the sets this time
    deep = retention(replay(s, ReplaySettings()))
    assert deep.as_dict(details=True) == fresh.as_dict(details=True) == rep.as_dict(details=True)


def test_file_blocks_from_the_first_tag_on_as_over_the_whole_text() -> None:
    """file_blocks runs its pattern from the first ``<read-files>``/``<modified-files>`` tag on: the
    same prose and files as the pattern over the whole text (tags anywhere, repeated, unclosed,
    nested, or look-alikes)."""
    import random

    from inspector.retention.score import _FILE_BLOCK, file_blocks

    def whole(text: str) -> tuple[str, set[str]]:
        files: set[str] = set()
        for _, body in _FILE_BLOCK.findall(text):
            files |= {x.strip() for x in body.splitlines() if x.strip()}
        return _FILE_BLOCK.sub("", text), files

    rng = random.Random(21)
    parts = [
        "<read-files>",
        "</read-files>",
        "<modified-files>",
        "</modified-files>",
        "<read-file>",
        "< read-files>",
        "a.py\n",
        " src/b.ts \n",
        "prose ",
        "\n",
        "<",
        ">",
    ]
    texts = ["", "no tags", "x<read-files>\na.py\n</read-files>", "<modified-files>b</modified-files>tail"]
    texts += ["".join(rng.choice(parts) for _ in range(rng.randint(0, 14))) for _ in range(3000)]
    for text in texts:
        assert file_blocks(text) == whole(text), text
    blocks = [t for t in texts if whole(t)[1]]
    assert len(blocks) > 300  # the random texts hold blocks, not only look-alikes


def test_another_replay_with_the_same_compactions_reuses_their_scores(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """What a span needed and kept is scored once per session: a replay under another pruning
    strategy (the same compaction, its own re-reads) reads it from the memo and gives what scoring
    afresh gives; a replay whose spans differ is scored anew."""
    import inspector.retention as ret

    s = _session()[0]
    calls = []
    real = ret.judge
    monkeypatch.setattr(ret, "judge", lambda *a: calls.append(1) or real(*a))
    plain = retention(replay(s, ReplaySettings()))
    assert len(calls) == 1
    pruned_settings = ReplaySettings(
        strategy="pi-context-pruning",
        strategy_settings=(("prune_minimum", 0), ("prune_protect", 1), ("protected_turns", 0)),
    )
    pruned_replay = replay(s, pruned_settings)
    assert any(type(e).__name__ == "Pruned" for st in pruned_replay.steps for e in st.events)
    pruned = retention(pruned_replay)
    assert len(calls) == 1  # the same span and summary: not judged again
    forget_scores(s)
    fresh = ret._score_all(pruned_replay)
    assert len(calls) == 2
    assert pruned.as_dict(details=True) == fresh.as_dict(details=True)
    assert (
        pruned.as_dict(details=True)["compactions"][0]["kept"]
        == plain.as_dict(details=True)["compactions"][0]["kept"]
    )
    simulated = retention(
        replay(s, ReplaySettings(compaction="pi", context_window=4000, keep_recent_tokens=200))
    )
    assert len(calls) == 2 + len(simulated.compactions) and simulated.compactions  # other spans: judged


def test_a_long_forgotten_item_is_cut_with_an_ellipsis_in_the_text_and_whole_in_json(
    tmp_path, capsys
) -> None:  # type: ignore[no-untyped-def]
    deep = "src/" + "/".join(f"level{k:02d}" for k in range(20)) + "/settings.py"  # 148 characters
    b = SessionBuilder()
    b.user("Look at the settings.")
    b.assistant(tools=[("read", {"path": deep})])
    b.tool_result("DEBUG = False\n")
    kept = b.user("Thanks.")
    b.assistant("Noted.")
    b.add("compaction", summary="## Goal\nLook at the settings.", firstKeptEntryId=kept, tokensBefore=900)
    b.user(f"Now change {deep}.")
    b.assistant("Done.")
    p = tmp_path / "deep.jsonl"
    p.write_text(b.text(), encoding="utf-8")
    assert main(["retention", str(p)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("  forgot"))
    assert f"files        {deep[:99]}…  (entry " in line
    assert main(["retention", str(p), "--json"]) == 0
    (c,) = json.loads(capsys.readouterr().out)["compactions"]
    assert [f["item"] for f in c["forgotten"]] == [deep]


def test_the_text_header_names_the_window_a_simulated_policy_ran_against(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Where a simulated policy compacts depends on the window: the header says which, and when the
    session's answers prove an assumed one too small; as recorded, a session without a compaction
    is told how to simulate one."""
    b = SessionBuilder()
    for k in range(6):
        b.user(f"step {k} " + "x" * 40_000)
        b.assistant("ok", usage=(k + 1) * 60_000, model="claude-opus-9", provider="anthropic")
    p = tmp_path / "s.jsonl"
    p.write_text(b.text())
    assert main(["retention", str(p)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith(": 0 compaction(s), compaction: recorded")
    assert out[1] == "  the session records no compaction: --compaction pi (or another policy) simulates one"
    assert main(["retention", str(p), "--compaction", "pi"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert "compaction: pi, window 200,000 (assumed: claude-opus-9 is not in pi's model list" in head
    assert (
        "the provider answered a 360,000-token context at entry 11" in head
        and "--window 360000 or more" in head
    )
    assert main(["retention", str(p), "--compaction", "pi", "--window", "400000"]) == 0
    assert "window 400,000" in capsys.readouterr().out.splitlines()[0]
