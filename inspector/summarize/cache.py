"""A disk cache of summaries, so a replay or sweep never pays for the same summary twice.

Keyed by a SHA-256 of provider, model, base URL, output budget and the exact prompt (which embeds
the whole input, the style and the custom instructions), so a replay or a sweep never pays twice
for the same summary; ``--no-cache`` (``use_cache=False``) neither reads nor writes. Lives under
the user's cache directory (``platformdirs``: e.g. ``~/.cache/context-inspector/summaries``), or
``$INSPECTOR_CACHE_DIR``. API keys are never part of a key or a value, and cached text passes
through secret redaction (``redact.py``). One JSON file per summary, written atomically.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

from ..redact import redact_text


def cache_dir() -> Path:
    env = os.environ.get("INSPECTOR_CACHE_DIR")
    if env:
        return Path(env)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("context-inspector")) / "summaries"


CACHE_VERSION = "summaries-v2"


def cache_key(*parts: Any) -> str:
    h = hashlib.sha256(CACHE_VERSION.encode() + b"\x00")
    for p in parts:
        h.update(str(p).encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()


def get(key: str) -> dict[str, Any] | None:
    p = cache_dir() / key[:2] / f"{key}.json"
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def put(key: str, value: dict[str, Any]) -> None:
    d = cache_dir() / key[:2]
    try:
        d.mkdir(parents=True, exist_ok=True)
        safe = {k: redact_text(v) if isinstance(v, str) else v for k, v in value.items()}
        tmp = d / f"{key}.{os.getpid()}.{threading.get_ident()}.tmp"
        tmp.write_text(json.dumps(safe, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, d / f"{key}.json")
    except OSError:
        pass  # a cache that cannot be written is only slower
