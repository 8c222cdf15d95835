"""Where things are. Everything the tests need is inside the repository; ``../shared`` (beside the
clone) is read only where a test says so and is optional."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_sessions"
FIXTURES = REPO / "tests" / "fixtures"
PI_EXPECTED = FIXTURES / "oracle"  # pi's own outputs for the fixtures (tests/fixtures/README.md)
PI_ORACLE_SRC = REPO / "tools" / "pi-oracle"  # the harness that regenerates them
SHARED = REPO.parent / "shared"  # optional: seeds and real sessions, never copied into the repo
