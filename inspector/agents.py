"""The coding agents Context Inspector knows: one record per agent, the only place each is described.

Everything that lists agents reads :data:`AGENTS`: the importers (format name and label),
:mod:`inspector.importers.discover` (where each agent keeps its sessions), the replay's
``compare_agents`` (each agent's compaction policy and pruning strategy), the app's agent presets,
the Compare page and the plain-words narration. Pure data: this module imports nothing of the
project, so every layer may read it.

Where each agent keeps its sessions (``../shared/research/ecosystem.md`` §2):

``pi``          ``~/.pi/agent/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl``
``claude-code`` ``<config>/projects/<cwd with / as ->/<session>.jsonl`` for each config folder in
                ``$CLAUDE_CONFIG_DIR`` (comma separated), else ``~/.claude`` and ``~/.config/claude``
``codex``       ``$CODEX_HOME`` (``~/.codex``) ``sessions/YYYY/MM/DD/rollout-*.jsonl`` and
                ``archived_sessions/``
``opencode``    ``$OPENCODE_DATA_DIR`` (``~/.local/share/opencode``): its SQLite database and older
                versions' JSON storage
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SessionFolders:
    """Where an agent keeps its sessions: each base folder joined with each of ``subdirs``.

    The bases are ``$env`` when it is set (several, comma separated, when ``several``), else
    ``defaults`` (relative to the home folder)."""

    env: str | None
    defaults: tuple[str, ...]
    subdirs: tuple[str, ...] = ("",)
    several: bool = False


@dataclass(frozen=True)
class Agent:
    name: str
    """The agent's name, also its session format's name (``session.format``)."""
    title: str
    """For people: ``Codex CLI``."""
    short_title: str
    """In sentences: ``Codex``."""
    format_label: str
    """The label of its session format (the importer's ``LABEL``)."""
    policy: str
    """Its compaction policy (:mod:`inspector.policies`)."""
    strategy: str
    """Its pruning strategy (:mod:`inspector.pruning`)."""
    summary_style: str
    """How it asks for a summary (:data:`inspector.summarize.prompts.STYLES`)."""
    folders: SessionFolders
    preset_note: str
    """What its configuration means, in the app's agent preset."""
    context_window: int | None = None
    """The window its preset sets (None: the model's, the session's or the sidebar's)."""
    keep_recent_tokens: int | None = None
    """pi only: keepRecentTokens its preset sets."""
    reserve_tokens: int | None = None
    """pi only: reserveTokens its preset sets."""
    verified: bool = True
    """False when its policy and pruning come from third-party reports (source not public)."""
    windows: tuple[int, ...] = ()
    """The windows it may run a model at when its file does not say which, smallest first (Claude
    Code: a model's 200k, or 1M when set to); empty: the window the file records, or the model's
    (:func:`inspector.window.known_window`)."""

    @property
    def label(self) -> str:
        """The title, marked ``(reported)`` when the configuration cannot be checked."""
        return self.title if self.verified else f"{self.title} (reported)"


AGENTS: dict[str, Agent] = {
    a.name: a
    for a in (
        Agent(
            "pi",
            "pi",
            "pi",
            "pi session (JSONL tree)",
            "pi",
            "none",
            "pi",
            SessionFolders(None, (".pi/agent/sessions",)),
            "pi's compaction with its defaults (keepRecentTokens 20,000, reserveTokens 16,384), no pruning",
            keep_recent_tokens=20_000,
            reserve_tokens=16_384,
        ),
        Agent(
            "claude-code",
            "Claude Code",
            "Claude Code",
            "Claude Code transcript (JSONL)",
            "claude-code",
            "claude-code-microcompact",
            "claude-code",
            SessionFolders("CLAUDE_CONFIG_DIR", (".claude", ".config/claude"), ("projects",), several=True),
            "Claude Code's auto-compaction and time-based microcompact, as third-party analyses report them "
            "(unverified)",
            context_window=200_000,
            verified=False,
            windows=(200_000, 1_000_000),
        ),
        Agent(
            "codex",
            "Codex CLI",
            "Codex",
            "Codex CLI rollout (JSONL)",
            "codex",
            "none",
            "codex",
            SessionFolders("CODEX_HOME", (".codex",), ("sessions", "archived_sessions")),
            "Codex's compaction at 90% of the window, no pruning (Codex prunes nothing)",
        ),
        Agent(
            "opencode",
            "OpenCode",
            "OpenCode",
            "OpenCode session export (JSON)",
            "opencode",
            "opencode",
            "opencode",
            SessionFolders("OPENCODE_DATA_DIR", (".local/share/opencode",)),
            "OpenCode's prune and its compaction",
        ),
    )
}


def get_agent(name: str) -> Agent:
    try:
        return AGENTS[name]
    except KeyError:
        raise KeyError(f"unknown agent {name!r}; choose one of {', '.join(AGENTS)}") from None
