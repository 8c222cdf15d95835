"""The offline summarizer, pi's compact() / generateBranchSummary composition, prompt styles,
slice strategies, the cache location and the summarize command."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from inspector import load_session
from inspector.branch_summary import prepare_branch_entries
from inspector.compaction import CompactionSettings, format_file_operations, prepare_compaction
from inspector.context import convert_to_llm, serialize_conversation
from inspector.summarize import (
    NO_PRIOR_HISTORY,
    SPLIT_TURN_SEPARATOR,
    compaction_prompts,
    get_summarizer,
    summarize_branch,
    summarize_compaction,
)
from inspector.summarize import cache as summary_cache
from inspector.summarize.base import SummaryRequest, SummaryResult, SummaryUsage
from inspector.summarize.offline import estimate
from inspector.summarize.prompts import (
    BRANCH_SUMMARY_PREAMBLE,
    CLAUDE_CODE_SECTIONS,
    CODEX_SUMMARY_PREFIX,
    STYLES,
    build_prompt,
    extract_summary,
)
from inspector.summarize.sections import parse_summary
from inspector.summarize.slices import (
    STRATEGIES,
    SliceSettings,
    compare,
    format_table,
    run,
    segment,
    slice_budgets,
)
from inspector.tokens import estimate_tokens

from .support.builder import SessionBuilder
from .support.paths import FIXTURES, PI_EXPECTED, REPO, SHARED
from .support.pi_oracle import PiOracle, pinned_versions

PI_HEADINGS = (
    "## Goal",
    "## Constraints & Preferences",
    "## Progress",
    "### Done",
    "### In Progress",
    "### Blocked",
    "## Key Decisions",
    "## Next Steps",
    "## Critical Context",
)


def _norm(text: str) -> str:
    return " ".join(text.split())


def _fixture_prep():  # type: ignore[no-untyped-def]
    s = load_session(FIXTURES / "before-compaction.jsonl")
    return s, prepare_compaction(s.path_entries(), path_indexes=s.path())


class Stub:
    """Records requests; ``barrier`` makes calls wait for each other (proves they run concurrently)."""

    name = "stub"
    label = "stub"

    def __init__(self, barrier: threading.Barrier | None = None, kinds: tuple[str, ...] = ()) -> None:
        self.reqs: list[SummaryRequest] = []
        self.barrier, self.kinds = barrier, kinds
        self.lock = threading.Lock()

    def summarize(self, req: SummaryRequest) -> SummaryResult:
        with self.lock:
            self.reqs.append(req)
        if self.barrier is not None and req.kind in self.kinds:
            self.barrier.wait(timeout=5)
        return SummaryResult(
            f"<{req.kind} {req.slice_index}>", SummaryUsage(10, 2, 1, 0.0, 0.01), "stub", f"P:{req.kind}"
        )


# --- offline summary of the shared fixture: the acceptance test ---------------------------


def test_offline_summary_of_before_compaction_has_pis_modified_files_and_the_latest_request() -> None:
    s, prep = _fixture_prep()
    oracle = json.loads((PI_EXPECTED / "before-compaction.json").read_text())
    pi = next(
        c["prepareCompaction"]
        for c in oracle["compaction"]
        if c["keepRecentTokens"] == oracle["defaults"]["keepRecentTokens"]
    )
    res = summarize_compaction(prep, get_summarizer("offline"))
    assert res.summarizer == "offline extractive" and res.error is None and not res.fell_back
    body = res.text.split("<read-files>")[0]
    assert pi["fileOps"]["modifiedFiles"]
    for f in pi["fileOps"]["modifiedFiles"]:  # in the Done items and in the appended block
        assert f in body, f
    assert res.text.endswith(
        format_file_operations(pi["fileOps"]["readFiles"], pi["fileOps"]["modifiedFiles"])
    )
    # the user's latest request, from pi's own lists (entry indexes and roles), whole
    idx = [
        i
        for part in ("messagesToSummarize", "turnPrefixMessages")
        for i, role in zip(pi[part]["entryIndexes"], pi[part]["roles"], strict=True)
        if role == "user"
    ][-1]
    content = s.entries[idx].message.content
    latest = content if isinstance(content, str) else "".join(b.text for b in content if b.type == "text")
    assert len(latest) > 150 and _norm(latest) in _norm(res.text)
    assert SPLIT_TURN_SEPARATOR in res.text  # pi splits a turn here at the default settings
    for h in PI_HEADINGS:
        assert h in res.text
    assert "## Original Request" in res.text.split(SPLIT_TURN_SEPARATOR)[1]


def test_offline_keeps_the_previous_summary_of_the_fixture_including_its_own_sections() -> None:
    _, prep = _fixture_prep()
    res = get_summarizer().summarize(
        SummaryRequest(prep.messagesToSummarize, prep.previousSummary, None, 13107)
    )
    # the earlier checkpoint is free-form: its goal, done work, code block and key files all survive
    assert "Refactor `coding-agent` to eliminate code duplication" in res.text
    assert "`AgentSession` class created" in res.text
    assert "│   ├── agent-session.ts" in res.text and "**Key Files**" in res.text


def test_offline_is_deterministic_across_processes() -> None:
    _, prep = _fixture_prep()
    here = summarize_compaction(prep, get_summarizer("offline")).text
    assert here == summarize_compaction(prep, get_summarizer("offline")).text
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-m", "inspector", "summarize", str(FIXTURES / "before-compaction.jsonl"), "--json"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert json.loads(out.stdout)["text"] == here


@pytest.mark.parametrize("kind", ["history", "turn_prefix", "branch"])
@pytest.mark.parametrize("budget", [0, 30, 160, 700, 4000])
def test_offline_respects_the_token_budget(kind: str, budget: int) -> None:
    _, prep = _fixture_prep()
    msgs = prep.turnPrefixMessages if kind == "turn_prefix" else prep.messagesToSummarize
    res = get_summarizer().summarize(SummaryRequest(msgs, prep.previousSummary, None, budget, kind))  # type: ignore[arg-type]
    assert estimate(res.text) <= budget
    if budget >= 4000:  # room enough: the request that is being worked on is never trimmed
        users = [m.message for m in msgs if m.role == "user"]
        req = [
            u
            for u in users
            if len(
                _norm(
                    u.content
                    if isinstance(u.content, str)
                    else " ".join(b.text for b in u.content if b.type == "text")
                ).split()
            )
            >= 4
        ]
        first_or_last = req[0] if kind == "turn_prefix" else req[-1]
        text = " ".join(b.text for b in first_or_last.content if b.type == "text")
        assert _norm(text)[:2000] in _norm(res.text)


def _small_session(sb: SessionBuilder) -> object:
    sb.user("Make the parser stream its input.")
    kept = sb.user("Now update the tests. You must keep the public API stable.")
    sb.add(
        "compaction",
        firstKeptEntryId=kept,
        tokensBefore=10,
        summary=(
            "## Goal\nOld goal from before\n\n## Progress\n### Done\n- [x] Parser refactor\n\n### In Progress\n"
            "- [ ] Streaming input\n\n## Key Decisions\n- **Earlier**: reason\n\n## Next Steps\n1. Old next step\n\n"
            "## Critical Context\n- (none)\n\n---\n\n**Turn Context (split turn):**\n\n## Original Request\n"
            "Turn request\n\n<read-files>\nsrc/only-read.ts\n</read-files>\n\n<modified-files>\nsrc/old.ts\n"
            "</modified-files>"
        ),
    )
    sb.assistant(
        "I'll use a generator instead of a callback, because it composes.",
        tools=[("edit", {"path": "src/p.ts", "oldText": "a", "newText": "b"})],
    )
    sb.tool_result("ok", tool="edit")
    sb.assistant("", tools=[("bash", {"command": "npm test"})])
    sb.tool_result("FAIL tests/p.test.ts: expected 2", tool="bash", is_error=True)
    sb.assistant("Next I need to fix the failing assertion in tests/p.test.ts.")
    sb.user("Please also never touch the lexer. Do the docs next.")
    sb.assistant("ok")
    sb.user("x " * 400)
    return sb.session()


def test_offline_updates_a_previous_summary_instead_of_restarting(sb: SessionBuilder) -> None:
    s = _small_session(sb)
    prep = prepare_compaction(
        s.path_entries(), CompactionSettings(keepRecentTokens=200), path_indexes=s.path()
    )
    assert prep.previousSummary and not prep.isSplitTurn
    text = summarize_compaction(prep, get_summarizer()).text
    body = text.split("<read-files>")[0]
    sec = parse_summary(body)
    assert "Old goal from before" in sec["Goal"] and "Turn request" in sec["Goal"]
    assert "Parser refactor" in sec["Done"] and "Edited `src/p.ts`" in sec["Done"]
    assert "**Earlier**: reason" in sec["Key Decisions"]
    assert "**I'll use a generator instead of a callback**: it composes." in sec["Key Decisions"]
    assert any("never touch the lexer" in c for c in sec["Constraints & Preferences"])
    # the message the earlier compaction kept is summarised now (pi starts at its firstKeptEntryId)
    assert any("must keep the public API stable" in c for c in sec["Constraints & Preferences"])
    assert any("npm test" in b and "FAIL tests/p.test.ts" in b for b in sec["Blocked"])
    assert sec["Next Steps"] != ["Old next step"]  # rewritten from the new messages
    assert "Earlier in progress: Streaming input" in sec["Critical Context"]
    assert "src/only-read.ts" not in body  # file blocks of the old summary are not content


def test_offline_previous_summary_round_trips_unchanged() -> None:
    _, prep = _fixture_prep()
    first = get_summarizer().summarize(
        SummaryRequest(prep.messagesToSummarize, prep.previousSummary, None, 13107)
    )
    again = get_summarizer().summarize(SummaryRequest((), first.text, None, 13107))
    assert again.text == first.text


def test_parse_summary_keeps_code_fences_and_foreign_sections() -> None:
    text = (
        "# Checkpoint\n\n## Objective\nShip it\n\n## Key Files\n- `a.py`: entry\n\n### Layout\n```\n## not a heading\n"
        "src/\n```\n\n1. Primary Request and Intent:\n   fix the bug\n\n<modified-files>\nz.py\n</modified-files>"
    )
    sec = parse_summary(text)
    assert sec["Goal"] == ["Ship it", "fix the bug"]  # Claude Code's numbered section maps onto pi's
    cc = "\n".join(sec["Critical Context"])
    assert "**Key Files**" in cc and "## not a heading" in cc and "src/" in cc and "fix the bug" not in cc
    assert "not a heading" not in sec and "z.py" not in cc


def test_a_claude_code_summary_is_read_by_its_nine_numbered_sections() -> None:
    """Claude Code writes ``N. Title:`` lines with the section indented under them (the shared
    transcript b0dc55): known titles map onto pi's sections, item by item; other numbered lines
    (a numbered list in a body, a title it does not use) stay text."""
    text = (
        "Analysis:\nLet me go through it.\n\nSummary:\n1. Primary Request and Intent:\n"
        "   - Review the e2e tests\n   - Fix the auto-commit bug\n\n2. Key Technical Concepts:\n"
        "   - Shadow branches\n\n7. Pending Tasks:\n   - Add the worktree test\n\n8. Current Work:\n"
        "   Fixing `stagedFilesOverlapWithContent`:\n   1. Steps to do:\n\n9. Optional Next Step:\n"
        "   Run the failing test again.\n"
    )
    sec = parse_summary(text)
    assert sec["Goal"] == ["Review the e2e tests", "Fix the auto-commit bug"]
    assert sec["Next Steps"] == ["Add the worktree test", "Run the failing test again."]
    assert sec["In Progress"][0].startswith("Fixing `stagedFilesOverlapWithContent`")
    assert any(x.startswith("**Key Technical Concepts**") for x in sec["Critical Context"])


def test_offline_branch_and_turn_prefix_layouts(sb: SessionBuilder) -> None:
    s = _small_session(sb)
    msgs = prepare_branch_entries(s.path_entries()).messages
    branch = get_summarizer().summarize(SummaryRequest(msgs, None, None, 2048, "branch")).text
    assert "## Critical Context" not in branch and "## Next Steps" in branch
    prefix = get_summarizer().summarize(SummaryRequest(msgs, None, None, 2048, "turn_prefix")).text
    assert prefix.startswith("## Original Request\nMake the parser stream its input.")
    assert "## Early Progress" in prefix and "## Context for Suffix" in prefix and "## Goal" not in prefix


def test_offline_custom_instructions_pick_matching_lines(sb: SessionBuilder) -> None:
    s = _small_session(sb)
    prep = prepare_compaction(
        s.path_entries(), CompactionSettings(keepRecentTokens=200), path_indexes=s.path()
    )
    res = summarize_compaction(prep, get_summarizer(), custom_instructions="the failing assertion")
    assert "Focus (the failing assertion): Next I need to fix the failing assertion" in res.text
    assert res.prompt == ""  # the offline summarizer sends nothing
    shown = compaction_prompts(prep, custom_instructions="the failing assertion")
    assert shown.startswith("===== history summary =====\n[system]\n")
    assert shown.endswith("Extra focus asked for by the user: the failing assertion")


# --- pi's compact() and generateBranchSummary composition -----------------------------------------


def test_compaction_composition_is_pis_with_both_calls_concurrent() -> None:
    _, prep = _fixture_prep()
    stub = Stub(threading.Barrier(2), kinds=("history", "turn_prefix"))
    res = summarize_compaction(prep, stub, custom_instructions="focus X")
    hist, pre = sorted(stub.reqs, key=lambda r: r.kind)
    assert (hist.kind, hist.max_tokens, hist.previous_summary, hist.custom_instructions) == (
        "history",
        13107,
        prep.previousSummary,
        "focus X",
    )
    assert (pre.kind, pre.max_tokens, pre.previous_summary, pre.custom_instructions) == (
        "turn_prefix",
        8192,
        None,
        None,
    )
    assert pre.messages == prep.turnPrefixMessages and hist.messages == prep.messagesToSummarize
    r, m = prep.fileOps.lists()
    assert res.text == "<history 0>" + SPLIT_TURN_SEPARATOR + "<turn_prefix 0>" + format_file_operations(r, m)
    assert (res.usage.calls, res.usage.input_tokens, res.usage.cost_usd) == (2, 20, pytest.approx(0.02))
    assert (
        res.prompt
        == "===== history summary =====\nP:history\n\n===== turn-prefix summary =====\nP:turn_prefix"
    )
    codex = summarize_compaction(prep, Stub(), style="codex")
    assert codex.text.startswith(CODEX_SUMMARY_PREFIX + "\n<history 0>")


def test_split_turn_with_nothing_before_it_says_no_prior_history(sb: SessionBuilder) -> None:
    sb.user("Build the whole thing")
    for k in range(6):
        sb.assistant(f"step {k}", tools=[("write", {"path": f"f{k}.py", "content": "x" * 4000})])
        sb.tool_result("done", tool="write")
    s = sb.session()
    prep = prepare_compaction(
        s.path_entries(), CompactionSettings(keepRecentTokens=2000), path_indexes=s.path()
    )
    assert prep.isSplitTurn and not prep.messagesToSummarize and prep.turnPrefixMessages
    stub = Stub()
    res = summarize_compaction(prep, stub)
    assert [r.kind for r in stub.reqs] == ["turn_prefix"] and res.summarizer == "stub"
    assert res.text.startswith(NO_PRIOR_HISTORY + SPLIT_TURN_SEPARATOR + "<turn_prefix 0>")
    offline = summarize_compaction(prep, get_summarizer())
    assert offline.text.startswith(
        NO_PRIOR_HISTORY + SPLIT_TURN_SEPARATOR + "## Original Request\nBuild the whole thing"
    )


def test_branch_summary_composition(sb: SessionBuilder) -> None:
    s = _small_session(sb)
    prep = prepare_branch_entries(s.path_entries())
    stub = Stub()
    res = summarize_branch(prep, stub, custom_instructions="only tests", replace_instructions=True)
    (req,) = stub.reqs
    assert (req.kind, req.max_tokens, req.custom_instructions, req.replace_instructions) == (
        "branch",
        2048,
        "only tests",
        True,
    )
    r, m = prep.fileOps.lists()
    assert res.text == BRANCH_SUMMARY_PREAMBLE + "<branch 0>" + format_file_operations(r, m)
    assert build_prompt(req)[1].endswith(
        "</conversation>\n\nonly tests"
    )  # pi: the instructions replace the prompt
    empty = summarize_branch(prepare_branch_entries([]), stub)
    assert empty.text == "No content to summarize" and len(stub.reqs) == 1


# --- prompt styles ---------------------------------------------------------------------------------


def test_prompts_carry_pis_exact_conversation_text_and_each_systems_structure() -> None:
    _, prep = _fixture_prep()
    msgs = prep.turnPrefixMessages
    conv = serialize_conversation(convert_to_llm([m.message for m in msgs]))
    for style in STYLES:
        _, user = build_prompt(SummaryRequest(msgs, "PREV", "my focus", 100, "history", style))
        assert user.startswith(f"<conversation>\n{conv}\n</conversation>\n\n")
        assert "PREV" in user and user.endswith("Extra focus asked for by the user: my focus")
    pi = build_prompt(SummaryRequest(msgs, None, None, 100))[1]
    assert all(h in pi for h in PI_HEADINGS) and "<previous-summary>" not in pi
    update = build_prompt(SummaryRequest(msgs, "PREV", None, 100))[1]
    assert "<previous-summary>\nPREV\n</previous-summary>" in update and "NEW" in update
    turn = build_prompt(SummaryRequest(msgs, "PREV", "x", 100, "turn_prefix"))[1]
    assert "## Original Request" in turn and "## Context for Suffix" in turn and "PREV" not in turn
    branch = build_prompt(SummaryRequest(msgs, None, None, 100, "branch"))[1]
    assert "## Next Steps" in branch and "Critical Context" not in branch
    claude = build_prompt(SummaryRequest(msgs, None, None, 100, "history", "claude-code"))[1]
    assert "<analysis>" in claude and "<summary>" in claude
    assert [claude.index(f"{i}. {n}:") for i, n in enumerate(CLAUDE_CODE_SECTIONS, 1)] == sorted(
        claude.index(f"{i}. {n}:") for i, n in enumerate(CLAUDE_CODE_SECTIONS, 1)
    )
    assert extract_summary("claude-code", "<analysis>a</analysis>\n<summary>\nS\n</summary>") == "S"
    assert "CONTEXT CHECKPOINT".lower() in build_prompt(SummaryRequest(msgs, style="codex"))[1].lower()
    oc = build_prompt(SummaryRequest(msgs, "PREV", None, 100, "history", "opencode"))[1]
    assert "<prior-summary>" in oc and "## Relevant files / directories" in oc
    with pytest.raises(ValueError):
        build_prompt(SummaryRequest(msgs, style="nope"))


def _source_prompts(pi: PiOracle | None) -> str:
    """The prompts we must not copy: the research note's (when ../shared is beside the repo) and
    pi's own, from every pinned pi the harness installed (where node and npm are)."""
    texts = []
    seed = SHARED / "seeds" / "compaction-research.txt"
    if seed.exists():
        texts.append(seed.read_text(encoding="utf-8"))
    folders = pinned_versions() if pi is not None else {}
    for folder in folders:
        d = pi.modules / folder / "dist" / "core" / "compaction"  # type: ignore[union-attr]
        for name in ("compaction.js", "branch-summarization.js", "utils.js"):
            assert (d / name).exists(), d / name
            texts.append((d / name).read_text(encoding="utf-8"))
    return "\n".join(texts)


