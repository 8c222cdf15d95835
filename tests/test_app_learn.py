"""The Learn page through AppTest: every screen, its control moved, the reveal checked against
the engine; the screen in the URL; the link to Replay at the same step and settings."""

from __future__ import annotations

import json
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from inspector import learn

from .support.paths import REPO

APP = str(REPO / "app.py")
PAGE = "inspector/ui/pages/learn.py"

#: the value each screen's control is moved to (different from its default)
MOVES: dict[str, Any] = {
    "context": 30,
    "tokens": 30,
    "trigger": 48_000,
    "cut": 8_000,
    "split": 4_000,
    "keeps": 6_000,
    "pruning": 5_000,
    "branch": None,
    "cost": 48_000,
}


@pytest.fixture(scope="module")
def session():  # type: ignore[no-untyped-def]
    return learn.load_learn_session()


def open_learn(screen: int | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    if screen is not None:
        at.query_params["screen"] = str(screen)
    at.run()
    at = at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at


def shown_answer(at: AppTest) -> str:
    text = next(s.value for s in at.success if s.value.startswith("Answer"))
    return text.replace("\\", "").removeprefix("Answer: ").split(" — ")[0]


def test_every_screen_moves_its_control_and_reveals_what_the_engine_computes(session) -> None:  # type: ignore[no-untyped-def]
    at = open_learn()
    for n, s in enumerate(learn.SCREENS, start=1):
        assert at.header[0].value.startswith(f"{n}. "), at.header[0].value
        assert at.query_params["screen"] == [str(n)] or at.query_params["screen"] == str(n)
        assert any(s.source in i.value.replace("\\", "") for i in at.info), (
            s.key
        )  # the rule's source is named
        key = f"learn_{s.key}"
        value = MOVES[s.key]
        before = [json.loads(e.proto.spec)["data"] for e in at.get("plotly_chart")]
        if s.control.kind == "select":
            value = learn.branch_targets(session)[-1]
            at.selectbox(key=key).set_value(value).run()
        else:
            at.slider(key=key).set_value(value).run()
        after = [json.loads(e.proto.spec)["data"] for e in at.get("plotly_chart")]
        assert after and before != after, (
            f"screen {n}: the figure did not change when {s.control.label} moved"
        )
        if s.key == "pruning":
            at.slider(key="learn_pruning_minimum").set_value(5_000).run()
        assert not at.success  # nothing revealed before the button
        rv = learn.reveal(session, s.key, value, **({"minimum": 5_000} if s.key == "pruning" else {}))
        at.radio(key=f"learn_guess_{s.key}").set_value(rv.choices[0]).run()
        at.button(key=f"learn_reveal_{s.key}").click().run()
        assert not at.exception, at.exception
        assert shown_answer(at) == rv.answer, s.key
        story = "\n".join(m.value.replace("\\", "") for m in at.markdown)
        assert rv.explanation[0] in story, s.key
        assert at.button(key="learn_to_replay").label.endswith(f"model call {rv.replay_step}")
        if s.coming:
            assert any("Coming" in w.value for w in at.warning)
        if s.key == "keeps":  # the retention view of the session's own compaction (issue 21)
            assert any(h.value.startswith("Retention") for h in at.subheader)
            forgotten = next(df.value for df in at.dataframe if "item" in df.value.columns)
            assert list(forgotten["item"]) == [f["item"] for f in rv.values["retention_forgotten"]]
        if n < len(learn.SCREENS):
            at.button(key="learn_next").click().run()
    assert at.button(key="learn_next").disabled


def test_moving_the_control_hides_the_reveal_until_asked_again() -> None:
    at = open_learn(3)
    at.button(key="learn_reveal_trigger").click().run()
    assert at.success
    at.slider(key="learn_trigger").set_value(200_000).run()
    assert not at.success
    at.button(key="learn_reveal_trigger").click().run()
    assert shown_answer(at) == "0"


@pytest.mark.parametrize(
    ("screen", "key"),
    [(6, "keeps"), (7, "pruning"), (9, "cost")],
)
def test_no_figure_states_the_answer_before_the_reveal(screen: int, key: str, session) -> None:  # type: ignore[no-untyped-def]
    """Screens whose figure would spell the answer out (the files counted in the title, the totals
    pruned or the dollars billed in the legend) keep those figures back until the reveal."""
    rv = learn.reveal(session, key, learn.SCREENS[screen - 1].control.default)
    v = rv.values
    if key == "keeps":
        told = [f"{len(v['read_files'])} read + {len(v['modified_files'])} modified"]
    elif key == "pruning":
        told = [f"{v['pruned'][n]:,} pruned" for n in v["pruned"]]
    else:
        told = [f"${v['cost_pi']:.2f}", f"${v['cost_never']:.2f}"]

    def texts(at: AppTest) -> str:
        (fig,) = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
        names = [t.get("name", "") for t in fig["data"]]
        return " ".join([*names, json.dumps(fig["layout"].get("title", ""))])

    at = open_learn(screen)
    before = texts(at)
    assert not any(x in before for x in told), before
    at.button(key=f"learn_reveal_{key}").click().run()
    after = texts(at)
    assert all(x in after for x in told), after


def test_the_screen_comes_from_the_url_and_goes_back_to_it() -> None:
    at = open_learn(4)
    assert at.header[0].value.startswith("4. The cut point")
    assert at.slider(key="learn_walk")  # the walk, step by step
    at.selectbox(key="learn_pick").set_value(7).run()
    assert at.header[0].value.startswith("7. ") and at.query_params["screen"] in ("7", ["7"])
    assert open_learn(99).header[0].value.startswith("1. ")  # not a screen: the first


def test_the_walk_slider_steps_through_the_cut(session) -> None:  # type: ignore[no-untyped-def]
    at = open_learn(4)
    frames, _ = learn.cut_walk(session, learn.leaf_before_compaction(session), 20_000)
    at.slider(key="learn_walk").set_value(3).run()
    assert any(f"{frames[2].total:,} of 20,000 tokens walked" in c.value for c in at.caption)


def test_open_in_replay_loads_the_session_at_the_same_step_and_settings(session) -> None:  # type: ignore[no-untyped-def]
    at = open_learn(3)
    at.slider(key="learn_trigger").set_value(48_000).run()
    rv = learn.reveal(session, "trigger", 48_000)
    at.button(key="learn_to_replay").click().run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Replay"
    assert at.session_state["cur_step"] == rv.replay_step
    assert at.session_state["compaction"] == "pi"
    assert at.slider(key="step").value == rv.replay_step
    assert at.query_params["session"] in ("sample:coding-session.jsonl", ["sample:coding-session.jsonl"])
    assert at.query_params["window"] in ("48000", ["48000"])
    assert at.query_params["step"] in (str(rv.replay_step), [str(rv.replay_step)])  # a reload stays there
