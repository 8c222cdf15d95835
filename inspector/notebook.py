"""The interactive notebook inspector: the Replay page's core inside Jupyter.

    from inspector.notebook import inspect
    ins = inspect("sample_sessions/coding-session.jsonl", compaction="pi", context_window=64_000)
    ins              # the widget: step slider, settings, bars, timeline, "what happened here"
    ins.steps        # a pandas DataFrame, one row per model call
    ins.metrics      # the run's metrics (one row)
    ins.replay       # the inspector.replay.Replay behind them

Built on ipywidgets with plotly ``FigureWidget``s (``pip install context-inspector[notebook]``):
it shows in JupyterLab, Notebook 7 and VS Code. Moving a control updates the figures in place
(their traces and layout are replaced, the widgets stay), without re-running the cell. The figures
are the app's own (:mod:`inspector.ui.figures` through :mod:`inspector.ui.step_figures`), over
the same engine; replays are cached by their settings.
"""

from __future__ import annotations

import html
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from .policies import POLICIES
from .pruning import REGISTRY
from .pruning.base import field_bounds
from .recon import view_check
from .replay import Replay, ReplaySettings, default_strategy, replay, session_counter
from .session.tree import Session
from .ui import figures
from .ui.narrate import notable_steps, step_story
from .ui.step_figures import step_bars
from .window import assumed_too_small, window_settings

try:
    import ipywidgets as widgets
except ImportError as e:  # pragma: no cover - the extra is missing
    raise ImportError(
        "the notebook inspector needs its extra: pip install 'context-inspector[notebook]'"
    ) from e

MAX_REPLAYS = 8
ALIASES = {"window": "context_window", "keep": "keep_recent_tokens", "reserve": "reserve_tokens"}


def _settings(base: ReplaySettings | None, values: dict[str, Any]) -> ReplaySettings:
    """``ReplaySettings`` from keyword arguments (``window``/``keep``/``reserve`` accepted;
    ``strategy_settings`` as a dict)."""
    data = (base or ReplaySettings()).model_dump()
    for k, v in values.items():
        k = ALIASES.get(k, k)
        if k not in ReplaySettings.model_fields:
            raise TypeError(f"unknown setting {k!r}; settings: {', '.join(ReplaySettings.model_fields)}")
        if k == "strategy_settings" and isinstance(v, dict):
            v = tuple(sorted(v.items()))
        data[k] = v
    if "strategy" in values and "strategy_settings" not in values:
        data["strategy_settings"] = ()
    return ReplaySettings(**data)


def _refresh(fw: go.FigureWidget, fig: go.Figure) -> None:
    """Replace a FigureWidget's traces and layout with ``fig``'s, in place (one message to the view)."""
    layout = fig.layout.to_plotly_json()
    layout.pop(
        "template", None
    )  # the widget keeps its own: validating a template again costs most of the time
    with fw.batch_update():
        fw.data = ()
        fw.add_traces(list(fig.data))
        fw.update_layout(layout, overwrite=True)


def _move_marker(fw: go.FigureWidget, replay: Replay, k: int) -> bool:
    """Move the timeline's "this step" marker and line to call ``k`` (what
    :func:`inspector.ui.figures.timeline` draws last for ``current_step``); False when absent."""
    marker = next((tr for tr in fw.data if tr.name == "this step"), None)
    if marker is None or not fw.layout.shapes:
        return False
    cur = replay.steps[k]
    top = replay.settings.context_window * figures.CLIP
    with fw.batch_update():
        marker.x = [cur.step]
        marker.y = [min(cur.tokens, top * 0.985)]
        fw.layout.shapes[-1].update(x0=k, x1=k)
    return True


def _story_html(lines: list[str]) -> str:
    return "<b>What happened here</b><ul>" + "".join(f"<li>{html.escape(x)}</li>" for x in lines) + "</ul>"


