"""LLM summarizer benchmark: how soon a call gives up, against a local server that never answers.

    python bench/summarize_llm.py [--repeat 5] [--timeout 0.3]

For the OpenAI-compatible and the Anthropic summarizer (the official SDKs, over TCP to a stdlib
HTTP server on 127.0.0.1 that holds every request): the time from the call to its return when the
call times out after ``--timeout`` seconds, and the time from setting the cancel event (once the
server has the request) to the return. Medians of ``--repeat``. Targets: the timeout returns
within 2.5 s of the call (0.3 s timeout), a cancel within 1 s. The tests check only that both
return before the server answers (tests/test_summarize_llm.py).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Holding(BaseHTTPRequestHandler):
    """Reads the request, tells the benchmark it arrived, and waits until released."""

    arrived = threading.Event()
    release = threading.Event()

    def log_message(self, *a):  # type: ignore[no-untyped-def]
        pass

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("content-length", 0)))
        Holding.arrived.set()
        Holding.release.wait(60)


def summarizer(provider: str, url: str, timeout: float, cancel: threading.Event | None):  # type: ignore[no-untyped-def]
    from inspector.summarize import get_summarizer

    base = url + "/v1" if provider == "openai" else url
    return get_summarizer(provider, model="m", base_url=base, max_retries=0, timeout=timeout, cancel=cancel)


def request():  # type: ignore[no-untyped-def]
    from inspector.context import ContextMessage
    from inspector.session.models import UserMessage
    from inspector.summarize.base import SummaryRequest

    return SummaryRequest(
        (ContextMessage(UserMessage(content="Fix the parser in src/p.ts"), 0),), None, None, 500
    )


def timed_timeout(provider: str, url: str, timeout: float) -> float:
    Holding.arrived.clear()
    t = time.perf_counter()
    res = summarizer(provider, url, timeout, None).summarize(request())
    dt = time.perf_counter() - t
    assert res.fell_back and "Timeout" in (res.error or ""), res.error
    return dt


def timed_cancel(provider: str, url: str) -> float:
    Holding.arrived.clear()
    cancel = threading.Event()
    at: list[float] = []

    def cancel_when_the_server_has_it() -> None:
        Holding.arrived.wait(30)
        at.append(time.perf_counter())
        cancel.set()

    threading.Thread(target=cancel_when_the_server_has_it, daemon=True).start()
    res = summarizer(provider, url, 30.0, cancel).summarize(request())
    done = time.perf_counter()
    assert res.fell_back and "Cancelled" in (res.error or ""), res.error
    return done - at[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=0.3)
    args = ap.parse_args()
    try:
        import anthropic  # noqa: F401
        import openai  # noqa: F401
    except ImportError:
        print("skipped: the llm extra is not installed (pip install -e '.[llm]')")
        return 0
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-0123456789abcdefghij")
    os.environ.setdefault("ANTHROPIC_API_KEY", "sk-bench-0123456789abcdefghij")
    os.environ["INSPECTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-llm-cache-")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Holding)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    # the stand-in server is configured as a base URL, so the (made-up) keys are sent there: an
    # Anthropic endpoint always wants one, and an unconfigured one is refused (summarize/endpoints.py)
    os.environ["INSPECTOR_LLM_BASE_URLS"] = f"{url} {url}/v1"
    print(f"{'provider':<10} {f'timeout {args.timeout:g} s → return, s':>28} {'cancel → return, ms':>20}")
    try:
        for provider in ("openai", "anthropic"):
            tos = [timed_timeout(provider, url, args.timeout) for _ in range(args.repeat)]
            cancels = [timed_cancel(provider, url) for _ in range(args.repeat)]
            print(
                f"{provider:<10} {statistics.median(tos):>28.2f} {statistics.median(cancels) * 1000:>20.0f}"
            )
    finally:
        Holding.release.set()
        httpd.shutdown()
    print(f"(medians of {args.repeat}; targets: timeout return < 2.5 s, cancel < 1000 ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
