"""The DCP plugin's ``compress`` in an OpenCode export: message ids, ranges, the summary message.

The exports here are written by hand (``tests/support/opencode_export.py``), or at random.
"""

from __future__ import annotations

import random

import pytest

from inspector.importers.opencode_dcp import Replay, ignored, notified, restore, wrap
from inspector.replay import ReplaySettings, replay
from inspector.session.models import UserMessage

from .support.builder import SessionBuilder
from .support.opencode_export import Export, dcp_export
from .test_replay_incremental import RUNS, assert_same


def _first_exchange(e: Export) -> None:
    e.user("find the bug")  # m0001
    e.answer("reading", ("read", {"filePath": "/p/a.py"}, "A" * 400))  # m0002
    e.answer("found it")  # m0003
    e.user("fix it")  # m0004


def test_a_compress_replaces_its_range_with_dcps_summary_message_from_the_next_call() -> None:
    e = Export()
    _first_exchange(e)
    e.compress([("m0001", "m0003", "The bug is in a.py.")])  # m0005, then the ignored notice
    e.answer("fixed")
    s = e.session()
    assert s.header.model_extra["dcp"] is True
    r = replay(s, ReplaySettings(strategy="recorded"))
    before, after = r.step_detail(2).after, r.step_detail(3).after  # the compress call, the call after it
    assert not any(cm.entry_index is None for cm in before)  # not yet: the compress result is new
    summary = after[0].message
    assert isinstance(summary, UserMessage) and after[0].entry_index is None
    assert summary.content == (
        "[Compressed conversation section]\nThe bug is in a.py.\n\n\n<dcp-message-id>b1</dcp-message-id>"
    )
    kept = [s.entries[cm.entry_index].id for cm in after[1:]]
    assert kept == ["oc-msg_003", "oc-msg_004", "oc-prt_004_1"]  # "fix it", the compress call and its result
    dropped = [d for d in r.step_detail(3).prune.decisions if d.action == "dropped"]
    assert len(dropped) == 4 and all("block b1" in d.reason for d in dropped)


def test_ids_skip_ignored_messages_and_a_new_summary_takes_the_next_number() -> None:
    e = Export()
    _first_exchange(e)
    e.compress([("m0001", "m0003", "Bug in a.py.")])  # msg_004, numbered with b1's summary at the next call
    e.answer("working", ("read", {"filePath": "/p/b.py"}, "B" * 100))  # msg_006 = m0007
    e.user("and b?")  # msg_007 = m0008
    e.compress([("b1", "m0008", "(b1)\nThen b.py was read.")])  # consumes b1
    e.answer("done")
    d = Replay(e.messages)
    blocks = d.run()
    b1, b2 = (b for bs in blocks.values() for b in bs)
    assert (b1.lo, b1.hi, b2.lo, b2.hi, b2.consumes) == (0, 2, 0, 7, [1])
    # the call after the compress sends b1's summary (at its anchor, first) and the compress call (new): m0005, m0006;
    # msg_005 is DCP's ignored notice, never numbered
    assert (d.refs[("s", 1)], d.refs[("m", 4)], d.refs[("m", 6)]) == (5, 6, 7) and ("m", 5) not in d.refs
    assert restore(b2.summary) == "Bug in a.py.\nThen b.py was read."
    s = e.session()
    after = replay(s, ReplaySettings(strategy="recorded")).step_detail(5).after
    assert after[0].message.content == wrap(2, "Bug in a.py.\nThen b.py was read.")
    assert sum(cm.entry_index is None for cm in after) == 1  # b1's summary is gone with its block


def test_a_range_that_does_not_resolve_is_reported_not_guessed() -> None:
    e = Export()
    _first_exchange(e)
    e.compress([("m0042", "m0043", "nothing there")])
    s = e.session()
    assert any(i.kind == "dcp" and i.severity == "warning" and "m0042..m0043" in i.message for i in s.issues)
    r = replay(s, ReplaySettings(strategy="recorded"))
    assert all(cm.entry_index is not None for k in range(len(r.steps)) for cm in r.step_detail(k).after)


def _two_compresses(first: str, second: str) -> Export:
    """Two compress calls, the second consuming the first's block, each followed by ``first`` /
    ``second`` as DCP's notification."""
    e = Export()
    _first_exchange(e)
    e.compress([("m0001", "m0003", "Bug in a.py.")], note=first)
    e.answer("working", ("read", {"filePath": "/p/b.py"}, "B" * 100))
    e.user("and b?")
    e.compress([("b1", "m0008", "(b1)\nThen b.py was read.")], note=second)
    e.answer("done")
    return e


