"""The app at the moment of compaction, and the traps of issue 15, through AppTest: before/after
that add up, the cut(s) drawn, what was summarised or pruned listed and readable in full, stepping
by event and compaction, settings that say what is in effect, and a session that survives a
reload, travels in a link and is not replaced by a file that is not one."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from inspector import load_session
from inspector.compaction_view import compaction_view
from inspector.replay import ReplaySettings, replay
from inspector.ui import views

from .test_app import APP, SAMPLE, SAMPLES, bar_totals, figures_of, fresh, load, metrics, page


def moment(at: AppTest, v) -> None:  # type: ignore[no-untyped-def]
    """The compaction panel shows ``v``: before = summarised + kept, after = summary + kept, the
    bars drawn from the same messages, and every summarised message listed."""
    m = metrics(at)
    assert m["Context before"] == f"{v.tokens_before:,}"
    assert m["Summarised"] == f"{v.summarised_tokens:,}" and m["Kept"] == f"{v.kept_tokens:,}"
    assert int(m["Summarised"].replace(",", "")) + int(m["Kept"].replace(",", "")) == v.tokens_before
    assert m["Summary"] == f"{v.summary_tokens:,}"
    assert m["Context after"] == f"{v.summary_tokens + v.kept_tokens:,}" == f"{v.tokens_after:,}"
    assert m["Summarised msgs"] == f"{len(v.summarised):,}"
    bars = next(
        f for f in figures_of(at) if any(t.get("y", [None])[0] == "before compaction" for t in f["data"])
    )
    rows = bar_totals(bars)
    assert rows["before compaction"] == v.tokens_before and rows["after compaction"] == v.tokens_after
    assert rows["before compaction"] != rows["after compaction"]  # the two bars really differ
    listed = at.dataframe(key=f"summarised_{v.index}").value
    assert list(listed["entry"].fillna(-1)) == [
        p.message.entry_index if p.message.entry_index is not None else -1 for p in v.summarised
    ]
    assert sum(listed["tokens"]) == v.summarised_tokens


def test_the_recorded_compaction_shows_before_after_and_both_cuts() -> None:
    at = page(load(fresh()), "replay")
    assert not at.exception
    r = replay(load_session(SAMPLE), ReplaySettings(strategy="recorded"))
    v = compaction_view(r, 0)
    assert at.slider(key="step").value == v.step  # the first event of this session is its compaction
    moment(at, v)
    bars = figures_of(at)[0]
    cut_lines = sorted(sh["x0"] for sh in bars["layout"]["shapes"] if sh["yref"] == "y")
    assert cut_lines == sorted(c.offset for c in v.cuts) and len(cut_lines) == 2
    note = " ".join(i.value for i in at.info).replace("\\", "")
    assert "cuts at entry 119" in note and "kept from entry 122" in note and "keepRecentTokens from" in note
    at.button(key="to_summaries_0").click().run()  # the same compaction on the Summaries page, and back
    assert any(h.value.startswith("Compaction 1 of 1 (recorded)") for h in at.subheader)
    at.button(key="sum_go_0").click().run()
    assert at.slider(key="step").value == v.step
    assert any(f"Entry {v.entry_index} is highlighted" in i.value for i in at.info)  # its summary message


def test_a_what_if_pi_compaction_shows_before_and_after() -> None:
    at = load(fresh(compaction="pi", window="40000"))
    at = page(at, "replay")
    r = replay(
        load_session(SAMPLE), ReplaySettings(compaction="pi", context_window=40_000, strategy="recorded")
    )
    assert at.slider(key="step").value == r.summaries[0].step
    at.button(key="next_compaction").click().run()
    assert at.slider(key="step").value == r.summaries[1].step
    moment(at, compaction_view(r, 1))
    # the step before a compaction draws where it will cut
    at.button(key="prev").click().run()
    bars = figures_of(at)[0]
    assert any("next compaction" in a["text"] for a in bars["layout"]["annotations"])


def test_stepping_by_event_skips_skipped_prunes_unless_asked() -> None:
    at = load(fresh(strategy="opencode", **{"s.prune_protect": "20000"}), "long-session.jsonl")
    at = page(at, "replay")
    s = load_session(SAMPLES / "long-session.jsonl")
    r = replay(s, ReplaySettings(strategy="opencode").with_strategy_settings({"prune_protect": 20000}))
    real = [st.step for st in r.steps if any(e.type not in ("prune_skipped",) for e in st.events)]
    skipped = [st.step for st in r.steps if any(e.type == "prune_skipped" for e in st.events)]
    assert skipped and skipped[0] < real[0]
    assert at.slider(key="step").value == real[0]  # opens on the first real event
    assert at.button(key="prev_event").disabled
    at.slider(key="step").set_value(0).run()
    at.button(key="next_event").click().run()
    assert at.slider(key="step").value == real[0]  # one click, not one per skipped prune
    at.toggle(key="nav_skipped").set_value(True).run()
    at.button(key="prev_event").click().run()
    assert at.slider(key="step").value == max(x for x in skipped if x < real[0])
    shortcuts = {
        b.key: b.proto.shortcut
        for b in at.button
        if b.key in ("prev", "next", "next_event", "next_compaction")
    }
    assert all(shortcuts.values()) and len(set(shortcuts.values())) == 4


def test_a_session_without_events_opens_on_the_first_call() -> None:
    at = page(load(fresh(), "long-session.jsonl"), "replay")
    assert at.slider(key="step").value == 0
    assert at.button(key="next_compaction").disabled and at.button(key="prev").disabled


def test_any_message_can_be_read_in_full_as_plain_text() -> None:
    at = page(load(fresh()), "replay")
    r = replay(load_session(SAMPLE), ReplaySettings(strategy="recorded"))
    k = r.summaries[0].step
    d = r.step_detail(k)
    longest = max(range(len(d.before)), key=lambda i: len(views.full_text(d.before[i].message)))
    at.session_state["msg_table"] = {"selection": {"rows": [longest], "columns": [], "cells": []}}
    at.run()
    full = views.full_text(d.before[longest].message)
    assert len(full) > 160 and full.rstrip() in [c.value.rstrip() for c in at.code]
    at.slider(key="step").set_value(0).run()  # a shorter context: the selection no longer points anywhere
    assert not at.exception


def test_pruned_outputs_are_listed_with_their_text() -> None:
    at = load(
        fresh(
            strategy="opencode",
            compaction="pi",
            window="40000",
            **{"s.prune_protect": "1000", "s.prune_minimum": "0"},
        )
    )
    at = page(at, "replay")
    r = replay(
        load_session(SAMPLE),
        ReplaySettings(compaction="pi", context_window=40_000, strategy="opencode").with_strategy_settings(
            {"prune_protect": 1000, "prune_minimum": 0}
        ),
    )
    k = next(
        st.step
        for st in r.steps
        if any(e.type == "pruned" for e in st.events) and not any(e.type == "compaction" for e in st.events)
    )
    at.slider(key="step").set_value(k).run()
    table = at.dataframe(key="pruned_table").value
    d = r.step_detail(k)
    assert len(table) == sum(1 for x in d.prune.decisions if x.action != "kept")
    at.session_state["pruned_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert views.full_text(d.before[int(table["#"][0])].message).rstrip() in [
        c.value.rstrip() for c in at.code
    ]


def test_summaries_of_simulated_compactions_list_what_was_summarised_and_link_to_replay() -> None:
    at = page(load(fresh(compaction="pi", window="40000")), "summaries")
    assert not at.exception
    r = replay(
        load_session(SAMPLE), ReplaySettings(compaction="pi", context_window=40_000, strategy="recorded")
    )
    last = len(r.summaries) - 1
    v = compaction_view(r, last)
    listed = at.dataframe(key=f"sum_list_{last}").value
    assert len(listed) == len(v.summarised)
    assert ("turn prefix" in set(listed["became"])) == bool(
        v.prep.turnPrefixMessages
    )  # a split turn's prefix
    assert any("[system]" in c.value and "<conversation>" in c.value for c in at.code)  # the exact prompt
    at.button(key=f"sum_go_{last}").click().run()
    assert not at.exception and at.slider(key="step").value == v.step
    assert any(
        f"Entry {v.cuts[0].entry_index} is highlighted" in i.value for i in at.info
    )  # its first kept entry


def test_doctor_findings_are_relative_and_open_their_step_highlighted(sb) -> None:  # type: ignore[no-untyped-def]
    from inspector.doctor import diagnose

    sb.user("look at the file")
    for _ in range(5):
        sb.assistant("", tools=[("read", {"path": "/p/src/deep/module.ts"})], usage=100)
        sb.tool_result("export const x = 1")
    sb.assistant("done", usage=100)
    at = fresh()
    at.file_uploader(key="upload").set_value(("reads.jsonl", sb.text().encode(), "application/jsonl"))
    at = page(at.run(), "doctor")
    rep = diagnose(sb.session())
    finding = next(f for f in rep.findings if f.kind == "file-read-many-times")
    assert finding.message.startswith("/p/src/deep/module.ts")
    table = at.dataframe(key="doctor_table").value
    assert "src/deep/module.ts was read 5 times" in list(table["explanation"])  # relative to the cwd, /p
    at.selectbox(key=next(w.key for w in at.selectbox if (w.key or "").startswith("doc_pick"))).set_value(
        rep.findings.index(finding)
    ).run()
    at.button(key="doc_go").click().run()
    assert not at.exception
    target = finding.entries[0]
    assert any(f"Entry {target} is highlighted" in i.value for i in at.info)
    keyed = next(df for df in at.dataframe if (df.key or "").startswith("msg_table_f"))
    assert target in list(keyed.value["entry"])


# -- no silent state -----------------------------------------------------------------------------


def test_the_preset_shown_is_the_one_in_effect_and_applies_at_once() -> None:
    at = fresh()
    assert (
        at.selectbox(key="agent_preset").value == "recorded"
        and at.selectbox(key="strategy").value == "recorded"
    )
    at.selectbox(key="strategy").set_value("none").run()
    assert at.selectbox(key="agent_preset").value == "custom"  # no longer 'As recorded'
    at.selectbox(key="agent_preset").set_value("opencode").run()  # no Apply button
    assert (
        at.selectbox(key="compaction").value == "opencode"
        and at.selectbox(key="strategy").value == "opencode"
    )
    at.number_input(key="set.opencode.prune_protect").set_value(20000).run()
    assert at.selectbox(key="agent_preset").value == "custom"


def test_controls_without_effect_are_disabled_with_the_reason() -> None:
    at = fresh()
    assert at.number_input(key="keep").disabled and at.number_input(key="reserve").disabled
    assert at.selectbox(key="summarizer").disabled
    assert any("No effect under 'As recorded'" in c.value for c in at.sidebar.caption)
    at.selectbox(key="compaction").set_value("pi").run()
    assert not at.number_input(key="keep").disabled and not at.number_input(key="reserve").disabled
    at.selectbox(key="compaction").set_value("codex").run()
    assert at.number_input(key="keep").disabled and not at.number_input(key="reserve").disabled


def test_an_imported_settings_json_switches_to_the_policy_it_describes() -> None:
    at = fresh()
    cfg = {"compaction": {"enabled": True, "reserveTokens": 8192, "keepRecentTokens": 12000}}
    at.file_uploader(key="pi_settings").set_value(
        ("settings.json", json.dumps(cfg).encode(), "application/json")
    )
    at.run()
    assert at.selectbox(key="compaction").value == "pi"  # not left on 'As recorded', where they do nothing
    assert not at.number_input(key="keep").disabled and at.number_input(key="keep").value == 12000


def test_settings_that_make_the_policy_a_no_op_are_flagged_where_they_are_set() -> None:
    at = fresh(compaction="pi", window="32768")
    assert any("16,384" in w.value and "keepRecentTokens" in w.value for w in at.sidebar.warning)
    at = fresh(compaction="pi", window="128000")
    assert not any("keepRecentTokens" in w.value for w in at.sidebar.warning)
    at = fresh(strategy="opencode", window="32768")
    assert any("PRUNE_PROTECT 40,000" in w.value and "never prunes" in w.value for w in at.sidebar.warning)


def test_the_load_page_says_whether_recorded_pruning_is_shown() -> None:
    at = load(fresh(), "opencode-session.json")
    assert any("They are cleared in the replay" in i.value for i in at.info)
    at.selectbox(key="strategy").set_value("none").run()
    assert any("is not 'As recorded'" in i.value for i in at.info)


# -- keeping work ----------------------------------------------------------------------------------------


def test_a_loaded_session_survives_a_reload() -> None:
    at = load(fresh(), "small-tutorial.jsonl")
    qp = {k: (v[-1] if isinstance(v, list) else v) for k, v in at.query_params.items()}
    assert qp["session"] == "sample:small-tutorial.jsonl" and len(qp["sid"]) == 16
    again = fresh(sid=qp["sid"])  # a new browser session: only the URL is left
    assert not again.exception
    assert metrics(again)["Entries"] == f"{len(load_session(SAMPLES / 'small-tutorial.jsonl').entries):,}"
    assert "Entries" not in metrics(fresh(sid=qp["sid"][:3]))  # a prefix finds nothing


def test_an_upload_survives_a_reload_by_its_hash() -> None:
    at = fresh()
    data = (SAMPLES / "small-tutorial.jsonl").read_bytes().replace(b"\n", b"\n\n", 1)
    at.file_uploader(key="upload").set_value(("mine.jsonl", data, "application/jsonl"))
    at.run()
    qp = {k: (v[-1] if isinstance(v, list) else v) for k, v in at.query_params.items()}
    assert "session" not in qp  # an upload cannot be opened elsewhere
    assert metrics(fresh(sid=qp["sid"]))["Entries"] == metrics(at)["Entries"]


def test_a_share_link_reopens_a_sample_or_an_allowed_path_only() -> None:
    at = fresh(session="sample:small-tutorial.jsonl", compaction="pi")
    assert metrics(at)["Entries"] == f"{len(load_session(SAMPLES / 'small-tutorial.jsonl').entries):,}"
    assert at.selectbox(key="compaction").value == "pi"
    at = fresh(session=f"path:{SAMPLES / 'broken.jsonl'}")
    assert metrics(at)["Entries"] == f"{len(load_session(SAMPLES / 'broken.jsonl').entries):,}"
    at = fresh(session="path:/etc/hostname")
    assert "Entries" not in metrics(at) and any("not on this machine" in e.value for e in at.error)


def test_a_link_to_another_page_says_there_why_its_session_is_not_the_one_it_named() -> None:
    def opened(page_name: str, **query: str) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=120)
        for k, v in query.items():
            at.query_params[k] = v
        return at.switch_page(f"inspector/ui/pages/{page_name}.py").run()

    # a file this machine does not let the app read: said on the Replay page the link opens
    at = opened("replay", session="path:/etc/hostname", step="3")
    assert not at.exception
    assert [e.value.replace("\\", "") for e in at.error] == [
        "The link names a session that is not on this machine (an upload, or a file outside the allowed "
        "folders): open it on the Load page."
    ]
    assert any("Load a session first" in i.value for i in at.info)
    # the same file under another hash: this machine's copy is replayed, and the page says so
    at = opened("tree", sid="0123456789abcdef", session="sample:small-tutorial.jsonl")
    assert not at.exception and at.get("plotly_chart")
    assert not at.error and any(
        "small-tutorial.jsonl here differs from the file the link was made with" in w.value.replace("\\", "")
        for w in at.warning
    )
    # said once: the next run of the page (a click) no longer shows it
    at.run()
    assert not any("differs" in w.value for w in at.warning)


def test_a_file_that_is_not_a_session_is_refused_and_the_session_stays() -> None:
    at = load(fresh(), "codex-session.jsonl")
    before = metrics(at)["Entries"]
    readme = (SAMPLES.parent / "README.md").read_bytes()
    at.file_uploader(key="upload").set_value(("README.txt", readme, "text/plain"))
    at.run()
    assert any("README.txt is not a session" in e.value.replace("\\", "") for e in at.error)
    assert metrics(at)["Entries"] == before and at.session_state["session_name"] == "codex-session.jsonl"
    assert any(
        "272,000-token window" in c.value for c in at.sidebar.caption
    )  # the sidebar still describes it


@pytest.mark.parametrize(
    ("name", "data", "says"),
    [
        (
            "package.json",
            b'{"name": "x", "version": "1.0"}\n',
            "the format is not recognised: tried pi session",
        ),
        ("s.jsonl", b"\xff\xfe" + '{"type":"session"}\n'.encode("utf-16-le"), "s.jsonl is UTF-16 text"),
    ],
    ids=["other-json", "utf-16"],
)
def test_other_json_or_a_utf16_copy_is_refused_saying_why(name: str, data: bytes, says: str) -> None:
    """Another kind of JSON had opened as a 'session' of one entry and no calls; a UTF-16 copy was
    refused for its first invalid line. Each is refused with the reason, as the commands say it."""
    at = load(fresh(), "codex-session.jsonl")
    at.file_uploader(key="upload").set_value((name, data, "application/json"))
    at.run()
    said = [e.value.replace("\\", "") for e in at.error]  # markdown escapes
    assert any(f"{name} is not a session: " in x and says in x for x in said), said
    assert at.session_state["session_name"] == "codex-session.jsonl"


@pytest.mark.parametrize("fmt", ["html", "json", "csv"])
def test_the_report_can_be_downloaded(fmt: str) -> None:
    at = page(load(fresh()), "replay")
    at.segmented_control(key="report_fmt").set_value(fmt).run()
    btn = next(b for b in at.get("download_button"))
    assert btn.proto.label == "Download report" and not btn.proto.disabled


def test_the_replay_page_says_when_the_file_was_read_in_part() -> None:
    """A link may open the Replay page on a damaged file without the Load page's list: the page
    says how many load errors, at which lines, as the commands say it on stderr."""
    at = page(load(fresh(), "broken.jsonl"), "replay")
    assert not at.exception
    said = [w.value.replace("\\", "") for w in at.warning]
    assert any(
        "This file had 2 load error(s) (lines 5, 27): the replay uses every entry" in x for x in said
    ), said
    at = page(load(fresh(), "coding-session.jsonl"), "replay")
    assert not any("load error" in w.value for w in at.warning)


def test_a_path_that_is_not_a_session_is_refused_on_the_click_itself() -> None:
    """Through "Load path" the reason had shown only on the next interaction (beside whatever the
    user did then); it shows on the click, and the open session stays."""
    at = load(fresh(), "codex-session.jsonl")
    at.text_input(key="local_path").set_value("sample_sessions/README.md")
    at.button(key="load_path").click().run()
    said = [e.value.replace("\\", "") for e in at.error]
    assert any("README.md is not a session: the format is not recognised" in x for x in said), said
    assert at.session_state["session_name"] == "codex-session.jsonl"
    at.run()  # said once
    assert not any("is not a session" in e.value for e in at.error)