class Inspector:
    """A session replayed under settings the controls change; displays as a widget."""

    def __init__(self, session: Session, settings: ReplaySettings, step: int | None = None) -> None:
        self.session = session
        self._replays: OrderedDict[ReplaySettings, Replay] = OrderedDict()
        self._settings = settings
        r = self._replay_for(settings)
        events = notable_steps(r)
        self._step = step if step is not None else (events[0] if events else 0)
        self._busy = False
        self._timeline_of: Replay | None = None  # the replay the timeline widget draws
        self._checks: dict[int | None, Any] = {}  # the reconstruction check of each branch (leaf)
        self._build()
        self._draw_all()

    # -- data ---------------------------------------------------------------------------------

    def _replay_for(self, settings: ReplaySettings) -> Replay:
        r = self._replays.get(settings)
        if r is None:
            r = replay(self.session, settings)
            self._replays[settings] = r
            while len(self._replays) > MAX_REPLAYS:
                self._replays.popitem(last=False)
        self._replays.move_to_end(settings)
        return r

    def _recon(self, r: Replay) -> Any:
        """The reconstruction check of the replayed branch, as the Replay page has it: as recorded
        only, where a call records its prompt and the session is not too long to check here."""
        if not POLICIES[r.settings.compaction].as_recorded:
            return None
        leaf = r.settings.leaf
        if leaf not in self._checks:
            self._checks[leaf] = view_check(self.session, leaf, len(r.steps))
        return self._checks[leaf]

    @property
    def settings(self) -> ReplaySettings:
        return self._settings

    @property
    def replay(self) -> Replay:
        """The replay under the current settings."""
        return self._replay_for(self._settings)

    @property
    def step(self) -> int:
        return self._step

    @property
    def steps(self) -> pd.DataFrame:
        """One row per model call: tokens sent, before pruning, recorded, pruned, events."""
        rows = [s.as_dict() for s in self.replay.steps]
        for row in rows:
            row["events"] = ", ".join(e["type"] for e in row["events"])
        return pd.DataFrame(rows)

    @property
    def metrics(self) -> pd.DataFrame:
        """The run's metrics, one row."""
        return pd.DataFrame([self.replay.metrics.model_dump()])

    @property
    def summaries(self) -> pd.DataFrame:
        """One row per compaction of the replay (recorded or simulated)."""
        return pd.DataFrame([rec.to_json() for rec in self.replay.summaries])

    # -- the widget ---------------------------------------------------------------------------

    def _build(self) -> None:
        s = self._settings
        n = len(self.replay.steps)
        self.controls: dict[str, Any] = {
            "step": widgets.IntSlider(
                self._step,
                0,
                max(0, n - 1),
                description="Model call",
                continuous_update=False,
                layout={"width": "100%"},
            ),
            "compaction": widgets.Dropdown(
                options=[(p.title, k) for k, p in POLICIES.items()],
                value=s.compaction,
                description="Compaction",
            ),
            "context_window": widgets.BoundedIntText(
                s.context_window, min=1000, max=10_000_000, step=1000, description="Window"
            ),
            "keep_recent_tokens": widgets.IntSlider(
                s.keep_recent_tokens, 0, 200_000, step=1000, description="keepRecent", continuous_update=False
            ),
            "reserve_tokens": widgets.IntSlider(
                s.reserve_tokens, 0, 100_000, step=256, description="reserve", continuous_update=False
            ),
            "strategy": widgets.Dropdown(options=list(REGISTRY), value=s.strategy, description="Pruning"),
        }
        self.strategy_box = widgets.VBox(self._strategy_controls(s))
        self.bars = go.FigureWidget()
        self.timeline = go.FigureWidget()
        self.story = widgets.HTML()
        self.status = widgets.HTML()
        for name, w in self.controls.items():
            w.observe(self._on_step if name == "step" else self._on_setting, names="value")
        settings_row = widgets.HBox(
            [
                widgets.VBox(
                    [
                        self.controls[k]
                        for k in ("compaction", "context_window", "keep_recent_tokens", "reserve_tokens")
                    ]
                ),
                widgets.VBox([self.controls["strategy"], self.strategy_box]),
            ]
        )
        self.widget = widgets.VBox(
            [self.status, settings_row, self.controls["step"], self.bars, self.timeline, self.story]
        )

    def _strategy_controls(self, s: ReplaySettings) -> list[Any]:
        strat = REGISTRY.get(s.strategy)
        if strat is None:
            return []
        values = {**strat.Settings().model_dump(), **dict(s.strategy_settings)}
        out = []
        for name, f in strat.Settings.model_fields.items():
            v = values[name]
            lo, hi = field_bounds(f)
            if isinstance(v, bool):
                w = widgets.Checkbox(v, description=name)
            elif isinstance(v, int):
                w = widgets.BoundedIntText(
                    v,
                    min=lo if lo is not None else -(10**12),
                    max=hi if hi is not None else 10**12,
                    step=1000 if v >= 10_000 else 1,
                    description=name,
                )
            elif isinstance(v, float):
                w = widgets.FloatText(v, description=name)
            else:
                continue  # tuples (tool lists) are set through inspect(..., strategy_settings=...)
            w.setting = name
            w.style.description_width = "initial"
            w.observe(self._on_setting, names="value")
            out.append(w)
        return out

    def _settings_from_controls(self) -> ReplaySettings:
        c = self.controls
        strat_values = (
            dict(self._settings.strategy_settings) if c["strategy"].value == self._settings.strategy else {}
        )
        for w in self.strategy_box.children:
            strat_values[w.setting] = w.value
        # another window chosen: every call runs against it (the models' own windows were the session's)
        chosen = {} if c["context_window"].value == self._settings.context_window else {"model_windows": ()}
        return _settings(
            self._settings,
            {
                k: c[k].value
                for k in ("compaction", "context_window", "keep_recent_tokens", "reserve_tokens", "strategy")
            }
            | {"strategy_settings": strat_values}
            | chosen,
        )

    # -- updates ------------------------------------------------------------------------------

    def _on_step(self, change: dict[str, Any]) -> None:
        if self._busy:
            return
        self._step = int(change["new"])
        self._draw_step()

    def _on_setting(self, change: dict[str, Any]) -> None:
        if self._busy:
            return
        new = self._settings_from_controls()
        if new.strategy != self._settings.strategy:
            new = _settings(new, {"strategy_settings": {}})
            self.strategy_box.children = self._strategy_controls(new)
        self._settings = new
        self._draw_all()

    def _draw_all(self) -> None:
        r = self.replay
        n = len(r.steps)
        self._step = max(0, min(self._step, n - 1))
        self._busy = True
        try:
            sl = self.controls["step"]
            sl.max = max(0, n - 1)
            sl.value = self._step
        finally:
            self._busy = False
        m = r.metrics
        peak = assumed_too_small(self.session, r.settings.context_window)
        self.status.value = html.escape(
            f"{n:,} model calls · {m.compactions} compaction(s) · {m.tokens_pruned:,} tokens pruned · "
            f"peak {m.peak_context:,} · ${m.cost_usd:.2f} · replayed in {r.seconds:.2f} s"
            + (
                f" · window {r.settings.context_window:,} assumed, but the provider answered a "
                f"{peak.tokens:,}-token context (entry {peak.entry_index}): set window={peak.window_floor():_} or more"
                if peak is not None
                else ""
            )
        )
        self._draw_step()

    def _draw_step(self) -> None:
        r = self.replay
        if not r.steps:
            self.story.value = "This branch has no model calls to replay."
            return
        k = self._step
        d = r.step_detail(k)
        recon = self._recon(r)
        _refresh(self.bars, step_bars(r, k, session_counter(self.session, r.settings.counter), d))
        if self._timeline_of is not r or not _move_marker(self.timeline, r, k):
            _refresh(self.timeline, figures.timeline(r, current_step=k, recon=recon))
            for tr in self.timeline.data:
                tr.on_click(self._timeline_clicked)
            self._timeline_of = r
        self.story.value = _story_html(step_story(r, k, d, recon))

    def _timeline_clicked(self, trace: Any, points: Any, _state: Any) -> None:
        if points.xs:
            self.goto(int(points.xs[0]))

    # -- programmatic use ---------------------------------------------------------------------

    def goto(self, step: int) -> Inspector:
        """Move to model call ``step`` (the slider follows)."""
        self.controls["step"].value = max(0, min(int(step), self.controls["step"].max))
        return self

    def set(self, **settings: Any) -> Inspector:
        """Change settings as the controls would (``window=64_000``, ``strategy="opencode"``…)."""
        new = _settings(self._settings, settings)
        self._busy = True
        try:
            for k in ("compaction", "context_window", "keep_recent_tokens", "reserve_tokens", "strategy"):
                self.controls[k].value = getattr(new, k)
            self.strategy_box.children = self._strategy_controls(new)
        finally:
            self._busy = False
        self._settings = new
        self._draw_all()
        return self

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)


