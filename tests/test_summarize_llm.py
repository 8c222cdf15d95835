"""LLM summarizers against a real HTTP server on 127.0.0.1 speaking the OpenAI chat-completions
and Anthropic messages wire formats (the official SDKs talk to it; nothing is mocked inside them)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from inspector.context import ContextMessage
from inspector.session.models import UserMessage
from inspector.summarize import get_summarizer
from inspector.summarize.base import SummaryRequest

pytest.importorskip("openai")
pytest.importorskip("anthropic")


class Fake:
    """Answers queued per request: ("ok", text) | ("status", code) | ("sleep", seconds) | ("garbage", body)."""

    def __init__(self) -> None:
        self.plan: list[tuple[str, object]] = []
        self.requests: list[tuple[str, dict]] = []


def _handler(fake: Fake):  # type: ignore[no-untyped-def]
    class H(BaseHTTPRequestHandler):
        def log_message(self, *a):  # type: ignore[no-untyped-def]
            pass

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
            fake.requests.append((self.path, body))
            kind, arg = fake.plan.pop(0) if fake.plan else ("ok", "summary")
            if kind == "sleep":
                time.sleep(float(arg))  # type: ignore[arg-type]
                kind, arg = "ok", "late"
            if kind == "status":
                self.send_response(int(arg))  # type: ignore[arg-type]
                self.send_header("content-type", "application/json")
                self.send_header("retry-after-ms", "10")
                self.end_headers()
                self.wfile.write(json.dumps({"error": {"type": "rate_limit_error" if arg == 429 else "api_error",
                                                       "message": f"status {arg}"}}).encode())
                return
            if kind == "garbage":
                payload = str(arg).encode()
            elif self.path.endswith("/chat/completions"):
                payload = json.dumps({"id": "c1", "object": "chat.completion", "created": 0, "model": body.get("model"),
                                      "choices": [{"index": 0, "finish_reason": "stop",
                                                   "message": {"role": "assistant", "content": arg}}],
                                      "usage": {"prompt_tokens": 120, "completion_tokens": 7, "total_tokens": 127}}).encode()
            else:
                payload = json.dumps({"id": "m1", "type": "message", "role": "assistant", "model": body.get("model"),
                                      "content": [{"type": "text", "text": arg}], "stop_reason": "end_turn",
                                      "stop_sequence": None, "usage": {"input_tokens": 130, "output_tokens": 9}}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return H


@pytest.fixture
def server(monkeypatch, tmp_path) -> Iterator[tuple[Fake, str]]:  # type: ignore[no-untyped-def]
    fake = Fake()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-real")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-real")
    monkeypatch.setenv("INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    yield fake, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


REQ = SummaryRequest((ContextMessage(UserMessage(content="Fix the parser in src/p.ts"), 0),), None, None, 500)


def make(provider: str, url: str, **kw):  # type: ignore[no-untyped-def]
    base = url + "/v1" if provider == "openai" else url
    return get_summarizer(provider, model="m", base_url=base, max_retries=kw.pop("max_retries", 2),
                          timeout=kw.pop("timeout", 5.0), **kw)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_success_returns_text_and_usage(server, provider: str) -> None:  # type: ignore[no-untyped-def]
    fake, url = server
    fake.plan = [("ok", "## Goal\nFix the parser")]
    res = make(provider, url).summarize(REQ)
    assert res.error is None and not res.fell_back and res.text == "## Goal\nFix the parser"
    assert res.usage.input_tokens in (120, 130) and res.usage.calls == 1
    path, body = fake.requests[0]
    assert path.endswith("/chat/completions" if provider == "openai" else "/messages")
    assert "src/p.ts" in json.dumps(body) and "test-key-not-real" not in json.dumps(body)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_429_then_success_is_retried(server, provider: str) -> None:  # type: ignore[no-untyped-def]
    fake, url = server
    fake.plan = [("status", 429), ("ok", "after retry")]
    res = make(provider, url).summarize(REQ)
    assert res.text == "after retry" and len(fake.requests) == 2 and res.error is None


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_500_falls_back_to_offline_with_a_clear_error(server, provider: str) -> None:  # type: ignore[no-untyped-def]
    fake, url = server
    fake.plan = [("status", 500)] * 5
    res = make(provider, url, max_retries=1).summarize(REQ)
    assert res.fell_back and "500" in (res.error or "") and "offline extractive" in res.summarizer
    assert "Fix the parser in src/p.ts" in res.text
    assert len(fake.requests) == 2  # the first try and one retry


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_timeout_falls_back(server, provider: str) -> None:  # type: ignore[no-untyped-def]
    fake, url = server
    fake.plan = [("sleep", 2.0)]
    t = time.perf_counter()
    res = make(provider, url, max_retries=0, timeout=0.5).summarize(REQ)
    assert res.fell_back and "Timeout" in (res.error or "") and time.perf_counter() - t < 2.0


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_malformed_json_falls_back(server, provider: str) -> None:  # type: ignore[no-untyped-def]
    fake, url = server
    fake.plan = [("garbage", "{not json")]
    res = make(provider, url, max_retries=0).summarize(REQ)
    assert res.fell_back and res.error


def test_cache_answers_the_second_time_without_a_call(server) -> None:  # type: ignore[no-untyped-def]
    fake, url = server
    fake.plan = [("ok", "cached text")]
    s = make("openai", url)
    assert s.summarize(REQ).text == "cached text"
    again = s.summarize(REQ)
    assert again.text == "cached text" and "(cached)" in again.summarizer and len(fake.requests) == 1
    fresh = make("openai", url, use_cache=False)
    fake.plan = [("ok", "fresh")]
    assert fresh.summarize(REQ).text == "fresh" and len(fake.requests) == 2


def test_missing_key_is_a_clear_error(server, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _, url = server
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    res = make("anthropic", url).summarize(REQ)
    assert res.fell_back and "ANTHROPIC_API_KEY" in (res.error or "")


def test_claude_code_style_keeps_only_the_summary_part(server) -> None:  # type: ignore[no-untyped-def]
    fake, url = server
    fake.plan = [("ok", "<analysis>scratch</analysis>\n<summary>1. Primary Request: fix</summary>")]
    req = SummaryRequest(REQ.messages, None, "focus on tests", 500, "history", "claude-code")
    res = make("anthropic", url).summarize(req)
    assert res.text == "1. Primary Request: fix"
    assert "focus on tests" in fake.requests[0][1]["messages"][0]["content"]
