"""Finding each agent's sessions on this machine, and OpenCode database sessions as exports."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.importers.discover import agent_dirs, list_local_sessions, opencode_db_export

from .support.paths import REPO

SAMPLES = REPO / "sample_sessions"


def test_agent_dirs_follow_each_agents_environment_variables(tmp_path: Path) -> None:
    home = tmp_path
    assert agent_dirs("pi", {}, home) == [home / ".pi/agent/sessions"]
    assert agent_dirs("claude-code", {}, home) == [
        home / ".claude/projects",
        home / ".config/claude/projects",
    ]
    assert agent_dirs("claude-code", {"CLAUDE_CONFIG_DIR": "/a,/b"}, home) == [
        Path("/a/projects"),
        Path("/b/projects"),
    ]
    assert agent_dirs("codex", {"CODEX_HOME": "/c"}, home) == [
        Path("/c/sessions"),
        Path("/c/archived_sessions"),
    ]
    assert agent_dirs("opencode", {}, home) == [home / ".local/share/opencode"]
    assert agent_dirs("opencode", {"OPENCODE_DATA_DIR": "/o"}, home) == [Path("/o")]


def test_listing_finds_sessions_newest_first_and_skips_sub_agent_files(tmp_path: Path) -> None:
    proj = tmp_path / "-home-dev-lexer"
    proj.mkdir()
    for name, t in (("old.jsonl", 1_000_000), ("new.jsonl", 2_000_000), ("agent-1234.jsonl", 3_000_000)):
        (proj / name).write_text("{}\n")
        os.utime(proj / name, (t, t))
    got = list_local_sessions("claude-code", [tmp_path])
    assert [s.path.name for s in got] == ["new.jsonl", "old.jsonl"]
    assert got[0].project == "/home/dev/lexer"
    codex = tmp_path / "codex" / "2026" / "01" / "02"
    codex.mkdir(parents=True)
    (codex / "rollout-2026-01-02T10-00-00-x.jsonl").write_text(
        json.dumps({"timestamp": "t", "type": "session_meta", "payload": {"id": "x", "cwd": "/w/app"}}) + "\n"
    )
    (codex / "notes.jsonl").write_text("{}\n")
    c = list_local_sessions("codex", [tmp_path / "codex"])
    assert [(s.path.name, s.project) for s in c] == [("rollout-2026-01-02T10-00-00-x.jsonl", "/w/app")]
    assert list_local_sessions("pi", [tmp_path / "missing"]) == []


def _opencode_db(path: Path) -> None:
    con = sqlite3.connect(path)
    con.executescript(
        "create table session (id text primary key, project_id text, parent_id text, slug text, directory text,"
        " title text, version text, time_created integer, time_updated integer, time_compacting integer);"
        "create table message (id text primary key, session_id text, time_created integer, time_updated integer,"
        " data text);"
        "create table part (id text primary key, message_id text, session_id text, time_created integer,"
        " time_updated integer, data text);"
    )
    con.execute(
        "insert into session values ('ses_b', 'prj', null, 's', '/w/app', 'Parser', '1.2', 10, 20, null)"
    )
    con.execute(
        "insert into session values ('ses_c', 'prj', 'ses_b', 's2', '/w/app', 'Sub task', '1.2', 11, 30, null)"
    )
    rows = [
        ("msg_2", {"role": "assistant", "modelID": "m", "parentID": "msg_1"}),
        ("msg_1", {"role": "user"}),
    ]
    for mid, d in rows:
        con.execute("insert into message values (?, 'ses_b', 1, 1, ?)", (mid, json.dumps(d)))
    con.execute(
        "insert into part values ('prt_2', 'msg_2', 'ses_b', 1, 1, ?)",
        (json.dumps({"type": "text", "text": "b"}),),
    )
    con.execute(
        "insert into part values ('prt_1', 'msg_1', 'ses_b', 1, 1, ?)",
        (json.dumps({"type": "text", "text": "a"}),),
    )
    con.execute("insert into part values ('prt_3', 'msg_2', 'ses_b', 1, 1, 'not json')")
    con.commit()
    con.close()


def test_opencode_database_sessions_are_listed_and_exported_read_only(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    _opencode_db(db)
    before = db.read_bytes()
    got = list_local_sessions("opencode", [tmp_path])
    assert [(s.ref, s.title, s.project) for s in got] == [
        ("ses_c", "Sub task (sub-agent)", "/w/app"),
        ("ses_b", "Parser", "/w/app"),
    ]
    doc = json.loads(opencode_db_export(db, "ses_b"))
    assert doc["info"]["id"] == "ses_b" and doc["info"]["directory"] == "/w/app"
    assert doc["info"]["time"] == {"created": 10, "updated": 20} and doc["info"]["projectID"] == "prj"
    assert [m["info"]["id"] for m in doc["messages"]] == ["msg_1", "msg_2"]  # ordered by id
    assert doc["messages"][0]["info"]["role"] == "user" and doc["messages"][0]["info"]["sessionID"] == "ses_b"
    assert [p["id"] for p in doc["messages"][1]["parts"]] == ["prt_2", "prt_3"]
    assert doc["messages"][1]["parts"][1]["_unreadable"] == "not json"
    with pytest.raises(KeyError):
        opencode_db_export(db, "ses_nope")
    assert db.read_bytes() == before and not list(tmp_path.glob("*-wal"))


def test_an_opencode_database_column_of_any_name_is_read_as_a_column(tmp_path: Path) -> None:
    """The session table's columns went into the query as they are: a column named like SQL
    (``x from session; --``) made the export fail."""
    db = tmp_path / "opencode.db"
    _opencode_db(db)
    con = sqlite3.connect(db)
    con.execute('alter table session add column "x from session; --" text')
    con.execute('alter table session add column "a""b" text')
    con.execute("""update session set "x from session; --" = 'v', "a""b" = 'w' where id = 'ses_b'""")
    con.commit()
    con.close()
    doc = json.loads(opencode_db_export(db, "ses_b"))
    assert doc["info"]["x from session; --"] == "v" and doc["info"]['a"b'] == "w"
    assert [s.ref for s in list_local_sessions("opencode", [tmp_path])] == ["ses_c", "ses_b"]


def test_cli_lists_sessions_and_writes_an_opencode_export(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    oc = tmp_path / ".local" / "share" / "opencode"
    oc.mkdir(parents=True)
    _opencode_db(oc / "opencode.db")
    proj = tmp_path / ".pi" / "agent" / "sessions" / "--w-app--"
    proj.mkdir(parents=True)
    (proj / "s.jsonl").write_bytes((SAMPLES / "small-tutorial.jsonl").read_bytes())
    monkeypatch.setenv("HOME", str(tmp_path))
    for k in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "OPENCODE_DATA_DIR"):
        monkeypatch.delenv(k, raising=False)
    assert main(["sessions", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [s["project"] for s in listed["pi"]] == ["/w/app"] and len(listed["opencode"]) == 2
    assert listed["claude-code"] == [] and listed["codex"] == []
    out = tmp_path / "ses_b.json"
    assert main(["sessions", "--opencode-db", str(oc / "opencode.db"), "ses_b", "-o", str(out)]) == 0
    assert json.loads(out.read_text())["info"]["title"] == "Parser"
    with pytest.raises(SystemExit, match="no session"):
        main(["sessions", "--opencode-db", str(oc / "opencode.db"), "ses_x"])


def test_opencode_older_json_storage_is_listed_and_imports_like_the_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from inspector.importers import load_any, parse_any
    from inspector.importers.discover import opencode_export

    doc = json.loads((SAMPLES / "opencode-session.json").read_bytes())
    storage = tmp_path / "storage"
    info = doc["info"]
    (storage / "session" / info["projectID"]).mkdir(parents=True)
    (storage / "session" / info["projectID"] / f"{info['id']}.json").write_text(json.dumps(info))
    for m in doc["messages"]:
        md = storage / "message" / info["id"]
        md.mkdir(parents=True, exist_ok=True)
        (md / f"{m['info']['id']}.json").write_text(json.dumps(m["info"]))
        for p in m["parts"]:
            pd_ = storage / "part" / m["info"]["id"]
            pd_.mkdir(parents=True, exist_ok=True)
            (pd_ / f"{p['id']}.json").write_text(json.dumps(p))
    (got,) = list_local_sessions("opencode", [tmp_path])
    assert (got.ref, got.title, got.size) == (info["id"], "Stale list after edit", len(doc["messages"]))
    s = parse_any(opencode_export(got), source="storage")
    ref = load_any(SAMPLES / "opencode-session.json")
    assert [e.raw() for e in s.entries] == [e.raw() for e in ref.entries]
    out = tmp_path / "export.json"
    assert main(["sessions", "--opencode-storage", str(got.path), "-o", str(out)]) == 0
    assert [e.raw() for e in load_any(out).entries] == [e.raw() for e in ref.entries]
    with pytest.raises(SystemExit, match="no such session file"):
        main(["sessions", "--opencode-storage", str(tmp_path / "nope.json")])
    # a file that is no session record (not JSON, or JSON without its id): refused, nothing written
    for text in ("garbage\n", '{"title": "x"}', "[]"):
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        junk = tmp_path / "junk.json"
        with pytest.raises(SystemExit) as e:
            main(["sessions", "--opencode-storage", str(bad), "-o", str(junk)])
        assert e.value.code == 1 and "is not a session of OpenCode's JSON storage" in str(e.value)
        assert not junk.exists()


def test_codex_rollouts_are_found_by_session_id_and_related_sessions_read(tmp_path) -> None:
    from inspector.importers.codex import related_sessions
    from inspector.importers.discover import codex_rollout

    day = tmp_path / "sessions" / "2026" / "03" / "03"
    day.mkdir(parents=True)
    f = day / "rollout-2026-03-03T10-00-00-abc-123.jsonl"
    f.write_text("{}\n")
    assert codex_rollout("abc-123", [tmp_path]) == f
    assert codex_rollout("nope", [tmp_path]) is None and codex_rollout("*", [tmp_path]) is None
    assert related_sessions(
        {"forked_from_id": "p1", "source": {"subagent": {"thread_spawn": {"parent_thread_id": "t0"}}}}
    ) == {"forkedFrom": "p1", "parentThread": "t0"}
    assert related_sessions({"source": "cli"}) == {}
