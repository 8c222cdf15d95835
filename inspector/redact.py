"""Redaction of secrets found in session content, for everything that leaves the process.

Sessions hold whatever an agent ever read — ``.env`` files, shell history, configs, private keys
— so secrets travel with them. Every export (plain and ``--compact``, reports), the
``--dump-migrated`` file, the summary cache and every request to an LLM summarizer passes its
text through :func:`redact_text` (or :func:`redact_value` for JSON values) unless the user
explicitly opts out (``--keep-secrets``; the app's "send secrets unredacted").

:data:`CATALOGUE` lists the secret shapes, each with an example it redacts and a near miss it
leaves alone (the tests run both). Patterns are deliberately broad — a false positive costs a
few characters. A pattern is tried only where one of its literal anchors occurs (found by plain
substring search in a lower-case copy), so text without secrets costs a few substring searches
and a 100 MB line is redacted in linear time.

Each match becomes ``[REDACTED:<kind>]``; for a connection string only the password goes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_SEP = r"""["']?[ \t]*[:=][ \t]*["']?"""
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _lower(text: str) -> str:
    """Lower case with the same length as ``text`` (positions in it are positions in ``text``)."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


@dataclass(frozen=True)
class SecretShape:
    """One kind of secret: its pattern, the lower-case literals a match starts with (found by
    plain substring search, the pattern is then tried only there), an example it redacts and
    a near miss it leaves alone. With a ``secret`` group only that group is redacted."""

    kind: str
    pattern: re.Pattern[str]
    anchors: tuple[str, ...]
    example: str
    near_miss: str
    back: int = 0
    """A match starts this many characters before its anchor."""

    def apply(self, text: str, anchors: _Anchors | None = None) -> str:
        """``text`` with this shape redacted; ``anchors``: where the anchors occur in ``text``
        (shared by the shapes; made here when not given)."""
        anchors = _Anchors(text) if anchors is None else anchors
        starts = sorted({i - self.back for a in self.anchors for i in anchors[a] if i >= self.back})
        if not starts:
            return text
        out: list[str] = []
        pos = 0
        partial = "secret" in self.pattern.groupindex
        for i in starts:
            if i < pos:
                continue
            m = self.pattern.match(text, i)
            if m is None:
                continue
            a, b = m.span("secret") if partial else m.span()
            if text.startswith("[REDACTED", a):
                continue
            out += (text[pos:a], f"[REDACTED:{self.kind}]")
            pos = b
        return "".join((*out, text[pos:])) if out else text


_WINDOW = 1 << 22
_OVERLAP = 64  # longer than any anchor


class _Anchors:
    """Where each anchor occurs in ``text`` (case-insensitively), found on first use. A text
    over 4M characters is lower-cased one window at a time, never as a whole second copy."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.found: dict[str, list[int]] = {}
        self.low = _lower(text) if len(text) <= _WINDOW else None

    def __getitem__(self, anchor: str) -> list[int]:
        hits = self.found.get(anchor)
        if hits is None:
            if self.low is None:
                self._scan()
                return self.found[anchor]
            hits = self.found[anchor] = _find_all(self.low, anchor)
        return hits

    def present(self) -> set[str]:
        """The anchors that occur in the text."""
        if self.low is not None:
            return {a for a in _ALL_ANCHORS if a in self.low}
        if not self.found:
            self._scan()
        return {a for a, hits in self.found.items() if hits}

    def _scan(self) -> None:
        t = self.text
        found: dict[str, list[int]] = {a: [] for a in _ALL_ANCHORS}
        for i in range(0, len(t), _WINDOW):
            low = _lower(t[i : i + _WINDOW + _OVERLAP])
            for a, hits in found.items():
                hits.extend(i + j for j in _find_all(low, a) if j < _WINDOW)
        self.found = found


def _find_all(low: str, anchor: str) -> list[int]:
    hits = []
    i = low.find(anchor)
    while i >= 0:
        hits.append(i)
        i = low.find(anchor, i + 1)
    return hits


def _shape(
    kind: str, pattern: str, anchors: tuple[str, ...], example: str, near_miss: str, back: int = 0
) -> SecretShape:
    return SecretShape(kind, re.compile(pattern), anchors, example, near_miss, back)


CATALOGUE: tuple[SecretShape, ...] = (
    _shape(
        "private-key",
        r"-----BEGIN (?:[A-Z0-9]+ )*?PRIVATE KEY(?: BLOCK)?-----"
        r"[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        ("-----begin ",),
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
        "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
    ),
    _shape(
        "connection-password",
        r"://[^\s:/@'\"<>\[\]]*:(?P<secret>[^\s/@'\"<>?#]+)@",
        ("://",),
        "postgres://app:pw@db.internal:5432/app",
        "https://example.com:8443/path?user=a@b",
    ),
    _shape(
        "anthropic-key",
        r"\bsk-ant-[A-Za-z0-9_\-]{16,}",
        ("sk-",),
        "sk-ant-api03-AbCdEfGhIjKlMnOpQrSt",
        "sk-ant-short",
    ),
    _shape(
        "openrouter-key",
        r"\bsk-or-[A-Za-z0-9_\-]{16,}",
        ("sk-",),
        "sk-or-v1-0123456789abcdef0123",
        "sk-or-v1",
    ),
    _shape(
        "openai-key",
        r"\bsk-(?:proj-)?[A-Za-z0-9_\-]{16,}",
        ("sk-",),
        "sk-proj-AbCdEfGhIjKlMnOpQrStUv",
        "a task-list-of-many-more-things",
    ),
    _shape(
        "stripe-key",
        r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{10,}",
        ("k_live_", "k_test_"),
        "sk_live_51HxAbCdEfGhIjKlMn",
        "pk_live_51HxAbCdEfGhIjKlMn",
        back=1,
    ),
    _shape(
        "huggingface-token",
        r"\bhf_[A-Za-z0-9]{30,}",
        ("hf_",),
        "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
        "from huggingface_hub import hf_hub_download",
    ),
    _shape(
        "jwt",
        r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*",
        ("eyj",),
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "eyJhbGciOiJIUzI1NiJ9 (a JWT header alone)",
    ),
    _shape(
        "bearer-token",
        r"(?i:bearer )(?P<secret>[A-Za-z0-9_\-\.=:+/]{12,})",
        ("bearer ",),
        "Authorization: Bearer abcdef0123456789xyz",
        "bearer of bad news",
    ),
    _shape(
        "basic-auth",
        r"(?i:authorization:[ \t]*basic )(?P<secret>[A-Za-z0-9+/=]{8,})",
        ("authorization:",),
        "Authorization: Basic dXNlcjpwYXNzd29yZA==",
        "a basic approach",
    ),
    _shape(
        "github-token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})",
        ("gh",),
        "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123",
        "ghp_short",
    ),
    _shape(
        "gitlab-token", r"\bglpat-[A-Za-z0-9_\-]{20,}", ("glpat-",), "glpat-AbCdEfGhIjKlMnOpQrSt", "glpat-x"
    ),
    _shape(
        "npm-token",
        r"\bnpm_[A-Za-z0-9]{36}\b",
        ("npm_",),
        "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "npm_config_cache",
    ),
    _shape("aws-access-key", r"\bAKIA[0-9A-Z]{16}\b", ("akia",), "AKIAIOSFODNN7EXAMPLE", "AKIA-not-a-key"),
    _shape(
        "google-api-key",
        r"\bAIza[0-9A-Za-z_\-]{30,}",
        ("aiza",),
        "AIzaSyA-AbCdEfGhIjKlMnOpQrStUvWxYz012",
        "AIza",
    ),
    _shape(
        "slack-token", r"\bxox[abprs]-[A-Za-z0-9\-]{10,}", ("xox",), "xoxb-0123456789-abcdef", "xoxo-hugs"
    ),
    _shape(
        "password",
        r"(?i:passw(?:or)?d|passphrase|pwd)[A-Za-z0-9_\-.]*" + _SEP + r"(?P<secret>[^\s\"',;}{]+)",
        ("pass", "pwd"),
        "password: hunter2",
        "passwords are hashed",
    ),
    _shape(
        "connection-string",
        r"(?i:database_?url|db_?url|dsn|conn(?:ection)?_?str(?:ing)?)[A-Za-z0-9_\-.]*"
        + _SEP
        + r"(?P<secret>[^\s\"',;}{]+)",
        ("database", "db_url", "dburl", "dsn", "conn"),
        "DATABASE_URL=mysql://root@localhost/app",
        "the database url is below",
    ),
    _shape(
        "assignment",
        r"(?i:api[_\-]?key|secret|token)[A-Za-z0-9_\-.]*" + _SEP + r"(?P<secret>[^\s\"',;}{]{8,})",
        ("api", "secret", "token"),
        'OPENAI_API_KEY="abcd1234efgh5678"',
        "token: short",
    ),
)


_ALL_ANCHORS = tuple(dict.fromkeys(a for shape in CATALOGUE for a in shape.anchors))


def redact_text(text: str) -> str:
    """``text`` with every secret-looking substring replaced by ``[REDACTED:<kind>]``."""
    if not text:
        return text
    anchors = _Anchors(text)
    present = anchors.present()
    if not present:
        return text  # most text: no shape is even tried
    for shape in CATALOGUE:
        if present.isdisjoint(shape.anchors):
            continue
        new = shape.apply(text, anchors)
        if new is not text:
            text, anchors = new, _Anchors(new)
            present = anchors.present()
    return text


def redact_value(value: Any) -> Any:
    """A JSON value with every string redacted, a dict's string keys included (a report keys some
    maps by a name the session gave, such as a model's)."""
    try:
        return _redact_value(value)
    except RecursionError:
        from .deep import deep_call

        return deep_call(_redact_value, value)


def redact_json(data: bytes) -> bytes:
    """A JSON document (UTF-8) with every string redacted, written again with an indent of 2."""
    return json.dumps(redact_value(json.loads(data)), indent=2, ensure_ascii=False).encode("utf-8")


def _redact_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, list):
        return [_redact_value(v) for v in value]
    if isinstance(value, dict):
        return {(redact_text(k) if isinstance(k, str) else k): _redact_value(v) for k, v in value.items()}
    return value
