"""What the reconstruction check adds to the app: the Load page's verdict, and on the Replay page a
call the file cannot explain — marked on the timeline, said in the story, its recorded figure shown."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from .support.paths import REPO
from .support.recon import recorded_builder

APP = str(REPO / "app.py")
DROP = (
    "The agent sent about 20k fewer tokens than this file explains (an extension or the transport changed "
    "the context)."
)


@pytest.fixture
def opened(tmp_path, monkeypatch) -> AppTest:  # type: ignore[no-untyped-def]
    f = tmp_path / "dropped.jsonl"
    f.write_text(recorded_builder(12, drop_at=7, drop=20_000).text())
    monkeypatch.setenv("INSPECTOR_ROOTS", str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.text_input(key="local_path").set_value(str(f))
    at.button(key="load_path").click().run()
    assert not at.exception, at.exception
    return at


def test_the_load_page_says_in_one_line_where_the_rebuild_departs(opened: AppTest) -> None:
    line = next(c.value for c in opened.caption if c.value.startswith("Reconstruction:")).replace("\\", "")
    assert line.startswith(
        "Reconstruction: the context rebuilt here departs at 1 call: 1 context change not in the "
        "file (elsewhere within ±0 tokens)"
    )
    # and what no file holds: the 30,000-token system prompt the session was built with
    assert line.endswith(
        "; the system prompt and tool definitions, which no session file stores, are about 30,000 tokens "
        "of each recorded prompt (the median offset)."
    )


def test_the_replay_page_marks_and_says_the_unexplained_call(opened: AppTest) -> None:
    opened.selectbox(key="window_preset").set_value("Custom").run()
    opened.number_input(key="window_custom").set_value(100_000).run()
    at = opened.switch_page("inspector/ui/pages/replay.py").run()
    at.slider(key="step").set_value(7).run()
    assert not at.exception
    m = {x.label: x.value for x in at.metric}
    assert "Tokens sent" not in m and m["Sent (recorded)"] == m["Recorded prompt"]
    sent = int(m["Sent (recorded)"].replace(",", ""))
    assert m["Window used"] == f"{sent / 100_000:.0%}"  # of the figure shown as sent, not the rebuilt one
    story = next(x.value for x in at.markdown if x.value.startswith("- ")).replace(
        "\\", ""
    )  # markdown-escaped
    assert DROP in story
    fig = next(
        f
        for f in (json.loads(el.proto.spec) for el in at.get("plotly_chart"))
        if any(t.get("name", "").startswith("expected prompt") for t in f["data"])
    )
    marks = [t for t in fig["data"] if t.get("name") == "the file cannot explain this call"]
    assert [t["x"] for t in marks] == [[7]]
    at.slider(key="step").set_value(9).run()  # later calls carry the departure: said there too
    story = next(x.value for x in at.markdown if x.value.startswith("- ")).replace("\\", "")
    assert "The file cannot explain what was sent here: about " in story and "tokens fewer than" in story
    assert "tokens the provider recorded for this prompt" not in story  # no split where the file departs
    at.slider(key="step").set_value(6).run()
    sent = next(x for x in at.metric if x.label == "Tokens sent")
    assert "system prompt and tool definitions are not in the session file" in sent.help
    story = next(x.value for x in at.markdown if x.value.startswith("- ")).replace("\\", "")
    assert DROP not in story
    # before it, the story splits the recorded prompt: the file's part and the 30,000 no file stores
    m = {x.label: x.value for x in at.metric}
    assert f"Of the {m['Recorded prompt']} tokens the provider recorded for this prompt" in story
    assert "The other 30,000 are what no file stores, the system prompt and tool definitions" in story


def test_the_load_page_says_how_a_what_ifs_sizing_does_on_the_sessions_own_changes(
    tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    # The bundled coding session compacted itself once: the Load page says how well a what-if's
    # sizing of a changed context predicts the prompt after it (inspector.recon.changes); a
    # session that never changed its context says nothing of it.
    from .support.paths import SAMPLES

    monkeypatch.setenv("INSPECTOR_ROOTS", str(SAMPLES))
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.text_input(key="local_path").set_value(str(SAMPLES / "coding-session.jsonl"))
    at.button(key="load_path").click().run()
    assert not at.exception, at.exception
    said = [c.value.replace("\\", "") for c in at.caption if "checked on the changes" in c.value]
    assert said == [
        "What-if sizing, checked on the changes this session made itself (1 compaction): the prompt after "
        "each, predicted from the prompt before it plus the change × 1.06 provider tokens per counted token "
        "(fitted; how a what-if's trigger and cache model size a change), is off by 0% (median; the change "
        "as counted: 13%)."
    ]
    at.text_input(key="local_path").set_value(str(SAMPLES / "small-tutorial.jsonl"))
    at.button(key="load_path").click().run()
    assert not at.exception and not [c for c in at.caption if "checked on the changes" in c.value]
