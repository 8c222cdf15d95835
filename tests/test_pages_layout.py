"""One page per file: each script in inspector/ui/pages/ holds its page's code (no stub that only
calls into another module), app.py's navigation runs exactly those scripts, and the old
all-pages module and its stubs are gone."""

from __future__ import annotations

import ast
import re

from .support.paths import REPO

UI = REPO / "inspector" / "ui"
PAGES = UI / "pages"
NAMES = {"load", "replay", "tree", "summaries", "compare", "doctor", "corpus", "learn"}


def _scripts() -> dict[str, ast.Module]:
    return {
        p.stem: ast.parse(p.read_text(encoding="utf-8")) for p in PAGES.glob("*.py") if p.stem != "__init__"
    }


def test_the_old_pages_module_and_stubs_are_gone() -> None:
    assert not (UI / "pages.py").exists()
    assert not (UI / "app_pages").exists()
    assert (PAGES / "__init__.py").is_file()


def test_each_page_file_holds_its_page_not_a_stub() -> None:
    scripts = _scripts()
    assert set(scripts) == NAMES
    for name, tree in scripts.items():
        funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        assert funcs, f"{name}: defines no function (a stub?)"
        page_fn = f"{name}_page"
        assert page_fn in {f.name for f in funcs}, f"{name}: no {page_fn}() of its own"
        # it draws with streamlit itself: many st.* calls in its own code
        calls = [
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and isinstance(n.func.value, ast.Name)
            and n.func.value.id == "st"
        ]
        assert len(calls) >= 5, f"{name}: only {len(calls)} streamlit calls (a stub?)"
        # the script's last statement draws the page, as st.Page runs it by path
        last = tree.body[-1]
        assert isinstance(last, ast.Expr) and isinstance(last.value, ast.Call), name
        assert isinstance(last.value.func, ast.Name) and last.value.func.id == page_fn, name
        # no bare value besides the docstring: Streamlit's magic would draw it on the page
        floating = [
            n.lineno for n in tree.body[1:] if isinstance(n, ast.Expr) and not isinstance(n.value, ast.Call)
        ]
        assert not floating, f"{name}: a bare value on line(s) {floating} would be drawn"
        # it imports no other page and nothing from a pages module
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert not (node.module or "").startswith("inspector.ui.pages"), (
                    f"{name} imports {node.module}"
                )
                assert node.level == 0, f"{name}: a relative import (page scripts run by path)"


def test_the_navigation_runs_each_page_file() -> None:
    app = (REPO / "app.py").read_text(encoding="utf-8")
    assert 'PAGES = "inspector/ui/pages"' in app
    pages = set(re.findall(r'st\.Page\(\s*f"\{PAGES\}/(\w+)\.py"', app))
    assert pages == NAMES
    for name in NAMES:
        assert (PAGES / f"{name}.py").is_file()
