"""The as-recorded replay of a large pi v3 file from its skeleton and a second read (issue 16, flood
memory: :mod:`inspector.replay.streamed`) is the replay of the loaded file: the same steps, events,
metrics, summaries and cache report, on odd files, a branchy and a truncated one, the samples and
fixtures; ``inspector replay`` takes that path for a large file and prints the same text and JSON.
A branch that does not run forward through the file, or a replay that reads messages again, is
replayed from the load."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from inspector.cache import cache_replay
from inspector.cache.facts import FactsReader, remember_facts
from inspector.replay import Replay, ReplaySettings, replay
from inspector.replay.streamed import load_for_replay, streamable, streamed_replay
from inspector.session.loader import SessionLoadError, load_session

from .test_cache_reasoning import reasoning_file
from .test_streamed import HEADER, INFO_FILES, _cli, _msg, _v3_files

SETTINGS = [ReplaySettings(), ReplaySettings(counter="tiktoken"), ReplaySettings(context_window=1000)]


def _call(k: int, path: str, usage: str) -> str:
    return (
        '{"role":"assistant","content":[{"type":"text","text":"reading"},{"type":"toolCall","id":"c%d",'
        '"name":"read","arguments":{"path":"%s"}}],"provider":"anthropic","api":"anthropic-messages",'
        '"model":"claude-sonnet-4-5","usage":%s,"stopReason":"toolUse","timestamp":%d}'
    ) % (k, path, usage, 1767225600000 + 1000 * k)


def _result(k: int, text: str, error: str = "false") -> str:
    return (
        '{"role":"toolResult","toolCallId":"c%d","toolName":"read","content":[{"type":"text","text":"%s"}],'
        '"isError":%s,"timestamp":%d}'
    ) % (k, text, error, 1767225600500 + 1000 * k)


def _usage(k: int, cost: bool) -> str:
    c = ',"cost":{"input":0.0%d,"cacheRead":0.001,"cacheWrite":0,"total":0.05}' % (k + 1) if cost else ""
    return '{"input":%d,"output":7,"cacheRead":%d,"cacheWrite":0,"totalTokens":%d%s}' % (
        900 + 50 * k,
        400 * k,
        907 + 450 * k,
        c,
    )


def _reads() -> str:
    """Reads of two paths, one result an error, recorded costs on some answers (the mean rate
    prices the others), a compaction that drops a read (its re-read is counted), a fork."""
    out, parent = HEADER, None
    lines = [(f"u{0}", '{"role":"user","content":"look at the code"}')]
    for k in range(6):
        lines.append((f"a{k}", _call(k, "a.py" if k % 2 == 0 else "b.py", _usage(k, cost=k % 3 != 1))))
        lines.append((f"r{k}", _result(k, "x = %d " % k + "w" * 1200, "true" if k == 3 else "false")))
    for n, (eid, m) in enumerate(lines):
        out += _msg(eid, parent, n % 60, m)
        parent = eid
    out += (
        '{"type":"compaction","id":"k","parentId":"r5","timestamp":"2026-01-01T00:01:00.000Z",'
        '"summary":"they read a.py and b.py","firstKeptEntryId":"a5","tokensBefore":5000}\n'
    )
    out += _msg("a6", "k", 1, _call(6, "a.py", _usage(6, cost=True)))
    out += _msg("r6", "a6", 2, _result(6, "x = 6"))
    out += _msg("a7", "r6", 3, _call(7, "b.py", _usage(7, cost=False)))
    out += _msg("fork", "a6", 4, '{"role":"user","content":"another way"}')
    return out + _msg("r7", "a7", 5, _result(7, "y"))


FILES = {**INFO_FILES, "reads": _reads(), "reasoning": reasoning_file()}
"""``reasoning``: OpenAI answers that reason, read by the cache model at each new turn
(:data:`inspector.cache.causes.REASONING`): the streamed facts keep which answers reasoned."""


def _write(tmp_path: Path, name: str) -> Path:
    src = tmp_path / f"{name}.jsonl"
    src.write_text(FILES[name], encoding="utf-8", errors="surrogatepass")
    return src


def _context(seg: Any, length: int) -> list[tuple[Any, str]]:
    return [(m.entry_index, m.message.role) for m in seg[:length]]


def _json(r: Replay) -> str:
    """The replay's JSON, its summaries (with the contexts before and after each compaction) and
    each step's context (entry indexes and roles; whether it is the previous step's list)."""
    summaries = [
        s.to_json() | {"contexts": [_context(*s.pinned_before), _context(*s.pinned_after)]}
        for s in r.summaries
    ]
    steps = [
        (_context(st._segment, st._length), k > 0 and st._segment is r.steps[k - 1]._segment)
        for k, st in enumerate(r.steps)
    ]
    return json.dumps([r.as_dict(), summaries, steps, list(r.path)], sort_keys=True)


def _both(src: Path, settings: ReplaySettings) -> tuple[Any, Replay]:
    """(the streamed replay or None, the loaded replay), each with its cache report's JSON."""
    loaded = replay(load_session(src), settings)
    skeleton = load_for_replay(src)
    assert skeleton is not None
    facts = FactsReader(chunk=2)  # chunks of two answers: the columns are read in pieces
    streamed = streamed_replay(skeleton, settings, facts.add)
    if streamed is not None:
        remember_facts(skeleton.session, facts.facts())
    return streamed, loaded


