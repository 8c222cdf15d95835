"""The incremental pruning runners decide exactly what ``apply`` on the whole context decides.

Every strategy is replayed twice — incrementally (the default) and with ``apply`` at every call
(``incremental=False``, the reference) — on every bundled sample and shared fixture, under every
compaction policy and several settings (the defaults, and settings that make each rule fire
often), and on random sessions with random settings. Compared step by step: tokens sent and
before pruning, messages, items and tokens pruned, events, the strategy's state, the metrics and
the summaries; and for some steps the exact context of ``step_detail`` (messages and decisions).
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from inspector import build_session_context
from inspector.importers import parse_any
from inspector.policies import PolicySettings
from inspector.pruning import REGISTRY, CallInfo
from inspector.replay import (
    CompactionRecord,
    Replay,
    ReplaySettings,
    effective_settings,
    replay,
    session_counter,
)

from .support.builder import SessionBuilder
from .support.paths import FIXTURES, REPO
from .support.randsession import random_session

SAMPLES = sorted(p for p in (REPO / "sample_sessions").iterdir() if p.suffix in (".jsonl", ".json"))
SMALL_FIXTURES = [
    "synth-tree",
    "synth-compacted",
    "synth-giant-turn",
    "synth-trailing-toolresult",
    "synth-v2-hookmessage",
]
STRATEGIES = [n for n in REGISTRY if n != "none"]

#: per strategy: settings that make its rule fire often, or change which branch of it runs
VARIANTS: dict[str, list[dict[str, Any]]] = {
    "opencode": [
        {"prune_protect": 2000, "prune_minimum": 1000},
        {"prune_protect": 0, "prune_minimum": 0, "protected_turns": 0},
        {"protected_turns": 5, "prune_protect": 5000, "protected_tools": ("read",)},
    ],
    "pi-context-pruning": [
        {"prune_protect": 2000, "prune_minimum": 1000},
        {"prune_protect": 0, "prune_minimum": 0, "protected_turns": 0},
        {"protected_tools": ("bash",), "prunable_tools": (), "prune_minimum": 500, "prune_protect": 100},
    ],
    "turn-aware": [
        {"recent_turns": 2, "yellow": 0.1, "red": 0.2, "compact": 0.3},
        {"recent_turns": 1, "distill_green": 0, "distill_yellow": 50, "packet_items": 2},
        {"yellow": 0.9, "red": 0.5, "compact": 0.3, "distill_head_chars": 0},
    ],
    "dcp": [
        {"supersede_writes": True},
        {"purge_error_turns": 1, "supersede_writes": True, "protected_tools": ("read",)},
        {"deduplication": False, "purge_error_turns": 2},
    ],
    "context-editing": [
        {"trigger": 1000},
        {"trigger": 5000, "keep": 0, "clear_tool_inputs": True},
        {
            "trigger": 3000,
            "clear_at_least": 5000,
            "exclude_tools": ("bash",),
            "keep": 5,
            "clear_tool_inputs": True,
        },
    ],
    "claude-code-microcompact": [
        {"gap_minutes": 0},
        {"gap_minutes": 0.5, "keep_recent": 1},
        {"gap_minutes": 2, "keep_recent": 3, "tools": ("read",)},
    ],
    "recorded": [],
}

#: (policy, window, counter): recorded and never at a large window; the what-if policies at a
#: small one, so they compact (and overflow, which retries the call after compacting)
RUNS = [
    ("recorded", 200_000, "pi"),
    ("never", 200_000, "usage"),
    ("pi", 32_768, "pi"),
    ("early", 32_768, "usage"),
    ("opencode", 32_768, "pi"),
    ("codex", 32_768, "usage"),
    ("claude-code", 32_768, "pi"),
]


def _load(path: Path) -> Any:
    return parse_any(path.read_bytes(), source=path.name)


def _steps(r: Replay) -> list[tuple[Any, ...]]:
    return [
        (
            s.step,
            s.entry_index,
            s.tokens,
            s.tokens_before_pruning,
            s.messages,
            s.pruned_items,
            s.pruned_tokens,
            s.events,
            s.cost,
            s._state,
        )
        for s in r.steps
    ]


def _context(msgs: Any) -> list[tuple[Any, ...]]:
    return [(cm.entry_index, cm.message.model_dump()) for cm in msgs]


def assert_same(session: Any, settings: ReplaySettings, details: int = 4) -> Replay:
    """The incremental replay equals the reference, step by step; ``details`` steps (the last,
    and those with events first) also by their exact context."""
    fast = replay(session, settings)
    ref = replay(session, settings, incremental=False)
    for a, b in zip(_steps(fast), _steps(ref), strict=True):
        assert a == b, f"step {a[0]} differs under {settings!r}"
    assert fast.metrics == ref.metrics
    assert fast.summaries == ref.summaries
    chosen = (
        [s.step for s in fast.steps if s.events][: details - 1] + [len(fast.steps) - 1] if fast.steps else []
    )
    sent = dict(fast.sent_contexts(chosen))  # the runner run again over these steps only
    for k in chosen:
        da, db = fast.step_detail(k), ref.step_detail(k)
        assert _context(da.before) == _context(db.before)
        assert _context(da.after) == _context(db.after)
        assert _context(sent[k]) == _context(da.after)
        if da.prune is not None:
            assert da.prune.decisions == db.prune.decisions
    return fast


@pytest.mark.parametrize("strategy", ["none", *STRATEGIES])
@pytest.mark.parametrize(
    "name", ["coding-session.jsonl", "opencode-session.json", "claude-code-session.jsonl"]
)
def test_the_contexts_sent_at_every_step_are_step_details_after(name: str, strategy: str) -> None:
    """:meth:`Replay.sent_contexts` (the runner run again, step after step) gives every step's
    context as sent exactly as :meth:`Replay.step_detail` (``apply`` on that step's context)."""
    s = _load(REPO / "sample_sessions" / name)
    values = VARIANTS.get(strategy) or [{}]
    for policy, window in (("recorded", 200_000), ("pi", 32_768)):
        st = ReplaySettings(strategy=strategy, compaction=policy, context_window=window)
        r = replay(s, st.with_strategy_settings(values[0]))
        got = list(r.sent_contexts())
        assert [k for k, _ in got] == list(range(len(r.steps)))
        assert [_context(c) for _, c in got] == [
            _context(r.step_detail(k).after) for k in range(len(r.steps))
        ]


def _cases(strategy: str) -> list[tuple[str, int, str, dict[str, Any]]]:
    out = [(p, w, c, {}) for p, w, c in RUNS]
    for k, v in enumerate(VARIANTS[strategy]):  # each variant under a few policies (rotating)
        for p, w, c in (RUNS[k % len(RUNS)], RUNS[(k + 2) % len(RUNS)], RUNS[(k + 4) % len(RUNS)]):
            out.append((p, w, c, v))
    return out


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("path", [p for p in SAMPLES if p.name != "long-session.jsonl"], ids=lambda p: p.name)
def test_small_samples(path: Path, strategy: str) -> None:
    s = _load(path)
    for policy, window, counter, values in _cases(strategy):
        st = ReplaySettings(strategy=strategy, compaction=policy, context_window=window, counter=counter)
        assert_same(s, st.with_strategy_settings(values))


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", SMALL_FIXTURES)
def test_pi_fixtures(name: str, strategy: str) -> None:
    path = FIXTURES / f"{name}.jsonl"
    s = _load(path)
    for policy, window, counter, values in _cases(strategy):
        st = ReplaySettings(strategy=strategy, compaction=policy, context_window=window, counter=counter)
        assert_same(s, st.with_strategy_settings(values))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_long_sessions(strategy: str) -> None:
    """The two long files (hundreds of calls; the reference is quadratic on them): never
    compacting at the defaults, and the most active variant under pi's policy at a small window;
    the shared 484-call fixture as recorded."""
    long = _load(REPO / "sample_sessions" / "long-session.jsonl")
    assert_same(long, ReplaySettings(strategy=strategy, compaction="never"))
    values = VARIANTS[strategy][0] if VARIANTS[strategy] else {}
    assert_same(
        long,
        ReplaySettings(strategy=strategy, compaction="pi", context_window=32_768).with_strategy_settings(
            values
        ),
    )
    path = FIXTURES / "before-compaction.jsonl"
    if path.exists():
        assert_same(_load(path), ReplaySettings(strategy=strategy), details=2)


@pytest.mark.parametrize("strategy", ["opencode", "turn-aware", "dcp", "context-editing"])
def test_tiktoken_counter(strategy: str) -> None:
    s = _load(REPO / "sample_sessions" / "coding-session.jsonl")
    values = VARIANTS[strategy][0]
    assert_same(
        s,
        ReplaySettings(
            strategy=strategy, counter="tiktoken", compaction="pi", context_window=32_768
        ).with_strategy_settings(values),
    )


def test_none_under_the_usage_counter() -> None:
    """Without a strategy, pi's usage-based size is computed from the runner's bookkeeping."""
    s = _load(REPO / "sample_sessions" / "long-session.jsonl")
    for policy in ("never", "pi"):
        assert_same(s, ReplaySettings(counter="usage", compaction=policy, context_window=32_768))


def test_duplicate_tool_call_ids_fall_back_to_apply(sb: SessionBuilder) -> None:
    """DCP's runner assumes one call and one result per id; a context breaking that is decided by
    ``apply`` (and still equal to it)."""
    sb.user("go")
    for k in range(6):
        cid = "dup" if k in (1, 3) else f"x{k}"
        sb.assistant("", tools=[("read", {"path": "a.txt"})])
        sb.lines[-1]["message"]["content"][0]["id"] = cid
        sb.pending_calls = [cid]
        sb.tool_result(f"out {k} " * 50, is_error=k == 1)
    sb.assistant("done")
    s = sb.session()
    r = assert_same(s, ReplaySettings(strategy="dcp"))
    assert r.steps[-1].pruned_items > 0  # deduplication marked the older reads
    for values in ({"purge_error_turns": 1}, {"deduplication": False}):
        assert_same(s, ReplaySettings(strategy="dcp").with_strategy_settings(values))
    runner = REGISTRY["dcp"].runner(REGISTRY["dcp"].Settings(), session_counter(s, "pi"))
    ctx = list(build_session_context(s).messages)
    runner.call(ctx, None, CallInfo(0, True, 200_000, None))
    assert runner._fallback


def _random_settings(rng: random.Random) -> ReplaySettings:
    strategy = rng.choice(STRATEGIES)
    fields = REGISTRY[strategy].Settings.model_fields
    values: dict[str, Any] = {}
    for name, f in fields.items():
        if rng.random() < 0.5:
            continue
        d = f.default
        if isinstance(d, bool):
            values[name] = rng.random() < 0.5
        elif isinstance(d, int):
            values[name] = rng.choice([0, 1, 2, 3, 50, 500, 2000, 10_000, 40_000])
        elif isinstance(d, float):
            values[name] = rng.choice([0.05, 0.2, 0.5, 0.7, 0.9, 1.2, 0.0, 60.0])
        elif isinstance(d, tuple):
            values[name] = tuple(
                rng.sample(["read", "bash", "edit", "write", "grep", "Read"], rng.randint(0, 3))
            )
    try:
        strat = REGISTRY[strategy].Settings(**values)
    except ValueError:
        strat = REGISTRY[strategy].Settings()
    return ReplaySettings(
        strategy=strategy,
        strategy_settings=tuple(sorted(strat.model_dump().items())),
        compaction=rng.choice(["recorded", "never", "pi", "early", "opencode", "codex", "claude-code"]),
        context_window=rng.choice([2000, 8000, 32_768, 200_000]),
        keep_recent_tokens=rng.choice([0, 2000, 20_000]),
        reserve_tokens=rng.choice([0, 1000, 16_384]),
        counter=rng.choice(["pi", "usage"]),
    )


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(seed=hs.integers(0, 10**6), draw=hs.integers(0, 10**6))
def test_random_sessions_and_settings(seed: int, draw: int) -> None:
    from inspector import parse_session

    s = parse_session(random_session(random.Random(seed)))
    st = _random_settings(random.Random(draw))
    assert_same(s, st, details=2)


# -- settings that cannot change a replay -----------------------------------------------------

CHANGES: list[tuple[str, Any]] = [
    ("keep_recent_tokens", 7000),
    ("reserve_tokens", 3000),
    ("pi_version", "0.58"),
    ("summarizer", "openai"),
    ("summarizer_model", "some-model"),
    ("summarizer_base_url", "http://127.0.0.1:9/v1"),
    ("policy", PolicySettings(early_red_fraction=0.3)),
    ("policy", PolicySettings(opencode_tail=False)),
    ("policy", PolicySettings(opencode_max_output=20_000)),
    ("policy", PolicySettings(codex_fraction=0.5)),
    ("policy", PolicySettings(codex_user_tokens=500)),
    ("policy", PolicySettings(claude_buffer=1000)),
    ("strategy_settings", (("prune_protect", 1000),)),
    ("context_window", 20_000),
    ("counter", "usage"),
]


def _summary(x: CompactionRecord, policy: str) -> CompactionRecord:
    if x.prep is not None and policy not in ("pi", "early"):
        # another policy's preparation carries pi's settings object, which that policy never reads
        return dataclasses.replace(x, prep=dataclasses.replace(x.prep, settings=None))
    return x


def _outcome(r: Replay) -> Any:
    return (_steps(r), r.metrics, [_summary(x, r.settings.compaction) for x in r.summaries])


@pytest.mark.parametrize("name", ["coding-session.jsonl", "long-session.jsonl", "codex-session.jsonl"])
def test_settings_with_the_same_effective_settings_replay_the_same(name: str) -> None:
    """What :func:`effective_settings` calls irrelevant is: the replay under the changed
    settings equals the replay under the original ones (so the app reuses it)."""
    s = _load(REPO / "sample_sessions" / name)
    reused = changed = 0
    for policy in ("recorded", "never", "pi", "early", "opencode", "codex", "claude-code"):
        base = ReplaySettings(compaction=policy, context_window=32_768)
        ref = _outcome(replay(s, base))
        for key, value in CHANGES:
            other = base.model_copy(update={key: value})
            if effective_settings(other) != effective_settings(base):
                changed += 1
                continue
            reused += 1
            r = replay(s, base).relabel(other)
            assert r.settings == other
            assert _outcome(replay(s, other)) == ref, f"{key}={value!r} changed the {policy} replay"
    assert reused > 20 and changed > 20  # both kinds occur


def test_relabel_refuses_settings_that_matter() -> None:
    s = _load(REPO / "sample_sessions" / "coding-session.jsonl")
    r = replay(s, ReplaySettings(compaction="pi"))
    with pytest.raises(ValueError):
        r.relabel(ReplaySettings(compaction="pi", keep_recent_tokens=1000))


def test_growing_set_versions_share_storage_and_stay_immutable() -> None:
    from inspector.pruning.base import GrowingSet

    a = GrowingSet([3, 1])
    b = a | {5, 1}
    c = b | [7]
    assert a == frozenset({1, 3}) and b == frozenset({1, 3, 5}) and c == {1, 3, 5, 7}
    assert 5 not in a and 5 in b and 7 not in b and len(c) == 4
    assert c._log is a._log  # grown in place: one log for every version
    assert c.added_since(a) == [5, 7] and a.added_since(c) is None
    d = b | {9}  # b is not the newest version any more: a copy, c unchanged
    assert d == {1, 3, 5, 9} and 9 not in c and d._log is not c._log
    assert (b | ()) is b and frozenset({1, 2}) - b == frozenset({2}) and c - {1, 3} == frozenset({5, 7})
    assert hash(b) == hash(frozenset({1, 3, 5})) and b != frozenset({1}) and (b == "x") is False


def _plain_runner(exchanges: int) -> tuple[list[Any], Any]:
    """The context of a session of ``exchanges`` questions and answers, and a runner that prunes
    nothing of its own (tests move its positions' fates by hand)."""
    from inspector.pruning.runner import PlainRunner

    b = SessionBuilder()
    for k in range(exchanges):
        b.user(f"q{k}")
        b.assistant(f"a{k}")
    s = b.session()
    return list(build_session_context(s).messages), PlainRunner(None, None, session_counter(s, "pi"))


def test_the_list_of_messages_sent_follows_drops_prunes_and_appends_between_calls() -> None:
    """:meth:`IncrementalRunner.sent_messages` keeps its list from call to call: a position that
    stops being sent (or comes back), one sent otherwise, and new positions are each followed."""
    ctx, runner = _plain_runner(4)
    msgs = ctx[:4]

    def sent() -> list[Any]:
        return [cm.entry_index for cm in runner.sent_messages(msgs)]

    runner.call(msgs, None, None)
    assert sent() == [0, 1, 2, 3]
    runner._drop(msgs, 1)  # no longer sent
    assert sent() == [0, 2, 3]
    msgs += ctx[4:6]
    runner.call(msgs, None, None)
    other = dataclasses.replace(msgs[2], entry_index=99)
    runner._prune(msgs, 2, other)  # sent otherwise
    assert sent() == [0, 99, 3, 4, 5]
    runner._keep(1)  # sent again
    runner._keep(2)
    assert sent() == [0, 1, 2, 3, 4, 5]


@pytest.mark.parametrize("seed", range(6))
def test_the_messages_sent_follow_any_changes_between_calls(seed: int) -> None:
    """:meth:`IncrementalRunner.sent_messages` keeps the positions sent from call to call and puts
    :attr:`front` and :attr:`inserted` in as it gives them out: through random drops (ranges too,
    as a DCP compress makes), prunes, positions sent again, appends, inserted messages and a front,
    the list is at every call what reading every position gives."""
    rng = random.Random(seed)
    ctx, runner = _plain_runner(60)
    msgs = ctx[:5]

    def expected() -> list[Any]:
        get, out = runner._fate.get, list(runner.front)
        inserts = sorted(runner.inserted, key=lambda x: x[0])
        k = 0
        for pos in range(runner._floor(), len(msgs)):
            while k < len(inserts) and inserts[k][0] <= pos:
                out.append(inserts[k][1])
                k += 1
            f = get(pos)
            if f is None or f[1] is not None:
                out.append(msgs[pos] if f is None else f[1])
        return out + [cm for _, cm in inserts[k:]]

    runner.call(msgs, None, None)
    checked = 0
    for step in range(300):
        how = rng.choice(("drop", "range", "prune", "keep", "append", "insert", "front", "call"))
        pos = rng.randrange(len(msgs))
        if how == "drop":
            runner._drop(msgs, pos)
        elif how == "range":
            for p in range(pos, min(len(msgs), pos + rng.randint(1, 12))):
                runner._drop(msgs, p)
        elif how == "prune":
            runner._prune(msgs, pos, dataclasses.replace(msgs[pos], entry_index=1000 + step))
        elif how == "keep":
            for p in rng.sample(sorted(runner._fate), min(len(runner._fate), rng.randint(1, 5))):
                runner._keep(p)
        elif how == "append" and len(msgs) < len(ctx):
            msgs += ctx[len(msgs) : len(msgs) + rng.randint(1, 3)]
            runner.call(msgs, None, None)
        elif how == "insert":
            summary = dataclasses.replace(ctx[0], entry_index=None)
            runner.inserted = (*runner.inserted[-3:], (rng.randrange(len(msgs) + 2), summary))
        elif how == "front":
            runner.front = () if runner.front else (dataclasses.replace(ctx[0], entry_index=None),)
        else:
            runner.call(msgs, None, None)
        if rng.random() < 0.7:
            got = runner.sent_messages(msgs)
            assert list(got) == expected(), step
            checked += 1
    assert checked > 150 and runner._fate and runner.inserted
