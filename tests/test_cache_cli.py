"""``replay --cache`` and ``sweep`` with billed cost: the issue's Interface JSON and the text."""

from __future__ import annotations

import json

import pytest

from .support.paths import SAMPLES
from .test_cli import run

CODING = str(SAMPLES / "coding-session.jsonl")


def test_replay_cache_model_json_interface():
    code, out, _ = run("replay", CODING, "--cache", "model", "--json")
    assert code == 0
    d = json.loads(out)
    for st in d["steps"]:
        assert set(st["cache"]) == {"read", "write", "uncached"}
        assert all(isinstance(v, int) and v >= 0 for v in st["cache"].values())
        assert set(st["recordedCache"]) == {"read", "write"}
        assert all(v is None or isinstance(v, int) for v in st["recordedCache"].values())
    m = d["metrics"]
    assert isinstance(m["billedCostUsd"], float) and m["billedCostUsd"] > 0
    assert 0 <= m["cacheHitRate"] <= 1
    assert isinstance(m["invalidations"], int) and m["invalidations"] == len(d["cache"]["invalidations"])
    assert 0 <= m["cacheReadError"] < 0.05  # this sample records its cache usage
    # the recorded figures are the session's own
    assert d["steps"][1]["recordedCache"] == {"read": 3669, "write": 60}


def test_cache_read_error_is_null_without_recorded_usage(sb, tmp_path):
    sb.user("hi")
    sb.assistant("hello")
    sb.user("again")
    sb.assistant("hello again")
    p = tmp_path / "s.jsonl"
    p.write_text(sb.text())
    code, out, _ = run("replay", str(p), "--json")
    d = json.loads(out)
    assert code == 0 and d["metrics"]["cacheReadError"] is None
    assert all(s["recordedCache"] == {"read": None, "write": None} for s in d["steps"])


def test_cache_off_keeps_the_blended_output():
    code, out, _ = run("replay", CODING, "--cache", "off", "--json")
    d = json.loads(out)
    assert code == 0 and "billedCostUsd" not in d["metrics"] and "cache" not in d["steps"][0]
    assert d["metrics"]["cost_usd"] > 0
    code, text, _ = run("replay", CODING)
    assert "billed cost" in text and "blended" in text
    assert "billed cost" not in run("replay", CODING, "--cache", "off")[1]


@pytest.mark.parametrize("args", [["--cache", "bogus"], ["--cache-retention", "forever"]])
def test_bad_cache_options_are_usage_errors(args):
    assert run("replay", CODING, *args)[0] == 2


def test_sweep_ranks_by_billed_cost_and_flags_the_frontier():
    code, out, _ = run(
        "sweep",
        CODING,
        "--strategy",
        "pi-context-pruning",
        "--set",
        "prune_minimum=0",
        "--grid",
        "prune_protect=2000,20000,40000",
        "--json",
    )
    assert code == 0
    cells = json.loads(out)["cells"]
    costs = [c["billedCostUsd"] for c in cells]
    assert costs == sorted(costs) and all("frontier" in c for c in cells)
    assert cells[0]["frontier"] is True  # the cheapest cell is never dominated
    code, out, _ = run(
        "sweep",
        CODING,
        "--grid",
        "keep_recent_tokens=10000,20000",
        "--compaction",
        "pi",
        "--objective",
        "billed",
        "--cache",
        "off",
    )
    assert code == 2


def test_sweep_ranks_settings_by_what_compactions_forgot() -> None:
    """``--objective forgotten``: each cell replayed and its compactions scored (issue 21), fewest
    items forgotten first, with the share kept; the same totals the retention report gives."""
    from inspector import load_session
    from inspector.replay import ReplaySettings, replay
    from inspector.retention import retention

    code, out, _ = run(
        "sweep",
        CODING,
        "--grid",
        "keep_recent_tokens=2000,8000,20000",
        "--compaction",
        "pi",
        "--window",
        "60000",
        "--objective",
        "forgotten",
        "--json",
    )
    assert code == 0
    cells = json.loads(out)["cells"]
    assert [c["forgotten"] for c in cells] == sorted(c["forgotten"] for c in cells)
    s = load_session(CODING)
    for c in cells:
        rep = retention(
            replay(
                s,
                ReplaySettings(
                    compaction="pi", context_window=60_000, keep_recent_tokens=c["keep_recent_tokens"]
                ),
            )
        )
        needed = sum(len(x.needed) for x in rep.compactions)
        forgotten = sum(len(x.forgotten) for x in rep.compactions)
        assert (c["needed"], c["forgotten"]) == (needed, forgotten) and needed > 0
        assert c["retention"] == (needed - forgotten) / needed
    assert cells[0]["keep_recent_tokens"] == 20000 and cells[-1]["forgotten"] > cells[0]["forgotten"]


def test_objective_is_refused_for_a_corpus_sweep_or_the_agents_rather_than_ignored() -> None:
    code, _, err = run(
        "sweep", str(SAMPLES), "--grid", "keep_recent_tokens=1000,2000", "--objective", "forgotten"
    )
    assert code == 2 and "--objective ranks one session's grid" in err
    code, _, err = run("sweep", CODING, "--agents", "--objective", "billed")
    assert code == 2 and "--objective ranks one session's grid" in err


def test_the_text_says_what_broke_the_cache_in_words(tmp_path):
    """The JSON keeps the cause's code; the text, the timeline and the story say it in words."""
    from inspector.cache.causes import invalidated_by

    from .test_cache import reading_session

    p = tmp_path / "idle.jsonl"
    p.write_text(reading_session(4, gap_ms=400_000).text())
    code, out, _ = run("replay", str(p), "--cache", "model")
    assert code == 0
    lines = [x for x in out.splitlines() if "cache invalidated by" in x]
    assert lines and all(
        "cache invalidated by the cache expiring after 13.3 idle minutes: " in x for x in lines
    )
    assert all(" tokens written again, +" in x for x in lines)  # Anthropic writes; OpenAI sends uncached
    assert {r["cause"] for r in json.loads(run("replay", str(p), "--json")[1])["cache"]["invalidations"]} == {
        "ttl"
    }
    said = invalidated_by({"cause": "agent", "brokenAtEntryIndex": 37})
    assert said == "a switch of agent (its own tools) at entry 37"
    assert invalidated_by({"cause": "unknown-cause"}) == "unknown-cause"