def test_prompts_are_our_own_words(request: pytest.FixtureRequest) -> None:
    try:
        pi = request.getfixturevalue("pi_oracle")
    except pytest.skip.Exception:
        pi = None
    src = _source_prompts(pi)
    if not src:
        pytest.skip(
            "no source prompts to compare with: neither ../shared/seeds nor node/npm for pi's package"
        )

    def shingles(t: str, n: int = 7) -> set[str]:
        w = re.findall(r"[a-z0-9']+", t.lower())
        return {" ".join(w[i : i + n]) for i in range(len(w) - n + 1)}

    theirs = shingles(src)
    ours = set()
    for style in STYLES:
        for kind in ("history", "turn_prefix", "branch", "stitch", "slice"):
            for prev in (None, "p"):
                sys_, user = build_prompt(
                    SummaryRequest(
                        (),
                        prev,
                        "c",
                        100,
                        kind,
                        style,
                        slice_index=1,  # type: ignore[arg-type]
                        slice_count=2,
                        parts=("a",),
                    )
                )
                ours |= shingles(sys_) | shingles(user)
    ours |= shingles(CODEX_SUMMARY_PREFIX)
    assert not ours & theirs


# --- slice strategies ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kw", "said"),
    [
        ({"slice_tokens": 0}, "a slice holds 1 token or more, not 0"),
        ({"overlap_tokens": -5}, "the overlap is 0 or more and at most half a slice"),
        ({"overlap_tokens": 19_999}, "the overlap is 0 or more and at most half a slice (10,000 of 20,000"),
        ({"compression_ratio": float("nan")}, "the compression ratio is above 0 and at most 1, not nan"),
        ({"compression_ratio": 0.0}, "the compression ratio is above 0 and at most 1, not 0.0"),
        ({"recent_boost": float("inf")}, "the recent boost is a positive number, not inf"),
        ({"recent_boost": -3.0}, "the recent boost is a positive number, not -3.0"),
        ({"max_workers": 0}, "max_workers is 1 or more, not 0"),
    ],
)
def test_slice_settings_that_slice_nothing_sensible_are_refused(kw: dict[str, Any], said: str) -> None:
    """An overlap of 19,999 of 20,000 tokens had moved each slice on by one message: 113 calls
    where 6 do on the long sample; a NaN ratio had been a traceback, a negative one budgets of 1."""
    with pytest.raises(ValueError, match="^" + re.escape(said)):
        SliceSettings(**kw)
    assert SliceSettings(overlap_tokens=10_000).overlap_tokens == 10_000  # half a slice is the most


