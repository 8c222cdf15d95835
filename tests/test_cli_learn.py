"""``inspector learn``: the screens listed; one screen's JSON shape and answer, as the engine
computes them; bad arguments exit 2."""

from __future__ import annotations

import json

import pytest

from inspector import learn
from inspector.cli import main

KEYS = {
    "screen",
    "key",
    "title",
    "idea",
    "system",
    "rule",
    "source",
    "control",
    "question",
    "choices",
    "answer",
    "explanation",
    "values",
    "coming",
    "replay",
}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as e:
        code = int(e.code) if isinstance(e.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def test_the_screens_are_listed(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "learn", "--json")
    rows = json.loads(out)
    assert code == 0 and [r["screen"] for r in rows] == list(range(1, 10))
    assert [r["source"] for r in rows] == [s.source for s in learn.SCREENS]
    code, out, _ = run(capsys, "learn")
    assert code == 0 and out.count("\n") == 9 and "4. The cut point" in out


def test_one_screen_as_json_is_what_the_engine_reveals(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "learn", "--screen", "3", "--value", "48000", "--json")
    d = json.loads(out)
    rv = learn.reveal(learn.load_learn_session(), "trigger", 48_000)
    assert code == 0 and set(d) == KEYS
    assert d["answer"] == rv.answer and d["answer"] in d["choices"]
    assert d["values"]["compactions"] == rv.values["compactions"] and d["control"]["value"] == 48_000
    assert d["replay"] == {"step": rv.replay_step, "settings": {"compaction": "pi", "context_window": 48_000}}
    code, out, _ = run(capsys, "learn", "--screen", "7", "--value", "5000", "--minimum", "5000")
    assert code == 0 and "Answer: " in out and "PRUNE_PROTECT = 5000" in out


@pytest.mark.parametrize(
    "argv",
    [
        ("--screen", "0"),
        ("--screen", "10"),
        ("--screen", "3", "--value", "1000"),
        ("--screen", "8", "--value", "3"),
        ("--screen", "3", "--minimum", "5"),
    ],
)
def test_bad_arguments_exit_2(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]) -> None:
    code, out, err = run(capsys, "learn", *argv)
    assert code == 2 and out == "" and err.startswith("inspector: ")
