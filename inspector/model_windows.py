"""The context window of a model, by provider and model id, as pi's model list gives it (pure).

pi compacts when a context passes ``model.contextWindow - reserveTokens``, the window taken from
its model registry (pi-ai's ``models.generated.ts``), and the other agents use the same provider
limits. A session records which model answered each call; this table turns that into the window to
replay with, where the session does not record the window itself (Codex does:
:func:`inspector.importers.codex.recorded_context_window`).

The figures are facts read from pi-ai :data:`READ_FROM` for the providers whose own APIs the agents
call (Anthropic, OpenAI, OpenAI Codex, Google); a model that is not in it has no window here
(:func:`model_window` returns None) and nothing is guessed from a similar name: a newer model of a
family often has another window (claude-opus-4-5 200,000, claude-opus-4-6 1,000,000).
"""

from __future__ import annotations

import re

READ_FROM = "0.73.1"
"""The pi-ai version the table was read from (``models.generated.ts``, ``contextWindow``)."""

MODEL_WINDOWS: dict[str, dict[str, int]] = {
    "anthropic": {
        "claude-3-5-haiku-20241022": 200_000,
        "claude-3-5-haiku-latest": 200_000,
        "claude-3-5-sonnet-20240620": 200_000,
        "claude-3-5-sonnet-20241022": 200_000,
        "claude-3-7-sonnet-20250219": 200_000,
        "claude-3-haiku-20240307": 200_000,
        "claude-3-opus-20240229": 200_000,
        "claude-3-sonnet-20240229": 200_000,
        "claude-haiku-4-5": 200_000,
        "claude-haiku-4-5-20251001": 200_000,
        "claude-opus-4-0": 200_000,
        "claude-opus-4-1": 200_000,
        "claude-opus-4-1-20250805": 200_000,
        "claude-opus-4-20250514": 200_000,
        "claude-opus-4-5": 200_000,
        "claude-opus-4-5-20251101": 200_000,
        "claude-opus-4-6": 1_000_000,
        "claude-opus-4-7": 1_000_000,
        "claude-sonnet-4-0": 200_000,
        "claude-sonnet-4-20250514": 200_000,
        "claude-sonnet-4-5": 200_000,
        "claude-sonnet-4-5-20250929": 200_000,
        "claude-sonnet-4-6": 1_000_000,
    },
    "openai": {
        "gpt-4": 8_192,
        "gpt-4-turbo": 128_000,
        "gpt-4.1": 1_047_576,
        "gpt-4.1-mini": 1_047_576,
        "gpt-4.1-nano": 1_047_576,
        "gpt-4o": 128_000,
        "gpt-4o-2024-05-13": 128_000,
        "gpt-4o-2024-08-06": 128_000,
        "gpt-4o-2024-11-20": 128_000,
        "gpt-4o-mini": 128_000,
        "gpt-5": 400_000,
        "gpt-5-chat-latest": 128_000,
        "gpt-5-codex": 400_000,
        "gpt-5-mini": 400_000,
        "gpt-5-nano": 400_000,
        "gpt-5-pro": 400_000,
        "gpt-5.1": 400_000,
        "gpt-5.1-chat-latest": 128_000,
        "gpt-5.1-codex": 400_000,
        "gpt-5.1-codex-max": 400_000,
        "gpt-5.1-codex-mini": 400_000,
        "gpt-5.2": 400_000,
        "gpt-5.2-chat-latest": 128_000,
        "gpt-5.2-codex": 400_000,
        "gpt-5.2-pro": 400_000,
        "gpt-5.3-chat-latest": 128_000,
        "gpt-5.3-codex": 400_000,
        "gpt-5.3-codex-spark": 128_000,
        "gpt-5.4": 272_000,
        "gpt-5.4-mini": 400_000,
        "gpt-5.4-nano": 400_000,
        "gpt-5.4-pro": 1_050_000,
        "gpt-5.5": 272_000,
        "gpt-5.5-pro": 1_050_000,
        "o1": 200_000,
        "o1-pro": 200_000,
        "o3": 200_000,
        "o3-deep-research": 200_000,
        "o3-mini": 200_000,
        "o3-pro": 200_000,
        "o4-mini": 200_000,
        "o4-mini-deep-research": 200_000,
    },
    "openai-codex": {
        "gpt-5.1": 272_000,
        "gpt-5.1-codex-max": 272_000,
        "gpt-5.1-codex-mini": 272_000,
        "gpt-5.2": 272_000,
        "gpt-5.2-codex": 272_000,
        "gpt-5.3-codex": 272_000,
        "gpt-5.3-codex-spark": 128_000,
        "gpt-5.4": 272_000,
        "gpt-5.4-mini": 272_000,
        "gpt-5.5": 272_000,
    },
    "google": {
        "gemini-1.5-flash": 1_000_000,
        "gemini-1.5-flash-8b": 1_000_000,
        "gemini-1.5-pro": 1_000_000,
        "gemini-2.0-flash": 1_048_576,
        "gemini-2.0-flash-lite": 1_048_576,
        "gemini-2.5-flash": 1_048_576,
        "gemini-2.5-flash-lite": 1_048_576,
        "gemini-2.5-flash-lite-preview-06-17": 1_048_576,
        "gemini-2.5-flash-lite-preview-09-2025": 1_048_576,
        "gemini-2.5-flash-preview-04-17": 1_048_576,
        "gemini-2.5-flash-preview-05-20": 1_048_576,
        "gemini-2.5-flash-preview-09-2025": 1_048_576,
        "gemini-2.5-pro": 1_048_576,
        "gemini-2.5-pro-preview-05-06": 1_048_576,
        "gemini-2.5-pro-preview-06-05": 1_048_576,
        "gemini-3-flash-preview": 1_048_576,
        "gemini-3-pro-preview": 1_000_000,
        "gemini-3.1-flash-lite-preview": 1_048_576,
        "gemini-3.1-pro-preview": 1_048_576,
        "gemini-3.1-pro-preview-customtools": 1_048_576,
        "gemini-flash-latest": 1_048_576,
        "gemini-flash-lite-latest": 1_048_576,
        "gemini-live-2.5-flash": 128_000,
        "gemini-live-2.5-flash-preview-native-audio": 131_072,
        "gemma-3-27b-it": 131_072,
        "gemma-4-26b-a4b-it": 256_000,
        "gemma-4-31b-it": 256_000,
    },
}
"""Provider → model id → context window (tokens)."""

_DATE = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")


def _names(model: str) -> list[str]:
    """``model`` as the table may hold it: as given, without a thinking level (pi's
    ``model:high``), without a release date (``-20251101``)."""
    m = model.strip().lower()
    out = [m]
    base = m.split(":", 1)[0]
    for n in (base, _DATE.sub("", base)):
        if n not in out:
            out.append(n)
    return out


def model_window(provider: str | None, model: str | None) -> int | None:
    """The context window of ``model`` served by ``provider`` (pi's provider names: ``anthropic``,
    ``openai``, ``openai-codex``, ``google``); None when the table does not hold it. A model id
    written ``vendor/model`` (a router's) is looked up under that vendor. With a provider the table
    does not know, the model's window is the one every provider that serves it agrees on."""
    if not model:
        return None
    prov = (provider or "").strip().lower()
    vendor, slash, rest = model.partition("/")
    if slash and vendor.lower() in MODEL_WINDOWS:
        prov, model = vendor.lower(), rest
    names = _names(model)
    table = MODEL_WINDOWS.get(prov)
    if table is not None:
        return next((table[n] for n in names if n in table), None)
    found = {t[n] for t in MODEL_WINDOWS.values() for n in names if n in t}
    return found.pop() if len(found) == 1 else None
