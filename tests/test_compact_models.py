"""Loaded models in compact form (``inspector/session/compact.py``) behave exactly like pydantic's,
in less memory; the compact tree and line index answer as the tuples they replace."""

from __future__ import annotations

import copy
import pickle
import tracemalloc

from inspector import parse_session
from inspector.export import session_lines
from inspector.session.compact import SHORT_TEXT, Compactor, compact
from inspector.session.models import AssistantMessage, MessageEntry, ToolCall, ToolResultMessage
from inspector.session.tree import Children

from .support.builder import SessionBuilder
from .support.paths import FIXTURES


def _validated(text: str) -> list[MessageEntry]:
    """The entries as pydantic builds them (no compaction), for comparison."""
    import orjson

    return [
        MessageEntry.model_validate(orjson.loads(line))
        for line in text.splitlines()
        if '"type": "message"' in line
    ]


def _tool_session() -> SessionBuilder:
    b = SessionBuilder()
    b.user("read it")
    b.assistant("sure", tools=[("read", {"path": "a.py", "n": [1, 2.5, {"deep": None}]})], usage=1234)
    b.tool_result("x = 1")
    b.assistant("done", usage=1300, extra_field={"kept": True})
    return b


def test_compact_models_equal_pydantics_in_every_reading() -> None:
    b = _tool_session()
    loaded = b.session().entries
    plain = _validated(b.text())
    assert len(loaded) == len(plain) == 4
    for c, p in zip(loaded, plain, strict=True):
        assert type(c) is type(p) and type(c.message) is type(p.message)
        assert c == p
        assert c.raw() == p.raw()
        assert c.model_dump() == p.model_dump()
        assert c.model_dump_json() == p.model_dump_json()
        assert c.model_fields_set == p.model_fields_set
        assert c.message.model_extra == p.message.model_extra
        assert repr(c) == repr(p)
        assert c.model_copy(update={"id": "new"}).id == "new" and c.id != "new"
        assert copy.deepcopy(c) == p and pickle.loads(pickle.dumps(c)) == p
    assert loaded[3].message.model_extra == {"extra_field": {"kept": True}}


def test_export_of_a_loaded_session_is_unchanged_by_compaction() -> None:
    text = (FIXTURES / "synth-compacted.jsonl").read_text()
    s = parse_session(text)
    import orjson

    for line, obj in zip(session_lines(None, s.entries), text.splitlines()[1:], strict=True):
        assert orjson.loads(line) == orjson.loads(obj)


def test_raw_leaves_no_dict_behind_and_compact_form_is_smaller() -> None:
    b = _tool_session()
    plain = _validated(b.text())
    tracemalloc.start()
    try:
        a = tracemalloc.get_traced_memory()[0]
        pl = [copy.copy(p) for p in plain for _ in range(200)]  # copies keep pydantic's dicts
        mid = tracemalloc.get_traced_memory()[0]
        cp = [compact(p) for p in plain for _ in range(200)]
        end = tracemalloc.get_traced_memory()[0]
        for c in cp:
            c.raw()  # serialises a throwaway twin: the loaded model gets no dictionary
        after_raw = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(pl) == len(cp)
    assert end - mid < 0.75 * (mid - a)  # the nested models are rebuilt too: well under pydantic's size
    assert after_raw - end < (end - mid) / 20


def test_tool_call_id_and_short_texts_are_shared_long_texts_are_not() -> None:
    b = SessionBuilder()
    for k in range(3):
        b.user("ok")
        b.assistant(tools=[("read", {"path": f"f{k}.py"})])
        b.tool_result("x" * (SHORT_TEXT + 1) if k else "x = 1")
    s = b.session()
    calls = [e.message for e in s.entries if isinstance(e.message, AssistantMessage)]
    results = [e.message for e in s.entries if isinstance(e.message, ToolResultMessage)]
    for call, res in zip(calls, results, strict=True):
        block = call.content[0]
        assert isinstance(block, ToolCall) and block.id == res.toolCallId
        assert block.id is res.toolCallId
    users = [e.message.content for e in s.entries if e.message.role == "user"]
    assert users[0] is users[1] is users[2]
    long1, long2 = (r.content[0].text for r in results[1:])
    assert long1 == long2 and long1 is not long2


def test_a_result_without_its_call_keeps_its_own_id() -> None:
    c = Compactor()
    res = c(ToolResultMessage(toolCallId="zz", toolName="read"))
    assert res.toolCallId == "zz"
    assert c(42) == 42  # anything that is not a model: unchanged


def test_children_answer_like_tuples_and_order_forks_by_timestamp() -> None:
    parents = (-1, 0, 0, 1, -1, 0)
    stamps = {1: 5.0, 2: 1.0, 5: 3.0, 3: 0.0}
    ch = Children(parents, lambda k: stamps.get(k, 0.0))
    assert len(ch) == 6
    assert list(ch) == [(2, 5, 1), (3,), (), (), (), ()]
    assert ch[0] == (2, 5, 1) and ch[-6] == (2, 5, 1) and ch[1:3] == [(3,), ()]
    assert list(ch.sizes()) == [3, 1, 0, 0, 0, 0]
    try:
        ch[6]
    except IndexError:
        pass
    else:
        raise AssertionError("index past the end must raise IndexError")


def test_session_tree_queries_on_a_branched_fixture() -> None:
    s = parse_session((FIXTURES / "synth-tree.jsonl").read_text())
    kids = [tuple(i for i, p in enumerate(s.parents) if p == k) for k in range(len(s))]
    for k in range(len(s)):
        assert sorted(s.children[k]) == sorted(kids[k])
    assert s.leaves == tuple(k for k in range(len(s)) if not kids[k])
    assert s.fork_points == tuple(k for k in range(len(s)) if len(kids[k]) > 1) and s.fork_points
    assert list(s.lines) == sorted(s.lines) and s.lines[0] == 2


def test_id_counts_answer_like_the_dict_they_replace() -> None:
    from inspector.replay.counters import _IdCounts

    c = _IdCounts([5, 1, 9], [50, 10, 90])
    assert (c.get(9), c.get(1), c.get(5)) == (90, 10, 50)
    assert c.get(7) is None and c.get(100, -1) == -1 and c.get(0) is None
    assert 9 in c and 7 not in c and "9" not in c


def test_a_primed_counter_counts_as_its_base_small_or_large(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from inspector.replay import counters
    from inspector.tokens import estimate_tokens

    text = (FIXTURES / "synth-tree.jsonl").read_text()
    for big in (10**9, 0):  # a dict, then the sorted arrays of a large session
        monkeypatch.setattr(counters, "_BIG", big)
        s = parse_session(text)
        c = counters.CachedCounter(counters.get_counter("pi"))
        c.prime_session(s)
        msgs = [e.message for e in s.entries if isinstance(e, MessageEntry)]
        assert msgs and c.count_many(msgs) == [estimate_tokens(m) for m in msgs]
        assert isinstance(c._owned, dict) == (big > 0)
