"""The settings sidebar shared by every page, built from the settings models themselves.

A strategy's controls come from its pydantic ``Settings`` fields (default, bounds, help), so a
new setting appears without UI code. Settings round-trip through the URL query string.
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from ..policies import POLICIES
from ..pruning import REGISTRY
from ..replay import ReplaySettings

WINDOW_PRESETS = {
    "Claude (200k)": 200_000,
    "Claude 1M (beta)": 1_000_000,
    "GPT-5 / o-series (400k)": 400_000,
    "GPT-4o / 4.1 (128k)": 128_000,
    "Small local model (32k)": 32_000,
    "Custom": None,
}
COUNTERS = {"pi": "pi estimate (chars/4)", "tiktoken": "tiktoken cl100k_base",
            "usage": "recorded usage (pi's context size)"}
_QP_KEYS = ("window", "reserve", "keep", "counter", "strategy", "compaction")


def _v(key: str, default: Any) -> dict[str, Any]:
    """``value=default`` unless session state already holds the widget's value (from the URL or
    an import), so streamlit does not warn about two sources of truth."""
    return {} if key in st.session_state else {"value": default}


def _bounds(field: Any) -> tuple[Any, Any]:
    lo = hi = None
    for m in field.metadata:
        lo = getattr(m, "ge", lo) if getattr(m, "ge", None) is not None else getattr(m, "gt", lo)
        hi = getattr(m, "le", hi) if getattr(m, "le", None) is not None else hi
    return lo, hi


def _from_query() -> None:
    """Seed widget state from the URL once per browser session."""
    if st.session_state.get("_qp_loaded"):
        return
    st.session_state["_qp_loaded"] = True
    qp = st.query_params
    try:
        if "window" in qp:
            st.session_state["window_preset"] = "Custom"
            st.session_state["window_custom"] = int(qp["window"])
        if "reserve" in qp:
            st.session_state["reserve"] = int(qp["reserve"])
        if "keep" in qp:
            st.session_state["keep"] = int(qp["keep"])
        if qp.get("counter") in COUNTERS:
            st.session_state["counter"] = qp["counter"]
        if qp.get("strategy") in REGISTRY:
            st.session_state["strategy"] = qp["strategy"]
        if qp.get("compaction") in POLICIES:
            st.session_state["compaction"] = qp["compaction"]
        for k, v in qp.items():
            if k.startswith("s."):
                val = json.loads(v)
                if isinstance(val, list):
                    val = ", ".join(str(x) for x in val)
                st.session_state[f"set.{st.session_state.get('strategy', 'none')}.{k[2:]}"] = val
    except (ValueError, TypeError):
        st.toast("Some settings in the URL could not be read; defaults are used.")


def import_pi_settings(data: bytes) -> list[str]:
    """Apply a pi ``settings.json`` (``compaction``, ``contextPruning``); return what changed."""
    cfg = json.loads(data.decode("utf-8"))
    changed = []
    comp = cfg.get("compaction") or {}
    if isinstance(comp.get("reserveTokens"), int):
        st.session_state["reserve"] = comp["reserveTokens"]
        changed.append(f"reserveTokens = {comp['reserveTokens']:,}")
    if isinstance(comp.get("keepRecentTokens"), int):
        st.session_state["keep"] = comp["keepRecentTokens"]
        changed.append(f"keepRecentTokens = {comp['keepRecentTokens']:,}")
    if comp.get("enabled") is False:
        st.session_state["compaction"] = "never"
        changed.append("compaction disabled")
    pruning = cfg.get("contextPruning")
    if isinstance(pruning, dict) and "enabled" in pruning:
        st.session_state["strategy"] = "pi-context-pruning" if pruning["enabled"] else "none"
        changed.append(f"contextPruning.enabled = {pruning['enabled']}")
    return changed


def render() -> ReplaySettings:
    """Draw the sidebar and return the settings it describes."""
    _from_query()
    sb = st.sidebar
    sb.header("Settings")
    preset = sb.selectbox("Model / context window", list(WINDOW_PRESETS), key="window_preset",
                          help="The context window the replay assumes.")
    window = WINDOW_PRESETS[preset] or int(sb.number_input("Custom window (tokens)", 1000, 10_000_000, step=1000,
                                                          key="window_custom", **_v("window_custom", 200_000)))
    counter = sb.selectbox("Token counter", list(COUNTERS), format_func=COUNTERS.get, key="counter",
                           help="pi's chars/4 estimate, real cl100k_base counts, or pi's usage-based context size "
                                "(the last recorded usage in the context plus estimates of what follows — what pi's "
                                "footer and compaction trigger use). The timeline always shows the recorded usage too.")
    sb.subheader("Pruning")
    strategy = sb.selectbox("Strategy", list(REGISTRY), key="strategy",
                            format_func=lambda n: REGISTRY[n].title)
    strat = REGISTRY[strategy]
    sb.caption(strat.description)
    if not strat.verified:
        sb.warning(f"Beyond a verified source: {strat.unverified_notes}", icon=":material/warning:")
    values: dict[str, Any] = {}
    fields = strat.Settings.model_fields
    if fields and sb.button("Reset to defaults", key=f"reset.{strategy}"):
        for name in fields:
            st.session_state.pop(f"set.{strategy}.{name}", None)
    for name, f in fields.items():
        key = f"set.{strategy}.{name}"
        default = f.default
        lo, hi = _bounds(f)
        label = name.replace("_", " ")
        if isinstance(default, bool):
            values[name] = sb.checkbox(label, help=f.description, key=key, **_v(key, default))
        elif isinstance(default, int):
            values[name] = int(sb.number_input(label, min_value=int(lo) if lo is not None else None,
                                               max_value=int(hi) if hi is not None else None,
                                               step=max(1, default // 10 or 1), help=f.description, key=key,
                                               **_v(key, default)))
        elif isinstance(default, float):
            values[name] = float(sb.slider(label, float(lo or 0.0), float(hi or 1.5), step=0.01,
                                           help=f.description, key=key, **_v(key, float(default))))
        elif isinstance(default, tuple):
            raw = sb.text_input(label, help=f.description + " (comma-separated)", key=key,
                                **_v(key, ", ".join(default)))
            values[name] = tuple(x.strip() for x in raw.split(",") if x.strip())
    sb.subheader("Compaction")
    compaction = sb.selectbox("Policy", list(POLICIES), key="compaction", format_func=lambda n: POLICIES[n].title,
                              help="'As recorded' keeps the session's own compactions; the others simulate one.")
    pol = POLICIES[compaction]
    sb.caption(pol.description + ("  — beyond the source system." if pol.beyond_source else ""))
    keep = int(sb.number_input("keepRecentTokens", 0, 2_000_000, step=1000, key="keep",
                               help="pi: recent tokens kept verbatim after a compaction.", **_v("keep", 20_000)))
    reserve = int(sb.number_input("reserveTokens", 0, 2_000_000, step=1024, key="reserve",
                                  help="pi: compact when the context exceeds window − reserveTokens.",
                                  **_v("reserve", 16_384)))
    summarizer = sb.selectbox(
        "Summarizer", ["offline", "openai", "anthropic"], key="summarizer",
        format_func={"offline": "offline extractive (no network)", "openai": "OpenAI-compatible (needs OPENAI_API_KEY)",
                     "anthropic": "Anthropic (needs ANTHROPIC_API_KEY)"}.get,
        help="Summaries for simulated compactions. LLM summarizers need the llm extra and a key in the environment; "
             "a failed call falls back to the offline summary, marked.")
    with sb.expander("Import a pi settings.json"):
        up = st.file_uploader("settings.json", type=["json"], key="pi_settings")
        if up is not None and st.button("Apply", key="apply_pi_settings"):
            try:
                changed = import_pi_settings(up.getvalue())
                st.success("Applied: " + (", ".join(changed) or "nothing relevant found"))
                st.rerun()
            except (ValueError, UnicodeDecodeError) as e:
                st.error(f"Not a readable settings.json: {e}")
    settings = ReplaySettings(
        compaction=compaction, strategy=strategy, strategy_settings=tuple(sorted(values.items())),
        context_window=window, reserve_tokens=reserve, keep_recent_tokens=keep, counter=counter,
        summarizer=summarizer, leaf=st.session_state.get("leaf"),
    )
    qs = {"window": str(window), "reserve": str(reserve), "keep": str(keep), "counter": counter,
          "strategy": strategy, "compaction": compaction}
    qs.update({f"s.{k}": json.dumps(v if not isinstance(v, tuple) else list(v)) for k, v in values.items()
               if v != fields[k].default})
    for k in [k for k in st.query_params if k not in qs]:
        del st.query_params[k]
    st.query_params.update(qs)
    with sb.expander("Share these settings"):
        st.code("?" + "&".join(f"{k}={v}" for k, v in qs.items()), language=None)
    return settings
