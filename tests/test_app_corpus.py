"""The Corpus page through AppTest: load a corpus, the overview's numbers, filtering, opening a
session on Replay, and a corpus sweep's heatmap, frontier and the sessions a setting hurts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from inspector.corpus import overview, resolve_corpus
from inspector.corpus.generate import generate_corpus

from .support.paths import REPO

APP = str(REPO / "app.py")
PAGE = "inspector/ui/pages/corpus.py"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("app-corpus")
    generate_corpus(d, 6, seed=8)
    return d


@pytest.fixture
def at(folder: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("INSPECTOR_ROOTS", str(folder))
    a = AppTest.from_file(APP, default_timeout=180).run()
    a = a.switch_page(PAGE).run()
    assert not a.exception, a.exception
    a.text_area(key="corpus_specs").set_value(str(folder))
    a.number_input(key="corpus_workers").set_value(0)
    a.button(key="corpus_load").click().run()
    assert not a.exception, a.exception
    return a


def figures_of(a: AppTest) -> list[dict[str, Any]]:
    return [json.loads(el.proto.spec) for el in a.get("plotly_chart")]


def test_the_overview_shows_one_row_per_session_with_totals(at: AppTest, folder: Path) -> None:
    rows = overview(resolve_corpus([str(folder)]), workers=0)
    df = at.dataframe(key="corpus_table").value
    assert len(df) == 6 and sorted(df["calls"]) == sorted(r["calls"] for r in rows)
    assert list(df["window at least"].fillna(0)) == [r["windowAtLeast"] or 0 for r in rows]
    m = {x.label: x.value for x in at.metric}
    assert m["Sessions"] == "6" and m["Model calls"] == f"{sum(r['calls'] for r in rows):,}"
    titles = [f["layout"]["title"]["text"] for f in figures_of(at)]
    assert "Peak context per session" in titles
    agents = sorted({r["agent"] for r in rows})
    at.multiselect(key="corpus_agents").set_value(agents[:1]).run()
    assert len(at.dataframe(key="corpus_table").value) == sum(r["agent"] == agents[0] for r in rows)


def test_a_name_too_long_for_the_file_system_is_said_not_a_page_error(at: AppTest) -> None:
    at.text_area(key="corpus_specs").set_value("a" * 300)  # found by bench/monkey_app.py --seed 9
    at.button(key="corpus_load").click().run()
    assert not at.exception
    assert any("File name too long" in e.value for e in at.error)
    assert len(at.dataframe(key="corpus_table").value) == 6  # the corpus loaded before stays


def test_a_file_outside_the_allowed_folders_is_left_out(at: AppTest) -> None:
    at.text_area(key="corpus_specs").set_value(str(REPO / "sample_sessions"))
    at.button(key="corpus_load").click().run()
    assert any("outside the allowed folders" in w.value for w in at.warning)
    assert len(at.dataframe(key="corpus_table").value) == 6  # the corpus loaded before stays


def test_a_corpus_sweep_shows_the_heatmap_frontier_and_the_sessions_hurt(at: AppTest) -> None:
    at.segmented_control(key="corpus_view").set_value("Corpus sweep").run()
    at.selectbox(key="cs_y").set_value("reserve_tokens").run()
    assert any("Each session is replayed against its own window" in c.value for c in at.caption)
    at.selectbox(key="cs_y").set_value("context_window").run()
    assert not any("against its own window" in c.value for c in at.caption)  # the window is swept
    at.text_input(key="cs_vals_x_keep_recent_tokens").set_value("5000, 40000")
    at.text_input(key="cs_vals_y_context_window").set_value("30000, 200000")
    at.button(key="cs_run").click().run()
    assert not at.exception, at.exception
    figs = figures_of(at)
    heat = next(f for f in figs if f["data"][0]["type"] == "heatmap")
    assert heat["data"][0]["x"] == ["5000", "40000"] and heat["data"][0]["y"] == ["30000", "200000"]
    front = next(f for f in figs if "frontier" in f["layout"]["title"]["text"])
    assert len(front["data"][0]["x"]) == 4
    table = next(d.value for d in at.dataframe if "worse than recorded" in d.value.columns)
    assert len(table) == 4 and set(table["sessions"]) == {6}
    # coloured by billed cost (the prompt cache) by default; the blended cost is one choice away
    assert at.selectbox(key="cs_metric").value == "billed_total"
    assert "billed cost" in heat["layout"]["title"]["text"]
    assert sorted(float(x) for x in table["billed $"]) == sorted(
        float(v) for r in heat["data"][0]["z"] for v in r
    )
    at.selectbox(key="cs_metric").set_value("cost_total").run()
    heat = next(f for f in figures_of(at) if f["data"][0]["type"] == "heatmap")
    assert "blended cost" in heat["layout"]["title"]["text"]
    assert sorted(float(x) for x in table["blended $"]) == sorted(
        float(v) for r in heat["data"][0]["z"] for v in r
    )
    # a 30k window on sessions that reach far more overflows or compacts much more: pick that cell
    at.selectbox(key="cs_cell").set_value(1).run()  # keep 5000, window 200000
    at.selectbox(key="cs_cell").set_value(0).run()  # keep 5000, window 30000
    assert not at.exception, at.exception
    hurt = at.dataframe(key="cs_hurt").value if any(d.key == "cs_hurt" for d in at.dataframe) else None
    worse = int(table.iloc[0]["worse than recorded"])
    assert (hurt is None and worse == 0) or len(hurt) == worse


def test_files_that_did_not_load_are_listed_apart_with_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table holds the sessions; a file that is not one is listed under it with the reason
    (not as a row of empty figures)."""
    generate_corpus(tmp_path, 2, seed=3)
    (tmp_path / "notes.jsonl").write_text("this is not a session\n")
    monkeypatch.setenv("INSPECTOR_ROOTS", str(tmp_path))
    a = AppTest.from_file(APP, default_timeout=180).run().switch_page(PAGE).run()
    a.text_area(key="corpus_specs").set_value(str(tmp_path))
    a.number_input(key="corpus_workers").set_value(0)
    a.button(key="corpus_load").click().run()
    assert not a.exception, a.exception
    assert "notes.jsonl" not in list(a.dataframe(key="corpus_table").value["session"])
    assert len(a.dataframe(key="corpus_table").value) == 2
    (exp,) = [e for e in a.expander if e.label == "1 file(s) did not load"]
    (failed,) = [d.value for d in exp.dataframe]
    assert list(failed["file"]) == ["notes.jsonl"] and failed["why"].iloc[0]
    m = {x.label: x.value for x in a.metric}
    assert m["Failed to load"] == "1" and m["Sessions"] == "2"  # the sessions loaded
