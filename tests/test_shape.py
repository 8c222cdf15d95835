"""The engine's shape: one record per agent, policies as objects with their own settings, typed
replay events that serialise as before, and the summary cache a caller passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.agents import AGENTS, get_agent
from inspector.importers import FORMAT_LABELS, detect_format
from inspector.importers.discover import agent_dirs
from inspector.policies import (
    POLICIES,
    PolicySettings,
    get_policy,
    policy_fields,
    rule_policy,
    trigger_threshold,
)
from inspector.policies.codex import CodexSettings
from inspector.pruning import REGISTRY
from inspector.replay import (
    COMPARED,
    Event,
    Overflow,
    ReplaySettings,
    Reread,
    SimulatedCompaction,
    SummaryCache,
    agent_config,
    compare_agents,
    replay,
    sweep,
)
from inspector.session.loader import load_session
from inspector.summarize.prompts import STYLES

from .support.builder import SessionBuilder
from .support.paths import SAMPLES

# -- agents ---------------------------------------------------------------------------------------


def test_each_agent_names_a_known_policy_strategy_and_style() -> None:
    assert list(AGENTS) == ["pi", "claude-code", "codex", "opencode"]
    for a in AGENTS.values():
        assert a.policy in POLICIES and (a.strategy in REGISTRY or a.strategy == "none")
        assert a.summary_style in STYLES and get_policy(a.policy).summary_style == a.summary_style
    assert AGENTS["claude-code"].label == "Claude Code (reported)" and AGENTS["codex"].label == "Codex CLI"
    with pytest.raises(KeyError, match="unknown agent"):
        get_agent("cursor")


def test_importer_labels_and_session_folders_come_from_the_agent_records() -> None:
    assert detect_format((SAMPLES / "codex-session.jsonl").read_bytes()[:65536]) == "codex"
    for name, a in AGENTS.items():
        if name in FORMAT_LABELS:
            assert FORMAT_LABELS[name] == a.format_label
    home = Path("/h")
    assert agent_dirs("claude-code", {"CLAUDE_CONFIG_DIR": "/a,/b"}, home) == [
        Path("/a/projects"),
        Path("/b/projects"),
    ]
    assert agent_dirs("pi", {}, home) == [Path("/h/.pi/agent/sessions")]


def test_compare_agents_reads_the_agent_records() -> None:
    assert COMPARED[0] == "recorded" and set(COMPARED[1:]) == set(AGENTS)
    assert agent_config("codex") == ("Codex CLI", "codex", "none")
    assert agent_config("recorded") == ("as recorded", "recorded", "recorded")


# -- policies -------------------------------------------------------------------------------------


def test_policy_settings_are_generated_from_each_policys_own_model() -> None:
    flat = PolicySettings(codex_fraction=0.5, early_red_fraction=0.6)
    assert get_policy("codex").own_settings(flat) == CodexSettings(fraction=0.5)
    assert get_policy("early").own_settings(flat).red_fraction == 0.6  # type: ignore[attr-defined]
    assert policy_fields("codex") == ["codex_fraction", "codex_user_tokens"] and policy_fields("pi") == []
    assert PolicySettings.model_fields["codex_fraction"].description.startswith("codex: ")
    with pytest.raises(ValueError):
        PolicySettings(codex_fraction=2.0)  # the policy's own bound (le=1.5)


def test_policies_say_what_they_are_instead_of_their_names_being_checked() -> None:
    sim = {n for n, p in POLICIES.items() if p.simulated}
    assert sim == {"pi", "early", "opencode", "codex", "claude-code"}
    assert {n for n, p in POLICIES.items() if p.pi_cut} == {"pi", "early"}
    assert [n for n, p in POLICIES.items() if p.as_recorded] == ["recorded"]
    assert (
        rule_policy("recorded", "codex").name == "codex" and rule_policy("recorded", "unknown").name == "pi"
    )
    assert rule_policy("early", "codex").name == "early"
    assert trigger_threshold("codex", 200_000, PolicySettings(), 16_384) == 180_000
    with pytest.raises(ValueError, match="unknown compaction policy"):
        get_policy("sometimes")


# -- typed events and the summary cache --------------------------------------------------------------


def _session_that_compacts() -> tuple[object, ReplaySettings]:
    b = SessionBuilder()
    for i in range(6):
        b.user(f"task {i} " + "u" * 2000)
        b.assistant("", tools=[("read", {"path": "a.py"})])
        b.tool_result("x" * 4000, tool="read")
        b.assistant("done " * 20)
    return b.session(), ReplaySettings(
        compaction="pi", context_window=2000, reserve_tokens=200, keep_recent_tokens=500
    )


def test_events_are_typed_and_serialise_as_the_dicts_they_replace() -> None:
    s, settings = _session_that_compacts()
    r = replay(s, settings)  # type: ignore[arg-type]
    events = [e for st in r.steps for e in st.events]
    assert events and all(isinstance(e, Event) for e in events)
    comp = next(e for e in events if isinstance(e, SimulatedCompaction))
    assert (
        comp.to_json()["type"] == "compaction" and comp.to_json()["simulated"] is True and comp.policy == "pi"
    )
    with pytest.raises(TypeError):
        comp["simulated"]  # type: ignore[index]  # typed: fields are read, not keys
    assert Overflow(5, 4).to_json() == {"type": "overflow", "tokens": 5, "window": 4}
    assert Overflow(5, 4, "compaction").to_json() == {
        "type": "overflow",
        "tokens": 5,
        "window": 4,
        "before": "compaction",
    }
    assert Reread("a.py", 3).to_json() == {"type": "reread", "path": "a.py", "earlierEntryIndex": 3}
    k = next(st.step for st in r.steps if st.events)
    assert r.as_dict()["steps"][k]["events"] == [e.to_json() for e in r.steps[k].events]


def test_the_summary_cache_is_the_callers() -> None:
    s, settings = _session_that_compacts()
    cache = SummaryCache()
    first = replay(s, settings, summaries=cache)  # type: ignore[arg-type]
    n = len(cache)
    assert n == first.metrics.compactions > 0
    again = replay(s, settings.with_strategy_settings({}), summaries=cache)  # type: ignore[arg-type]
    assert len(cache) == n and [x.text for x in again.summaries] == [x.text for x in first.summaries]
    # without one, a replay uses its own: nothing is left behind in a module
    other = SummaryCache()
    replay(s, settings)  # type: ignore[arg-type]
    assert len(other) == 0 and len(cache) == n
    cells = sweep(s, settings, {"keep_recent_tokens": [500, 500]}, summaries=other)  # type: ignore[arg-type]
    assert len(cells) == 2 and len(other) == n


def test_compare_agents_replays_each_agents_policy_and_strategy() -> None:
    s = load_session(SAMPLES / "coding-session.jsonl")
    cells = compare_agents(s, ReplaySettings(context_window=40_000), ["pi", "codex"])
    assert [(c.settings.compaction, c.settings.strategy) for c in cells] == [
        ("pi", "none"),
        ("codex", "none"),
    ]
