"""Context Inspector: see what a coding agent sends to the model, and what pruning and
compaction do to it. The engine is pure Python (no streamlit, no plotly outside ``ui``)."""

from __future__ import annotations

__version__ = "0.1.0"

from .branch_summary import collect_entries_for_branch_summary, prepare_branch_entries, prepare_branch_summary
from .compaction import (
    DEFAULT_COMPACTION_SETTINGS,
    CompactionSettings,
    find_cut_point,
    find_turn_start_index,
    prepare_compaction,
    should_compact,
)
from .context import build_session_context, convert_to_llm, serialize_conversation
from .session.loader import SessionLoadError, load_session, parse_session
from .session.tree import LoadIssue, Session
from .tokens import estimate_context_tokens, estimate_tokens, get_counter

__all__ = [
    "__version__",
    "CompactionSettings",
    "DEFAULT_COMPACTION_SETTINGS",
    "LoadIssue",
    "Session",
    "SessionLoadError",
    "build_session_context",
    "collect_entries_for_branch_summary",
    "convert_to_llm",
    "estimate_context_tokens",
    "estimate_tokens",
    "find_cut_point",
    "find_turn_start_index",
    "get_counter",
    "load_session",
    "parse_session",
    "prepare_branch_entries",
    "prepare_branch_summary",
    "prepare_compaction",
    "serialize_conversation",
    "should_compact",
]
