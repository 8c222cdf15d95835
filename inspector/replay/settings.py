"""What a replay depends on (:class:`ReplaySettings`), and which of it a replay reads (:func:`effective_settings`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from ..policies import POLICIES, PolicySettings, get_policy
from ..window import DEFAULT_WINDOW, MIN_WINDOW

#: Replays prune incrementally (see :mod:`inspector.pruning.runner`); False: ``apply`` at every call.
INCREMENTAL = True
#: Callers that cache replays may serve settings with the same :func:`effective_settings` from one
#: replay (the app does); False: every distinct settings object is replayed (for benchmarks).
REUSE = True

if TYPE_CHECKING:
    PolicyName = str
else:
    #: the registered compaction policies' names (:data:`inspector.policies.POLICIES`)
    PolicyName = Literal[tuple(POLICIES)]


class ReplaySettings(BaseModel):
    """Everything a replay depends on. Frozen and hashable, so replays can be cached on it."""

    model_config = ConfigDict(frozen=True)

    compaction: PolicyName = Field("recorded", description="recorded, or a what-if compaction policy.")
    strategy: str = Field("none", description="Pruning strategy applied before every model call.")
    strategy_settings: tuple[tuple[str, Any], ...] = Field(
        (), description="Strategy settings (key, value) pairs."
    )
    context_window: int = Field(
        DEFAULT_WINDOW, ge=MIN_WINDOW, description="The model's context window in tokens."
    )
    model_windows: tuple[tuple[str, str, int], ...] = Field(
        (),
        description="(provider, model, window) of each model whose calls run against another window "
        "than context_window: pi checks each call against the window of the model that answered it "
        "(inspector.window.model_windows_of gives a session's). Empty: context_window for every call.",
    )
    reserve_tokens: int = Field(
        16384, ge=0, description="pi reserveTokens: compact when context > window − reserve."
    )
    keep_recent_tokens: int = Field(
        20000, ge=0, description="pi keepRecentTokens: recent tokens kept verbatim."
    )
    counter: str = Field(
        "pi",
        description="Token counter: pi (chars/4 estimate), tiktoken, calibrated (tiktoken × "
        "the session's own fitted ratio) or usage (pi's usage-based context size: "
        "last recorded usage + estimates after it).",
    )
    summarizer: str = Field("offline", description="Summarizer for simulated compactions.")
    summarizer_model: str | None = Field(
        None, description="LLM summarizers: the model (default: the summarizer's)."
    )
    summarizer_base_url: str | None = Field(
        None, description="OpenAI-compatible summarizer: the endpoint's base URL."
    )
    summarizer_api_key: SecretStr | None = Field(
        None,
        exclude=True,
        repr=False,
        description="A key for the summarizer's base URL itself (typed in the app, or the CLI's environment); "
        "held in memory only, never dumped.",
    )
    summarizer_redact: bool = Field(
        True, description="Redact secrets from the text sent to an LLM summarizer."
    )
    pi_version: str = Field("0.73", description="pi's prepareCompaction rule: 0.73 or 0.58.")
    policy: PolicySettings = Field(default_factory=PolicySettings)
    leaf: int | None = Field(None, description="Entry index of the branch's leaf (None: pi's default leaf).")

    def strategy_dict(self) -> dict[str, Any]:
        return dict(self.strategy_settings)

    def with_strategy_settings(self, values: dict[str, Any]) -> ReplaySettings:
        return self.model_copy(update={"strategy_settings": tuple(sorted(values.items()))})


_SETTINGS_DEFAULTS = ReplaySettings()


def effective_settings(settings: ReplaySettings) -> ReplaySettings:
    """``settings`` with every field the replay cannot depend on set to its default, so two
    settings with the same effective settings replay to the same steps, events and summaries
    (tests check it on every sample), and one replay serves both (:meth:`Replay.relabel`).

    Without simulated compactions (as recorded, never) keepRecentTokens, reserveTokens, pi's
    version, the summarizer and the policies' own settings are never read; a what-if policy reads
    only its own policy settings, keepRecentTokens and pi's version only for pi's cut (pi, early);
    the offline summarizer has no model or endpoint; strategy ``none`` has no settings."""
    d = _SETTINGS_DEFAULTS
    update: dict[str, Any] = {}
    policy = get_policy(settings.compaction)
    if not policy.simulated:
        update.update(
            keep_recent_tokens=d.keep_recent_tokens,
            reserve_tokens=d.reserve_tokens,
            pi_version=d.pi_version,
            summarizer=d.summarizer,
        )
    elif not policy.pi_cut:
        update.update(keep_recent_tokens=d.keep_recent_tokens, pi_version=d.pi_version)
    if update.get("summarizer", settings.summarizer) == "offline":
        update.update(summarizer_model=None, summarizer_base_url=None)
    prefix = policy.prefix
    read = {k: v for k, v in settings.policy.model_dump().items() if prefix and k.startswith(prefix)}
    update["policy"] = PolicySettings(**read)
    if settings.strategy in ("none", ""):
        update["strategy_settings"] = ()
    return settings.model_copy(update=update)


def default_strategy(session: Any) -> str:
    """The pruning a replay takes when none is chosen (the CLI, the notebook; the app's "As
    recorded" preset): as recorded. Another agent's file records its own pruning (``recorded``:
    OpenCode's cleared outputs, DCP, Claude Code's microcompact); pi's records none (``none``: the
    same replay, and the one a large pi file streams)."""
    return "none" if getattr(session, "format", "pi") == "pi" else "recorded"
