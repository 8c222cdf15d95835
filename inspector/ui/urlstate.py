"""Settings ⇄ widget state ⇄ URL query string, and pi ``settings.json`` import (pure, no streamlit).

The sidebar's widgets are keyed so that one dict of ``{widget key: value}`` describes them all:

* ``window_preset`` / ``window_custom``, ``counter``, ``summarizer``, ``keep``, ``reserve``,
  ``compaction``, ``pi_version``;
* ``strategy`` and ``set.<strategy>.<field>`` for the pruning strategy's own settings;
* ``pol.<field>`` for :class:`~inspector.policies.PolicySettings`.

In the URL: ``window``, ``reserve``, ``keep``, ``counter``, ``strategy``, ``compaction``,
``summarizer``, ``pi``, then ``s.<field>`` / ``p.<field>`` (JSON values) for strategy and policy
settings that differ from their defaults. Every value read back is validated by the settings
models; what cannot be read is reported, never applied.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from ..agents import AGENTS, Agent
from ..policies import POLICIES, PolicySettings, get_policy
from ..policies import policy_fields as policy_fields  # re-exported for the sidebar
from ..pruning.base import field_bounds as field_bounds  # re-exported for the sidebar and pages
from ..replay import ReplaySettings
from ..visible import clip

try:  # the pruning package lands separately; without it only "none" is offered
    from ..pruning import REGISTRY
except ImportError:  # pragma: no cover - exercised only on a partial checkout
    REGISTRY = {}

WINDOW_PRESETS: dict[str, int | None] = {
    "Claude Sonnet / Opus (200k)": 200_000,
    "Claude Sonnet 1M (beta)": 1_000_000,
    "GPT-5 (400k)": 400_000,
    "GPT-4.1 (1M)": 1_047_576,
    "GPT-4o (128k)": 128_000,
    "Gemini 2.5 Pro (1M)": 1_048_576,
    "Small local model (32k)": 32_768,
    "Custom": None,
}
COUNTERS = {
    "pi": "pi estimate (chars ÷ 4)",
    "tiktoken": "tiktoken (cl100k_base)",
    "calibrated": "calibrated (tiktoken fitted to this session's usage)",
    "usage": "recorded usage (pi's context size)",
}
SUMMARIZERS = {
    "offline": "offline extractive (no network)",
    "openai": "OpenAI-compatible (needs OPENAI_API_KEY)",
    "anthropic": "Anthropic (needs ANTHROPIC_API_KEY)",
}
PI_VERSIONS = {"0.73": "pi 0.73 (current)", "0.58": "pi 0.58"}
DEFAULTS = ReplaySettings()
PAGE_PARAMS = ("screen", "step")
"""URL parameters a page owns (the Learn page's screen, the Replay page's model call): the sidebar
keeps them."""


_WORD_JOINER = "\u2060"
_AUTOLINK = re.compile(r"(?i)(?<=http)(?=s?:)|(?<=www)(?=\.)|(?=@)")


def esc(text: str) -> str:
    """Escape markdown (and Streamlit's ``:directive[...]`` syntax) so text from a session, a
    file name or a URL is shown literally, never as links, emphasis or HTML. GitHub-flavoured
    markdown turns bare ``http://``, ``www.`` and ``a@b.c`` into links even when escaped, so an
    invisible word joiner (U+2060) goes inside each of them first."""
    text = _AUTOLINK.sub(_WORD_JOINER, text)
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~$:])", r"\\\1", text)


def code(text: str) -> str:
    """``text`` as a markdown code span: shown literally (no escapes needed inside, and none
    would be undone), with any backtick in it replaced so the span cannot be closed early."""
    return "`" + text.replace("`", "'").replace("\n", " ") + "`"


def strategies() -> dict[str, Any]:
    return REGISTRY


def window_preset_for(window: int) -> str:
    return next((k for k, v in WINDOW_PRESETS.items() if v == window), "Custom")


def window_updates(window: int) -> dict[str, Any]:
    """The window widgets' values for ``window``: its preset, or Custom with the number."""
    preset = window_preset_for(window)
    return {"window_preset": preset, **({"window_custom": int(window)} if preset == "Custom" else {})}


def _json(v: Any) -> str:
    return json.dumps(list(v) if isinstance(v, tuple) else v, ensure_ascii=False, separators=(",", ":"))


def to_query(settings: ReplaySettings) -> dict[str, str]:
    """The URL query parameters describing ``settings`` (strategy/policy fields only when changed)."""
    qs = {
        "window": str(settings.context_window),
        "reserve": str(settings.reserve_tokens),
        "keep": str(settings.keep_recent_tokens),
        "counter": settings.counter,
        "strategy": settings.strategy,
        "compaction": settings.compaction,
    }
    if settings.summarizer != DEFAULTS.summarizer:
        qs["summarizer"] = settings.summarizer
    if settings.pi_version != DEFAULTS.pi_version:
        qs["pi"] = settings.pi_version
    strat = REGISTRY.get(settings.strategy)
    if strat is not None:
        for k, v in settings.strategy_settings:
            f = strat.Settings.model_fields.get(k)
            if f is not None and v != f.default:
                qs[f"s.{k}"] = _json(v)
    pol_defaults = PolicySettings()
    for k, v in settings.policy.model_dump().items():
        if v != getattr(pol_defaults, k):
            qs[f"p.{k}"] = _json(v)
    return qs


def query_string(qs: Mapping[str, str]) -> str:
    from urllib.parse import urlencode

    return "?" + urlencode(dict(qs), safe=',.:[]"')


def _validated(model: type[BaseModel], raw: dict[str, Any], problems: list[str], what: str) -> dict[str, Any]:
    """Keep the values the model accepts (one by one, so one bad value does not drop the rest)."""
    ok: dict[str, Any] = {}
    for k, v in raw.items():
        if k not in model.model_fields:
            problems.append(f"unknown {what} setting {_said(k)}")
            continue
        try:
            ok[k] = getattr(model.model_validate({k: v}), k)
        except ValidationError as e:
            problems.append(f"{what} setting {clip(str(k), SAID)}={_said(v)}: {e.errors()[0]['msg']}")
    return ok


SAID = 60
"""At most this many characters of a value the URL gave are repeated in a problem (a link may carry
a value thousands of characters long)."""


def _said(v: Any) -> str:
    """``v`` as a problem repeats it: its ``repr``, clipped to :data:`SAID` characters."""
    return clip(repr(v), SAID)


def widget_value(v: Any) -> Any:
    """A settings value as its widget holds it (tuples are comma-separated text)."""
    return ", ".join(str(x) for x in v) if isinstance(v, tuple) else v


def from_query(qp: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Widget-state updates for a URL's query parameters, and what could not be read."""
    q = {k: (v[-1] if isinstance(v, list) and v else v) for k, v in qp.items()}
    out: dict[str, Any] = {}
    problems: list[str] = []

    def as_int(name: str, lo: int, hi: int) -> int | None:
        if name not in q:
            return None
        try:
            v = int(str(q[name]))
        except ValueError:
            problems.append(f"{name}={_said(q[name])} is not a whole number")
            return None
        if not lo <= v <= hi:
            problems.append(f"{name}={clip(str(v), SAID)} is outside {lo:,}…{hi:,}")
            return None
        return v

    if (w := as_int("window", 1000, 10_000_000)) is not None:
        out |= window_updates(w)
    if (r := as_int("reserve", 0, 2_000_000)) is not None:
        out["reserve"] = r
    if (kp := as_int("keep", 0, 2_000_000)) is not None:
        out["keep"] = kp
    if (step := as_int("step", 0, 100_000_000)) is not None:
        out["cur_step"] = step  # the Replay page's model call (clamped to the run there)
    for name, key, allowed in (
        ("counter", "counter", COUNTERS),
        ("strategy", "strategy", REGISTRY),
        ("compaction", "compaction", POLICIES),
        ("summarizer", "summarizer", SUMMARIZERS),
        ("pi", "pi_version", PI_VERSIONS),
    ):
        if name in q:
            if q[name] in allowed:
                out[key] = q[name]
            else:
                problems.append(f"{name}={_said(q[name])} is not one of {', '.join(allowed)}")
    raw_s: dict[str, Any] = {}
    raw_p: dict[str, Any] = {}
    for qk, qv in q.items():
        if qk.startswith(("s.", "p.")):
            try:
                val = json.loads(qv)
            except (ValueError, TypeError):
                problems.append(f"{clip(qk, SAID)}={_said(qv)} is not a JSON value")
                continue
            (raw_s if qk.startswith("s.") else raw_p)[qk[2:]] = tuple(val) if isinstance(val, list) else val
    strat = REGISTRY.get(out.get("strategy", "none"))
    if raw_s and strat is not None:
        for k, v in _validated(strat.Settings, raw_s, problems, "strategy").items():
            out[f"set.{strat.name}.{k}"] = widget_value(v)
    for k, v in _validated(PolicySettings, raw_p, problems, "policy").items():
        out[f"pol.{k}"] = v
    return out, problems


def pi_settings_updates(data: bytes) -> tuple[dict[str, Any], list[str]]:
    """Widget-state updates for a pi ``settings.json`` and plain words for each.

    Reads ``compaction.enabled`` / ``reserveTokens`` / ``keepRecentTokens`` and
    ``contextPruning.enabled`` (pi-context-pruning's switch). Raises ``ValueError`` when the
    file is not a JSON object."""
    cfg = json.loads(data.decode("utf-8-sig"))
    if not isinstance(cfg, dict):
        raise ValueError("settings.json must hold a JSON object")
    out: dict[str, Any] = {}
    said: list[str] = []
    comp = cfg.get("compaction")
    if isinstance(comp, dict):
        for src, key in (("reserveTokens", "reserve"), ("keepRecentTokens", "keep")):
            v = comp.get(src)
            if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 2_000_000:
                out[key] = v
                said.append(f"{src} = {v:,}")
        # the file describes pi: its numbers only act under pi's policy
        out["compaction"] = "never" if comp.get("enabled") is False else "pi"
        said.append(
            "compaction disabled (policy: Never)"
            if comp.get("enabled") is False
            else "policy: pi (the file describes pi's compaction)"
        )
    pruning = cfg.get("contextPruning")
    if isinstance(pruning, dict) and isinstance(pruning.get("enabled"), bool):
        name = "pi-context-pruning" if pruning["enabled"] else "none"
        if name in REGISTRY or name == "none":
            out["strategy"] = name
            said.append(f"contextPruning.enabled = {str(pruning['enabled']).lower()}")
    elif isinstance(comp, dict):
        out["strategy"] = "none"
        said.append("no contextPruning: pi prunes nothing (pruning: None)")
    return out, said


def _agent_preset(agent: Agent) -> tuple[str, dict[str, Any], str]:
    updates: dict[str, Any] = {"compaction": agent.policy, "strategy": agent.strategy}
    if agent.keep_recent_tokens is not None:
        updates["keep"] = agent.keep_recent_tokens
    if agent.reserve_tokens is not None:
        updates["reserve"] = agent.reserve_tokens
    if agent.context_window:
        updates["window_preset"] = window_preset_for(agent.context_window)
    return agent.title, updates, agent.preset_note


#: Each agent's own behaviour as sidebar settings: (label, widget updates, what it means), from
#: :mod:`inspector.agents`, after the session as recorded
AGENT_PRESETS: dict[str, tuple[str, dict[str, Any], str]] = {
    "recorded": (
        "As recorded",
        {"compaction": "recorded", "strategy": "recorded"},
        "the session's own compactions and the pruning its agent recorded",
    ),
    **{name: _agent_preset(a) for name, a in AGENTS.items()},
}


def agent_preset_updates(name: str, window: int | None = None) -> dict[str, Any]:
    """Widget updates for an agent preset; ``window`` (e.g. the one a Codex rollout records)
    sets the context window too."""
    updates = dict(AGENT_PRESETS[name][1])
    if window:
        updates |= window_updates(window)
    return {k: v for k, v in updates.items() if k != "strategy" or v in REGISTRY or v == "none"}


#: what the sidebar's widgets hold before the user touches them
WIDGET_DEFAULTS: dict[str, Any] = {
    "compaction": "recorded",
    "strategy": "recorded",
    "keep": 20_000,
    "reserve": 16_384,
}
CUSTOM = "custom"
#: settings that belong to the model, not to the agent: a preset is in effect whatever they are
MODEL_KEYS = frozenset({"window_preset", "window_custom"})


def _at_defaults(
    values: Mapping[str, Any], prefix: str, model: type[BaseModel], fields: list[str] | None = None
) -> bool:
    return all(
        values.get(f"{prefix}{k}", widget_value(f.default)) == widget_value(f.default)
        for k, f in model.model_fields.items()
        if fields is None or k in fields
    )


def preset_in_effect(values: Mapping[str, Any] | Any) -> str:  # Any: st.session_state is no Mapping to mypy
    """The agent preset whose settings are all in effect in the widget values ``values`` (its
    policy and pruning, with their own settings at their defaults; the window is the model's),
    or :data:`CUSTOM` as soon as one differs."""
    v = {**WIDGET_DEFAULTS, **values}
    for name in AGENT_PRESETS:
        own = {k: x for k, x in agent_preset_updates(name).items() if k not in MODEL_KEYS}
        if any(v.get(k) != x for k, x in own.items()):
            continue
        strat = REGISTRY.get(own["strategy"])
        if strat is not None and not _at_defaults(v, f"set.{strat.name}.", strat.Settings):
            continue
        if _at_defaults(v, "pol.", PolicySettings, policy_fields(own["compaction"])):
            return name
    return CUSTOM


def inert_settings(compaction: str) -> dict[str, str]:
    """The compaction controls that change nothing under ``compaction``, each with the reason."""
    pol = get_policy(compaction)
    if not pol.simulated:
        why = "the session's own compactions stand" if pol.as_recorded else "this policy never compacts"
        return {
            k: f"No effect under '{POLICIES[compaction].title}': {why}."
            for k in ("keep", "reserve", "summarizer")
        }
    if not pol.pi_cut:
        return {
            "keep": f"No effect under '{POLICIES[compaction].title}': keepRecentTokens is pi's; this policy "
            "keeps what its own rule says."
        }
    return {}


def noop_warnings(settings: ReplaySettings) -> dict[str, str]:
    """Settings that make the policy or the strategy a no-op, keyed by the widget where they are
    set: keepRecentTokens at or above pi's compaction threshold; PRUNE_PROTECT at or above the
    window (the protected newest outputs then always cover the whole context)."""
    from ..policies import trigger_threshold

    out: dict[str, str] = {}
    if get_policy(settings.compaction).pi_cut:
        t = trigger_threshold(
            settings.compaction, settings.context_window, settings.policy, settings.reserve_tokens
        )
        if t is not None and 0 < t <= settings.keep_recent_tokens:
            out["keep"] = (
                f"keepRecentTokens {settings.keep_recent_tokens:,} ≥ the {t:,}-token threshold where this "
                "policy compacts: when it triggers, everything since the last compaction is within "
                "keepRecentTokens, so there is nothing (or little) to summarise. Lower keepRecentTokens "
                "or use a larger window."
            )
    protect = settings.strategy_dict().get("prune_protect")
    if isinstance(protect, int) and protect >= settings.context_window:
        out[f"set.{settings.strategy}.prune_protect"] = (
            f"PRUNE_PROTECT {protect:,} ≥ the {settings.context_window:,}-token window: the newest tool outputs it "
            "protects always cover the whole context, so this strategy never prunes."
        )
    return out


def session_query(origin: tuple[str, str] | None, digest: str | None) -> dict[str, str]:
    """URL parameters naming the open session: ``sid`` (its content hash, to find it again in the
    server's cache after a reload) and ``session`` (``sample:NAME`` or ``path:PATH``, to open the
    same file on another machine that has it; none for an upload)."""
    out: dict[str, str] = {}
    if digest:
        out["sid"] = digest[:16]
    if origin is not None and origin[0] in ("sample", "path"):
        out["session"] = f"{origin[0]}:{origin[1]}"
    return out


def parse_session_ref(raw: str | None) -> tuple[str, str] | None:
    """``sample:NAME`` / ``path:PATH`` from the URL as (kind, value); None for anything else."""
    if not raw or ":" not in raw:
        return None
    kind, _, value = raw.partition(":")
    return (kind, value) if kind in ("sample", "path") and value.strip() else None
