"""LLM summarizers against a real HTTP server on 127.0.0.1 (stdlib ``http.server`` in a thread, an
ephemeral port) speaking the OpenAI chat-completions and Anthropic messages wire formats. The
official SDKs talk to it over TCP; nothing inside them is mocked. Dummy keys come from env vars."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from inspector.compaction import CompactionSettings, prepare_compaction
from inspector.context import ContextMessage
from inspector.session.models import UserMessage
from inspector.summarize import SPLIT_TURN_SEPARATOR, get_summarizer, summarize_compaction
from inspector.summarize.base import SummaryRequest
from inspector.summarize.prompts import CODEX_SUMMARY_PREFIX, build_prompt

from .support.builder import SessionBuilder

pytest.importorskip("openai")
pytest.importorskip("anthropic")

KEY = "sk-test-0123456789abcdefghij"


class Fake:
    """Answers queued per request: ("ok", text) | ("status", code) | ("garbage", body)
    | ("echo-key", status) — an error whose message quotes the key, like some providers do
    | ("hold", seconds) — no answer until ``release`` is set (at most that long), then "late";
    ``answered`` is set once it has answered."""

    def __init__(self) -> None:
        self.plan: list[tuple[str, Any]] = []
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        self.lock = threading.Lock()
        self.received = threading.Event()
        self.release = threading.Event()
        self.answered = threading.Event()


def _handler(fake: Fake):  # type: ignore[no-untyped-def]
    class H(BaseHTTPRequestHandler):
        def log_message(self, *a):  # type: ignore[no-untyped-def]
            pass

        def _send(self, status: int, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.send_header("retry-after-ms", "10")  # both SDKs honour it: keeps retries fast
            self.end_headers()
            try:
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout and cancel tests)
                pass

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
            with fake.lock:
                fake.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                kind, arg = fake.plan.pop(0) if fake.plan else ("ok", "summary")
            fake.received.set()
            if kind == "hold":
                fake.release.wait(float(arg))
                kind, arg = "ok", "late"
            if kind == "status":
                err = {"type": "rate_limit_error" if arg == 429 else "api_error", "message": f"status {arg}"}
                return self._send(int(arg), json.dumps({"type": "error", "error": err}).encode())
            if kind == "echo-key":
                auth = self.headers.get("authorization", "") or self.headers.get("x-api-key", "")
                err = {"type": "authentication_error", "message": f"Incorrect API key provided: {auth}"}
                return self._send(int(arg), json.dumps({"type": "error", "error": err}).encode())
            if kind == "garbage":
                return self._send(200, str(arg).encode())
            if self.path.endswith("/chat/completions"):
                payload = {
                    "id": "c1",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model"),
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": arg},
                        }
                    ],
                    "usage": {"prompt_tokens": 120, "completion_tokens": 7, "total_tokens": 127},
                }
            else:
                blocks = arg if isinstance(arg, list) else [arg]
                payload = {
                    "id": "m1",
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model"),
                    "content": [{"type": "text", "text": t} for t in blocks],
                    "stop_reason": "end_turn",
                    "stop_sequence": None,
                    "usage": {"input_tokens": 130, "output_tokens": 9},
                }
            self._send(200, json.dumps(payload).encode())
            fake.answered.set()

    return H


@pytest.fixture
def server(monkeypatch, tmp_path) -> Iterator[tuple[Fake, str]]:  # type: ignore[no-untyped-def]
    fake = Fake()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    httpd.daemon_threads = True
    t = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    t.start()
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.setenv("INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    monkeypatch.setenv("INSPECTOR_LLM_BASE_URLS", f"{url}/v1, {url}")  # the operator configured this server
    yield fake, url
    fake.release.set()
    httpd.shutdown()
    httpd.server_close()


REQ = SummaryRequest((ContextMessage(UserMessage(content="Fix the parser in src/p.ts"), 0),), None, None, 500)


def make(provider: str, url: str, **kw: Any):  # type: ignore[no-untyped-def]
    base = url + "/v1" if provider == "openai" else url
    return get_summarizer(
        provider,
        model=kw.pop("model", "m"),
        base_url=base,
        max_retries=kw.pop("max_retries", 2),
        timeout=kw.pop("timeout", 5.0),
        **kw,
    )


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_success_sends_our_prompt_and_returns_text_and_usage(server, provider: str) -> None:  # type: ignore[no-untyped-def]
    fake, url = server
    fake.plan = [("ok", "## Goal\nFix the parser")]
    res = make(provider, url).summarize(REQ)
    assert res.error is None and not res.fell_back and res.text == "## Goal\nFix the parser"
    assert (res.usage.input_tokens, res.usage.output_tokens, res.usage.calls) == (
        (120, 7, 1) if provider == "openai" else (130, 9, 1)
    )
    path, headers, body = fake.requests[0]
    system, user = build_prompt(REQ)
    if provider == "openai":
        assert path == "/v1/chat/completions" and headers["authorization"] == f"Bearer {KEY}"
        assert body["messages"] == [{"role": "system", "content": system}, {"role": "user", "content": user}]
        assert (
            body["max_tokens"] == 500
        )  # a compatible server: max_tokens (OpenAI's own: max_completion_tokens)
    else:
        assert path == "/v1/messages"
        assert KEY in (headers.get("x-api-key"), headers.get("authorization", "").removeprefix("Bearer "))
        assert body["system"] == system and body["messages"] == [{"role": "user", "content": user}]
        assert body["max_tokens"] == 500
    assert body["model"] == "m" and KEY not in json.dumps(body)
    assert res.prompt == f"[system]\n{system}\n\n[user]\n{user}"  # the exact prompt sent


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_429_then_success_is_retried(server, provider: str) -> None:  # type: ignore[no-untyped-def]
    fake, url = server
    fake.plan = [("status", 429), ("ok", "after retry")]
    res = make(provider, url).summarize(REQ)
    assert res.text == "after retry" and len(fake.requests) == 2 and res.error is None and not res.fell_back


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_500_falls_back_to_offline_with_a_clear_error(server, provider: str) -> None:  # type: ignore[no-untyped-def]
    fake, url = server
    fake.plan = [("status", 500)] * 5
    res = make(provider, url, max_retries=1).summarize(REQ)
    assert (
        res.fell_back
        and "HTTP 500" in (res.error or "")
        and res.error.startswith(f"{provider} summarizer failed")
    )
    assert res.summarizer == f"{provider}:m failed → offline extractive"
    assert "Fix the parser in src/p.ts" in res.text and "## Goal" in res.text
    assert len(fake.requests) == 2  # the first try and one retry, no more


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_timeout_falls_back(server, provider: str) -> None:  # type: ignore[no-untyped-def]
    """The call gives up at its timeout, before the server answers (how long that takes:
    ``bench/summarize_llm.py``)."""
    fake, url = server
    fake.plan = [("hold", 60.0)]
    res = make(provider, url, max_retries=0, timeout=0.3).summarize(REQ)
    assert res.fell_back and "Timeout" in (res.error or "") and not fake.answered.is_set()


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_malformed_json_falls_back(server, provider: str) -> None:  # type: ignore[no-untyped-def]
    fake, url = server
    fake.plan = [("garbage", "{not json")]
    res = make(provider, url, max_retries=0).summarize(REQ)
    assert res.fell_back and res.error and "Fix the parser" in res.text


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_cancel_abandons_the_call(server, provider: str) -> None:  # type: ignore[no-untyped-def]
    fake, url = server
    fake.plan = [("hold", 60.0)]  # the server answers only once released: never, during the call
    cancel = threading.Event()

    def cancel_once_the_server_has_the_request() -> None:
        fake.received.wait(10)
        cancel.set()

    threading.Thread(target=cancel_once_the_server_has_the_request, daemon=True).start()
    res = make(provider, url, max_retries=0, cancel=cancel).summarize(REQ)  # cancelled while the server holds
    assert res.fell_back and "Cancelled: cancelled during the call" in (res.error or "")
    assert (
        cancel.is_set() and not fake.answered.is_set()
    )  # abandoned, not waited out (latency: bench/summarize_llm.py)
    assert len(fake.requests) == 1
    again = make(provider, url, cancel=cancel).summarize(REQ)  # already cancelled: no request at all
    assert again.fell_back and "before the call" in (again.error or "") and len(fake.requests) == 1


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_key_quoted_in_an_error_is_scrubbed(server, provider: str) -> None:  # type: ignore[no-untyped-def]
    fake, url = server
    fake.plan = [("echo-key", 401)]
    res = make(provider, url, max_retries=0).summarize(REQ)
    assert res.fell_back and "401" in (res.error or "") and KEY not in (res.error or "")
    assert "REDACTED" in (res.error or "")


def test_cache_answers_the_second_time_without_a_call(server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    fake, url = server
    fake.plan = [("ok", "cached text")]
    s = make("openai", url)
    assert s.summarize(REQ).text == "cached text"
    again = s.summarize(REQ)
    assert again.text == "cached text" and again.summarizer == "openai:m (cached)" and len(fake.requests) == 1
    assert again.usage.calls == 0 and again.usage.input_tokens == 120
    other = SummaryRequest(REQ.messages, None, "another focus", 500)  # another prompt: another entry
    fake.plan = [("ok", "other")]
    assert s.summarize(other).text == "other" and len(fake.requests) == 2
    fresh = make("openai", url, use_cache=False)
    fake.plan = [("ok", "fresh")]
    assert fresh.summarize(REQ).text == "fresh" and len(fake.requests) == 3
    files = list((tmp_path / "cache").rglob("*.json"))
    assert len(files) == 2 and all(KEY not in f.read_text() for f in files)


def test_missing_key_is_a_clear_error_and_a_loopback_openai_endpoint_needs_none(server, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    fake, url = server
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.delenv("OPENAI_API_KEY")
    res = make("anthropic", url).summarize(REQ)
    assert res.fell_back and "ANTHROPIC_API_KEY" in (res.error or "") and not fake.requests
    fake.plan = [("ok", "local model")]
    assert make("openai", url).summarize(REQ).text == "local model"  # Ollama, llama.cpp, …: no key
    assert (
        get_summarizer("openai", base_url="https://openrouter.ai/api/v1").api_key_env == "OPENROUTER_API_KEY"
    )


def test_missing_llm_extra_is_a_clear_message(server, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import importlib.util

    _, url = server
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "openai" else real(n, *a))
    s = make("openai", url)
    assert "pip install 'context-inspector[llm]'" in (s.missing_extra() or "")
    res = s.summarize(REQ)
    assert res.fell_back and "llm extra" in (res.error or "")


def test_anthropic_text_blocks_join_with_newlines_and_claude_code_keeps_the_summary(server) -> None:  # type: ignore[no-untyped-def]
    fake, url = server
    fake.plan = [
        (("ok"), ["<analysis>scratch</analysis>", "<summary>1. Primary Request and Intent: fix</summary>"])
    ]
    req = SummaryRequest(REQ.messages, None, "focus on tests", 500, "history", "claude-code")
    res = make("anthropic", url).summarize(req)
    assert res.text == "1. Primary Request and Intent: fix"
    assert "focus on tests" in fake.requests[0][2]["messages"][0]["content"]
    fake.plan = [("ok", ["part one", "part two"])]
    assert (
        make("anthropic", url).summarize(REQ).text == "part one\npart two"
    )  # pi joins text blocks with "\n"


def _split_turn_session() -> Any:
    b = SessionBuilder()
    b.user("Set up the project")
    b.assistant("", tools=[("write", {"path": "setup.py", "content": "x"})])
    b.tool_result("ok", tool="write")
    b.assistant("Project set up.")
    b.user("Now build the whole feature")
    for k in range(5):
        b.assistant(
            f"step {k}", tools=[("edit", {"path": f"f{k}.py", "oldText": "a", "newText": "y" * 3000})]
        )
        b.tool_result("done", tool="edit")
    return b.session()


def test_compaction_through_an_llm_runs_pis_two_calls_and_marks_a_failed_one(server) -> None:  # type: ignore[no-untyped-def]
    fake, url = server
    s = _split_turn_session()
    prep = prepare_compaction(
        s.path_entries(), CompactionSettings(keepRecentTokens=1500, reserveTokens=1000), path_indexes=s.path()
    )
    assert prep.isSplitTurn and prep.messagesToSummarize and prep.turnPrefixMessages
    fake.plan = [("ok", "SUMMARY"), ("ok", "SUMMARY")]
    res = summarize_compaction(prep, make("openai", url, model="gpt-4o-mini", use_cache=False))
    assert res.text.startswith("SUMMARY" + SPLIT_TURN_SEPARATOR + "SUMMARY\n\n<modified-files>")
    assert sorted(body["max_tokens"] for _, _, body in fake.requests) == [500, 800]  # 0.5× and 0.8× reserve
    sent = {body["messages"][1]["content"] for _, _, body in fake.requests}
    assert all(f"[user]\n{u}" in res.prompt for u in sent)  # the prompts shown are the ones sent
    assert res.usage.calls == 2 and res.usage.cost_usd == pytest.approx(2 * (120 * 0.15 + 7 * 0.6) / 1e6)

    fake.plan = [("status", 500), ("status", 500)]
    failed = summarize_compaction(prep, make("openai", url, max_retries=0, use_cache=False), style="codex")
    assert failed.fell_back and "HTTP 500" in (failed.error or "")
    assert "## Goal" in failed.text and "## Original Request" in failed.text  # the offline summary stands in
    assert not failed.text.startswith(CODEX_SUMMARY_PREFIX)  # offline text is not presented as Codex's
    fake.plan = [("ok", "A"), ("ok", "B")]
    codex = summarize_compaction(prep, make("openai", url, use_cache=False), style="codex")
    assert codex.text.startswith(CODEX_SUMMARY_PREFIX + "\n")


def test_cli_refuses_an_llm_summarizer_without_the_extra(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    import importlib.util

    from inspector.cli import main
    from inspector.cli import summarize as summarize_cli

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "anthropic" else real(n, *a))
    monkeypatch.setattr(summarize_cli, "load_or_exit", lambda p: _split_turn_session())
    with pytest.raises(SystemExit, match="llm extra"):
        main(["summarize", "x.jsonl", "--summarizer", "anthropic", "--keep-recent-tokens", "1500"])


def test_replay_sends_its_summarizer_model_and_base_url(server) -> None:  # type: ignore[no-untyped-def]
    from inspector.replay import ReplaySettings, replay

    fake, url = server
    s = _split_turn_session()
    r = replay(
        s,
        ReplaySettings(
            compaction="pi",
            context_window=1000,
            reserve_tokens=300,
            keep_recent_tokens=100,
            summarizer="openai",
            summarizer_model="llama-local",
            summarizer_base_url=url + "/v1",
        ),
    )
    assert r.metrics.compactions >= 1 and fake.requests
    assert {body["model"] for _, _, body in fake.requests} == {"llama-local"}
    assert all(path == "/v1/chat/completions" for path, _, _ in fake.requests)
    sims = [x for x in r.summaries if x.simulated]
    assert sims and not any(x.event.fell_back or x.event.error for x in sims)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_an_endpoint_that_cannot_be_reached_is_not_asked_again_for_a_minute(
    provider: str, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """Found by bench/monkey_app.py --seed 11: offline, a what-if with an LLM summarizer asked the
    provider at every compaction, each paying the SDK's retries (81 compactions: minutes). After
    one request that reached nothing, the next ones stand in with the offline summary at once,
    saying why, until the minute is over."""
    from inspector.summarize import llm

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    closed = "http://127.0.0.1:9" + (
        "/v1" if provider == "openai" else ""
    )  # the discard port: nothing listens
    first = get_summarizer(provider, model="m", base_url=closed, max_retries=0, api_key=KEY).summarize(REQ)
    assert first.fell_back and first.usage.calls == 1 and "summarizer failed" in (first.error or "")
    again = get_summarizer(provider, model="m", base_url=closed, max_retries=0, api_key=KEY).summarize(REQ)
    assert (
        again.fell_back
        and again.usage.calls == 0
        and "not asked: it could not be reached" in (again.error or "")
    )
    assert again.text == first.text  # the same offline stand-in
    now = time.monotonic()
    monkeypatch.setattr(llm.time, "monotonic", lambda: now + llm.UNREACHABLE_SECONDS + 1)
    later = get_summarizer(provider, model="m", base_url=closed, max_retries=0, api_key=KEY).summarize(REQ)
    assert later.usage.calls == 1 and "summarizer failed" in (later.error or "")  # asked again
