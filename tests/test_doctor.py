"""Each doctor finding on a hand-built session, and silence on a clean one."""

from __future__ import annotations

import dataclasses

from inspector.doctor import DoctorOptions, diagnose

from .support.builder import SessionBuilder


def kinds(b: SessionBuilder, **opts) -> dict[str, list[list[int]]]:
    out: dict[str, list[list[int]]] = {}
    for f in diagnose(b.session(), options=DoctorOptions(**opts)).findings:
        out.setdefault(f.kind, []).append(f.entries)
    return out


def clean() -> SessionBuilder:
    b = SessionBuilder()
    b.user("fix a.py")
    b.assistant("", tools=[("read", {"path": "a.py"})])
    b.tool_result("code")
    b.assistant("", tools=[("edit", {"path": "a.py", "oldText": "x", "newText": "y"})])
    b.tool_result("ok", tool="edit")
    b.assistant("done")
    return b


def test_clean_session_has_no_findings() -> None:
    assert kinds(clean()) == {}


def test_tool_call_without_result_and_result_without_call() -> None:
    b = clean()
    b.user("more")
    b.assistant("", tools=[("bash", {"command": "ls"})])
    b.user("never mind")  # the call never got a result
    b.msg(
        "toolResult",
        toolCallId="ghost",
        toolName="read",
        content=[{"type": "text", "text": "?"}],
        isError=False,
    )
    b.assistant("ok")
    k = kinds(b)
    assert k["tool-call-without-result"] == [[7]] and k["result-without-call"] == [[9]]


def test_aborted_answers_calls_are_only_info() -> None:
    b = clean()
    b.user("again")
    b.assistant("", tools=[("bash", {"command": "ls"})], stop="aborted")
    b.user("ok")
    b.assistant("fine")
    f = [x for x in diagnose(b.session()).findings if x.kind == "tool-call-without-result"]
    assert [x.severity for x in f] == ["info"]


def test_compaction_first_kept_off_path() -> None:
    b = clean()
    b.add("compaction", summary="s", firstKeptEntryId="nowhere", tokensBefore=1)
    b.user("next")
    assert kinds(b)["compaction-first-kept-off-path"] == [[6]]


def test_summary_that_dropped_a_modified_file() -> None:
    b = clean()
    kept = b.user("next")
    b.add(
        "compaction",
        summary="we fixed things",
        firstKeptEntryId=kept,
        tokensBefore=1,
        details={"readFiles": [], "modifiedFiles": []},
    )
    assert kinds(b)["summary-dropped-modified-files"] == [[7, 3]]
    b2 = clean()
    kept = b2.user("next")
    b2.add("compaction", summary="edited a.py", firstKeptEntryId=kept, tokensBefore=1)
    assert "summary-dropped-modified-files" not in kinds(b2)


def test_context_overflow_from_recorded_usage() -> None:
    b = clean()
    b.user("big")
    b.assistant("x", usage=250001)
    assert kinds(b, context_window=250000)["context-overflow"] == [[7]]
    assert "context-overflow" not in kinds(b, context_window=250001)


def test_an_answered_call_over_the_window_says_the_window_set_is_too_small() -> None:
    """The provider answered a 250,001-token call: the model's window is larger than 250,000, so
    that is a warning about the window set, not an overflow (an error)."""
    b = clean()
    b.user("big")
    b.assistant("x", usage=250001)
    (f,) = [f for f in diagnose(b.session(), options=DoctorOptions(context_window=250000)).findings]
    assert (f.kind, f.severity, f.entries) == ("context-overflow", "warning", [7])
    assert "the provider answered them" in f.message and "250,001 at entry 7" in f.message


def test_a_failed_call_over_the_window_is_an_overflow() -> None:
    """A call that ended in an error over the window may be a real overflow; an aborted one is
    left out (its usage is not what the provider saw)."""
    b = clean()
    b.user("big")
    b.assistant("", usage=260000, stop="error", errorMessage="prompt is too long")
    b.user("again")
    b.assistant("", usage=270000, stop="aborted")
    b.user("once more")
    b.assistant("ok", usage=255000)
    found = {
        f.severity: f
        for f in diagnose(b.session(), options=DoctorOptions(context_window=250000)).findings
        if f.kind == "context-overflow"
    }
    assert sorted(found) == ["error", "warning"]
    assert found["error"].entries == [7] and "ended in an error" in found["error"].message
    assert found["warning"].entries == [11]


