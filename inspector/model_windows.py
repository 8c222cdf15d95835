"""The context window of a model, by provider and model id, as pi's model list gives it (pure).

pi compacts when a context passes ``model.contextWindow - reserveTokens``, the window taken from
its model registry (pi-ai's ``models.generated.ts``), and the other agents use the same provider
limits. A session records which model answered each call; this table turns that into the window to
replay with, where the session does not record the window itself (Codex does:
:func:`inspector.importers.codex.recorded_context_window`).

The figures are facts: every provider and model of the pi-ai the pinned pi installs
(:data:`READ_FROM`), written by ``tools/pi-oracle/model-windows.mjs`` into ``model_windows.json``
beside this module (a test compares the two when node is there). pi sessions name their provider
and model exactly as that list does. A model that is not in it has no window here
(:func:`model_window` returns None) and nothing is guessed from a similar name: a newer model of a
family often has another window (claude-opus-4-5 200,000, claude-opus-4-6 1,000,000).
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

TABLE = Path(__file__).with_name("model_windows.json")
"""pi's model list as ``tools/pi-oracle/model-windows.mjs`` prints it from the pinned pi-ai:
``{"piAi": version, "windows": {provider: {model id: contextWindow}}}``."""


@cache
def _table() -> tuple[str, dict[str, dict[str, int]]]:
    doc = json.loads(TABLE.read_text(encoding="utf-8"))
    return str(doc["piAi"]), {p: dict(ms) for p, ms in doc["windows"].items()}


READ_FROM = _table()[0]
"""The pi-ai version the table was read from."""


def windows() -> dict[str, dict[str, int]]:
    """Provider → model id → context window (tokens), every provider pi knows."""
    return _table()[1]


_DATE = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")


def _names(model: str) -> list[str]:
    """``model`` as the table may hold it: as given, without a thinking level (pi's
    ``model:high``), without a release date (``-20251101``)."""
    exact = model.strip()
    m = exact.lower()
    base = m.split(":", 1)[0]
    return list(dict.fromkeys((exact, m, base, _DATE.sub("", base))))


def model_window(provider: str | None, model: str | None) -> int | None:
    """The context window of ``model`` served by ``provider`` (pi's provider names: ``anthropic``,
    ``openai``, ``openai-codex``, ``openrouter``, ``github-copilot``, …: pi sessions record them);
    None when the list does not hold it. A model id written ``vendor/model`` (a router's) that the
    list does not hold under its provider is looked up under that vendor. With a provider the list
    does not know, the model's window is the one every provider that serves it agrees on."""
    if not model:
        return None
    tables = windows()
    prov = (provider or "").strip().lower()
    table = tables.get(prov)
    if table is not None:
        got = next((table[n] for n in _names(model) if n in table), None)
        if got is not None:
            return got
    vendor, slash, rest = model.partition("/")
    if slash and vendor.lower() in tables:  # a router's id the list does not hold under the router
        vt = tables[vendor.lower()]
        return next((vt[n] for n in _names(rest) if n in vt), None)
    if table is not None:
        return None
    names = _names(model)
    found = {t[n] for t in tables.values() for n in names if n in t}
    return found.pop() if len(found) == 1 else None
