"""The DCP plugin's ``compress`` in an OpenCode export: message ids, ranges, the summary message.

The exports here are written by hand, shaped like the ones OpenCode writes with DCP installed
(one step per assistant message, DCP's ignored notification after each compress).
"""

from __future__ import annotations

import json
from typing import Any

from inspector.importers import parse_any
from inspector.importers.opencode_dcp import Replay, notified, restore, wrap
from inspector.replay import ReplaySettings, replay
from inspector.session.models import UserMessage

T0 = 1780000000000


class Export:
    """An ``opencode export`` document built message by message."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def _msg(self, role: str, parts: list[dict[str, Any]], **info: Any) -> str:
        mid = f"msg_{len(self.messages):03d}"
        t = T0 + 1000 * len(self.messages)
        for k, p in enumerate(parts):
            p.setdefault("id", f"prt_{len(self.messages):03d}_{k}")
        self.messages.append(
            {"info": {"id": mid, "role": role, "time": {"created": t}, **info}, "parts": parts}
        )
        return mid

    def user(self, text: str, ignored: bool = False) -> str:
        return self._msg("user", [{"type": "text", "text": text, **({"ignored": True} if ignored else {})}])

    def answer(
        self, text: str = "", tool: tuple[str, dict[str, Any], str] | None = None, prompt: int = 1000
    ) -> str:
        n = len(self.messages)
        parts: list[dict[str, Any]] = [{"type": "step-start"}]
        if text:
            parts.append({"type": "text", "text": text})
        if tool:
            name, args, out = tool
            parts.append(
                {
                    "type": "tool",
                    "tool": name,
                    "callID": f"call_{n}",
                    "state": {
                        "status": "completed",
                        "input": args,
                        "output": out,
                        "time": {"start": T0 + 1000 * n, "end": T0 + 1000 * n + 1},
                    },
                }
            )
        parts.append(
            {
                "type": "step-finish",
                "tokens": {"input": prompt, "output": 10, "reasoning": 0, "cache": {"read": 0, "write": 0}},
            }
        )
        return self._msg("assistant", parts, providerID="openai", modelID="gpt-5.5")

    def compress(
        self,
        ranges: list[tuple[str, str, str]],
        prompt: int = 1000,
        note: str = "▣ DCP | -1K removed, +0.1K summary — Compression",
    ) -> str:
        content = [{"startId": a, "endId": b, "summary": s} for a, b, s in ranges]
        mid = self.answer(
            tool=(
                "compress",
                {"topic": "t", "content": content},
                "Compressed N messages into [Compressed conversation section].",
            ),
            prompt=prompt,
        )
        self.user(note, ignored=True)
        return mid

    def session(self):  # type: ignore[no-untyped-def]
        doc = {
            "info": {"id": "ses_dcp", "directory": "/p", "time": {"created": T0}},
            "messages": self.messages,
        }
        return parse_any(json.dumps(doc).encode(), source="dcp.json")


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