def inspect(path_or_session: str | Path | Session, *, step: int | None = None, **settings: Any) -> Inspector:
    """An interactive inspector of a session file (any format the loader reads) or a loaded
    :class:`~inspector.session.tree.Session`, replayed under ``settings`` (the fields of
    :class:`~inspector.replay.ReplaySettings`, with ``window``, ``keep`` and ``reserve`` as short
    names and ``strategy_settings`` as a dict; pruning defaults to as recorded and the window to the
    one the session records, as in the app). It opens where something first happens, or at ``step``.
    Raises :class:`~inspector.session.loader.SessionLoadError` for a file that cannot be read, or in
    which nothing is a session (:meth:`~inspector.session.tree.Session.unread`)."""
    if isinstance(path_or_session, Session):
        session = path_or_session
    else:
        from .importers import load_any
        from .session.loader import SessionLoadError

        session = load_any(path_or_session)
        unread = session.unread()
        if unread is not None:  # as the commands refuse it: not an empty inspector
            raise SessionLoadError(
                f"{path_or_session}: nothing in it could be read as a session: {unread.message}"
            )
    if "strategy" not in settings:  # as recorded, as the app and the CLI replay it
        settings = {**settings, "strategy": default_strategy(session)}
    if "window" not in settings and "context_window" not in settings:  # the session's own, as there
        settings = {**settings, **window_settings(session)}
    return Inspector(session, _settings(None, settings), step)
