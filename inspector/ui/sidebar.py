"""The settings sidebar shared by every page, built from the settings models themselves.

A strategy's controls come from its pydantic ``Settings`` fields (default, bounds, help), and a
policy's from :class:`~inspector.policies.PolicySettings`, so a new setting appears without UI
code. Settings round-trip through the URL query string (see :mod:`inspector.ui.urlstate`).
"""

from __future__ import annotations

from typing import Any

import streamlit as st
from pydantic import BaseModel

from ..policies import POLICIES, PolicySettings, trigger_threshold
from ..replay import ReplaySettings
from . import urlstate as us
from .state import default, set_widgets
from .urlstate import esc

_v = default


def _from_query() -> None:
    """Seed widget state from the URL once per browser session."""
    if st.session_state.get("_qp_loaded"):
        return
    st.session_state["_qp_loaded"] = True
    updates, problems = us.from_query(st.query_params.to_dict())
    set_widgets(updates)
    if problems:
        st.session_state["_qp_problems"] = problems


def model_controls(container: Any, model: type[BaseModel], prefix: str, fields: list[str] | None = None
                   ) -> dict[str, Any]:
    """One control per field of a settings model: checkbox (bool), slider (bounded float),
    number input (int or unbounded float), comma-separated text (tuple of strings)."""
    values: dict[str, Any] = {}
    for name, f in model.model_fields.items():
        if fields is not None and name not in fields:
            continue
        key = f"{prefix}{name}"
        default = f.default
        lo, hi = us.field_bounds(f)
        label = name.replace("_", " ")
        help_ = f"{f.description or ''} Default: {us.widget_value(default)!s}."
        if isinstance(default, bool):
            values[name] = container.checkbox(label, help=help_, key=key, **_v(key, default))
        elif isinstance(default, int):
            step = 1000 if default >= 10_000 else (100 if default >= 1000 else 1)
            values[name] = int(container.number_input(
                label, min_value=int(lo) if lo is not None else None, max_value=int(hi) if hi is not None else None,
                step=step, help=help_, key=key, **_v(key, default)))
        elif isinstance(default, float):
            if lo is not None and hi is not None:
                values[name] = float(container.slider(label, float(lo), float(hi), step=0.01, help=help_, key=key,
                                                      **_v(key, float(default))))
            else:
                values[name] = float(container.number_input(label, min_value=float(lo) if lo is not None else None,
                                                            step=0.01, help=help_, key=key, **_v(key, float(default))))
        elif isinstance(default, tuple):
            raw = container.text_input(label, help=help_ + " Comma-separated.", key=key,
                                       **_v(key, us.widget_value(default)))
            values[name] = tuple(x.strip() for x in raw.split(",") if x.strip())
        else:  # a type the UI does not know yet: keep the default, say so
            container.caption(f"{label}: {default!r} (not adjustable here)")
    return values


def _reset(prefix: str, model: type[BaseModel]) -> None:
    set_widgets({f"{prefix}{k}": us.widget_value(f.default) for k, f in model.model_fields.items()})


def _apply_pi_settings() -> None:
    up = st.session_state.get("pi_settings")
    if up is None:
        st.session_state["_import_msg"] = ("error", "Choose a settings.json first.")
        return
    try:
        updates, said = us.pi_settings_updates(up.getvalue())
    except (ValueError, UnicodeDecodeError) as e:
        st.session_state["_import_msg"] = ("error", f"Not a readable settings.json: {e}")
        return
    set_widgets(updates)
    st.session_state["_import_msg"] = ("success", "Applied: " + (", ".join(said) or "nothing relevant found"))


def _apply_agent_preset() -> None:
    name = st.session_state.get("agent_preset")
    if name in us.AGENT_PRESETS:
        set_widgets(us.agent_preset_updates(name, st.session_state.get("session_window")))


def _use_session_window() -> None:
    window = st.session_state.get("session_window")
    if window:
        preset = us.window_preset_for(window)
        set_widgets({"window_preset": preset, **({"window_custom": int(window)} if preset == "Custom" else {})})


