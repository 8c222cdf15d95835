"""Prompt caching: what each replayed call reads from the provider's cache, writes to it and pays
in full, by provider family (:mod:`.anthropic`, :mod:`.openai`, no cache model for the others),
priced at the session's recorded or listed rates (:mod:`.prices`), checked against the cache
usage the session recorded (:mod:`.report`)."""

from ..replay.sizes import SizeFit, fit_sizes
from .family import family_of
from .report import MODELS, RETENTIONS, CacheReport, CacheStep, cache_replay
from .rule import CacheRule

__all__ = [
    "MODELS",
    "RETENTIONS",
    "CacheReport",
    "CacheRule",
    "CacheStep",
    "SizeFit",
    "cache_replay",
    "family_of",
    "fit_sizes",
]
