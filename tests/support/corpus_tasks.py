"""Module-level task functions for the corpus engines' tests (a worker process imports them by name)."""

from __future__ import annotations

import os
import sys


def loaded(name: str) -> tuple[bool, int]:
    """Whether module ``name`` was imported in this worker before this task ran, and the worker's pid."""
    return name in sys.modules, os.getpid()