def test_segment_and_budgets_follow_the_research_note() -> None:
    _, prep = _fixture_prep()
    msgs = prep.messagesToSummarize
    ss = SliceSettings(slice_tokens=20000, overlap_tokens=2000)
    slices = segment(msgs, ss)
    assert len(slices) > 2 and slices[0][0] == msgs[0] and slices[-1][-1] == msgs[-1]
    covered = {m.entry_index for sl in slices for m in sl}
    assert covered == {m.entry_index for m in msgs}
    for a, b in zip(slices, slices[1:], strict=False):
        overlap = [m for m in b if m in a]
        assert sum(estimate_tokens(m.message) for m in overlap) <= 2000 and b[0] != a[0]
        assert sum(estimate_tokens(m.message) for m in a) >= 20000
    budgets = slice_budgets(slices, ss)
    for i, (sl, b) in enumerate(zip(slices, budgets, strict=True)):
        base = sum(estimate_tokens(m.message) for m in sl) * 0.1
        assert b == int(base * (2.0 if i >= len(slices) - 2 else 1.0))


def test_slice_strategies_make_the_calls_the_note_describes() -> None:
    _, prep = _fixture_prep()
    req = SummaryRequest(prep.messagesToSummarize, "PREV", "focus", 13107)
    n = len(segment(req.messages, SliceSettings()))
    stub = Stub(threading.Barrier(n), kinds=("slice",))  # all slices at once, or the barrier breaks
    res = run("parallel-stitch", req, stub, SliceSettings(max_workers=n))
    slices_, stitch = stub.reqs[:-1], stub.reqs[-1]
    assert len(slices_) == n and res.usage.calls == n + 1 and stitch.kind == "stitch"
    assert stitch.parts == tuple(f"<slice {i}>" for i in range(n)) and stitch.previous_summary == "PREV"
    assert stitch.max_tokens == 13107 and all(r.previous_summary is None for r in slices_)
    assert (
        res.prompt.count("----- call:") == n + 1
        and f"----- call: slice 1 of {n} -----\nP:slice" in res.prompt
    )
    first = build_prompt(next(r for r in slices_ if r.slice_index == 0))[1]
    last = build_prompt(next(r for r in slices_ if r.slice_index == n - 1))[1]
    assert f"slice 1 of {n}" in first and "START" in first and "MOST RECENT" in last

    acc = Stub()
    text = run("sequential-accumulated", req, acc).text
    assert [len(r.parts) for r in acc.reqs] == list(range(1, n + 1))  # PREV, then each earlier slice
    assert text.startswith("--- Earlier summary ---\nPREV") and f"--- Slice {n} ---" in text

    roll = Stub()
    run("sequential-rolling", req, roll)
    assert [r.previous_summary for r in roll.reqs] == ["PREV"] + [f"<history {0}>"] * (n - 1)
    assert all(r.kind == "history" for r in roll.reqs) and roll.reqs[-1].max_tokens <= 13107

    one = Stub()
    assert run("single-shot", req, one).usage.calls == 1 and one.reqs == [req]