def _cache(r: Replay) -> str:
    return json.dumps(cache_replay(r).annotate(r.as_dict()), sort_keys=True)


@pytest.mark.parametrize("settings", SETTINGS, ids=["pi", "tiktoken", "small-window"])
@pytest.mark.parametrize("name", sorted(FILES))
def test_streamed_replay_is_the_loaded_replay(name: str, settings: ReplaySettings, tmp_path: Path) -> None:
    src = _write(tmp_path, name)
    s = load_session(src)
    for leaf in [None, *range(len(s.entries))]:
        st = settings.model_copy(update={"leaf": leaf})
        streamed, loaded = _both(src, st)
        if streamed is None:  # only where the branch does not run forward through the file
            assert any(b <= a for a, b in zip(loaded.path, loaded.path[1:], strict=False)), leaf
            continue
        assert _json(streamed) == _json(loaded), leaf
        assert _cache(streamed) == _cache(loaded), leaf


def test_streamed_replay_figures_are_not_trivial(tmp_path: Path) -> None:
    """The comparisons above compare real figures: re-reads, a recorded compaction, recorded and
    mean-rate prices, cache reads and an overflow are all in play."""
    streamed, loaded = _both(_write(tmp_path, "reads"), ReplaySettings(context_window=1000))
    assert streamed is not None
    m = streamed.metrics
    assert (m.steps, m.compactions, m.rereads) == (8, 1, 1)
    assert m.overflows > 0 and m.recorded_cost_usd == pytest.approx(0.05 * 5)
    own = [s.cost / s.tokens for s in streamed.steps if s.tokens]
    assert len(set(own)) > 2  # own rates and the mean rate
    report = json.loads(_cache(streamed))
    assert report["metrics"]["cacheHitRate"] and report["steps"][7]["recordedCache"]["read"] == 2800
    streamed, _ = _both(_write(tmp_path, "reasoning"), ReplaySettings())
    assert streamed is not None
    causes = [x["cause"] for x in json.loads(_cache(streamed))["cache"]["invalidations"]]
    assert causes == ["reasoning"]
    out_of_order, _ = _both(_write(tmp_path, "out-of-order"), ReplaySettings())
    assert out_of_order is None


@pytest.mark.parametrize("path", _v3_files(), ids=lambda p: p.name)
def test_streamed_replay_matches_on_samples_and_fixtures(path: Path) -> None:
    if load_for_replay(path) is None:
        return  # not a pi v3 file: replayed from its load
    streamed, loaded = _both(path, ReplaySettings())
    if streamed is not None:
        assert _json(streamed) == _json(loaded)
        assert _cache(streamed) == _cache(loaded)


def test_only_replays_that_read_no_message_again_stream(tmp_path: Path) -> None:
    assert streamable(ReplaySettings())
    for other in (
        ReplaySettings(compaction="pi"),
        ReplaySettings(strategy="recorded"),
        ReplaySettings(counter="usage"),
        ReplaySettings(counter="calibrated"),
    ):
        assert not streamable(other)
        skeleton = load_for_replay(_write(tmp_path, "reads"))
        assert skeleton is not None
        with pytest.raises(ValueError):
            streamed_replay(skeleton, other)


def test_a_file_changed_since_its_skeleton_is_an_error(tmp_path: Path) -> None:
    src = _write(tmp_path, "reads")
    skeleton = load_for_replay(src)
    assert skeleton is not None
    src.write_text(FILES["compacted"], encoding="utf-8")
    with pytest.raises(SessionLoadError, match="changed while it was read"):
        streamed_replay(skeleton, ReplaySettings())
    src.write_text(FILES["reads"] + FILES["reads"].split("\n", 1)[1], encoding="utf-8")  # entries added
    with pytest.raises(SessionLoadError, match="changed while it was read"):
        streamed_replay(skeleton, ReplaySettings())


CLI_ARGS = [
    [],
    ["--json"],
    ["--cache", "off"],
    ["--cache", "off", "--json"],
    ["--counter", "tiktoken"],
    ["--leaf", "r6"],
]