def _llm_controls(sb: Any, summarizer: str) -> tuple[str | None, str | None, str | None, bool]:
    """Model, base URL, a key for that URL, redaction. The server's key goes only to the base URLs
    its operator configured; another URL needs a key typed here, kept for this browser session only."""
    from urllib.parse import urlparse

    from ..summarize.endpoints import is_configured
    from ..summarize.llm import LOOPBACK

    model = sb.text_input("Summarizer model", key="summarizer_model", placeholder="the summarizer's default",
                          help="The model the LLM summarizer asks.").strip() or None
    url = None
    if summarizer == "openai":
        url = sb.text_input("Base URL", key="summarizer_base_url", placeholder="https://api.openai.com/v1",
                            help="Any OpenAI-compatible endpoint: OpenRouter, Ollama, vLLM, LM Studio, "
                                 "llama.cpp server.").strip() or None
    key = None
    if url and not is_configured(summarizer, url):
        key = sb.text_input("API key for this URL", key="summarizer_api_key", type="password",
                            help="This server's own key is sent only to the endpoints its operator configured. "
                                 "A key typed here is used for this URL in this browser session only: never saved, "
                                 "never put in the page's address.").strip() or None
        if key is None:
            local = (urlparse(url).hostname or "") in LOOPBACK
            sb.caption("No key typed: requests go without one (enough for a local model server)." if local else
                       "No key typed: nothing is sent to this URL until its key is typed here.")
    send = sb.checkbox("Send secrets unredacted", key="summarizer_send_secrets",
                       help="The session text sent to the LLM has API keys, tokens, passwords and private keys "
                            "redacted, as in exports. Tick to send it as it is.")
    return model, url, key, not send


