"""App benchmark: server-side time of one rerun of the Replay page after each sidebar change,
through Streamlit's AppTest (the app's own code path, in-process, no browser).

    python bench/app.py [--entries 10000,50000] [--repeat 3] [--baseline-repeat 1] [--no-baseline]
                        [--only strategy,keep,...] [--profile]

For each generated session (``python -m tools.samples.gen_big``): the first Replay render (parse + replay),
a rerun after moving the step slider, then one rerun after each change of a sidebar control,
from the defaults (or from the state a control needs, e.g. the pi policy for reserveTokens).
Every change starts from the same caches: they are saved before it and put back after it, so
the change's own work is measured (a new replay, or what it can reuse), never a cache hit of an
earlier measurement. ``old`` is the same change on the path before the incremental replay
(pruning applied to the whole context at every call, no reuse between replays), measured in
the same run: the ratio is the figure to compare on a shared machine. ``+later``: when the
page left work to the background (a long run's prompt-cache model and retention marks,
:mod:`inspector.ui.deferred`), the time from the start of the rerun until it was done too (the
page then reruns once to show it). ``--profile`` prints a cProfile of each measured rerun.

Targets (issue 15): every change ≤ 1 s at 10k entries and ≤ 3 s at 50k; the slider ≤ 200 ms /
500 ms. Not measured: the LLM summarizers (their time is the endpoint's), the settings.json
import and the agent preset's button (they set the same widgets as the rows above).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))


def ensure(n: int) -> Path:
    p = HERE / "out" / f"big-{n}.jsonl"
    if not p.exists():
        p.parent.mkdir(exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "tools.samples.gen_big", "--entries", str(n), "--out", str(p)],
            check=True,
            cwd=REPO,
        )
    return p


@dataclass
class Change:
    """One sidebar change: ``before`` (widget key → value) is set first, unmeasured; then
    ``key`` is set to ``value`` and the rerun is measured."""

    name: str
    key: str
    value: Any
    before: dict[str, Any] = field(default_factory=dict)
    old_up_to: int = 10**9
    """The old path is measured up to this many entries (it is quadratic when nothing compacts)."""


def changes() -> list[Change]:
    from inspector.pruning import REGISTRY

    out = [
        Change("context window preset (128k)", "window_preset", "GPT-4o (128k)"),
        Change("custom window (150,000)", "window_custom", 150_000, {"window_preset": "Custom"}),
        Change("counter → tiktoken", "counter", "tiktoken"),
        Change("counter → usage", "counter", "usage"),
    ]
    for name in REGISTRY:
        if name != "none":
            out.append(Change(f"strategy → {name}", "strategy", name))
    settings = {
        "opencode": ("prune_protect", 30_000),
        "pi-context-pruning": ("prune_minimum", 10_000),
        "turn-aware": ("recent_turns", 4),
        "dcp": ("supersede_writes", True),
        "context-editing": ("trigger", 80_000),
        "claude-code-microcompact": ("gap_minutes", 30.0),
    }
    for name, (k, v) in settings.items():
        out.append(Change(f"{name}: {k} → {v}", f"set.{name}.{k}", v, {"strategy": name}))
    for policy in ("pi", "early", "opencode", "codex", "claude-code", "never"):
        out.append(Change(f"policy → {policy}", "compaction", policy))
    pi = {"compaction": "pi"}
    out += [
        Change("keepRecentTokens 20,000 → 15,000 (pi)", "keep", 15_000, pi),
        Change("reserveTokens 16,384 → 30,000 (pi)", "reserve", 30_000, pi),
        Change("pi version → 0.58 (pi)", "pi_version", "0.58", pi),
        Change("keepRecentTokens (as recorded)", "keep", 15_000),
        Change("early: red fraction → 0.6", "pol.early_red_fraction", 0.6, {"compaction": "early"}),
        Change("opencode: tail off", "pol.opencode_tail", False, {"compaction": "opencode"}),
        Change("codex: fraction → 0.8", "pol.codex_fraction", 0.8, {"compaction": "codex"}),
        Change("claude-code: buffer → 20,000", "pol.claude_buffer", 20_000, {"compaction": "claude-code"}),
        Change("strategy → opencode (pi policy)", "strategy", "opencode", pi),
        Change(
            "opencode: prune_protect (pi policy)",
            "set.opencode.prune_protect",
            30_000,
            {"compaction": "pi", "strategy": "opencode"},
        ),
        Change(
            "strategy → opencode (never compacts)", "strategy", "opencode", {"compaction": "never"}, 10_000
        ),
        Change(
            "strategy → turn-aware (never compacts)",
            "strategy",
            "turn-aware",
            {"compaction": "never"},
            10_000,
        ),
    ]
    return out


# -- caches: saved before a change, put back after it ------------------------------------------


def _memos() -> list[Any]:
    from inspector.pruning import base, context_editing, dcp
    from inspector.summarize import offline

    return [
        base._REPLACED._d,
        dcp._SIGNATURES._d,
        dcp._EDITED._d,
        context_editing._EDITED._d,
        offline._MEMO._d,
    ]


def _dicts() -> list[dict[Any, Any]]:
    from inspector.pruning import turn_aware
    from inspector.replay import counters as rp
    from inspector.ui import state

    out: list[dict[Any, Any]] = [
        state.summary_cache()._items,
        rp._COUNTER_CACHE,
        turn_aware._PACKETS,
        *_memos(),
    ]
    out += [lru.items for lru in state.caches().values()]
    out += [c._cache for _, c in rp._COUNTER_CACHE.values()]
    out += getattr(rp, "_bench_caches", lambda: [])()
    return out


def save() -> list[tuple[dict[Any, Any], dict[Any, Any]]]:
    return [(d, d.copy()) for d in _dicts()]


def restore(saved: list[tuple[dict[Any, Any], dict[Any, Any]]]) -> None:
    for d, copy in saved:
        d.clear()
        d.update(copy)


def old_path(on: bool, cold_facts: bool = False) -> None:
    """Switch to the path before this work: pruning applied to the whole context at every call,
    no reuse between replays, and tiktoken counts (and, with ``cold_facts``, for a change made
    before any what-if policy ran, the summarizer's per-message facts) computed when first asked
    for, not in the background after loading. The summarizer's speed-ups (same output) stay."""
    from inspector.replay import counters, settings
    from inspector.summarize import offline

    settings.INCREMENTAL = not on
    settings.REUSE = not on
    try:
        from inspector.ui import deferred

        deferred.ENABLED = not on
    except ImportError:  # a tree from before it
        pass
    if on:  # what restore() puts back
        for key in [k for k in counters._COUNTER_CACHE if k[1] == "tiktoken"]:
            del counters._COUNTER_CACHE[key]
        if cold_facts:
            offline._MEMO._d.clear()


# -- driving the app --------------------------------------------------------------------------


def set_widget(at: Any, key: str, value: Any) -> bool:
    for kind in ("selectbox", "number_input", "slider", "checkbox", "toggle", "text_input"):
        try:
            w = getattr(at, kind)(key=key)
        except (KeyError, IndexError):
            continue
        if getattr(w, "disabled", False):
            return False
        w.set_value(value)
        return True
    return False


def wait_for_warm_up() -> float:
    """Wait for the background counting the app starts after loading a session; seconds waited."""
    import threading

    t = time.perf_counter()
    for th in threading.enumerate():
        if th.name.startswith("inspector-warm"):
            th.join()
    return time.perf_counter() - t


CPU: list[float] = []
"""CPU seconds of the script's own thread in each rerun (:func:`count_cpu`): on a shared machine
the wall clock grows with the load, the thread's CPU time much less."""


def count_cpu() -> None:
    """Record the CPU time of the thread that runs the page script, for every rerun."""
    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

    original = ScriptRunner._run_script

    def run_script(self: Any, rerun_data: Any) -> None:
        t = time.thread_time()
        try:
            original(self, rerun_data)
        finally:
            CPU.append(time.thread_time() - t)

    ScriptRunner._run_script = run_script  # type: ignore[method-assign]


GC: dict[int, float] = {}
"""Seconds spent in the cyclic garbage collector during the last :func:`run`, by generation."""
_GC_START: list[float] = []


def _gc_callback(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        _GC_START[:] = [time.perf_counter()]
    elif _GC_START:
        g = info["generation"]
        GC[g] = GC.get(g, 0.0) + time.perf_counter() - _GC_START[0]


def run(at: Any) -> float:
    import gc

    if _gc_callback not in gc.callbacks:
        gc.callbacks.append(_gc_callback)
    t = time.perf_counter()
    CPU.clear()
    GC.clear()
    at.run()
    dt = time.perf_counter() - t
    if at.exception:
        raise RuntimeError(at.exception[0].value)
    return dt


def profiled(at: Any, limit: int = 70) -> float:
    """``run(at)`` with the script's own thread under cProfile; prints the functions that took
    longest (cumulative, then own time)."""
    import cProfile
    import io
    import pstats

    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

    prof = cProfile.Profile()
    original = ScriptRunner._run_script

    def run_script(self: Any, rerun_data: Any) -> None:
        prof.enable()
        try:
            original(self, rerun_data)
        finally:
            prof.disable()

    ScriptRunner._run_script = run_script  # type: ignore[method-assign]
    try:
        return run(at)
    finally:
        ScriptRunner._run_script = original  # type: ignore[method-assign]
        for order in ("cumulative", "tottime"):
            buf = io.StringIO()
            pstats.Stats(prof, stream=buf).strip_dirs().sort_stats(order).print_stats(limit)
            print(buf.getvalue(), flush=True)


def wait_for_deferred() -> float:
    """Wait for what the page left to the background (:mod:`inspector.ui.deferred`); seconds waited."""
    try:
        from inspector.ui import deferred
    except ImportError:  # a tree from before it (to measure against)
        return 0.0
    t = time.perf_counter()
    deferred.wait()
    return time.perf_counter() - t


def measure(
    at: Any, ch: Change, base: Any, repeat: int, old: bool, profile: bool = False
) -> tuple[float, float, float, float] | None:
    """Median rerun time of ``ch`` from its ``before`` state (caches put back after each try), and
    the median time until the work the page deferred was done too, the median CPU time of the
    script's thread, and the median time the garbage collector took within the rerun."""
    times, done, cpu, gcs = [], [], [], []
    for _ in range(repeat):
        saved = save()
        old_path(old, cold_facts=ch.before.get("compaction", "recorded") in ("recorded", "never"))
        try:
            if not set_widget(at, ch.key, ch.value):
                return None
            times.append(profiled(at) if profile else run(at))
            cpu.append(sum(CPU))
            gcs.append(sum(GC.values()))
            if os.environ.get("BENCH_GC"):
                import gc

                print(
                    f"  gc by generation {GC}, objects tracked {len(gc.get_objects())}, frozen {gc.get_freeze_count()}"
                )
            done.append(times[-1] + wait_for_deferred())
        finally:
            old_path(False)
            restore(saved)
        set_widget(at, ch.key, base)
        run(at)
        wait_for_deferred()
    times.sort()
    done.sort()
    cpu.sort()
    gcs.sort()
    return times[len(times) // 2], done[len(done) // 2], cpu[len(cpu) // 2], gcs[len(gcs) // 2]


def widget_values(at: Any, keys: list[str]) -> dict[str, Any]:
    out = {}
    for k in keys:
        for kind in ("selectbox", "number_input", "slider", "checkbox", "toggle", "text_input"):
            try:
                out[k] = getattr(at, kind)(key=k).value
                break
            except (KeyError, IndexError):
                continue
    return out


def reload_at_step(at: Any, step: int) -> str:
    """A browser reload (or a shared link) of the Replay page at ``step``: a new browser session
    whose URL names the session (cached on the server) and the step."""
    from streamlit.testing.v1 import AppTest

    again = AppTest.from_file(str(REPO / "app.py"), default_timeout=3600)
    for k in ("sid", "session", "step"):
        if k in at.query_params:
            v = at.query_params[k]
            again.query_params[k] = v[-1] if isinstance(v, list) else v
    again.query_params["step"] = str(step)
    t = time.perf_counter()
    again.run()
    again.switch_page("inspector/ui/pages/replay.py")
    run(again)
    dt = time.perf_counter() - t
    shown = again.slider(key="step").value
    wait_for_deferred()
    return f"a reload at ?step={step} {dt * 1000:.0f} ms (shows call {shown})"


def bench_session(n: int, args: argparse.Namespace, out: Callable[[str], None]) -> None:
    from streamlit.testing.v1 import AppTest

    p = ensure(n)
    os.environ["INSPECTOR_ROOTS"] = str(p.parent)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=3600)
    at.run()
    at.text_input(key="local_path").set_value(str(p))
    at.button(key="load_path").click()
    t0 = time.perf_counter()
    at.run()
    t = time.perf_counter()
    at.switch_page("inspector/ui/pages/replay.py")
    run(at)
    first = time.perf_counter() - t
    wait_for_deferred()
    wait_for_warm_up()
    warm = time.perf_counter() - t0
    steps = at.slider(key="step").max
    slider, slider_cpu = [], []
    for k in range(5):
        at.slider(key="step").set_value((k * 7919) % max(1, steps))
        slider.append(run(at))
        slider_cpu.append(sum(CPU))
    slider.sort()
    slider_cpu.sort()
    out(
        f"\n{n:,} entries: first render {first:.2f} s, step slider {slider[2] * 1000:.0f} ms "
        f"(cpu {slider_cpu[2] * 1000:.0f} ms; median of 5); summarizer facts and tiktoken counts ready "
        f"{warm:.1f} s after loading (background); {reload_at_step(at, int(steps) // 2)}"
    )
    out(f"{'change':<44} {'new ms':>8} {'cpu ms':>8} {'gc ms':>6} {'+later':>8} {'old ms':>9} {'old/new':>8}")
    todo = [c for c in changes() if not args.only or any(o in c.name for o in args.only.split(","))]
    keys = sorted({k for c in todo for k in c.before})
    defaults = widget_values(at, keys)
    for ch in todo:
        for k, v in ch.before.items():
            set_widget(at, k, v)
        if ch.before:
            run(at)
        base = widget_values(at, [ch.key]).get(ch.key)
        measure(at, ch, base, 1, old=False)  # warm-up (imports, lazily built tables), not counted
        new = measure(at, ch, base, args.repeat, old=False, profile=args.profile)
        skip = args.no_baseline or new is None or n > ch.old_up_to
        old = None if skip else measure(at, ch, base, args.baseline_repeat, old=True)
        for k in ch.before:
            set_widget(at, k, defaults.get(k))
        if ch.before:
            run(at)
        if new is None:
            out(f"{ch.name:<44} {'(not shown or disabled)':>27}")
            continue
        ratio = f"{old[0] / new[0]:>7.1f}×" if old else ""
        later = f"{new[1] * 1000:>8.0f}" if new[1] - new[0] > 0.005 else f"{'':>8}"
        out(
            f"{ch.name:<44} {new[0] * 1000:>8.0f} {new[2] * 1000:>8.0f} {new[3] * 1000:>6.0f} {later} "
            f"{old[0] * 1000 if old else float('nan'):>9.0f} {ratio:>8}"
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out(f"peak RSS so far {peak:,.0f} MB")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--entries", default="10000,50000")
    ap.add_argument("--repeat", type=int, default=3, help="tries per change on the new path (median)")
    ap.add_argument(
        "--baseline-repeat", type=int, default=1, help="tries per change on the old path (median)"
    )
    ap.add_argument(
        "--no-baseline", action="store_true", help="skip the old path (it is slow at 50k entries)"
    )
    ap.add_argument("--only", default="", help="comma-separated substrings of the change names to run")
    ap.add_argument(
        "--profile", action="store_true", help="print a cProfile of each measured change (use with --only)"
    )
    args = ap.parse_args()
    count_cpu()

    def out(line: str) -> None:
        print(line, flush=True)

    for n in (int(x) for x in args.entries.split(",") if x):
        bench_session(n, args, out)
    out("(server-side rerun of the Replay page through AppTest; medians; old: see old_path())")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
