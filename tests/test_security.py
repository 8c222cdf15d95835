"""The holes of issue 16, each as a test: keys sent to a visitor's URL, exports that destroyed their
source, FIFOs that hung, secrets that leaked, terminal escapes, links, tracebacks, unclear reports.

LLM endpoints are a real HTTP listener on a loopback address (an ephemeral port) that records
every request; the official SDKs talk to it over TCP."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sqlite3
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import main
from inspector.redact import CATALOGUE, redact_text

from .test_hardening import _strict_json

try:  # the helpers' home moves to tests/support/
    from .support.builder import SessionBuilder
except ImportError:
    from .support.builder import SessionBuilder

REPO = Path(__file__).resolve().parents[1]

SERVER_KEY = "sk-server-0123456789abcdefghij"
TYPED_KEY = "sk-typed-9876543210zyxwvutsrq"
SECRETS = {  # planted in a session: none may leave the process unless asked for
    "rsa": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx4nYq0\n-----END RSA PRIVATE KEY-----",
    "openssh": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\n-----END OPENSSH PRIVATE KEY-----",
    "postgres": "postgres://app:s3cretpw@db.internal:5432/app",
    "database_url": "DATABASE_URL=mysql://root@10.0.0.5/prod",
    "stripe": "sk_live_51HxAbCdEfGhIjKlMnOp",
    "hf": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "password": "password: hunter2",
    "openai": "sk-proj-AbCdEfGhIjKlMnOpQrStUv",
}
# the part of each that must not appear anywhere
LEAKS = {
    "rsa": "MIIEowIBAAKCAQEAx4nYq0",
    "openssh": "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU",
    "postgres": "s3cretpw",
    "database_url": "root@10.0.0.5",
    "stripe": "sk_live_51HxAbCdEfGhIjKlMnOp",
    "hf": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
    "jwt": "dozjgNryP4J3jVmNHl0w5N",
    "password": "hunter2",
    "openai": "sk-proj-AbCdEfGhIjKlMnOpQrStUv",
}


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
            if isinstance(
                e.code, str
            ):  # what Python prints on exit (a failing command printed its own message)
                err.write(e.code)
    return code, out.getvalue(), err.getvalue()


def secret_session() -> SessionBuilder:
    b = SessionBuilder()
    b.user("set up the deploy; here is the env:\n" + "\n".join(SECRETS.values()))
    b.assistant("", tools=[("read", {"path": ".env"})], usage=1000)
    b.tool_result("\n".join(SECRETS.values()) * 3)
    for k in range(6):
        b.user(f"step {k}: " + "keep going " * 200)
        b.assistant("ok " * 100, usage=2000 + 500 * k)
    return b


def leaked(text: str) -> list[str]:
    return [k for k, v in LEAKS.items() if v in text]


# ---------------------------------------------------------------------------------------------
# A recording LLM endpoint
# ---------------------------------------------------------------------------------------------


class Listener:
    """Records (path, headers, body) of every request; answers like an OpenAI-compatible server."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        rec = self.requests

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                rec.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                payload = json.dumps(
                    {
                        "id": "c1",
                        "object": "chat.completion",
                        "created": 0,
                        "model": "m",
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": "## Goal\nsummary"},
                            }
                        ],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 3},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer((host, 0), H)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        self.url = f"http://{host}:{self.httpd.server_address[1]}/v1"

    def auth(self) -> set[str]:
        return {h.get("authorization", "") for _, h, _ in self.requests}

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    pytest.importorskip("openai")
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    monkeypatch.setenv("OPENAI_ORG_ID", "org-server")
    for name in ("INSPECTOR_LLM_BASE_URLS", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("INSPECTOR_CONFIG", str(tmp_path / "no-config.toml"))
    monkeypatch.setenv("INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    return monkeypatch


@pytest.fixture
def listener() -> Iterator[Listener]:
    lst = Listener()
    yield lst
    lst.close()


def _summarize(url: str, **kw: Any) -> Any:
    from inspector.summarize import get_summarizer
    from inspector.summarize.base import SummaryRequest

    s = secret_session().session()
    from inspector.context import build_session_context

    msgs = tuple(build_session_context(s).messages)
    return get_summarizer(
        "openai", model="m", base_url=url, max_retries=0, timeout=5, use_cache=False, **kw
    ).summarize(SummaryRequest(msgs, None, None, 500))


def test_the_servers_key_never_reaches_a_base_url_nobody_configured(env: Any, listener: Listener) -> None:
    res = _summarize(listener.url)
    assert listener.requests and not res.fell_back  # a loopback server: the request goes, without a key
    headers = listener.requests[0][1]
    assert SERVER_KEY not in json.dumps(listener.requests) and "openai-organization" not in headers
    assert listener.auth() == {""}  # no Authorization header at all


def test_a_configured_base_url_gets_the_servers_key_and_a_typed_key_goes_only_to_its_url(
    env: Any, listener: Listener
) -> None:
    env.setenv("INSPECTOR_LLM_BASE_URLS", listener.url + "/")  # trailing slash: the same URL
    _summarize(listener.url)
    assert listener.auth() == {f"Bearer {SERVER_KEY}"}
    env.delenv("INSPECTOR_LLM_BASE_URLS")
    listener.requests.clear()
    _summarize(listener.url, api_key=TYPED_KEY)
    assert listener.auth() == {f"Bearer {TYPED_KEY}"}


def test_a_remote_unconfigured_url_without_its_own_key_is_refused_before_any_request(env: Any) -> None:
    remote = Listener("127.0.0.2")  # not one of the loopback names: treated as any other host
    try:
        res = _summarize(remote.url)
        assert res.fell_back and "not a base URL configured" in (res.error or "") and not remote.requests
        _summarize(remote.url, api_key=TYPED_KEY)
        assert remote.auth() == {f"Bearer {TYPED_KEY}"}
    finally:
        remote.close()


def test_text_sent_to_an_llm_is_redacted_unless_asked(env: Any, listener: Listener) -> None:
    res = _summarize(listener.url)
    sent = json.dumps(listener.requests[0][2])
    assert leaked(sent) == [] and "[REDACTED:" in sent and leaked(res.prompt) == []
    listener.requests.clear()
    _summarize(listener.url, redact=False)
    assert len(leaked(json.dumps(listener.requests[0][2]))) == len(LEAKS)


def _app(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    from streamlit.testing.v1 import AppTest

    f = tmp_path / "s.jsonl"
    f.write_text(secret_session().text())
    monkeypatch.setenv("INSPECTOR_ROOTS", str(tmp_path))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    for k, v in {
        "summarizer": "openai",
        "compaction": "pi",
        "window": "2000",
        "reserve": "500",
        "keep": "300",
    }.items():
        at.query_params[k] = v
    at.run()
    at.text_input(key="local_path").input(str(f))
    at.button(key="load_path").click().run()
    return at


def test_the_app_never_sends_the_servers_key_to_a_typed_base_url(
    env: Any, listener: Listener, tmp_path: Path
) -> None:
    at = _app(env, tmp_path)
    at.text_input(key="summarizer_base_url").input(listener.url).run()
    assert at.text_input(key="summarizer_api_key") is not None  # the app asks for this URL's own key
    at.switch_page("inspector/ui/pages/replay.py").run()
    assert not at.exception and listener.requests
    assert SERVER_KEY not in json.dumps(listener.requests) and listener.auth() == {""}
    assert all(leaked(json.dumps(body)) == [] for _, _, body in listener.requests)  # redacted by default
    listener.requests.clear()
    env.setenv("INSPECTOR_CACHE_DIR", str(tmp_path / "cache2"))  # the answers above are cached by prompt
    at.text_input(key="summarizer_api_key").input(TYPED_KEY).run()
    assert listener.requests and listener.auth() == {f"Bearer {TYPED_KEY}"}
    assert TYPED_KEY not in json.dumps(dict(at.query_params))  # never put in the address


def test_the_app_listens_on_localhost_by_default() -> None:
    import tomllib

    cfg = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    assert cfg["server"]["address"] == "localhost"


# ---------------------------------------------------------------------------------------------
# Safe writes
# ---------------------------------------------------------------------------------------------


def _session_file(tmp_path: Path, name: str = "c.jsonl") -> Path:
    p = tmp_path / name
    p.write_text(secret_session().text())
    return p


def test_an_export_over_a_hard_link_to_its_source_is_refused(tmp_path: Path) -> None:
    src = _session_file(tmp_path)
    before = src.read_bytes()
    os.link(src, tmp_path / "chard.jsonl")
    (tmp_path / "soft.jsonl").symlink_to(src)
    for target, what in ((tmp_path / "chard.jsonl", "replay"), (tmp_path / "soft.jsonl", "session")):
        code, _, err = run(
            "export", what, str(src), "-o", str(target), "--format", "html" if what == "replay" else "json"
        )
        assert code == 1 and "same file as the input" in err and err.count("\n") <= 1
    assert src.read_bytes() == before


@pytest.mark.parametrize("kind", ["pi", "claude-code", "codex", "opencode", "sqlite"])
def test_an_output_that_holds_another_session_is_replaced_only_with_force(tmp_path: Path, kind: str) -> None:
    """``export replay a.jsonl -o b.jsonl`` with b.jsonl another session (any agent's, or an SQLite
    database such as OpenCode's) is refused in one line and b.jsonl is untouched; ``--force``
    replaces it; a file that holds no session is replaced as before."""
    from inspector.corpus.generate import session_bytes

    src = _session_file(tmp_path)
    other = tmp_path / "other.jsonl"
    body = b"SQLite format 3\x00" + bytes(100) if kind == "sqlite" else session_bytes(kind, 2, seed=3)
    other.write_bytes(body)
    for argv in (
        ("export", "replay", str(src)),
        ("export", "session", str(src)),
        ("export", "doctor", str(src)),
    ):
        code, _, err = run(*argv, "-o", str(other))
        assert code == 1 and err.startswith("inspector: refusing to replace") and "--force" in err, err
        assert err.count("\n") == 1 and other.read_bytes() == body
    code, _, err = run("oracle-json", str(src), "--dump-migrated", str(other))
    assert code == 1 and "refusing to replace" in err and other.read_bytes() == body
    code, _, err = run("export", "replay", str(src), "-o", str(other), "--format", "json", "--force")
    assert code == 0 and other.read_bytes() != body, err
    code, _, err = run("export", "replay", str(src), "-o", str(other), "--format", "html")
    assert code == 0 and other.read_text().startswith("<!"), err  # a report is no session: replaced


def test_a_csv_never_hands_a_spreadsheet_a_formula_from_the_session(tmp_path: Path) -> None:
    """A session's stop reason or model name that starts with ``=``, ``+``, ``-`` or ``@`` was
    written as is: a spreadsheet opening the report runs it (CSV injection). Each CSV the tool
    writes shows it as text (a leading ``'``); the replay CSV redacts its stop reasons as the other
    reports redact the session's text; negative numbers stay numbers."""
    import csv as csvmod

    from inspector.replay_report import csv_text

    b = SessionBuilder()
    b.user("go")
    b.assistant("ok", usage=1000, stop='=HYPERLINK("http://x","y")', model="@SUM(1+1)")
    b.user("and a key " + SECRETS["openai"])
    b.assistant("ok", usage=1200, stop="sk-proj-AbCdEfGhIjKlMnOpQrStUv", model="@SUM(1+1)")
    (tmp_path / "c").mkdir()
    src = tmp_path / "c" / "evil.jsonl"
    src.write_text(b.text())
    code, _, err = run("export", "replay", str(src), "-o", str(tmp_path / "r.csv"))
    assert code == 0, err
    rows = list(csvmod.reader((tmp_path / "r.csv").read_text().splitlines()))
    assert [r[2] for r in rows[1:]] == ['\'=HYPERLINK("http://x","y")', "[REDACTED:openai-key]"]
    code, out, err = run("corpus", str(tmp_path / "c"), "--csv", "--workers", "0")
    assert code == 0, err
    [row] = list(csvmod.DictReader(out.splitlines()))
    assert row["model"] == "'@SUM(1+1)"
    text = csv_text(["a", "b", "c", "d"], [["+1", "-cmd", -5, "\tx"]])
    assert text.splitlines()[1] == "'+1,'-cmd,-5,'\tx"


def test_the_temporary_file_never_lands_on_an_input(tmp_path: Path) -> None:
    src = _session_file(tmp_path, "t.jsonl.tmp")
    before = src.read_bytes()
    code, _, _ = run("export", "session", str(src), "-o", str(tmp_path / "t.jsonl"))
    assert code == 0 and src.read_bytes() == before and (tmp_path / "t.jsonl").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl", "t.jsonl.tmp"]


@pytest.mark.parametrize("target", ["missing/dir/o.jsonl", "a-directory", "/proc/self/o.jsonl"])
def test_a_bad_output_path_is_a_one_line_error_and_leaves_nothing(tmp_path: Path, target: str) -> None:
    src = _session_file(tmp_path)
    (tmp_path / "a-directory").mkdir()
    before = sorted(p.name for p in tmp_path.rglob("*"))
    out = target if target.startswith("/") else str(tmp_path / target)
    for what in ("session", "replay"):
        code, _, err = run("export", what, str(src), "-o", out)
        assert code == 1 and err.startswith("inspector: cannot write") and err.strip().count("\n") == 0, err
    code, _, err = run("oracle-json", str(src), "--dump-migrated", out)
    assert code == 1 and "cannot write" in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # no temporary file left behind


def test_dump_migrated_over_its_input_is_a_one_line_refusal(tmp_path: Path) -> None:
    src = _session_file(tmp_path)
    before = src.read_bytes()
    code, _, err = run("oracle-json", str(src), "--dump-migrated", str(src))
    assert code == 1 and "same file as the input" in err and src.read_bytes() == before


def test_a_failed_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    from inspector.safeio import write_atomic

    def chunks() -> Iterator[bytes]:
        yield b"half"
        raise RuntimeError("the generator failed")

    with pytest.raises(RuntimeError):
        write_atomic(tmp_path / "o.jsonl", chunks())
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------------
# Regular files only
# ---------------------------------------------------------------------------------------------


def test_info_on_a_fifo_says_so_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    r = subprocess.run(
        [sys.executable, "-m", "inspector", "info", str(fifo)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )  # a hang would fail here, not block the suite
    assert r.returncode == 1 and "not a regular file: it is a FIFO" in r.stderr


def _in_thread(fn: Any, timeout: float = 30) -> Any:
    box: dict[str, Any] = {}
    t = threading.Thread(target=lambda: box.setdefault("v", fn()), daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), "blocked"
    return box["v"]


def test_a_fifo_in_an_agent_folder_is_never_listed_or_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspector.importers.discover import list_local_sessions
    from inspector.ui.sources import list_pi_sessions, local_sessions

    proj = tmp_path / ".pi" / "agent" / "sessions" / "--p--"
    proj.mkdir(parents=True)
    (proj / "ok.jsonl").write_text(secret_session().text())
    os.mkfifo(proj / "trap.jsonl")
    codex = tmp_path / ".codex" / "sessions" / "2026" / "01" / "01"
    codex.mkdir(parents=True)
    os.mkfifo(codex / "rollout-x.jsonl")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("INSPECTOR_ROOTS", raising=False)
    found = _in_thread(local_sessions)
    assert [s.path.name for s in found["pi"]] == ["ok.jsonl"] and found["codex"] == []
    assert [s.path.name for s in _in_thread(lambda: list_local_sessions("pi"))] == ["ok.jsonl"]
    assert [s.path.name for s in _in_thread(lambda: list_pi_sessions(tmp_path / ".pi/agent/sessions"))] == [
        "ok.jsonl"
    ]


# ---------------------------------------------------------------------------------------------
# Redaction
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", CATALOGUE, ids=lambda s: s.kind)
def test_each_secret_shape_is_redacted_and_its_near_miss_is_not(shape: Any) -> None:
    assert f"[REDACTED:{shape.kind}]" in redact_text(f"before {shape.example} after")
    assert redact_text(shape.near_miss) == shape.near_miss


def test_no_planted_secret_leaves_through_an_export_a_dump_or_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    src = _session_file(tmp_path)
    outs = []
    for args in (
        ["export", "session", str(src), "-o", str(tmp_path / "a.jsonl")],
        [
            "export",
            "session",
            str(src),
            "--compact",
            "--keep-recent-tokens",
            "500",
            "-o",
            str(tmp_path / "b.jsonl"),
        ],
        ["export", "replay", str(src), "-o", str(tmp_path / "r.json")],
        ["export", "doctor", str(src), "-o", str(tmp_path / "d.html")],
        ["oracle-json", str(src), "--dump-migrated", str(tmp_path / "m.jsonl")],
    ):
        assert run(*args)[0] == 0, args
        outs.append(Path(args[-1]).read_text())
    assert [leaked(t) for t in outs] == [[]] * len(outs)
    assert len(
        leaked(
            (
                run("export", "session", str(src), "--keep-secrets", "-o", str(tmp_path / "k.jsonl")),
                (tmp_path / "k.jsonl").read_text(),
            )[1]
        )
    ) == len(LEAKS)
    from inspector.summarize import cache

    cache.put("ab" + "0" * 62, {"text": "\n".join(SECRETS.values()), "input_tokens": 1})
    f = tmp_path / "cache" / "ab" / ("ab" + "0" * 62 + ".json")
    assert leaked(f.read_text()) == [] and stat.S_IMODE(f.stat().st_mode) == 0o600
    assert stat.S_IMODE(f.parent.stat().st_mode) == 0o700


# ---------------------------------------------------------------------------------------------
# Terminal-safe printing, numbers at the edges, located reports
# ---------------------------------------------------------------------------------------------

HOSTILE = "\x1b]0;PWNED\x07\x1b[2J\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\ \u202eevil\x9b31m"


def test_session_text_never_drives_the_terminal(tmp_path: Path) -> None:
    b = SessionBuilder()
    b.lines[0]["cwd"] = "/p" + HOSTILE
    b.add("session_info", name="n" + HOSTILE)
    b.user("hi")
    b.assistant("", tools=[("read", {"path": "a" + HOSTILE})], usage=100, id="x" + HOSTILE)
    b.tool_result("ok")
    b.add("label", targetId="e0000002", label="l" + HOSTILE)
    b.user("more " * 50)
    b.assistant("done", usage=900)
    p = tmp_path / "h.jsonl"
    p.write_text(b.text())
    for argv in (
        ["info", str(p)],
        ["compact", str(p), "--keep-recent-tokens", "10"],
        ["doctor", str(p)],
        [
            "export",
            "session",
            str(p),
            "--compact",
            "--keep-recent-tokens",
            "10",
            "-o",
            str(tmp_path / "o.jsonl"),
        ],
    ):
        code, out, err = run(*argv)
        assert code == 0 and not any(c in out + err for c in "\x1b\x07\x9b\u202e"), argv
    assert "\\u001b]0;PWNED" in run("info", str(p))[1]


def _edge_session() -> str:
    b = SessionBuilder()
    b.user("hi \udc00 there")
    b.assistant("", tools=[("read", {"path": "a\udc00.py"})], usage=1000)
    b.tool_result("x" * 400)
    b.add("compaction", summary="s", firstKeptEntryId="e0000002", tokensBefore=10)
    b.user("again")
    b.assistant("ok", usage=2000)
    b.user("once more " * 30)
    b.assistant("fine", usage=3000)
    text = b.text().replace('"totalTokens": 1000', '"totalTokens": 1e400')
    text = text.replace('"input": 2000', '"input": 1e308').replace(
        '"output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2000',
        '"output": 1e308, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0',
    )
    text = text.replace('"totalTokens": 3000', '"totalTokens": ' + "9" * 400)
    text = text.replace('"tokensBefore": 10', '"tokensBefore": ' + "9" * 400)
    # the builder writes the surrogate raw; a session file holds it as a JSON escape
    return text.replace("\udc00", "\\udc00").replace(
        "2026-01-01T00:00:08.000Z", "9999-12-31T23:59:59.999-14:00"
    )


def test_huge_and_non_finite_numbers_surrogates_and_year_10000_never_raise(tmp_path: Path) -> None:
    p = tmp_path / "edge.jsonl"
    p.write_text(_edge_session(), encoding="utf-8", errors="surrogatepass")
    commands = [
        ["info"],
        ["info", "--json"],
        ["compact"],
        ["doctor"],
        ["replay"],
        ["replay", "--counter", "usage", "--json"],
        ["replay", "--compaction", "pi", "--window", "2000", "--reserve", "500"],
        ["prune", "--strategy", "opencode"],
        ["sweep", "--compaction", "pi", "--window", "3000", "--grid", "keep_recent_tokens=100,1000"],
    ]
    for cmd in commands:
        code, out, _ = run(cmd[0], str(p), *cmd[1:])
        assert code == 0, cmd
        if "--json" in cmd:
            _strict_json(out)  # no Infinity or NaN: valid JSON
    for fmt in ("html", "json", "csv"):
        assert run("export", "replay", str(p), "-o", str(tmp_path / f"r.{fmt}"))[0] == 0
    assert (
        run(
            "export",
            "session",
            str(p),
            "--compact",
            "--keep-recent-tokens",
            "50",
            "-o",
            str(tmp_path / "c.jsonl"),
        )[0]
        == 0
    )
    issues = run("info", str(p))[1]
    assert "line 3: usage.totalTokens is Infinity" in issues and "(400 digits)" in issues


def test_app_pages_show_edge_numbers_without_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from .test_hardening import check_app

    monkeypatch.setenv("INSPECTOR_ROOTS", str(tmp_path))
    p = tmp_path / "edge.jsonl"
    p.write_text(_edge_session(), encoding="utf-8", errors="surrogatepass")
    for compaction in ("recorded", "pi"):
        assert check_app(str(p), compaction) is None


def test_a_page_error_shows_a_reference_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from streamlit.testing.v1 import AppTest

    from inspector.ui import common

    def broken() -> Any:
        raise ZeroDivisionError("secret server detail /srv/app")

    monkeypatch.setattr(common, "need_session", broken)  # the Doctor page script calls it first
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()
    at.switch_page("inspector/ui/pages/doctor.py").run()
    (shown,) = at.exception
    assert "reference" in shown.value and "secret server detail" not in shown.value and not shown.stack_trace
    ref = shown.value.split("reference ")[1][:8]
    assert any(ref in r.getMessage() and r.exc_info for r in caplog.records)


def test_escaped_text_defeats_markdown_autolinks() -> None:
    """What GitHub-flavoured markdown (remark-gfm) turns into links, on the text a page shows."""
    import re

    from inspector.ui.urlstate import esc

    url = re.compile(r"(?i)(https?://|www(?=\.))([-.\w]+)")
    email = re.compile(r"(?<![-.\w+])([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)")
    for text in (
        "https://evil.example/x",
        "see www.evil.example",
        "mail a@evil.example",
        "[t](http://x.y)",
        "<https://evil.example>",
        "HTTP://EVIL.EXAMPLE",
    ):
        shown = re.sub(r"\\(.)", r"\1", esc(text))  # markdown resolves the backslash escapes
        assert not url.search(shown) and not email.search(shown), text


def test_foreign_lines_are_reported_with_their_line_numbers(tmp_path: Path) -> None:
    pi_lines = (REPO / "sample_sessions" / "coding-session.jsonl").read_text().splitlines()[1:3]
    cc = (REPO / "sample_sessions" / "claude-code-session.jsonl").read_text().splitlines()
    p = tmp_path / "mixed.jsonl"
    p.write_text("\n".join([*cc, *pi_lines]) + "\n")
    out = run("info", str(p))[1]
    for n in (len(cc) + 1, len(cc) + 2):
        assert f"line {n}: a line of another format (pi session" in out


def test_an_sqlite_file_that_is_not_opencodes_says_so(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    con = sqlite3.connect(db)
    con.execute("create table notes(x)")
    con.commit()
    con.close()
    for argv in (["info", str(db)], ["sessions", "--opencode-db", str(db), "ses_1"]):
        code, _, err = run(*argv)
        assert code == 1 and "not an OpenCode database (no `session`/`message` tables)" in err, argv


# ---------------------------------------------------------------------------------------------
# Large inputs: behaviour only (figures: bench/scale.py)
# ---------------------------------------------------------------------------------------------


def test_a_very_long_line_parses_exactly_as_json_does(monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    import orjson

    from inspector.session import bigline

    monkeypatch.setattr(bigline, "PIECE", 37)
    monkeypatch.setattr(bigline, "MIN_LITERAL", 50)
    rng = random.Random(5)
    alphabet = ["a", " ", "\n", '"', "\\", "é", "😀", "\udc00", "\ud83d", "\t", "\u2028", "/", "xxxxx"]
    parsed_here = 0
    for trial in range(400):
        obj = {
            "type": "message",
            "k": ["".join(rng.choice(alphabet) for _ in range(rng.randrange(300))) for _ in range(3)],
            "n": {"deep": "".join(rng.choice(alphabet) for _ in range(200))},
        }
        line = json.dumps(obj, ensure_ascii=trial % 2 == 0).encode("utf-8", "surrogatepass")
        if b"\xed" in line:  # a raw lone surrogate is no UTF-8: written as its escape instead
            line = json.dumps(obj).encode()
        got = bigline.parse_big_line(bytearray(line), orjson.loads)
        if got is not None:
            parsed_here += 1
            assert got == json.loads(line)
    assert parsed_here > 300


def test_an_over_long_line_is_skipped_without_being_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspector import load_session
    from inspector.session import loader

    monkeypatch.setattr(loader, "_READ_BYTES", 64)
    b = SessionBuilder()
    b.user("x" * 5000)
    b.user("short")
    p = tmp_path / "s.jsonl"
    p.write_text(b.text())
    s = load_session(p, max_line_bytes=1000)
    assert [i.kind for i in s.issues if i.line == 2] == ["line-too-long"] and len(s.entries) == 1
    assert load_session(p).entries[0].message.content == "x" * 5000  # read in 64-byte steps, whole


def test_tiktoken_counts_of_a_giant_text_add_up_exactly() -> None:
    from inspector.tokens import TiktokenCounter, _encoding, text_chunks

    text = " ".join(f"word{i % 97} and more, {i}" for i in range(60_000))
    pieces = list(text_chunks(text, size=4096))
    assert len(pieces) > 50 and "".join(pieces) == text
    assert TiktokenCounter().count_text(text) == len(_encoding().encode_ordinary(text))


def test_utf16_length_and_redaction_of_long_texts_match_the_short_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from inspector import jsjson, redact

    text = ("é😀 password: hunter2 " + SECRETS["postgres"] + " x" * 40) * 50
    whole = (len(text.encode("utf-16-le", "surrogatepass")) // 2, redact_text(text))
    monkeypatch.setattr(jsjson, "_CHUNK", 7)
    monkeypatch.setattr(redact, "_WINDOW", 101)
    assert (jsjson.utf16_len(text), redact_text(text)) == whole and "hunter2" not in whole[1]


def test_the_app_shows_lone_surrogates_as_replacement_characters_with_a_located_issue() -> None:
    from inspector.jsjson import replace_lone_surrogate_escapes

    data = b'{"a":"x\\udc00y"}\n{"b":"\\ud83d\\ude00"}\n{"c":"\\\\udc00 \\ud800"}\n'
    fixed, lines = replace_lone_surrogate_escapes(data)
    assert lines == [1, 3]
    assert [json.loads(x) for x in fixed.splitlines()] == [
        {"a": "x\ufffdy"},
        {"b": "😀"},
        {"c": "\\udc00 \ufffd"},
    ]


def test_an_exported_session_redacts_its_header_and_reports_their_keys(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The header line (cwd, parentSession) went out as it was, and a report's maps keyed by a name
    the session gave (a model's) kept a key in their keys."""
    import json as _json

    from inspector.cli import main
    from inspector.redact import redact_value

    key = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
    lines = (REPO / "sample_sessions" / "small-tutorial.jsonl").read_text().splitlines()
    head = _json.loads(lines[0])
    head["cwd"] = f"/home/dev/{key}"
    src = tmp_path / "s.jsonl"
    src.write_text("\n".join([_json.dumps(head), *lines[1:]]) + "\n")
    for extra in ([], ["--compact", "--keep-recent-tokens", "2000"]):
        out = tmp_path / f"copy{len(extra)}.jsonl"
        assert main(["export", "session", str(src), "-o", str(out), *extra]) == 0
        assert key not in out.read_text() and "[REDACTED" in out.read_text().splitlines()[0]
    assert redact_value({key: {"x": key}}) == {redact_value(key): {"x": redact_value(key)}}