@pytest.mark.parametrize("name", ["reads", "compacted", "truncated-last"])
def test_cli_replay_of_a_large_file_streams_and_prints_the_same(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = str(_write(tmp_path, name))
    args = CLI_ARGS if name == "reads" else CLI_ARGS[:4]
    loaded = [_cli("replay", src, *a) for a in args]
    assert all(code == 0 for code, _, _ in loaded)
    import inspector.cli.base as cli_base
    import inspector.cli.replay as replay_cli

    monkeypatch.setattr(cli_base, "STREAM_BYTES", 0)
    real_load = replay_cli.load_or_exit

    def no_load(path: str) -> None:
        raise AssertionError("a large v3 file is replayed as recorded without loading it")

    monkeypatch.setattr(replay_cli, "load_or_exit", no_load)
    assert [_cli("replay", src, *a) for a in args] == loaded
    code, _, err = _cli("replay", src, "--leaf", "nope")
    assert code == 2 and "nope" in err
    # what-if replays, pruning and CSV read messages again: they load the session
    monkeypatch.setattr(replay_cli, "load_or_exit", real_load)
    for a in (["--compaction", "pi"], ["--strategy", "recorded"], ["--csv"], ["--counter", "usage"]):
        monkeypatch.setattr(cli_base, "STREAM_BYTES", 1 << 60)
        before = _cli("replay", src, *a)
        monkeypatch.setattr(cli_base, "STREAM_BYTES", 0)
        assert _cli("replay", src, *a) == before


@pytest.mark.parametrize(
    "obj",
    [
        {},
        {"steps": []},
        {"a": 1, "steps": [{"x": [1, {"y": "é\n\udc00"}], "e": [], "d": {}}, [], 3, None], "z": {"k": [2]}},
        {"settings": {"w": 1.5}, "steps": [{"n": {"m": [{}]}}] * 3, "cache": {"rows": []}},
    ],
    ids=["empty", "no-steps", "shapes", "replay-like"],
)
def test_streamed_json_is_the_json_of_the_whole(obj: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """``replay --json`` writes its steps one at a time: the same text as dumping the whole dict."""
    import sys

    from inspector.cli.base import print_json, print_json_streamed

    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    print_json(obj, indent=1)
    whole = out.getvalue()
    out.seek(0)
    out.truncate()
    print_json_streamed({k: iter(v) if k == "steps" else v for k, v in obj.items()}, chunk=2)
    assert out.getvalue() == whole


def test_a_streamed_replay_gives_each_model_its_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The skeleton holds no message: the models are counted as it is read, so a streamed replay
    of a session that switched models runs each model's calls against its window, as loaded."""
    from .support.builder import SessionBuilder

    b = SessionBuilder()
    for model, usage in [("claude-sonnet-4-5", 150_000)] * 3 + [("gemini-2.5-pro", 300_000)] * 2:
        b.user("go")
        b.assistant(
            "ok", provider="anthropic" if model.startswith("claude") else "google", model=model, usage=usage
        )
    src = tmp_path / "switch.jsonl"
    src.write_text(b.text())
    import inspector.cli.base as cli_base

    monkeypatch.setattr(cli_base, "STREAM_BYTES", 1 << 60)
    loaded = _cli("replay", str(src), "--json")
    monkeypatch.setattr(cli_base, "STREAM_BYTES", 0)
    import inspector.cli.replay as replay_cli

    def no_load(path: str) -> None:
        raise AssertionError("streamed, not loaded")

    monkeypatch.setattr(replay_cli, "load_or_exit", no_load)
    streamed = _cli("replay", str(src), "--json")
    assert streamed == loaded and loaded[0] == 0
    out = json.loads(loaded[1])
    assert [s["window"] for s in out["steps"]] == [200_000] * 3 + [1_048_576] * 2
    assert out["metrics"]["overflows"] == 0
    assert "gemini-2.5-pro's calls against 1,048,576" in _cli("replay", str(src))[1]


@pytest.mark.parametrize("settings", SETTINGS, ids=["pi", "tiktoken", "small-window"])
def test_a_streamed_replay_keeps_no_message_of_the_file(settings: ReplaySettings, tmp_path: Path) -> None:
    """Its messages are counted in batches as the walk reads them, and let go: the counter keeps
    none of them (counting an answer again, to size the calls that record no usage, once kept
    every answer of a 2M-entry file alive: 1.7 → 2.7 GB)."""
    from inspector.replay.streamed import StreamedRun
    from inspector.session.models import AssistantMessage, ToolResultMessage, UserMessage

    sk = load_for_replay(_write(tmp_path, "reads"))
    assert sk is not None
    run = StreamedRun(sk, settings)
    r = run.run()
    assert r is not None and len(r.steps) > 3 and any(st.recorded_input for st in r.steps)
    kept = [m for m, _ in run.counter._cache.values()]
    assert not [m for m in kept if isinstance(m, (AssistantMessage, ToolResultMessage, UserMessage))]
