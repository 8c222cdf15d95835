"""``inspector learn``: the Learn path in the terminal — the screens, or one screen with its rule,
question and answer (computed by :mod:`inspector.learn` on the bundled session)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .. import learn
from .base import EXIT_USAGE, Command, fail, print_json
from .options import add_json


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--screen", type=int, metavar="N", help=f"the screen, 1–{len(learn.SCREENS)} (default: list them)"
    )
    p.add_argument(
        "--value", type=int, metavar="V", help="the screen's control (default: its starting value)"
    )
    p.add_argument("--minimum", type=int, metavar="M", help="screen 7: PRUNE_MINIMUM (default 20000)")
    add_json(p)


def _checked(session: learn.Session, s: learn.Screen, value: int | None) -> int | None:
    if value is None:
        return None
    rng = learn.control_range(session, s)
    ok = value in rng if s.control.kind == "select" else rng[0] <= value <= rng[1]
    if not ok:
        allowed = ", ".join(map(str, rng)) if s.control.kind == "select" else f"{rng[0]:,}…{rng[1]:,}"
        fail(f"--value {value}: screen {s.number}'s {s.control.label} takes {allowed}", EXIT_USAGE)
    return value


def _text(d: dict[str, Any]) -> str:
    lines = [
        f"{d['screen']}. {d['title']}",
        "",
        d["idea"],
        "",
        f"The rule ({d['system']}): {d['rule']}",
        f"Source: {d['source']}",
        "",
        f"{d['control']['label']} = {d['control']['value']}",
        f"{d['question']}  ({' / '.join(d['choices'])})",
        f"Answer: {d['answer']}",
    ]
    lines += [f"  - {x}" for x in d["explanation"]]
    if d["coming"]:
        lines.append(f"Coming: {d['coming']}")
    changed = ", ".join(f"{k}={v}" for k, v in d["replay"]["settings"].items()) or "the default settings"
    lines.append(f"In the app: the Replay page at model call {d['replay']['step']} with {changed}")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    if args.screen is None:
        rows = [
            {"screen": s.number, "key": s.key, "title": s.title, "system": s.system, "source": s.source}
            for s in learn.SCREENS
        ]
        if args.json:
            print_json(rows, indent=2)
        else:
            sys.stdout.write(
                "".join(f"{r['screen']}. {r['title']}  [{r['system']}: {r['source']}]\n" for r in rows)
            )
        return 0
    if not 1 <= args.screen <= len(learn.SCREENS):
        fail(f"--screen {args.screen}: screens are 1–{len(learn.SCREENS)}", EXIT_USAGE)
    s = learn.screen(args.screen)
    if args.minimum is not None and s.key != "pruning":
        fail("--minimum applies to screen 7 (pruning) only", EXIT_USAGE)
    session = learn.load_learn_session()
    more = {"minimum": args.minimum} if args.minimum is not None else {}
    d = learn.as_dict(learn.reveal(session, s.key, _checked(session, s, args.value), **more))
    if args.json:
        print_json(d, indent=2)
    else:
        sys.stdout.write(_text(d))
    return 0


COMMAND = Command(
    "learn",
    "the Learn path: each screen's rule, question and answer on the bundled session",
    add_arguments,
    run,
)