def test_same_file_read_many_times_and_reread_after_compaction() -> None:
    b = SessionBuilder()
    b.user("go")
    for _ in range(2):
        b.assistant("", tools=[("read", {"path": "a.py"})])
        b.tool_result("code")
    kept = b.user("next")
    b.add("compaction", summary="read a.py", firstKeptEntryId=kept, tokensBefore=1)
    for _ in range(2):
        b.assistant("", tools=[("read", {"path": "a.py"})])
        b.tool_result("code")
    k = kinds(b, loop_repeat=10)
    assert k["file-read-many-times"] == [[1, 3, 7, 9]]
    assert k["reread-after-compaction"] == [[7], [9]]


def test_giant_tool_output() -> None:
    b = clean()
    b.user("dump")
    b.assistant("", tools=[("bash", {"command": "cat big"})])
    b.tool_result("x" * 80004, tool="bash")  # 20,001 tokens
    b.assistant("ok")
    assert kinds(b)["giant-tool-output"] == [[8]]
    assert "giant-tool-output" not in kinds(b, giant_tokens=20001)


def test_repeated_identical_tool_calls_are_a_loop() -> None:
    b = SessionBuilder()
    b.user("go")
    for _ in range(3):
        b.assistant("", tools=[("bash", {"command": "make"})])
        b.tool_result("fail", tool="bash")
    b.assistant("", tools=[("bash", {"command": "make test"})])
    b.tool_result("ok", tool="bash")
    assert kinds(b)["repeated-tool-call"] == [[1, 3, 5]]
    assert "repeated-tool-call" not in kinds(b, loop_repeat=4)


def test_polling_a_running_command_is_not_a_loop() -> None:
    """Codex's write_stdin with no input waits for a command's output: repeated, it is a long
    command (info), not a loop; the same call writing input is still a loop (warning)."""
    for chars, severity in (("", "info"), ("y\n", "warning")):
        b = SessionBuilder()
        b.user("build")
        for _ in range(3):
            b.assistant(
                "", tools=[("write_stdin", {"session_id": 7, "chars": chars, "yield_time_ms": 30000})]
            )
            b.tool_result("still running", tool="write_stdin")
        b.assistant("done")
        (f,) = [f for f in diagnose(b.session()).findings if f.kind == "repeated-tool-call"]
        assert f.severity == severity and f.entries == [1, 3, 5], chars
        assert ("polled a running command 3 times" in f.message) == (severity == "info")


def test_failure_streak() -> None:
    b = clean()
    b.user("again")
    for _ in range(3):
        b.assistant("", stop="error", errorMessage="overloaded")
    b.assistant("finally")
    assert kinds(b)["failure-streak"] == [[7, 8, 9]]


def test_summary_text_duplicated_in_context() -> None:
    b = SessionBuilder()
    text = "## Goal\nShip the parser with all the edge cases handled properly."
    b.user("start")
    kept = b.user("next")
    b.add("compaction", summary=text, firstKeptEntryId=kept, tokensBefore=1)
    b.user("As a reminder: " + text)
    assert kinds(b)["duplicated-summary"] == [[3, 2]]


def test_model_change_mid_turn() -> None:
    b = clean()
    b.user("next")
    b.assistant("", tools=[("read", {"path": "b.py"})])
    b.tool_result("code")
    b.add("model_change", provider="openai", modelId="gpt-5")
    b.assistant("done")
    assert kinds(b)["model-change-mid-turn"] == [[9]]


def test_model_change_between_turns_is_not_flagged() -> None:
    b = clean()
    b.user("next")
    b.assistant("all done")  # the final answer of the turn
    b.add("model_change", provider="openai", modelId="gpt-5")  # /model before the next prompt
    b.user("and now?")
    b.assistant("ok")
    assert "model-change-mid-turn" not in kinds(b)


def test_load_issues_are_findings_too() -> None:
    from inspector import parse_session
    from inspector.doctor import diagnose as d

    s = parse_session('{"type":"session","version":3,"id":"s"}\n{oops\n')
    (f,) = d(s).findings
    assert (f.kind, f.severity, f.lines) == ("load-issue:malformed-json", "error", [2])


def _cached(b: SessionBuilder, read: int, write: int, **kw) -> str:  # type: ignore[no-untyped-def]
    """An answer whose recorded usage read and wrote these many cached tokens."""
    eid = b.assistant("ok", usage=100, **kw)
    b.lines[-1]["message"]["usage"].update(cacheRead=read, cacheWrite=write)
    return eid


