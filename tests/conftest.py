"""Fixtures shared by the tests. Helpers live in ``tests/support/`` and are imported from there."""

from __future__ import annotations

import pytest

from .support.builder import SessionBuilder
from .support.pi_oracle import PiOracle, Unavailable, install


@pytest.fixture(autouse=True)
def reachable_endpoints() -> None:
    """Every test starts with no summarizer endpoint remembered as unreachable (a timeout in one
    test must not keep the next from asking a server that took its port)."""
    from inspector.summarize import llm

    llm._UNREACHABLE.clear()


@pytest.fixture(autouse=True, scope="session")
def validated_figures() -> None:
    """The app's figures skip plotly's validation for speed; the tests validate every one."""
    from inspector.ui import figures

    figures.base.VALIDATE = True


@pytest.fixture
def sb() -> SessionBuilder:
    return SessionBuilder()


@pytest.fixture(scope="session")
def pi_oracle(tmp_path_factory: pytest.TempPathFactory) -> PiOracle:
    """pi's own code, through the project's harness (``tools/pi-oracle``), its pinned packages
    installed once per test session with ``npm ci`` into a temporary folder (never into the
    repository or ``../shared``). Skips, saying why, without node/npm or when the install fails."""
    try:
        return install(tmp_path_factory.mktemp("pi-oracle"))
    except Unavailable as e:
        pytest.skip(str(e))