def test_compare_prints_the_notes_table_for_any_session() -> None:
    _, prep = _fixture_prep()
    rows = compare(
        SummaryRequest(prep.messagesToSummarize, prep.previousSummary, None, 13107), get_summarizer()
    )
    assert [r["strategy"] for r in rows] == list(STRATEGIES)
    assert rows[0]["calls"] == 1 and rows[1]["calls"] == rows[1]["slices"] + 1
    assert all(r["inputTokens"] > 0 and r["outputTokens"] > 0 for r in rows)
    table = format_table(rows).splitlines()
    assert [c.strip() for c in table[0].strip("|").split("|")] == [
        "Strategy",
        "Input Tokens",
        "Output Tokens",
        "API Calls",
        "Time (ms)",
    ]
    assert len(table) == 6


def test_offline_strategies_stay_within_budget_and_keep_the_previous_goal() -> None:
    _, prep = _fixture_prep()
    req = SummaryRequest(prep.messagesToSummarize, prep.previousSummary, None, 13107)
    for strategy in ("parallel-stitch", "sequential-rolling"):
        text = run(strategy, req, get_summarizer()).text
        assert estimate(text) <= 13107 and "Refactor `coding-agent`" in text


# --- cache location and command --------------------------------------------------------------------


def test_cache_dir_env_override_and_platformdirs_default(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("INSPECTOR_CACHE_DIR", str(tmp_path / "c"))
    assert summary_cache.cache_dir() == tmp_path / "c"
    summary_cache.put("ab" * 32, {"text": "key sk-ant-abcdefghijklmnopqrstuvwx here"})
    assert summary_cache.get("ab" * 32) == {"text": "key [REDACTED:anthropic-key] here"}
    monkeypatch.delenv("INSPECTOR_CACHE_DIR")
    from platformdirs import user_cache_dir

    assert summary_cache.cache_dir() == Path(user_cache_dir("context-inspector")) / "summaries"


def test_summarize_command(capsys) -> None:  # type: ignore[no-untyped-def]
    from inspector.cli import main

    f = str(FIXTURES / "before-compaction.jsonl")
    assert main(["summarize", f, "--json", "--show-prompt", "--instructions", "tests"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["summarizer"] == "offline extractive" and out["promptSent"] is False and out["isSplitTurn"]
    assert "<modified-files>" in out["text"] and "===== turn-prefix summary =====" in out["prompt"]
    assert main(["summarize", f, "--show-prompt", "--style", "opencode"]) == 0
    text = capsys.readouterr().out
    assert (
        "sends nothing" in text
        and "## Relevant files / directories" in text
        and "[offline extractive]" in text
    )
    assert main(["summarize", f, "--slices", "compare", "--slice-tokens", "30000"]) == 0
    table = capsys.readouterr().out
    assert "| Strategy" in table and "sequential-rolling" in table and "slices of 30,000 tokens" in table


def test_summarize_says_when_there_is_nothing_to_summarise(capsys) -> None:  # type: ignore[no-untyped-def]
    """A branch whose messages fit in keepRecentTokens: pi still asks for a summary (of nothing);
    the command says why the summary is empty, on stderr, and prints it as pi would store it."""
    from inspector.cli import main

    f = str(REPO / "sample_sessions" / "small-tutorial.jsonl")
    assert main(["summarize", f, "--json"]) == 0
    got = capsys.readouterr()
    assert json.loads(got.out)["text"].startswith("## Goal")
    assert (
        "nothing to summarise: the messages since the start of the branch (1,566 tokens as pi counts them) "
        "fit in the newest 20,000 tokens that keepRecentTokens keeps" in got.err
    )
    assert main(["summarize", f, "--keep-recent-tokens", "1000"]) == 0
    assert "nothing to summarise" not in capsys.readouterr().err


def test_a_branch_summary_budget_is_the_models_window_less_the_reserve() -> None:
    """pi's generateBranchSummary: (model.contextWindow || 128000) - reserveTokens, the session's
    current model passed (agent-session.ts): a 200k model reads up to 183,616 tokens of the branch."""
    from inspector.branch_summary import default_branch_budget, prepare_branch_summary

    from .support.builder import SessionBuilder

    assert default_branch_budget() == 128_000 - 16_384 and default_branch_budget(200_000) == 183_616
    b = SessionBuilder()
    root = b.user("start")
    for _ in range(4):
        b.assistant("a" * 160_000)  # 40,000 tokens each
    old = b.user("more")
    b.msg("user", parent=root, content="elsewhere")
    s = b.session()
    target = len(s.entries) - 1
    _, small = prepare_branch_summary(s, s.by_id[old], target)
    _, large = prepare_branch_summary(s, s.by_id[old], target, context_window=200_000)
    assert (small.budget, len(small.messages)) == (111_616, 3)  # "more" and two answers
    assert (large.budget, len(large.messages)) == (183_616, 5)
