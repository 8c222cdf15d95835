"""The engine's answers to the pages' questions (inspector.whatif): a compaction now, which
recorded summary a simulated one is compared with, the prompt style, the keepRecentTokens line,
a Compare configuration and the recorded prunes."""

from __future__ import annotations

import pytest

from inspector import load_session
from inspector.compaction import CompactionSettings, prepare_compaction
from inspector.importers import load_any
from inspector.replay import ReplaySettings, replay
from inspector.whatif import (
    compaction_now,
    keep_recent_line,
    recorded_counterpart,
    recorded_prune_count,
    set_aside_compactions,
    summary_prompt_style,
    variant_settings,
)

from .support.paths import REPO

SAMPLES = REPO / "sample_sessions"


@pytest.fixture(scope="module")
def coding():  # type: ignore[no-untyped-def]
    return load_session(SAMPLES / "coding-session.jsonl")


def test_compaction_now_is_pis_preparation_at_the_branch_end(coding) -> None:  # type: ignore[no-untyped-def]
    st = ReplaySettings(keep_recent_tokens=5000, reserve_tokens=9000)
    path = coding.path(coding.default_leaf)
    want = prepare_compaction(
        coding.entries_at(path),
        CompactionSettings(keepRecentTokens=5000, reserveTokens=9000),
        path_indexes=path,
        pi_version=st.pi_version,
    )
    got = compaction_now(coding, st)
    assert got is not None and want is not None
    assert (
        got.messagesToSummarize == want.messagesToSummarize
        and got.first_kept_path_index == want.first_kept_path_index
    )
    assert got.settings.keepRecentTokens == 5000 and got.settings.reserveTokens == 9000
    # another leaf: the branch that ends there
    leaf = path[len(path) // 2]
    other = compaction_now(coding, st.model_copy(update={"leaf": leaf}))
    assert other is None or all(
        m.entry_index is None or m.entry_index <= leaf for m in other.messagesToSummarize
    )
    # a larger keepRecentTokens keeps from further back
    more = compaction_now(coding, st.model_copy(update={"keep_recent_tokens": 15000}))
    assert more is not None and more.first_kept_path_index < got.first_kept_path_index


def test_a_simulated_compaction_is_compared_with_the_nearest_recorded_one(coding) -> None:  # type: ignore[no-untyped-def]
    recorded = [i for i, e in enumerate(coding.entries) if e.type == "compaction"]
    r = replay(coding, ReplaySettings(compaction="pi", context_window=30_000))
    aside = set_aside_compactions(r)
    assert aside and set(aside) <= set(recorded) and all(i in r.path for i in aside)
    sims = [i for i, rec in enumerate(r.summaries) if rec.simulated]
    assert sims
    for i in sims:
        first = r.summaries[i].first_kept_entry_index or 0
        other = recorded_counterpart(r, i)
        assert other in aside and abs(other - first) == min(abs(e - first) for e in aside)
        assert summary_prompt_style(r, i) == "pi"  # the simulating policy's style
    as_recorded = replay(coding, ReplaySettings())
    assert all(recorded_counterpart(as_recorded, i) is None for i in range(len(as_recorded.summaries)))
    assert [summary_prompt_style(as_recorded, i) for i in range(len(as_recorded.summaries))] == ["pi"] * len(
        as_recorded.summaries
    )


@pytest.mark.parametrize(
    "sample,agent",
    [
        ("claude-code-session.jsonl", "claude-code"),
        ("codex-session.jsonl", "codex"),
        ("opencode-session.json", "opencode"),
    ],
)
def test_the_prompt_style_follows_the_recording_agent(sample: str, agent: str) -> None:
    s = load_any(SAMPLES / sample)
    r = replay(s, ReplaySettings())
    recs = [i for i, rec in enumerate(r.summaries) if not rec.simulated]
    assert recs and all(summary_prompt_style(r, i) == agent for i in recs)


def test_the_prompt_style_of_a_simulated_compaction_is_its_policys(coding) -> None:  # type: ignore[no-untyped-def]
    for policy, style in (("codex", "codex"), ("early", "pi")):  # early has no style of its own: pi's
        r = replay(coding, ReplaySettings(compaction=policy, context_window=20_000))
        sims = [i for i, rec in enumerate(r.summaries) if rec.simulated]
        assert sims and all(summary_prompt_style(r, i) == style for i in sims), policy


def test_keep_recent_line_only_for_pis_policies() -> None:
    assert keep_recent_line(ReplaySettings(compaction="pi", keep_recent_tokens=1234)) == 1234
    assert keep_recent_line(ReplaySettings(compaction="early", keep_recent_tokens=1234)) == 1234
    for pol in ("recorded", "never", "codex", "opencode", "claude-code"):
        assert keep_recent_line(ReplaySettings(compaction=pol)) is None


def test_a_variant_keeps_the_strategy_settings_only_for_the_same_strategy() -> None:
    base = ReplaySettings(
        strategy="opencode", strategy_settings=(("prune_protect", 1000),), context_window=50_000
    )
    same = variant_settings(base, "opencode", "never", 777)
    assert (same.strategy, same.compaction, same.keep_recent_tokens) == ("opencode", "never", 777)
    assert same.strategy_settings == base.strategy_settings and same.context_window == 50_000
    other = variant_settings(base, "none", "pi", 5)
    assert other.strategy == "none" and other.strategy_settings == () and other.context_window == 50_000


def test_recorded_prunes_are_counted(coding) -> None:  # type: ignore[no-untyped-def]
    from inspector.pruning.recorded import recorded_prune

    assert recorded_prune_count(coding) == 0
    s = load_any(SAMPLES / "opencode-session.json")
    want = sum(1 for e in s.entries if recorded_prune(getattr(e, "message", None)) is not None)
    assert recorded_prune_count(s) == want == 2