def _breaks(b: SessionBuilder, fmt: str = "pi", **opts) -> list[tuple[str, list[int], str]]:  # type: ignore[no-untyped-def]
    """The cache breaks the doctor finds in ``b``'s session, read as a file of agent ``fmt``."""
    s = dataclasses.replace(b.session(), format=fmt)
    found = diagnose(s, options=DoctorOptions(**opts)).findings  # warnings first, then info
    return sorted(
        ((f.severity, f.entries, f.message) for f in found if f.kind == "cache-break"), key=lambda x: x[1]
    )


def test_a_call_that_lost_the_prompt_cache_is_a_cache_break_with_its_cause() -> None:
    """From the recorded usage alone: a read below half of what the call before had cached (read +
    written), losing at least cache_break_tokens. Nothing in the file explains the first (a
    warning); a compaction explains the second (info); a smaller loss, or one within half, is none."""
    b = SessionBuilder()
    b.user("a")
    _cached(b, 0, 40_000)  # entry 1: writes the cache
    b.user("b")
    _cached(b, 30_000, 12_000)  # entry 3: 30,000 of 40,000 read: more than half, no break
    b.user("c")
    _cached(b, 2_000, 40_000)  # entry 5: 2,000 of 42,000: lost 40,000, unexplained
    b.add("compaction", summary="s", firstKeptEntryId="e0000005", tokensBefore=1)  # entry 6
    b.user("d")
    _cached(b, 0, 20_000)  # entry 8: 0 of 42,000 after the compaction
    b.user("e")
    _cached(b, 15_000, 0)  # entry 10: 15,000 of 20,000: within half
    b.user("f")
    _cached(b, 0, 100)  # entry 12: lost 15,000
    (first, second, third) = _breaks(b)
    assert first[:2] == ("warning", [5, 3]) and "read 2,000 of the 42,000 tokens" in first[2]
    assert "40,000 tokens were paid again" in first[2] and "nothing in the file explains it" in first[2]
    assert second[:2] == ("info", [8, 5, 6]) and "after the compaction at entry 6" in second[2]
    assert third[:2] == ("warning", [12, 10])
    assert [x[1][0] for x in _breaks(b, cache_break_tokens=20_000)] == [5, 8]  # 15,000 lost is under it


def test_a_cache_break_after_idle_time_or_a_model_change_is_expected() -> None:
    b = SessionBuilder()
    b.user("a")
    _cached(b, 0, 50_000)  # entry 1, its entry stamped 2026-01-01T00:00:02
    b.user("b")
    _cached(b, 0, 50_000, timestamp=1767225600000 + 7 * 60_000)  # entry 3: asked 7 minutes later
    b.user("c")
    _cached(b, 0, 50_000)  # entry 5: another model
    b.lines[-1]["message"]["model"] = "other"
    (idle, model) = _breaks(b)
    assert idle[:2] == ("info", [3, 1]) and "after 7.0 idle minutes" in idle[2]
    assert model[:2] == ("info", [5, 3]) and "the model changed (m → other)" in model[2]


def test_a_cache_break_after_a_change_of_thinking_level_is_expected_on_anthropic() -> None:
    """Changing the thinking parameters keeps only the system prompt and tools cached (Anthropic);
    a level set again to what it was is no change, and OpenAI is not said so."""

    def breaks(level: str, provider: str = "anthropic") -> list[tuple[str, list[int], str]]:
        b = SessionBuilder()
        b.add("thinking_level_change", thinkingLevel="low")
        b.user("a")
        _cached(b, 0, 50_000)  # entry 2
        change = b.add("thinking_level_change", thinkingLevel=level)  # entry 3
        b.user("b")
        _cached(b, 0, 50_000)  # entry 5: nothing read, seconds later
        for line in b.lines:
            if line.get("message", {}).get("role") == "assistant":
                line["message"]["provider"] = provider
        assert change == "e0000004"
        return _breaks(b)

    ((severity, entries, message),) = breaks("high")
    assert (severity, entries) == ("info", [5, 2, 3])
    assert (
        "the thinking level changed (entry 3): when the thinking parameters change, Anthropic keeps"
        in message
    )
    assert breaks("low")[0][0] == "warning"  # the same level again: nothing in the file explains it
    assert breaks("high", "openai")[0][0] == "warning"


def _twice_after(read: int, write: int) -> SessionBuilder:
    """A call that caches 60,000 tokens, then two that read ``read`` and write ``write`` each."""
    b = SessionBuilder()
    b.user("a")
    _cached(b, 0, 60_000)
    for k in range(2):
        b.user(f"q{k}")
        _cached(b, read, write)
    return b


