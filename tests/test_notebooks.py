"""The notebooks in ``notebooks/`` run top to bottom on a real kernel (nbclient), offline and
without API keys, so they cannot go stale; they are saved without outputs."""

from __future__ import annotations

import pytest

nbformat = pytest.importorskip(
    "nbformat", reason="the notebook extra is not installed: pip install '.[notebook]'"
)
nbclient = pytest.importorskip(
    "nbclient", reason="the notebook extra is not installed: pip install '.[notebook]'"
)
pytest.importorskip("ipykernel", reason="the notebook extra is not installed: pip install '.[notebook]'")

from .support.paths import REPO  # noqa: E402

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def test_both_notebooks_are_there() -> None:
    assert {p.name for p in NOTEBOOKS} >= {"tour.ipynb", "teaching.ipynb"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_saved_without_outputs(path) -> None:  # type: ignore[no-untyped-def]
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{path.name}: saved with outputs"


@pytest.mark.timeout(900)  # a kernel that never answers fails the test instead of blocking the suite
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_offline_without_keys(path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):  # any web request would fail
        monkeypatch.setenv(var, "http://127.0.0.1:9")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=600,
        startup_timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()  # raises CellExecutionError, with the cell and its traceback, when a cell fails
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    shown = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert any("application/vnd.plotly.v1+json" in o.get("data", {}) for o in shown)  # the figures were drawn
