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
from ..window import DEFAULT_WINDOW, MIN_WINDOW, KnownWindow, model_windows_said
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
    if "window_preset" in updates:
        # a link's window other than the one the open session would get is the sharer's choice
        given = us.WINDOW_PRESETS[updates["window_preset"]] or updates.get("window_custom")
        if given != (st.session_state.get("session_window") or DEFAULT_WINDOW):
            st.session_state["window_chosen"] = True
    if problems:
        st.session_state["_qp_problems"] = problems


def model_controls(
    container: Any,
    model: type[BaseModel],
    prefix: str,
    fields: list[str] | None = None,
    notes: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One control per field of a settings model: checkbox (bool), slider (bounded float),
    number input (int or unbounded float), comma-separated text (tuple of strings). ``notes``
    (by widget key): a warning drawn under that control."""
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
            values[name] = int(
                container.number_input(
                    label,
                    min_value=int(lo) if lo is not None else None,
                    max_value=int(hi) if hi is not None else None,
                    step=step,
                    help=help_,
                    key=key,
                    **_v(key, default),
                )
            )
        elif isinstance(default, float):
            if lo is not None and hi is not None:
                values[name] = float(
                    container.slider(
                        label, float(lo), float(hi), step=0.01, help=help_, key=key, **_v(key, float(default))
                    )
                )
            else:
                values[name] = float(
                    container.number_input(
                        label,
                        min_value=float(lo) if lo is not None else None,
                        step=0.01,
                        help=help_,
                        key=key,
                        **_v(key, float(default)),
                    )
                )
        elif isinstance(default, tuple):
            raw = container.text_input(
                label, help=help_ + " Comma-separated.", key=key, **_v(key, us.widget_value(default))
            )
            values[name] = tuple(x.strip() for x in raw.split(",") if x.strip())
        else:  # a type the UI does not know yet: keep the default, say so
            container.caption(f"{label}: {default!r} (not adjustable here)")
        if notes and key in notes:
            container.warning(notes[key], icon=":material/warning:")
    return values


def _reset(prefix: str, model: type[BaseModel]) -> None:
    set_widgets({f"{prefix}{k}": us.widget_value(f.default) for k, f in model.model_fields.items()})


def _apply_pi_settings() -> None:
    up = st.session_state.get("pi_settings")
    if up is None:
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


WINDOW_MAX = 10_000_000
"""The largest window the sidebar takes (its number input's limit)."""


def _use_window(window: int) -> None:
    set_widgets(us.window_updates(window))
    st.session_state["window_chosen"] = True


def _llm_controls(sb: Any, summarizer: str) -> tuple[str | None, str | None, str | None, bool]:
    """Model, base URL, a key for that URL, redaction. The server's key goes only to the base URLs
    its operator configured; another URL needs a key typed here, kept for this browser session only."""
    from urllib.parse import urlparse

    from ..summarize.endpoints import is_configured
    from ..summarize.llm import LOOPBACK

    model = (
        sb.text_input(
            "Summarizer model",
            key="summarizer_model",
            placeholder="the summarizer's default",
            help="The model the LLM summarizer asks.",
        ).strip()
        or None
    )
    url = None
    if summarizer == "openai":
        url = (
            sb.text_input(
                "Base URL",
                key="summarizer_base_url",
                placeholder="https://api.openai.com/v1",
                help="Any OpenAI-compatible endpoint: OpenRouter, Ollama, vLLM, LM Studio, llama.cpp server.",
            ).strip()
            or None
        )
    key = None
    if url and not is_configured(summarizer, url):
        key = (
            sb.text_input(
                "API key for this URL",
                key="summarizer_api_key",
                type="password",
                help="This server's own key is sent only to the endpoints its operator configured. "
                "A key typed here is used for this URL in this browser session only: never saved, "
                "never put in the page's address.",
            ).strip()
            or None
        )
        if key is None:
            local = (urlparse(url).hostname or "") in LOOPBACK
            sb.caption(
                "No key typed: requests go without one (enough for a local model server)."
                if local
                else "No key typed: nothing is sent to this URL until its key is typed here."
            )
    send = sb.checkbox(
        "Send secrets unredacted",
        key="summarizer_send_secrets",
        help="The session text sent to the LLM has API keys, tokens, passwords and private keys "
        "redacted, as in exports. Tick to send it as it is.",
    )
    return model, url, key, not send


def _preset_box(sb: Any) -> None:
    """The agent preset in effect (computed from the settings, "Custom" when one differs from
    every preset); choosing one applies it at once."""
    current = us.preset_in_effect(st.session_state)
    st.session_state["agent_preset"] = current
    options = [*us.AGENT_PRESETS, *([us.CUSTOM] if current == us.CUSTOM else [])]
    sb.selectbox(
        "Agent preset",
        options,
        key="agent_preset",
        on_change=_apply_agent_preset,
        format_func=lambda n: us.AGENT_PRESETS[n][0] if n in us.AGENT_PRESETS else "Custom",
        help="Set pruning and compaction to what one agent does (applied at once): "
        + "; ".join(f"{t}: {d}" for t, _, d in us.AGENT_PRESETS.values())
        + ". Shows Custom as soon as a setting below differs from every preset.",
    )


def _window_chosen() -> None:
    st.session_state["window_chosen"] = True


def _follow_session_window() -> None:
    """Until the user picks a window, it is the one the open session makes known (recorded by
    Codex, or its model's), else the default (:func:`inspector.window.session_window`): set before
    the window widgets are drawn."""
    if st.session_state.get("window_chosen"):
        return
    target = st.session_state.get("session_window") or DEFAULT_WINDOW
    current = _window_set()
    if current not in (st.session_state.get("_window_followed", DEFAULT_WINDOW), target):
        # set by a page (Learn, a sweep's cell), a link or a preset, not by following: a choice
        st.session_state["window_chosen"] = True
        return
    if current != target:
        set_widgets(us.window_updates(target))
    st.session_state["_window_followed"] = target


def _window_set() -> int:
    """The window the widgets hold now (before they are drawn)."""
    preset = st.session_state.get("window_preset", us.window_preset_for(DEFAULT_WINDOW))
    return us.WINDOW_PRESETS.get(preset) or int(st.session_state.get("window_custom", DEFAULT_WINDOW))


def _window_box(sb: Any) -> int:
    _follow_session_window()
    preset = sb.selectbox(
        "Model / context window",
        list(us.WINDOW_PRESETS),
        key="window_preset",
        on_change=_window_chosen,
        help="The context window the replay assumes (tokens the model accepts per call). Until you "
        "choose one, it is the window the open session records (Codex rollouts do), else its "
        "model's in pi's model list, else 200k.",
    )
    window = us.WINDOW_PRESETS[preset] or int(
        sb.number_input(
            "Custom window (tokens)",
            MIN_WINDOW,
            WINDOW_MAX,
            step=1000,
            key="window_custom",
            on_change=_window_chosen,
            **_v("window_custom", DEFAULT_WINDOW),
        )
    )
    known: KnownWindow | None = st.session_state.get("session_window_known")
    if known is None:
        _unknown_model_note(sb, window)
    elif known.tokens == window and not st.session_state.get("window_chosen"):
        sb.caption(f"The {window:,}-token window {known.said(esc)}; choose another to explore.")
    elif known.tokens != window:
        sb.caption(f"The window {known.said(esc)}: {known.tokens:,} tokens.")
        sb.button(
            f"Use {known.tokens:,}", key="use_session_window", on_click=_use_window, args=(known.tokens,)
        )
    if _follows_models(window):
        sb.caption(
            "Each call runs against the window of the model that answered it, as the agents check it: "
            f"{model_windows_said(st.session_state['session_model_windows'], esc)} "
            f"({st.session_state.get('session_model_windows_from', '')})."
        )
    if known is None or known.source == "model":  # a window the file records is not in doubt
        _window_floor_hint(sb, window)
    return window


def _follows_models(window: int) -> bool:
    """Does the replay give the calls of the session's other models their own windows
    (:func:`inspector.window.model_windows_of`)? Yes while the window is the session's own and not
    chosen: a window the user chooses is every call's."""
    return (
        bool(st.session_state.get("session_model_windows"))
        and not st.session_state.get("window_chosen")
        and window == (st.session_state.get("session_window") or DEFAULT_WINDOW)
    )


def _unknown_model_note(sb: Any, window: int) -> None:
    """The session's window is not known (:func:`inspector.window.unknown_window_why`): say that
    the one shown is assumed."""
    why = st.session_state.get("session_window_why")
    if why is None or st.session_state.get("window_chosen"):
        return
    sb.caption(f"The window is assumed, {window:,} tokens: {why}.")


def _window_floor_hint(sb: Any, window: int) -> None:
    """When the session's answered calls went over ``window``, its model's window is larger
    (:mod:`inspector.window`): say so, and offer the bound they prove."""
    peak = st.session_state.get("session_window_floor")
    if peak is None or peak.tokens <= window or peak.window_floor() > WINDOW_MAX:
        return
    floor = peak.window_floor()
    sb.caption(
        f"The provider answered a {peak.tokens:,}-token context in this session (entry "
        f"{peak.entry_index}): its model's window is larger than {window:,}. The file does not say "
        "how large; the recorded calls over this window did not overflow."
    )
    sb.button(f"Use {floor:,} (at least)", key="use_session_floor", on_click=_use_window, args=(floor,))


def _pruning_box(sb: Any, window: int) -> tuple[str, dict[str, Any]]:
    sb.subheader("Pruning")
    strategies = us.strategies()
    if not strategies:
        sb.info("Pruning strategies are not installed in this checkout.")
        return "none", {}
    names = list(strategies)
    strategy = sb.selectbox(
        "Strategy",
        names,
        key="strategy",
        format_func=lambda n: strategies[n].title,
        help="What is removed from the context before each model call.",
        **(
            {}
            if "strategy" in st.session_state
            else {
                "index": names.index(us.WIDGET_DEFAULTS["strategy"])
                if us.WIDGET_DEFAULTS["strategy"] in names
                else 0
            }
        ),
    )
    strat = strategies[strategy]
    sb.caption(strat.description + (f"  \nSource: {strat.source}" if strat.source not in ("", "—") else ""))
    if not strat.verified:
        sb.warning(f"Beyond a verified source: {strat.unverified_notes}", icon=":material/warning:")
    field = strat.Settings.model_fields.get("prune_protect")
    protect = st.session_state.get(
        f"set.{strategy}.prune_protect", field.default if field is not None else None
    )
    notes = us.noop_warnings(
        ReplaySettings(strategy=strategy, context_window=window).with_strategy_settings(
            {"prune_protect": protect} if isinstance(protect, int) else {}
        )
    )
    values = model_controls(sb, strat.Settings, f"set.{strategy}.", notes=notes)
    if strat.Settings.model_fields:
        sb.button(
            "Reset to defaults",
            key=f"reset.{strategy}",
            on_click=_reset,
            args=(f"set.{strategy}.", strat.Settings),
            help="The source system's defaults.",
        )
    return strategy, values


def _policy_notes(sb: Any, pol: Any) -> None:
    sb.caption(
        pol.description + (f"  \nSource: {pol.source}" if pol.source not in ("—", "the session file") else "")
    )
    if pol.unverified:
        sb.warning(f"Reported, not verified: {pol.unverified}", icon=":material/warning:")
    if pol.beyond_source:
        sb.warning(
            "Beyond the source system: this policy is our design, not a released agent's behaviour.",
            icon=":material/warning:",
        )


def _inert_notes(sb: Any, inert: dict[str, str], as_recorded: bool) -> None:
    """One line per reason some controls change nothing, naming them."""
    names = {"keep": "keepRecentTokens", "reserve": "reserveTokens", "summarizer": "the summarizer"}
    for reason in dict.fromkeys(inert.values()):
        which = [names[k] for k, v in inert.items() if v == reason]
        sb.caption(
            ":material/block: "
            + esc(
                " and ".join([", ".join(which[:-1]), which[-1]] if len(which) > 1 else which) + ": " + reason
            )
            + (
                " pi's rule is still drawn beside each recorded compaction, with the values shown."
                if as_recorded
                else ""
            )
        )


def _noop_flags(sb: Any, compaction: str, window: int, keep: int, reserve: int, policy: Any) -> None:
    """Settings that make the policy a no-op or compact before every call, flagged where they are set."""
    probe = ReplaySettings(
        compaction=compaction,
        context_window=window,
        keep_recent_tokens=keep,
        reserve_tokens=reserve,
        policy=policy,
    )
    if note := us.noop_warnings(probe).get("keep"):
        sb.warning(note, icon=":material/warning:")
    threshold = trigger_threshold(compaction, window, policy, reserve)
    if threshold is not None and threshold <= 0:
        sb.error(
            f"With a {window:,}-token window this policy compacts at {threshold:,} tokens: before every call. "
            "Pick a larger window.",
            icon=":material/error:",
        )


def _compaction_box(sb: Any, window: int) -> dict[str, Any]:
    """The policy and its settings; controls that change nothing under it are disabled, saying why."""
    sb.subheader("Compaction")
    compaction = sb.selectbox(
        "Policy",
        list(POLICIES),
        key="compaction",
        format_func=lambda n: POLICIES[n].title,
        help="'As recorded' keeps the session's own compactions; the others set them aside "
        "and simulate compaction.",
    )
    _policy_notes(sb, POLICIES[compaction])
    inert = us.inert_settings(compaction)
    keep = int(
        sb.number_input(
            "keepRecentTokens",
            0,
            2_000_000,
            step=1000,
            key="keep",
            disabled="keep" in inert,
            help="pi: how many recent tokens a compaction keeps verbatim (the rest is "
            "summarised). pi's default: 20,000.",
            **_v("keep", 20_000),
        )
    )
    reserve = int(
        sb.number_input(
            "reserveTokens",
            0,
            2_000_000,
            step=1024,
            key="reserve",
            disabled="reserve" in inert,
            help="pi: compact when an agent run ends with the context above window − reserveTokens (room for the "
            "answer and the summary); every policy's summary gets 0.8 × reserveTokens. "
            "pi's default: 16,384.",
            **_v("reserve", 16_384),
        )
    )
    _inert_notes(sb, inert, POLICIES[compaction].as_recorded)
    pol_fields = us.policy_fields(compaction)
    pol_values = model_controls(sb, PolicySettings, "pol.", pol_fields) if pol_fields else {}
    _noop_flags(sb, compaction, window, keep, reserve, PolicySettings(**pol_values))
    pi_version = "0.73"
    if POLICIES[compaction].pi_cut:
        pi_version = sb.selectbox(
            "pi version (cut rule)",
            list(us.PI_VERSIONS),
            format_func=us.PI_VERSIONS.get,
            key="pi_version",
            help="pi 0.58 started the next summary after the previous "
            "compaction; 0.73 re-summarises its kept part.",
        )
    return {
        "compaction": compaction,
        "keep_recent_tokens": keep,
        "reserve_tokens": reserve,
        "pi_version": pi_version,
        "policy": PolicySettings(**pol_values),
        "inert": inert,
    }


def _summarizer_box(sb: Any, inert: dict[str, str]) -> dict[str, Any]:
    summarizer = sb.selectbox(
        "Summarizer",
        list(us.SUMMARIZERS),
        key="summarizer",
        format_func=us.SUMMARIZERS.get,
        disabled="summarizer" in inert,
        help="Writes the summaries of simulated compactions. LLM summarizers need the llm extra and a key in "
        "the environment; a failed call falls back to the offline summary, marked.",
    )
    sum_model, sum_url, sum_key, redact = None, None, None, True
    if summarizer != "offline":
        sum_model, sum_url, sum_key, redact = _llm_controls(sb, summarizer)
    return {
        "summarizer": summarizer,
        "summarizer_model": sum_model,
        "summarizer_base_url": sum_url,
        "summarizer_api_key": sum_key,
        "summarizer_redact": redact,
    }


def _import_box(sb: Any) -> None:
    with sb.expander("Import a pi settings.json"):
        st.file_uploader(
            "settings.json",
            type=["json"],
            key="pi_settings",
            on_change=_apply_pi_settings,
            help="Applied at once: compaction.enabled / reserveTokens / keepRecentTokens (policy pi, or "
            "Never when disabled) and contextPruning.enabled.",
        )
        msg = st.session_state.pop("_import_msg", None)
        if msg:
            (st.success if msg[0] == "success" else st.error)(esc(msg[1]))


def _share_box(sb: Any, settings: ReplaySettings) -> None:
    """Mirror the settings and the open session in the URL; show the link's query."""
    qs = {
        **us.to_query(settings),
        **us.session_query(st.session_state.get("session_origin"), st.session_state.get("session_digest")),
    }
    qs.update({k: v for k, v in st.query_params.to_dict().items() if k in us.PAGE_PARAMS})
    if "step" in qs and st.session_state.get("cur_step") is not None:  # moved by a button or the slider
        qs["step"] = str(st.session_state["cur_step"])
    if dict(st.query_params.to_dict()) != qs:
        st.query_params.from_dict(qs)
    with sb.expander("Share these settings"):
        origin = st.session_state.get("session_origin")
        st.caption(
            "Append to the app's address; opening it restores these settings"
            + (
                " and reopens this session where the same file is (a bundled sample, or a path under the "
                "allowed folders)."
                if origin
                else ". An uploaded session is not in the link: the other person loads it themselves."
                if st.session_state.get("session_digest")
                else "."
            )
        )
        st.code(us.query_string(qs), language=None, wrap_lines=True)


def render() -> ReplaySettings:
    """Draw the sidebar and return the settings it describes."""
    _from_query()
    sb = st.sidebar
    sb.header("Settings")
    for p in st.session_state.pop("_qp_problems", []):
        sb.warning(esc(f"URL: {p}; the default is used."))
    _preset_box(sb)
    window = _window_box(sb)
    counter = sb.selectbox(
        "Token counter",
        list(us.COUNTERS),
        format_func=lambda c: us.COUNTERS[c],
        key="counter",
        help="How tokens are counted: pi's chars ÷ 4 estimate (what pi uses to cut), real cl100k_base counts, "
        "calibrated (cl100k × this session's own ratio + a per-message cost, fitted to its recorded usage: "
        "an estimate of the provider's tokens, not a published tokenizer), or pi's usage-based context size "
        "(the last recorded usage in the context plus estimates of what follows — what pi's footer and "
        "compaction trigger use).",
    )
    strategy, values = _pruning_box(sb, window)
    comp = _compaction_box(sb, window)
    summ = _summarizer_box(sb, comp.pop("inert"))
    _import_box(sb)
    settings = ReplaySettings(
        strategy=strategy,
        strategy_settings=tuple(sorted(values.items())),
        context_window=window,
        model_windows=st.session_state["session_model_windows"] if _follows_models(window) else (),
        counter=counter,
        leaf=st.session_state.get("leaf"),
        **comp,
        **summ,
    )
    _share_box(sb, settings)
    return settings