def test_breaks_that_read_the_same_prefix_name_it_and_recorded_costs_are_quoted() -> None:
    b = _twice_after(18_000, 50_000)  # each reads only the shared 18,000-token prefix
    for line in b.lines:
        u = line.get("message", {}).get("usage")
        if u:
            u["cost"] = {"total": 0.5 if u["cacheRead"] else 0.25}
    found = _breaks(b)
    assert [f[1][0] for f in found] == [3, 5]
    assert all("only the 18,000-token prefix every request shares" in f[2] for f in found)
    assert "this call cost $0.5000, the one before $0.2500" in found[0][2]
    # pi's breakpoint closes the system prompt (after the tools): that read proves both unchanged
    assert all(
        "an earlier message pruned or edited, or the provider evicted the rest of the cache; not the system "
        "prompt or tools, which were read from it" in f[2]
        for f in found
    )
    assert all("the system prompt or tools changed" not in f[2] for f in found)
    other = _breaks(b, "opencode")  # not said where the agent's breakpoints are not known so
    assert all("the system prompt or tools changed" in f[2] for f in other)
    for line in b.lines:  # nor on OpenAI, whose read stops on a 128-token step
        if line.get("message", {}).get("role") == "assistant":
            line["message"].update(provider="openai", api="openai-responses", model="gpt-5.5")
    assert all("the system prompt or tools changed" in f[2] for f in _breaks(b))


def test_a_pi_cache_break_that_read_nothing_may_be_a_change_of_the_system_prompt_or_tools() -> None:
    found = _breaks(_twice_after(0, 60_000))  # nothing read: the tools or the system prompt may have changed
    assert [f[1][0] for f in found] == [3, 5]
    assert all("the system prompt or tools changed, or the provider evicted the cache" in f[2] for f in found)


def test_a_cache_break_where_the_prompt_fell_short_of_the_file_says_so() -> None:
    """The recorded prompt shrank by 20,000 tokens where the file appended a ~10,000-token message:
    what was sent differed from the file (an extension, the transport), not an eviction. A prompt
    that grew as the file says is left to the other causes."""
    b = SessionBuilder()
    b.user("a")
    _cached(b, 0, 60_000)  # entry 1: a 60,100-token prompt written
    b.user("b " * 20_000)  # ~10,000 tokens appended
    _cached(b, 10_000, 30_000)  # entry 3: a 40,100-token prompt, the cache read collapsed
    b.user("c " * 20_000)
    _cached(b, 2_000, 48_000)  # entry 5: grew by 10,000, as the file says: nothing in the file
    (short, plain) = _breaks(b)
    assert short[:2] == ("warning", [3, 1])
    assert (
        "the prompt was about 30k tokens smaller than the file explains (it shrank by 20,000 tokens"
        in short[2]
    )
    assert plain[:2] == ("warning", [5, 3]) and "nothing in the file explains it" in plain[2]


def test_no_cache_usage_no_cache_break() -> None:
    """A session whose provider records no cache (every read and write 0) has nothing to lose."""
    b = clean()
    for _ in range(3):
        b.user("x")
        b.assistant("y", usage=90_000)
    assert "cache-break" not in kinds(b)


def test_a_cache_break_after_an_agent_switch_is_expected() -> None:
    """OpenCode names the agent of each answer; another agent is offered other tools, so only the
    shared prefix is read: expected (info)."""
    b = SessionBuilder()
    b.user("a")
    _cached(b, 0, 50_000)
    b.lines[-1]["message"]["agent"] = "plan"
    b.user("b")
    _cached(b, 20_000, 40_000)  # entry 3: by another agent
    b.lines[-1]["message"]["agent"] = "build"
    ((severity, entries, message),) = _breaks(b)
    assert (severity, entries) == ("info", [3, 1]) and "the agent changed (plan → build)" in message