def test_dcps_notifications_give_the_size_of_the_summaries_each_compress_sent() -> None:
    """DCP 3.1 counts each block's stored summary (Anthropic's tokenizer) and prints, in its
    ``minimal`` notification, the active blocks' total: a compress's own figure is the total's rise
    plus what the blocks it consumed had counted. The ``detailed`` form prints it directly; an older
    DCP prints no summary size, and nothing is made up then."""
    e = _two_compresses(
        "▣ DCP | -5K removed, +3.2K summary — Compression #1",
        "▣ DCP | -9.4K removed, +7.5K summary — Compression #2",
    )
    calls = Replay(e.messages).run()
    first, second = calls
    got = notified(e.messages, calls)
    assert got[first] == (3_200, "▣ DCP | -5K removed, +3.2K summary — Compression #1")
    assert got[second][0] == 7_500  # 7.5K active, after consuming the 3.2K block
    detailed = _two_compresses(
        "▣ DCP | -5K removed, +3.2K summary\n\n│█░│\n▣ Compression #1 -5K removed, +3.2K summary\n→ Topic: t",
        "▣ DCP | -9.4K removed, +7.5K summary\n\n│█░│\n▣ Compression #2 -4.4K removed, +7.5K summary",
    )
    assert [t for t, _ in notified(detailed.messages, Replay(detailed.messages).run()).values()] == [
        3_200,
        7_500,
    ]
    older = _two_compresses(
        "▣ DCP | ~5K saved total — Compression #1", "▣ DCP | ~9K saved total — Compression #2"
    )
    assert notified(older.messages, Replay(older.messages).run()) == {}
    huge = "9" * 5_000  # a hostile file's numbers are not read (int() refuses 4,300+ digits)
    hostile = _two_compresses(f"▣ DCP | -1K removed, +{huge}K summary — Compression #{huge}", "▣ DCP")
    assert notified(hostile.messages, Replay(hostile.messages).run()) == {}
    # the importer keeps it with the compress call's blocks
    s = e.session()
    told = [
        m.details["dcp"].get("notified")
        for m in (x.message for x in s.entries if hasattr(x, "message"))
        if getattr(m, "details", None) and "dcp" in m.details
    ]
    assert [t["summaryTokens"] for t in told] == [3_200, 7_500]


def test_the_check_says_how_much_more_dcp_sent_than_the_export_records_where_a_compress_departs() -> None:
    """Where a compress took effect and the rebuilt context departs from the recorded prompt, the
    check gives DCP's own figure against the export's, and net of the blocks it replaced."""
    from inspector.recon.flags import Observed, classify
    from inspector.replay.results import Pruned

    def call(dcp):  # type: ignore[no-untyped-def]
        return Observed(9, 40, 50_000.0, 30_000, 30_000.0, (Pruned(3, 1_000, (1, 2, 3)),), None, 0.0, dcp=dcp)

    prev = Observed(8, 38, 40_000.0, 30_000, 30_000.0, (), None, 0.0)
    flag = classify(call(((34_400, 4_100, 9_500),)), prev, 20_000.0)
    assert flag.cause == "prune" and flag.detail == (
        "a recorded prune took effect here; DCP's own notification counts the summary it sent at 34.4k "
        "tokens (Anthropic's tokenizer), the export's compress call holds 4.1k: DCP sent about 30k tokens "
        "more than the export records (21k more than the blocks it replaced had)"
    )
    assert classify(call(((10_300, 800, None),)), prev, 9_000.0).detail.endswith(
        "more than the export records"
    )
    assert classify(call(((1_000, 800, 0),)), prev, 3_000.0).detail == "a recorded prune took effect here"
    assert classify(call(()), prev, 3_000.0).detail == "a recorded prune took effect here"


class _EveryMessage(Replay):
    """DCP's numbering as its source states it: at every call, every message sent is looked at
    (the importer looks only at what can be new; this is the reference it is compared with)."""

    def _number(self, upto: int) -> None:
        anchors = {self.blocks[b].anchor: b for b in self.active}
        covered = {i for b in self.active for i in range(self.blocks[b].lo, self.blocks[b].hi + 1)}
        for i in range(upto):
            keys = ([("s", anchors[i])] if i in anchors else []) + (
                [("m", i)] if i not in covered and not ignored(self.msgs[i]) else []
            )
            for key in keys:
                if key not in self.refs:
                    n = self.refs[key] = len(self.refs) + 1
                    self.by_number[n] = key


@pytest.mark.parametrize("seed", range(12))
def test_numbering_only_what_can_be_new_gives_every_message_the_number_dcp_gives_it(seed: int) -> None:
    e = dcp_export(random.Random(seed), 60, every=5)
    fast, ref = Replay(e.messages), _EveryMessage(e.messages)
    calls = fast.run()
    assert calls == ref.run() and len(calls) >= 3
    assert fast.refs == ref.refs and fast.blocks == ref.blocks and fast.problems == ref.problems
    assert any(b.consumes for b in fast.blocks.values())  # blocks consumed, summaries numbered


