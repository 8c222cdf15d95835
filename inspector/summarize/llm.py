"""LLM summarizers through the providers' official SDKs (optional extra: ``pip install .[llm]``).

* ``openai`` — any OpenAI-compatible chat-completions endpoint (OpenAI, OpenRouter, Ollama,
  vLLM, LM Studio, llama.cpp server): ``base_url`` is configurable.
* ``anthropic`` — the Messages API.

Keys come only from environment variables (``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY``, or the
variable named by ``api_key_env``); they are never stored, cached, exported or logged. The SDKs
retry 429 and 5xx answers with exponential backoff (``max_retries``) and honour ``timeout``; a
``cancel`` event stops before the next call. A failed call becomes an error on the result and the
offline summary is returned in its place, marked ``fell_back``.
"""

from __future__ import annotations

import os
import threading
import time

from . import cache
from .base import SummaryRequest, SummaryResult, SummaryUsage
from .offline import OfflineSummarizer
from .prompts import build_prompt, extract_summary


class MissingExtra(RuntimeError):
    pass


class _LlmSummarizer:
    provider = ""
    default_key_env = ""

    def __init__(self, model: str = "", base_url: str | None = None, api_key_env: str | None = None,
                 timeout: float = 120.0, max_retries: int = 3, use_cache: bool = True,
                 cancel: threading.Event | None = None) -> None:
        self.model = model
        self.base_url = base_url
        self.api_key_env = api_key_env or self.default_key_env
        self.timeout = timeout
        self.max_retries = max_retries
        self.use_cache = use_cache
        self.cancel = cancel
        self.name = self.provider
        self.label = f"{self.provider}:{model}"

    def _key(self) -> str:
        key = os.environ.get(self.api_key_env)
        if not key:
            raise RuntimeError(f"set the {self.api_key_env} environment variable to use the {self.provider} summarizer")
        return key

    def _call(self, system: str, user: str, max_tokens: int) -> tuple[str, int, int]:
        raise NotImplementedError

    def summarize(self, req: SummaryRequest) -> SummaryResult:
        system, user = build_prompt(req)
        prompt = f"[system]\n{system}\n\n[user]\n{user}"
        key = cache.cache_key(self.provider, self.model, self.base_url, req.style, req.max_tokens, prompt)
        if self.use_cache:
            hit = cache.get(key)
            if hit is not None:
                return SummaryResult(hit["text"], SummaryUsage(hit.get("input_tokens", 0), hit.get("output_tokens", 0),
                                                               0, 0.0, 0.0), self.label + " (cached)", prompt)
        t0 = time.perf_counter()
        try:
            if self.cancel is not None and self.cancel.is_set():
                raise RuntimeError("cancelled")
            text, tin, tout = self._call(system, user, req.max_tokens)
            text = extract_summary(req.style, text)
        except Exception as e:  # any provider failure: say so, fall back to the offline summary
            off = OfflineSummarizer().summarize(req)
            return SummaryResult(off.text, SummaryUsage(0, 0, 1, time.perf_counter() - t0, None),
                                 f"{self.label} failed → offline extractive", prompt,
                                 error=f"{self.provider} summarizer failed: {_describe(e)}", fell_back=True)
        usage = SummaryUsage(tin, tout, 1, time.perf_counter() - t0, None)
        if self.use_cache:
            cache.put(key, {"text": text, "input_tokens": tin, "output_tokens": tout})
        return SummaryResult(text, usage, self.label, prompt)


def _describe(e: Exception) -> str:
    status = getattr(e, "status_code", None)
    name = type(e).__name__
    msg = str(e).splitlines()[0][:200] if str(e) else name
    return f"{name} (HTTP {status}): {msg}" if status else f"{name}: {msg}"


class OpenAISummarizer(_LlmSummarizer):
    provider = "openai"
    default_key_env = "OPENAI_API_KEY"

    def _call(self, system: str, user: str, max_tokens: int) -> tuple[str, int, int]:
        try:
            import openai
        except ImportError as e:
            raise MissingExtra("the openai summarizer needs the llm extra: pip install '.[llm]'") from e
        client = openai.OpenAI(api_key=self._key(), base_url=self.base_url, timeout=self.timeout,
                               max_retries=self.max_retries)
        r = client.chat.completions.create(
            model=self.model or "gpt-4o-mini", max_tokens=max_tokens,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}])
        text = r.choices[0].message.content or ""
        u = r.usage
        return text, getattr(u, "prompt_tokens", 0) or 0, getattr(u, "completion_tokens", 0) or 0


class AnthropicSummarizer(_LlmSummarizer):
    provider = "anthropic"
    default_key_env = "ANTHROPIC_API_KEY"

    def _call(self, system: str, user: str, max_tokens: int) -> tuple[str, int, int]:
        try:
            import anthropic
        except ImportError as e:
            raise MissingExtra("the anthropic summarizer needs the llm extra: pip install '.[llm]'") from e
        client = anthropic.Anthropic(api_key=self._key(), base_url=self.base_url, timeout=self.timeout,
                                     max_retries=self.max_retries)
        r = client.messages.create(model=self.model or "claude-sonnet-4-5", max_tokens=max_tokens, system=system,
                                   messages=[{"role": "user", "content": user}])
        text = "".join(getattr(b, "text", "") for b in r.content)
        return text, r.usage.input_tokens, r.usage.output_tokens
