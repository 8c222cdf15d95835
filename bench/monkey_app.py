"""Random widget moves on every page of the app (Streamlit's AppTest), checking that no page fails.

    python bench/monkey_app.py [--moves 3000] [--seed 0]

``fuzz.py`` draws every page on random session files with the default settings; this one opens a
bundled sample and then moves the widgets a user can reach, at random: a page, a select box, a
number (its bounds included), a slider, a text field (odd values too), a toggle, a button. After
each move the page must show no exception and none of the app's one-line "something went wrong"
messages (:mod:`inspector.ui.errors`). Every 20 moves or so it starts again on another sample.
Prints each finding with the last moves that led to it; exits 1 when there was one.

AppTest's ``Selectbox.select_index`` sets the option's label as the value, which a select box with a
``format_func`` cannot take back; each label is mapped back to its value through the box's own
``format_func`` over the app's option keys (:data:`POOL`).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from streamlit.testing.v1 import AppTest  # noqa: E402

from inspector.agents import AGENTS  # noqa: E402
from inspector.policies import POLICIES  # noqa: E402
from inspector.pruning import REGISTRY  # noqa: E402
from inspector.ui import urlstate  # noqa: E402

APP = str(REPO / "app.py")
PAGES = ["load", "replay", "tree", "summaries", "compare", "doctor", "corpus", "learn"]
TEXTS = [
    "",
    "x",
    "1",
    "-5",
    "prune_protect=1,2",
    "1e400",
    "nan",
    "/etc/passwd",
    "../../x",
    "@all",
    "a" * 300,
    "=cmd",
]
POOL: list[Any] = [
    *urlstate.WINDOW_PRESETS,
    *urlstate.COUNTERS,
    *urlstate.SUMMARIZERS,
    *urlstate.PI_VERSIONS,
    *POLICIES,
    *REGISTRY,
    *AGENTS,
    "recorded",
    "none",
    None,
]
"""The values behind the app's select boxes with a ``format_func``."""
KINDS = (
    "selectbox",
    "number_input",
    "slider",
    "text_input",
    "text_area",
    "checkbox",
    "toggle",
    "button",
    "radio",
)


class Monkey:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.samples = sorted(
            p.name for p in (REPO / "sample_sessions").iterdir() if p.suffix in (".jsonl", ".json")
        )

    def start(self) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=180)
        at.run()
        at.selectbox(key="sample_choice").set_value(self.rng.choice(self.samples))
        return at.button(key="load_sample").click().run()

    def widgets(self, at: AppTest) -> list[tuple[str, Any]]:
        return [(k, w) for k in KINDS for w in getattr(at, k) if not getattr(w, "disabled", False)]

    def move(self, kind: str, w: Any) -> Any:
        """The widget moved (a value of its own kind), or None when there is nothing to move."""
        rng = self.rng
        if kind in ("selectbox", "radio"):
            if not w.options:
                return None
            label = rng.choice(list(w.options))
            if kind == "radio":
                return w.set_value(label)
            value = _value_of(w, label)
            return None if value is _NONE else w.select(value)
        if kind == "number_input":
            pr = w.proto
            lo = pr.min if pr.has_min else -(10**6)
            hi = pr.max if pr.has_max else 10**7
            if pr.data_type == pr.INT:
                lo, hi = int(lo), int(hi)
                return w.set_value(rng.choice([lo, hi, rng.randint(lo, hi)]))
            return w.set_value(rng.choice([lo, hi, lo + (hi - lo) * rng.random()]))
        if kind == "slider":
            lo, hi = w.min, w.max
            if isinstance(w.value, (list, tuple)) and isinstance(lo, int):
                return w.set_value(tuple(sorted((rng.randint(lo, hi), rng.randint(lo, hi)))))
            if isinstance(lo, int):
                return w.set_value(rng.randint(lo, hi))
            if isinstance(lo, float):
                return w.set_value(lo + (hi - lo) * rng.random())
            return None
        if kind in ("text_input", "text_area"):
            return w.input(rng.choice(TEXTS))
        if kind in ("checkbox", "toggle"):
            return w.set_value(not w.value)
        if kind == "button":
            return w.click()
        return None


_NONE = object()


def _value_of(w: Any, label: str) -> Any:
    """The value a select box shows as ``label`` (:data:`_NONE`: none of :data:`POOL`)."""
    fmt = w.format_func
    for v in (label, *POOL):
        try:
            if str(fmt(v)) == label:
                return v
        except Exception:  # noqa: BLE001, S112 - a format_func that does not take this value
            continue
    return _NONE


def problems(at: AppTest) -> list[str]:
    out = [f"exception: {str(e.value)[:300]}" for e in at.exception]
    out += [f"page error: {str(e.value)[:200]}" for e in at.error if "went wrong" in str(e.value)]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--moves", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    os.environ.setdefault("INSPECTOR_ROOTS", str(REPO / "sample_sessions"))
    rng = random.Random(args.seed)
    monkey = Monkey(rng)
    found, t0 = 0, time.perf_counter()
    at: AppTest | None = None
    log: list[str] = []
    for _ in range(args.moves):
        if at is None or rng.random() < 0.05:
            at, log = monkey.start(), ["load a sample"]
        try:
            if rng.random() < 0.2:
                p = rng.choice(PAGES)
                log.append(f"page {p}")
                at.switch_page(f"inspector/ui/pages/{p}.py").run()
            else:
                ws = monkey.widgets(at)
                if not ws:
                    continue
                kind, w = rng.choice(ws)
                moved = monkey.move(kind, w)
                if moved is None:
                    continue
                log.append(f"{kind} {getattr(w, 'key', None) or getattr(w, 'label', '')}")
                moved.run()
        except RuntimeError as e:  # AppTest's timeout: a page still running (a hang, or far too slow)
            found += 1
            print(f"['hang: {str(e)[:200]}']\n  after: {log[-8:]}", flush=True)
            at = None
            continue
        if ps := problems(at):
            found += 1
            print(f"{ps}\n  after: {log[-8:]}", flush=True)
            at = None
    print(f"{args.moves} moves (seed {args.seed}), {found} finding(s), {time.perf_counter() - t0:.0f} s")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
