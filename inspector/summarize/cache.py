"""A disk cache of summaries, so a replay or sweep never pays for the same summary twice.

Keyed by a SHA-256 of provider, model, base URL, output budget and the exact prompt (which embeds
the whole input, the style and the custom instructions), so a replay or a sweep never pays twice
for the same summary; ``--no-cache`` (``use_cache=False``) neither reads nor writes. Lives under
the user's cache directory (``platformdirs``: e.g. ``~/.cache/context-inspector/summaries``), or
``$INSPECTOR_CACHE_DIR``. API keys are never part of a key or a value, and cached text passes
through secret redaction (``redact.py``). One JSON file per summary, written atomically
(``safeio.write_atomic``), readable by its owner only (files 0600 in folders 0700).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

from ..redact import redact_text
from ..safeio import WriteRefused, read_regular, write_atomic


def cache_dir() -> Path:
    env = os.environ.get("INSPECTOR_CACHE_DIR")
    if env:
        return Path(env)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("context-inspector")) / "summaries"


CACHE_VERSION = "summaries-v3"


def cache_key(*parts: Any) -> str:
    h = hashlib.sha256(CACHE_VERSION.encode() + b"\x00")
    for p in parts:
        h.update(str(p).encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()


def get(key: str) -> dict[str, Any] | None:
    p = cache_dir() / key[:2] / f"{key}.json"
    try:
        return json.loads(read_regular(p).decode("utf-8"))
    except (OSError, ValueError):
        return None


def _private_dir(d: Path, *, fix: bool) -> None:
    """Make ``d`` (and missing parents) with mode 0700; ``fix`` also tightens an existing one."""
    if not d.is_dir():
        d.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(d, 0o700)  # mkdir's mode is masked by the umask
    elif fix and stat.S_IMODE(d.stat().st_mode) & 0o077:
        os.chmod(d, 0o700)


def put(key: str, value: dict[str, Any]) -> None:
    """Store a summary: secrets redacted, file 0600 in a 0700 folder, written atomically."""
    root = cache_dir()
    d = root / key[:2]
    try:
        _private_dir(root, fix="INSPECTOR_CACHE_DIR" not in os.environ)  # never chmod a folder the user named
        _private_dir(d, fix=True)
        safe = {k: redact_text(v) if isinstance(v, str) else v for k, v in value.items()}
        write_atomic(
            d / f"{key}.json",
            json.dumps(safe, ensure_ascii=False).encode("utf-8", "backslashreplace"),
            mode=0o600,
        )
    except (OSError, WriteRefused):
        pass  # a cache that cannot be written is only slower
