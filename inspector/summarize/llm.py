"""LLM summarizers through the providers' official SDKs (optional extra: ``pip install '.[llm]'``).

* ``openai`` — any OpenAI-compatible chat-completions endpoint: OpenAI, OpenRouter, Ollama, vLLM,
  LM Studio, llama.cpp server (``base_url``). A loopback endpoint may run without a key.
* ``anthropic`` — the Messages API.

One request per summary, as pi's ``completeSimple`` makes it: our system prompt, one user message
(``prompts.build_prompt``), the output budget as the token limit; the answer's text blocks are
joined with newlines (pi's join).

Keys: a key given with the summarizer (``api_key``: typed in the app for its own base URL, or the
CLI's environment) goes to that base URL. Otherwise the environment's key (``OPENAI_API_KEY``,
``OPENROUTER_API_KEY`` for openrouter.ai, ``ANTHROPIC_API_KEY``, or ``api_key_env``) is used only
for a base URL the operator configured (``endpoints.py``); an unconfigured loopback endpoint gets
no key, any other is refused. Keys live in memory only and are scrubbed from error text, so they
never reach a cache, an export or a log. The text sent passes through the same secret redaction
as exports (``redact.py``) unless ``redact`` is off; ``prompt`` on the result is what was sent.
The SDKs retry 429 and 5xx answers with exponential backoff (``max_retries``, honouring
Retry-After) and apply ``timeout`` per attempt; setting the ``cancel`` event abandons the call.
Any failure becomes a clear ``error`` on the result, and the offline extractive summary stands in,
marked ``fell_back``. Answers are cached on disk (``cache.py``) unless ``use_cache`` is off.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

from ..pricing import table_price
from ..redact import redact_text
from .base import SummaryRequest, SummaryResult, SummaryUsage
from .cache import cache_key
from .cache import get as cache_get
from .cache import put as cache_put
from .endpoints import is_configured
from .offline import LABEL as OFFLINE_LABEL
from .offline import OfflineSummarizer
from .prompts import build_prompt, extract_summary

# USD per 1M output tokens (list prices), matched by substring like pricing.PRICE_TABLE.
OUTPUT_PRICE_TABLE: tuple[tuple[str, float], ...] = (
    ("opus-4-5", 25.0),
    ("opus-4-1", 75.0),
    ("opus", 75.0),
    ("sonnet", 15.0),
    ("haiku-4", 5.0),
    ("haiku", 4.0),
    ("gpt-5-mini", 2.0),
    ("gpt-5", 10.0),
    ("gpt-4.1", 8.0),
    ("gpt-4o-mini", 0.6),
    ("gpt-4o", 10.0),
    ("o3", 8.0),
    ("gemini-2.5-pro", 10.0),
    ("gemini", 2.5),
)
LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})
_PLAIN_HEADERS = {
    "host",
    "accept",
    "accept-encoding",
    "connection",
    "content-type",
    "content-length",
    "user-agent",
    "anthropic-version",
}


UNREACHABLE_SECONDS = 60.0
"""How long an endpoint that could not be reached is not asked again (each request it refuses costs
the SDK's retries: a what-if with dozens of compactions, offline, had waited minutes)."""
_UNREACHABLE: dict[tuple[str, str | None], tuple[float, str]] = {}
"""(provider, base URL) → (when it could not be reached, why), for :data:`UNREACHABLE_SECONDS`."""


def _unreachable(e: BaseException) -> bool:
    """Did the request fail to reach the endpoint at all (no answer: name lookup, connection,
    timeout), rather than get an answer it did not like?"""
    names = {c.__name__ for c in type(e).__mro__}
    return bool(names & {"APIConnectionError", "APITimeoutError", "ConnectError", "ConnectTimeout"}) or (
        isinstance(e, (ConnectionError, TimeoutError, socket.gaierror))
    )


class MissingExtra(RuntimeError):
    """The provider's SDK is not installed."""


class Cancelled(RuntimeError):
    """The caller set the cancel event."""


def _output_price(model: str) -> float | None:
    name = model.lower()
    return next((p / 1_000_000 for k, p in OUTPUT_PRICE_TABLE if k in name), None)


class _LlmSummarizer:
    provider = ""
    package = ""
    default_key_env = ""
    default_model = ""

    def __init__(
        self,
        model: str = "",
        base_url: str | None = None,
        api_key_env: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 3,
        use_cache: bool = True,
        cancel: threading.Event | None = None,
        input_price: float | None = None,
        output_price: float | None = None,
        api_key: str | None = None,
        redact: bool = True,
    ) -> None:
        """``input_price`` / ``output_price`` in USD per 1M tokens (default: list prices by model name);
        ``api_key`` a key for ``base_url`` itself; ``redact`` False sends secrets unredacted."""
        self.model = model or self.default_model
        self.base_url = base_url or None
        self.api_key_env = api_key_env or self._default_key_env()
        self._api_key = api_key or None
        self.redact = redact
        self.timeout = timeout
        self.max_retries = max_retries
        self.use_cache = use_cache
        self.cancel = cancel
        self.prices = (
            input_price / 1e6 if input_price is not None else table_price(self.model),
            output_price / 1e6 if output_price is not None else _output_price(self.model),
        )
        self.name = self.provider
        self.label = f"{self.provider}:{self.model}"
        self._client_obj: Any = None
        self._lock = threading.Lock()

    def _default_key_env(self) -> str:
        return self.default_key_env

    def _local(self) -> bool:
        return bool(self.base_url) and (urlparse(self.base_url).hostname or "") in LOOPBACK

    def missing_extra(self) -> str | None:
        """A message if the provider's SDK is not installed, else None."""
        if importlib.util.find_spec(self.package) is None:
            return f"the {self.provider} summarizer needs the llm extra: pip install 'context-inspector[llm]'"
        return None

    def _key(self) -> str:
        """The key for this base URL: the one given, the environment's for a configured URL, none
        for an unconfigured loopback endpoint; anything else is refused."""
        if self._api_key:
            return self._api_key
        if not is_configured(self.provider, self.base_url):
            if self._local():
                return ""
            raise RuntimeError(
                f"{self.base_url} is not a base URL configured for this server, so the server's "
                "key is not sent there: give its own API key, or configure it (INSPECTOR_LLM_BASE_URLS)"
            )
        key = os.environ.get(self.api_key_env, "")
        if not key and not self._local():
            raise RuntimeError(
                f"set the {self.api_key_env} environment variable to use the {self.provider} summarizer"
            )
        return key

    def _client(self) -> Any:
        with self._lock:
            if self._client_obj is None:
                msg = self.missing_extra()
                if msg:
                    raise MissingExtra(msg)
                self._client_obj = self._make_client(self._key())
            return self._client_obj

    def _make_client(self, key: str) -> Any:
        raise NotImplementedError

    def _http_options(self, key: str) -> dict[str, Any]:
        """For a base URL the operator did not configure: an HTTP client that sends only the
        headers a request needs, so nothing the SDK reads from the server's environment (extra
        headers, organisation ids, other credentials) reaches that host."""
        if is_configured(self.provider, self.base_url):
            return {}
        sdk = importlib.import_module(self.package)

        def strip(request: Any) -> None:
            for name in list(request.headers.keys()):
                n = name.lower()
                if n in ("authorization", "x-api-key"):
                    if not key or key not in request.headers[name]:
                        del request.headers[name]
                elif n not in _PLAIN_HEADERS and not n.startswith("x-stainless-"):
                    del request.headers[name]

        return {"http_client": sdk.DefaultHttpxClient(event_hooks={"request": [strip]})}

    def _request(self, system: str, user: str, max_tokens: int) -> tuple[str, int, int]:
        raise NotImplementedError

    def _run(self, fn: Callable[[], tuple[str, int, int]]) -> tuple[str, int, int]:
        """``fn()``, abandoned (not awaited) as soon as the cancel event is set."""
        if self.cancel is None:
            return fn()
        if self.cancel.is_set():
            raise Cancelled("cancelled before the call")
        box: dict[str, Any] = {}
        done = threading.Event()

        def work() -> None:
            try:
                box["value"] = fn()
            except BaseException as e:  # noqa: BLE001  (re-raised in the caller's thread)
                box["error"] = e
            finally:
                done.set()

        threading.Thread(target=work, name=f"{self.provider}-summary", daemon=True).start()
        while not done.wait(0.05):
            if self.cancel.is_set():
                raise Cancelled("cancelled during the call")
        if "error" in box:
            raise box["error"]
        return box["value"]

    def _cost(self, tin: int, tout: int) -> float | None:
        pin, pout = self.prices
        return None if pin is None or pout is None else tin * pin + tout * pout

    def summarize(self, req: SummaryRequest) -> SummaryResult:
        system, user = build_prompt(req)
        if self.redact:
            system, user = redact_text(system), redact_text(user)
        prompt = f"[system]\n{system}\n\n[user]\n{user}"  # render_prompt's form, of the text sent
        key = cache_key(self.provider, self.model, self.base_url, req.max_tokens, prompt)
        if self.use_cache:
            hit = cache_get(key)
            if hit is not None and isinstance(hit.get("text"), str):
                return SummaryResult(
                    hit["text"],
                    SummaryUsage(
                        int(hit.get("input_tokens", 0)), int(hit.get("output_tokens", 0)), 0, 0.0, 0.0
                    ),
                    f"{self.label} (cached)",
                    prompt,
                )
        t0 = time.perf_counter()
        where = (self.provider, self.base_url)
        down = _UNREACHABLE.get(where)
        if down is not None and time.monotonic() - down[0] < UNREACHABLE_SECONDS:
            return self._stand_in(
                req,
                prompt,
                t0,
                0,
                f"{self.provider} summarizer not asked: it could not be reached "
                f"{time.monotonic() - down[0]:.0f} s ago ({down[1]}); it is asked again after "
                f"{UNREACHABLE_SECONDS:.0f} s",
            )
        try:
            raw, tin, tout = self._run(lambda: self._request(system, user, req.max_tokens))
            text = extract_summary(req.style, raw)
            if not text:
                raise ValueError("the answer had no text")
        except Exception as e:  # any failure: say so, and stand in with the offline summary
            if _unreachable(e):
                _UNREACHABLE[where] = (time.monotonic(), self._describe(e))
            return self._stand_in(
                req, prompt, t0, 1, f"{self.provider} summarizer failed: {self._describe(e)}"
            )
        _UNREACHABLE.pop(where, None)
        usage = SummaryUsage(tin, tout, 1, time.perf_counter() - t0, self._cost(tin, tout))
        if self.use_cache:
            cache_put(key, {"text": text, "input_tokens": tin, "output_tokens": tout, "model": self.model})
        return SummaryResult(text, usage, self.label, prompt)

    def _stand_in(self, req: SummaryRequest, prompt: str, t0: float, calls: int, error: str) -> SummaryResult:
        """The offline summary in the provider's place, marked, with ``error`` (``calls``: the
        requests made, 0 when the provider was not asked)."""
        off = OfflineSummarizer().summarize(req)
        return SummaryResult(
            off.text,
            SummaryUsage(0, 0, calls, time.perf_counter() - t0, None),
            f"{self.label} failed → {OFFLINE_LABEL}",
            prompt,
            error=error,
            fell_back=True,
        )

    def _describe(self, e: Exception) -> str:
        status = getattr(e, "status_code", None)
        first = str(e).strip().splitlines()[0][:300] if str(e).strip() else ""
        msg = f"{type(e).__name__} (HTTP {status})" if status else type(e).__name__
        msg += f": {first}" if first else ""
        for key in (os.environ.get(self.api_key_env, ""), self._api_key or ""):
            if len(key) >= 4:
                msg = msg.replace(key, "[REDACTED]")
        return redact_text(msg)


class OpenAISummarizer(_LlmSummarizer):
    provider = "openai"
    package = "openai"
    default_key_env = "OPENAI_API_KEY"
    default_model = "gpt-4o-mini"

    def _default_key_env(self) -> str:
        if self.base_url and (urlparse(self.base_url).hostname or "") == "openrouter.ai":
            return "OPENROUTER_API_KEY"
        return self.default_key_env

    def _official(self) -> bool:
        return self.base_url is None or (urlparse(self.base_url).hostname or "").endswith("api.openai.com")

    def _make_client(self, key: str) -> Any:
        import openai

        return openai.OpenAI(
            api_key=key or "no-key",
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=self.max_retries,
            **self._http_options(key),
        )

    def _request(self, system: str, user: str, max_tokens: int) -> tuple[str, int, int]:
        # OpenAI's own API wants max_completion_tokens (newer models refuse max_tokens); compatible
        # servers (Ollama, vLLM, LM Studio, llama.cpp) widely read max_tokens.
        limit = {"max_completion_tokens" if self._official() else "max_tokens": max_tokens}
        r = self._client().chat.completions.create(
            model=self.model,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
            **limit,
        )
        if not r.choices:
            raise ValueError("the answer had no choices")
        text = r.choices[0].message.content or ""
        u = r.usage
        return text, int(getattr(u, "prompt_tokens", 0) or 0), int(getattr(u, "completion_tokens", 0) or 0)


class AnthropicSummarizer(_LlmSummarizer):
    provider = "anthropic"
    package = "anthropic"
    default_key_env = "ANTHROPIC_API_KEY"
    default_model = "claude-sonnet-4-5"

    def _local(self) -> bool:
        return False  # an Anthropic endpoint always wants a key

    def _make_client(self, key: str) -> Any:
        import anthropic

        return anthropic.Anthropic(
            api_key=key,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=self.max_retries,
            **self._http_options(key),
        )

    def _request(self, system: str, user: str, max_tokens: int) -> tuple[str, int, int]:
        r = self._client().messages.create(
            model=self.model,
            max_tokens=max_tokens,
            system=system,
            messages=[{"role": "user", "content": user}],
        )
        text = "\n".join(b.text for b in r.content if getattr(b, "type", "") == "text")
        return text, int(r.usage.input_tokens or 0), int(r.usage.output_tokens or 0)


def operator_key(provider: str, base_url: str | None, api_key_env: str | None = None) -> str | None:
    """The key the environment holds for ``provider`` at ``base_url`` — for the command line,
    whose user is the operator: a ``--base-url`` typed there gets the operator's key."""
    cls = {"openai": OpenAISummarizer, "anthropic": AnthropicSummarizer}.get(provider)
    if cls is None or not base_url:
        return None
    return os.environ.get(cls(base_url=base_url, api_key_env=api_key_env).api_key_env) or None