def render() -> ReplaySettings:
    """Draw the sidebar and return the settings it describes."""
    _from_query()
    sb = st.sidebar
    sb.header("Settings")
    for p in st.session_state.pop("_qp_problems", []):
        sb.warning(esc(f"URL: {p}; the default is used."))
    sb.selectbox("Agent preset", list(us.AGENT_PRESETS), key="agent_preset",
                 format_func=lambda n: us.AGENT_PRESETS[n][0],
                 help="Set pruning and compaction to what one agent does: "
                      + "; ".join(f"{t}: {d}" for t, _, d in us.AGENT_PRESETS.values()) + ".")
    sb.button("Apply the agent's settings", key="apply_agent_preset", on_click=_apply_agent_preset)
    preset = sb.selectbox("Model / context window", list(us.WINDOW_PRESETS), key="window_preset",
                          help="The context window the replay assumes (tokens the model accepts per call).")
    window = us.WINDOW_PRESETS[preset] or int(sb.number_input(
        "Custom window (tokens)", 1000, 10_000_000, step=1000, key="window_custom", **_v("window_custom", 200_000)))
    recorded = st.session_state.get("session_window")
    if recorded and recorded != window:
        sb.caption(f"This session records a {recorded:,}-token window.")
        sb.button(f"Use {recorded:,}", key="use_session_window", on_click=_use_session_window)
    counter = sb.selectbox(
        "Token counter", list(us.COUNTERS), format_func=us.COUNTERS.get, key="counter",
        help="How tokens are counted: pi's chars ÷ 4 estimate (what pi uses to cut), real cl100k_base counts, "
             "or pi's usage-based context size (the last recorded usage in the context plus estimates of what "
             "follows — what pi's footer and compaction trigger use).")

    sb.subheader("Pruning")
    strategies = us.strategies()
    if not strategies:
        sb.info("Pruning strategies are not installed in this checkout.")
        strategy, values = "none", {}
    else:
        strategy = sb.selectbox("Strategy", list(strategies), key="strategy",
                                format_func=lambda n: strategies[n].title,
                                help="What is removed from the context before each model call.")
        strat = strategies[strategy]
        sb.caption(strat.description + (f"  \nSource: {strat.source}" if strat.source not in ("", "—") else ""))
        if not strat.verified:
            sb.warning(f"Beyond a verified source: {strat.unverified_notes}", icon=":material/warning:")
        fields = strat.Settings.model_fields
        values = model_controls(sb, strat.Settings, f"set.{strategy}.")
        if fields:
            sb.button("Reset to defaults", key=f"reset.{strategy}", on_click=_reset,
                      args=(f"set.{strategy}.", strat.Settings), help="The source system's defaults.")

    sb.subheader("Compaction")
    compaction = sb.selectbox("Policy", list(POLICIES), key="compaction", format_func=lambda n: POLICIES[n].title,
                              help="'As recorded' keeps the session's own compactions; the others set them aside "
                                   "and simulate compaction.")
    pol = POLICIES[compaction]
    sb.caption(pol.description + (f"  \nSource: {pol.source}" if pol.source not in ("—", "the session file") else ""))
    if pol.unverified:
        sb.warning(f"Reported, not verified: {pol.unverified}", icon=":material/warning:")
    if pol.beyond_source:
        sb.warning("Beyond the source system: this policy is our design, not a released agent's behaviour.",
                   icon=":material/warning:")
    keep = int(sb.number_input("keepRecentTokens", 0, 2_000_000, step=1000, key="keep",
                               help="pi: how many recent tokens a compaction keeps verbatim (the rest is "
                                    "summarised). pi's default: 20,000.", **_v("keep", 20_000)))
    reserve = int(sb.number_input("reserveTokens", 0, 2_000_000, step=1024, key="reserve",
                                  help="pi: compact when the context exceeds window − reserveTokens (room for the "
                                       "answer and the summary). pi's default: 16,384.", **_v("reserve", 16_384)))
    pol_fields = us.policy_fields(compaction)
    pol_values = model_controls(sb, PolicySettings, "pol.", pol_fields) if pol_fields else {}
    threshold = trigger_threshold(compaction, window, PolicySettings(**pol_values), reserve)
    if threshold is not None and threshold <= 0:
        sb.error(f"With a {window:,}-token window this policy compacts at {threshold:,} tokens: before every call. "
                 "Pick a larger window.", icon=":material/error:")
    pi_version = "0.73"
    if compaction in ("pi", "early"):
        pi_version = sb.selectbox("pi version (cut rule)", list(us.PI_VERSIONS), format_func=us.PI_VERSIONS.get,
                                  key="pi_version", help="pi 0.58 started the next summary after the previous "
                                                         "compaction; 0.73 re-summarises its kept part.")
    summarizer = sb.selectbox(
        "Summarizer", list(us.SUMMARIZERS), key="summarizer", format_func=us.SUMMARIZERS.get,
        help="Writes the summaries of simulated compactions. LLM summarizers need the llm extra and a key in "
             "the environment; a failed call falls back to the offline summary, marked.")
    sum_model, sum_url, sum_key, redact = None, None, None, True
    if summarizer != "offline":
        sum_model, sum_url, sum_key, redact = _llm_controls(sb, summarizer)

    with sb.expander("Import a pi settings.json"):
        st.file_uploader("settings.json", type=["json"], key="pi_settings",
                         help="Reads compaction.enabled / reserveTokens / keepRecentTokens and contextPruning.enabled.")
        st.button("Apply", key="apply_pi_settings", on_click=_apply_pi_settings)
        msg = st.session_state.pop("_import_msg", None)
        if msg:
            (st.success if msg[0] == "success" else st.error)(esc(msg[1]))

    settings = ReplaySettings(
        compaction=compaction, strategy=strategy, strategy_settings=tuple(sorted(values.items())),
        context_window=window, reserve_tokens=reserve, keep_recent_tokens=keep, counter=counter,
        summarizer=summarizer, summarizer_model=sum_model, summarizer_base_url=sum_url, pi_version=pi_version,
        summarizer_api_key=sum_key, summarizer_redact=redact,
        policy=PolicySettings(**{k: v for k, v in pol_values.items()}),
        leaf=st.session_state.get("leaf"),
    )
    qs = us.to_query(settings)
    if dict(st.query_params.to_dict()) != qs:
        st.query_params.from_dict(qs)
    with sb.expander("Share these settings"):
        st.caption("Append to the app's address; opening it restores these settings.")
        st.code(us.query_string(qs), language=None, wrap_lines=True)
    return settings