def test_a_cache_break_after_the_agents_own_pruning_or_a_dcp_compress_is_explained() -> None:
    """Outputs the agent cleared itself between two calls (OpenCode's ``time.compacted``) and a DCP
    compress explain a break (info); in a session that runs DCP, a break nothing explains names the
    plugin's tags as a possible cause (still a warning)."""
    t0 = 1767225600000  # 2026-01-01T00:00:00Z
    b = SessionBuilder()
    b.user("a")
    _cached(b, 0, 50_000, timestamp=t0)  # entry 1
    b.tool_result("old output", tool="bash", details={"opencode": {"compacted": t0 + 30_000}})  # entry 2
    b.user("b")
    _cached(b, 1_000, 50_000, timestamp=t0 + 60_000)  # entry 4: the output was cleared since entry 1
    blocks = [{"block": 1, "first": 2, "last": 3, "summary": "s"}]
    b.tool_result("compressed", tool="compress", details={"dcp": {"blocks": blocks}})  # entry 5
    b.user("c")
    _cached(b, 1_000, 50_000, timestamp=t0 + 90_000)  # entry 7: after the compress
    b.user("d")
    _cached(b, 1_000, 50_000, timestamp=t0 + 120_000)  # entry 9: nothing in the file
    cleared, compress, unexplained = _breaks(b, "opencode")
    assert cleared[:2] == ("info", [4, 1])
    assert "OpenCode cleared 1 older tool output(s) between the two calls (from entry 2)" in cleared[2]
    assert compress[:2] == ("info", [7, 4, 5]) and "after DCP's compress at entry 5" in compress[2]
    assert unexplained[:2] == ("warning", [9, 7]) and "runs the DCP plugin" in unexplained[2]
    assert "DCP" not in _breaks(b)[2][2]  # DCP is an OpenCode plugin: not named in a pi session


def test_a_cache_break_right_after_a_tool_search_says_so() -> None:
    """As the cache report does: the shared Claude Code transcript ta93abe reads only its system
    prefix right after its one ToolSearch; said beside the break (still a warning: one case is no
    rule)."""
    b = SessionBuilder()
    b.user("a")
    _cached(b, 0, 50_000)
    b.lines[-1]["message"]["content"].append(
        {"type": "toolCall", "id": "ts", "name": "ToolSearch", "arguments": {"query": "select:Foo"}}
    )
    b.tool_result("loaded", tool="ToolSearch")
    _cached(b, 16_000, 40_000)  # entry 3: only the system prefix read
    ((severity, entries, message),) = _breaks(b, "claude-code")
    assert (severity, entries) == ("warning", [3, 1]) and "the previous answer called ToolSearch" in message
    assert "ToolSearch" not in _breaks(b)[0][2]  # a pi tool of that name is not Claude Code's


def test_each_compaction_is_judged_by_the_files_modified_before_its_own_cut() -> None:
    """Two compactions on one path: each is judged by the first write or edit of each file before
    its own cut (the entry named is that first one), and a compaction may keep from the compaction
    before it (its id is on the path)."""
    b = clean()  # edits a.py at entry 3
    b.user("now b")
    b.assistant("", tools=[("write", {"path": "b.py", "content": "1"})])  # entry 7
    b.tool_result("ok", tool="write")
    b.assistant("", tools=[("edit", {"path": "a.py", "oldText": "y", "newText": "z"})])  # a.py again
    b.tool_result("ok", tool="edit")
    kept = b.user("next")
    first = b.add("compaction", summary="a.py and b.py", firstKeptEntryId=kept, tokensBefore=1)
    b.assistant("", tools=[("write", {"path": "c.py", "content": "2"})])  # entry 13
    b.tool_result("ok", tool="write")
    b.add("compaction", summary="we fixed a.py", firstKeptEntryId=first, tokensBefore=1)  # entry 15
    k = kinds(b)
    assert k["summary-dropped-modified-files"] == [[15, 7]]  # b.py only: c.py comes after the cut
    assert "compaction-first-kept-off-path" not in k


def test_an_entry_whose_id_is_not_a_string_is_not_an_error_of_the_doctor() -> None:
    """An entry pi could not read keeps whatever JSON its ``id`` holds (an object, a list): the
    compaction checks still run and find what they find without it (found by bench/fuzz.py)."""
    for odd in ({"a": 1}, [1, 2], 7):
        b = clean()
        kept = b.user("next")
        b.add("compaction", summary="we fixed things", firstKeptEntryId=kept, tokensBefore=1)
        want = kinds(b)
        b.add("not-a-pi-entry", note="x")
        b.lines[-1]["id"] = odd
        s = b.session()
        assert type(s.entries[-1]).__name__ == "OpaqueEntry" and s.entries[-1].id == odd
        assert len(s.entries) - 1 in s.path()  # on the branch the doctor walks
        got = kinds(b)
        assert got.pop("load-issue:missing-id") == [[8]]  # said as the loader says it
        assert got == want and want["summary-dropped-modified-files"] == [[7, 3]]
