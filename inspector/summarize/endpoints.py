"""Which LLM endpoints may receive the server's own API keys.

The keys in the server's environment (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, …) belong to
whoever runs it. They are sent only to a base URL that person configured:

* the provider's default endpoint (no base URL: the SDK's own, which honours ``OPENAI_BASE_URL``
  / ``ANTHROPIC_BASE_URL``), and those two variables' values;
* the URLs listed in ``$INSPECTOR_LLM_BASE_URLS`` (separated by commas or spaces);
* the URLs listed in the config file (``$INSPECTOR_CONFIG``, else ``config.toml`` in the user's
  config folder, e.g. ``~/.config/context-inspector/config.toml``)::

      [llm]
      base_urls = ["https://openrouter.ai/api/v1", "http://127.0.0.1:11434/v1"]

Any other base URL — typed into the app by a visitor, for instance — gets only a key given with
it (typed in the same browser session), or no key at all. URLs are compared after normalising
the scheme and host to lower case, dropping a default port and trailing slashes.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from urllib.parse import urlsplit

DEFAULT_URLS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
BASE_URL_ENV = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}


def normalise(url: str) -> str:
    """``scheme://host[:port]/path`` with scheme and host lower-cased, no default port, no
    trailing slash; the text unchanged (stripped) when it is not an http(s) URL."""
    url = url.strip()
    try:
        u = urlsplit(url)
        port = u.port
    except ValueError:
        return url
    if u.scheme.lower() not in ("http", "https") or not u.hostname:
        return url
    scheme = u.scheme.lower()
    default = {"http": 80, "https": 443}[scheme]
    host = u.hostname.lower()
    host = f"[{host}]" if ":" in host else host
    netloc = host if port in (None, default) else f"{host}:{port}"
    return f"{scheme}://{netloc}{u.path.rstrip('/')}"


def config_file() -> Path:
    env = os.environ.get("INSPECTOR_CONFIG")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_config_dir

    return Path(user_config_dir("context-inspector")) / "config.toml"


def _from_config() -> list[str]:
    from ..safeio import read_regular

    try:
        cfg = tomllib.loads(read_regular(config_file()).decode("utf-8"))
    except (OSError, ValueError):
        return []
    urls = cfg.get("llm", {}).get("base_urls", []) if isinstance(cfg.get("llm"), dict) else []
    return [u for u in urls if isinstance(u, str)] if isinstance(urls, list) else []


def configured_urls(provider: str) -> set[str]:
    """The normalised base URLs the operator configured for ``provider``."""
    urls = [DEFAULT_URLS.get(provider, ""), os.environ.get(BASE_URL_ENV.get(provider, ""), "")]
    urls += re.split(r"[,\s]+", os.environ.get("INSPECTOR_LLM_BASE_URLS", ""))
    urls += _from_config()
    return {normalise(u) for u in urls if u and u.strip()}


def is_configured(provider: str, base_url: str | None) -> bool:
    """May the server's own key for ``provider`` go to ``base_url`` (None: the SDK's default)?"""
    return not base_url or normalise(base_url) in configured_urls(provider)
