"""The engine's answers to the questions the app's pages ask beside a replay (pure; no streamlit).

The pages only draw; what they show is decided here:

* :func:`compaction_now`: what pi's compaction would prepare at the end of the replayed branch
  (the Summaries page's "compaction now"), and :func:`nothing_to_summarise`, why it would
  summarise nothing;
* :func:`set_aside_compactions` and :func:`recorded_counterpart`: which recorded summary a
  simulated compaction is compared with (the one a what-if replay set aside nearest to where
  the simulated one keeps from);
* :func:`summary_prompt_style`: which system's prompt an LLM summarizer gets for a compaction;
* :func:`keep_recent_line`: where a policy counts keepRecentTokens back from (pi's policies only);
* :func:`variant_settings`: a Compare configuration derived from the sidebar's settings;
* :func:`recorded_prune_count`: how many tool outputs the agent itself cleared in the file.

Which preparation a recorded compaction gets is :func:`inspector.compaction_view.compaction_view`'s.
"""

from __future__ import annotations

from typing import Any

from .agents import AGENTS
from .compaction import CompactionPreparation, CompactionSettings, prepare_compaction
from .policies import get_policy
from .replay import ReplaySettings


def compaction_now(session: Any, settings: ReplaySettings) -> CompactionPreparation | None:
    """pi's ``prepareCompaction`` at the end of the replayed branch (``settings.leaf``, else pi's
    default leaf) with the settings' keepRecentTokens, reserveTokens and pi version; None when
    the branch is empty or pi would not compact there (it ends in a compaction)."""
    leaf = settings.leaf if settings.leaf is not None else session.default_leaf
    path = session.path(leaf) if leaf is not None else []
    if not path:
        return None
    cs = CompactionSettings(
        keepRecentTokens=settings.keep_recent_tokens, reserveTokens=settings.reserve_tokens
    )
    return prepare_compaction(session.entries_at(path), cs, path_indexes=path, pi_version=settings.pi_version)


def nothing_to_summarise(prep: CompactionPreparation) -> str | None:
    """Why pi's compaction would summarise nothing here (None: it summarises something): the
    messages since the last compaction, or since the branch's start, fit in keepRecentTokens."""
    if prep.messagesToSummarize or prep.turnPrefixMessages:
        return None
    since = "the last compaction" if prep.prev_compaction_path_index >= 0 else "the start of the branch"
    walked = prep.cut.walked_tokens if prep.cut.walked_to is None else 0
    size = f" ({walked:,} tokens as pi counts them)" if walked else ""
    return (
        f"the messages since {since}{size} fit in the newest {prep.settings.keepRecentTokens:,} tokens "
        "that keepRecentTokens keeps"
    )


def set_aside_compactions(replay: Any) -> list[int]:
    """The recorded compaction entries on the replayed branch (a what-if policy sets them aside)."""
    on_path = set(replay.path)
    return [i for i, e in enumerate(replay.session.entries) if e.type == "compaction" and i in on_path]


def recorded_counterpart(replay: Any, index: int) -> int | None:
    """The recorded compaction entry that simulated compaction ``index`` of ``replay`` is compared
    with: the one set aside nearest to the entry it keeps from (None: a recorded compaction, or
    none is on the branch)."""
    rec = replay.summaries[index]
    if not rec.simulated:
        return None
    first = rec.first_kept_entry_index or 0
    return min(set_aside_compactions(replay), key=lambda e: abs(e - first), default=None)


def summary_prompt_style(replay: Any, index: int) -> str:
    """The prompt style an LLM summarizer gets for compaction ``index``: the simulating policy's
    for a simulated one, the recording agent's for a recorded one; pi's when that system has no
    style of its own."""
    if replay.summaries[index].simulated:
        return get_policy(replay.settings.compaction).summary_style
    fmt = replay.session.format
    return AGENTS[fmt].summary_style if fmt in AGENTS else "pi"


def keep_recent_line(settings: ReplaySettings) -> int | None:
    """The keepRecentTokens the compaction policy counts back from the newest message (None: the
    policy does not keep a recent part by tokens)."""
    return settings.keep_recent_tokens if get_policy(settings.compaction).pi_cut else None


def variant_settings(
    settings: ReplaySettings, strategy: str, compaction: str, keep_recent_tokens: int
) -> ReplaySettings:
    """``settings`` with another pruning strategy, compaction policy and keepRecentTokens (the rest
    as they are); the strategy's own settings carry over only when the strategy is the same."""
    return settings.model_copy(
        update={
            "strategy": strategy,
            "compaction": compaction,
            "keep_recent_tokens": keep_recent_tokens,
            "strategy_settings": settings.strategy_settings if strategy == settings.strategy else (),
        }
    )


def recorded_prune_count(session: Any) -> int:
    """How many tool outputs the agent itself cleared, as recorded in the file."""
    from .pruning.recorded import recorded_prune

    return sum(1 for e in session.entries if recorded_prune(getattr(e, "message", None)) is not None)
