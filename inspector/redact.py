"""Redaction of secrets found in session content, for exports and caches.

Sessions hold whatever an agent ever read — ``.env`` files, shell history, configs — so API
keys travel with them. Every export and cache write passes its text through
:func:`redact_text` (or :func:`redact_value` for JSON values) unless the user asks to keep
secrets. Patterns (deliberately broad; a false positive costs a few characters):

* OpenAI-style keys ``sk-…`` and ``sk-proj-…``, Anthropic ``sk-ant-…``, OpenRouter ``sk-or-…``;
* ``Bearer <token>`` in headers;
* GitHub tokens ``ghp_…``/``gho_…``/``ghs_…``/``github_pat_…``, AWS access key ids ``AKIA…``,
  Google API keys ``AIza…``, Slack ``xox?-…``;
* ``NAME_KEY=value`` / ``"api_key": "value"`` assignments whose name says key, token, secret or
  password.

Each match becomes ``[REDACTED:<kind>]``.
"""

from __future__ import annotations

import re
from typing import Any

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("anthropic-key", re.compile(r"sk-ant-[A-Za-z0-9_\-]{16,}")),
    ("openrouter-key", re.compile(r"sk-or-[A-Za-z0-9_\-]{16,}")),
    ("openai-key", re.compile(r"sk-(?:proj-)?[A-Za-z0-9_\-]{16,}")),
    ("bearer-token", re.compile(r"(?i)(?<=bearer )[A-Za-z0-9_\-\.=:+/]{12,}")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")),
    ("aws-access-key", re.compile(r"\bAKIA[0-9A-Z]{16}\b")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}")),
    ("slack-token", re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}")),
)
_ASSIGN = re.compile(
    r"""(?ix)
    (?P<name>[A-Z0-9_\-\.]*(?:api[_\-]?key|secret|token|passw(?:or)?d)[A-Z0-9_\-\.]*)
    (?P<sep>\s*["']?\s*[:=]\s*["']?)
    (?P<value>[^\s"',;}{]{8,})
    """
)


def redact_text(text: str) -> str:
    """``text`` with every secret-looking substring replaced by ``[REDACTED:<kind>]``."""
    if not text:
        return text
    for kind, pat in _PATTERNS:
        text = pat.sub(f"[REDACTED:{kind}]", text)

    def assign(m: re.Match[str]) -> str:
        v = m.group("value")
        if v.startswith("[REDACTED"):
            return m.group(0)
        return f"{m.group('name')}{m.group('sep')}[REDACTED:assignment]"

    return _ASSIGN.sub(assign, text)


def redact_value(value: Any) -> Any:
    """A JSON value with every string redacted (dict keys kept)."""
    try:
        return _redact_value(value)
    except RecursionError:
        from .deep import deep_call

        return deep_call(_redact_value, value)


def _redact_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, list):
        return [_redact_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _redact_value(v) for k, v in value.items()}
    return value