@pytest.mark.parametrize("seed", range(4))
def test_dcps_layer_is_worked_out_per_compress_and_equals_apply_at_every_call(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The recorded strategy's runner redoes DCP's layer only when a compress (or a message a
    block's range may hold) arrives, never deciding a call by ``apply`` on the whole context; every
    call equals ``apply``'s, cleared outputs (OpenCode's time.compacted) inside and outside the
    blocks included."""
    from inspector.pruning.recorded import Recorded

    s = dcp_export(random.Random(seed), 40, every=4).session()
    applied = []
    whole = Recorded.apply
    monkeypatch.setattr(Recorded, "apply", lambda *a: applied.append(1) or whole(*a))
    replay(s, ReplaySettings(strategy="recorded"))
    from inspector.recon import check

    flagged = check(s).as_json()["flagged"]  # every call's context as sent, compared with its prompt
    assert applied == []
    monkeypatch.undo()
    assert check(s).as_json()["flagged"] == flagged
    for policy, window, counter in RUNS:
        st = ReplaySettings(strategy="recorded", compaction=policy, context_window=window, counter=counter)
        r = assert_same(s, st, details=6)
        if policy == "recorded":
            last = r.step_detail(len(r.steps) - 1).prune.decisions
            assert any("block b" in d.reason for d in last) and any(d.action == "pruned" for d in last)


def test_blocks_a_file_could_hold_but_dcp_would_not_write_are_followed_as_apply_follows_them(
    sb: SessionBuilder,
) -> None:
    """Blocks as no DCP writes them, kept as the file has them: b2 consumes b1 without covering
    its range (b1's messages are sent again, the cleared output among them as cleared) and reaches
    past its own compress (the messages after it that the range holds are left out as they come)."""
    sb.user("go")  # entry 0
    sb.assistant("", tools=[("read", {"path": "a.txt"})])
    sb.tool_result("A" * 400, details={"opencode": {"compacted": 1}})  # entry 2, cleared
    sb.assistant("", tools=[("compress", {})])
    b1 = {"block": 1, "first": 1, "last": 2, "summary": "one"}
    sb.tool_result("done", tool="compress", details={"dcp": {"blocks": [b1]}})  # entry 4
    sb.assistant("", tools=[("compress", {})])
    b2 = {"block": 2, "first": 5, "last": 9, "consumes": [1], "summary": "two"}
    sb.tool_result("done", tool="compress", details={"dcp": {"blocks": [b2]}})  # entry 6
    sb.assistant("", tools=[("read", {"path": "b.txt"})])
    sb.tool_result("B" * 400)
    sb.assistant("more")  # entry 9, the last b2 names
    sb.user("and")
    sb.assistant("end")
    r = assert_same(sb.session(), ReplaySettings(strategy="recorded"), details=8)
    last = {d.entry_index: d.action for d in r.step_detail(len(r.steps) - 1).prune.decisions}
    assert last == {0: "kept", 1: "kept", 2: "pruned", 3: "kept", 4: "kept"} | dict.fromkeys(
        range(5, 10), "dropped"
    ) | {10: "kept"}


def _hostile_blocks(rng: random.Random, entries: int) -> list[dict[str, object]]:
    """One to three DCP blocks as a damaged or hand-written file may hold them: ids reused (a later
    definition replaces an earlier one), ranges that overlap, run backwards or past the file, a
    block consuming one defined later (or one that consumes it), and fields of the wrong type."""
    out: list[dict[str, object]] = []
    for _ in range(rng.randint(1, 3)):
        first = rng.randint(-2, entries)
        b: dict[str, object] = {
            "block": rng.randint(1, 6),
            "first": first,
            "last": first + rng.randint(-2, 9),
        }
        b["summary"] = rng.choice(["s", "", 7])
        b["consumes"] = rng.choice(
            [[], [rng.randint(1, 6)], [rng.randint(1, 6), "2", None], 5, "1", {"1": 1}]
        )
        if rng.random() < 0.1:
            b[rng.choice(["first", "last"])] = rng.choice([None, "3", 2.0])
        out.append(b)
    return out


@pytest.mark.parametrize("seed", range(30))
def test_blocks_of_any_shape_are_laid_on_and_taken_off_as_apply_lays_them(seed: int) -> None:
    """The runner keeps DCP's layer block by block (a compress changes only the blocks it defines
    or consumes, a message joins the blocks whose range holds it); at every call it equals
    ``apply``, which works the layer out from the whole context, whatever the blocks say. A
    ``consumes`` that is no list (a number had stopped every replay with a TypeError) consumes
    nothing."""
    rng = random.Random(seed)
    sb = SessionBuilder()
    sb.user("go")
    for k in range(rng.randint(6, 16)):
        sb.assistant("", tools=[("read", {"path": f"f{k}"})])
        if rng.random() < 0.4:
            blocks = _hostile_blocks(rng, 3 * k + 6)
            sb.tool_result("done", tool="compress", details={"dcp": {"blocks": blocks}})
        else:
            marked = {"opencode": {"compacted": rng.choice([1, 10**13])}} if rng.random() < 0.3 else None
            sb.tool_result("x" * rng.randint(10, 300), details=marked)
        if rng.random() < 0.3:
            sb.user(f"and {k}")
    sb.assistant("end")
    assert_same(sb.session(), ReplaySettings(strategy="recorded"), details=6)
