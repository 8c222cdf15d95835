"""The layering contract: every import in ``inspector/`` (module level and inside functions) goes to
the same layer or a lower one, and no modules import each other in a cycle.

Layers, lowest first (a module belongs to the layer of its longest matching prefix):

0. foundations — deep, gcpause, foreground, safeio, agents, visible, redact, numbers (a session's
   numbers at the edges: ``session/`` reports them where it loads): no project imports but each other;
1. session — ``session/``;
2. formats — jsjson, tokens, pricing, model_windows (pi's model list), window (the window a session
   makes known, and what its usage proves of it), ``importers/`` (other agents' files into sessions);
3. context — context, sent;
4. compaction — compaction, branch_summary, cut_story, and the package root (its public names);
5. engines — ``pruning/``, ``policies/``, ``summarize/``, calibration;
6. replay — ``replay/``;
7. analyses — doctor, info, explain, export, ``recon/``, compaction_view, oracle_json, whatif,
   ``retention/``, ``corpus/``, ``cache/`` (prompt-cache-aware cost), learn;
8. front ends — ``cli/``, ``ui/``, notebook (Jupyter), ``__main__``, and replay_report (its HTML report draws the
   app's figures, :mod:`inspector.ui.report_html`).

A new module must be placed here (the test fails on a module no layer names).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "inspector"

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundations", ("deep", "gcpause", "foreground", "safeio", "agents", "visible", "redact", "numbers")),
    ("session", ("session",)),
    ("formats", ("jsjson", "tokens", "pricing", "model_windows", "window", "importers")),
    ("context", ("context", "sent")),
    ("compaction", ("compaction", "branch_summary", "cut_story", "")),
    ("engines", ("pruning", "policies", "summarize", "calibration")),
    ("replay", ("replay",)),
    (
        "analyses",
        (
            "doctor",
            "info",
            "explain",
            "export",
            "recon",
            "compaction_view",
            "oracle_json",
            "whatif",
            "retention",
            "corpus",
            "cache",
            "learn",
        ),
    ),
    ("front ends", ("cli", "ui", "notebook", "__main__", "replay_report")),
)


def layer_of(module: str, layers: Iterable[tuple[str, tuple[str, ...]]] = LAYERS) -> int | None:
    """The layer of ``module`` (dotted, without the ``inspector.`` prefix; ``""`` is the package
    root): the one with the longest prefix that is the module or one of its packages."""
    best: tuple[int, int] | None = None  # (prefix length, layer)
    for i, (_, prefixes) in enumerate(layers):
        for p in prefixes:
            if module == p or (p and module.startswith(p + ".")) or (not p and not module):
                if best is None or len(p) > best[0]:
                    best = (len(p), i)
    return None if best is None else best[1]


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package: dotted name (``""`` for the root) → file."""
    out: dict[str, Path] = {}
    for p in sorted(root.rglob("*.py")):
        parts = list(p.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def imports_of(
    module: str, is_package: bool, source: str, known: Iterable[str], top: str = "inspector"
) -> set[str]:
    """The project modules ``source`` imports, anywhere in it (functions included). ``from X import
    name`` counts the submodule ``X.name`` when there is one, else ``X``."""
    known = set(known)
    here = module.split(".") if module else []
    pkg = here if is_package else here[:-1]

    def local(name: str) -> str | None:
        if name == top:
            return ""
        if name.startswith(top + "."):
            return name[len(top) + 1 :]
        return None

    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for a in node.names:
                name = local(a.name)
                while name is not None and name not in known and "." in name:
                    name = name.rsplit(".", 1)[0]
                if name is not None and name in known:
                    found.add(name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - node.level + 1] if node.level > 1 else pkg
                target: str | None = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = local(node.module or "")
            if target is None:
                continue
            for a in node.names:
                sub = f"{target}.{a.name}" if target else a.name
                if sub in known:
                    found.add(sub)
                elif target in known:
                    found.add(target)
    found.discard(module)
    return found


def reentries(module: str, is_package: bool, source: str, top: str = "inspector") -> list[str]:
    """Each import in ``source`` (functions included) that goes through the package ``module`` belongs
    to (for a package's ``__init__``: the package above it) rather than straight to a sibling module:
    ``from . import name`` (a submodule or not), ``from inspector.pkg import name`` and ``import
    inspector.pkg``. Each is ``"module:line: statement"``. The root package is not checked (everything
    is inside it). ``from .sibling import name`` and ``import inspector.pkg.sibling`` are fine."""
    here = module.split(".") if module else []
    own = here[:-1]  # the package holding the module (a package's __init__: the one above it)
    if not own:
        return []
    pkg = here if is_package else own
    own_name = ".".join([top, *own])
    out: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - node.level + 1]
                target = ".".join([top, *base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target == own_name:
                names = ", ".join(a.name for a in node.names)
                out.append(f"{module}:{node.lineno}: from {'.' * node.level or target} import {names}")
        elif isinstance(node, ast.Import):
            out += [f"{module}:{node.lineno}: import {a.name}" for a in node.names if a.name == own_name]
    return out


def reentry_report(root: Path = ROOT) -> dict[str, list[str]]:
    """Package → the re-entries of its submodules, for every package whose ``__init__`` imports one
    of its own submodules (there a re-entry closes a package ⇄ submodule cycle; the ``__init__`` of
    ``ui``, which imports nothing, makes none)."""
    mods = modules(root)
    graph = import_graph(root)
    out: dict[str, list[str]] = {}
    for m, p in mods.items():
        is_package = p.name == "__init__.py"
        own = m.rsplit(".", 1)[0] if "." in m else ""
        if not own or not any(t.startswith(own + ".") for t in graph[own]):
            continue
        found = reentries(m, is_package, p.read_text(encoding="utf-8"))
        if found:
            out.setdefault(own, []).extend(found)
    return out


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    mods = modules(root)
    return {
        m: imports_of(m, p.name == "__init__.py", p.read_text(encoding="utf-8"), mods)
        for m, p in mods.items()
    }


def violations(graph: Mapping[str, set[str]], layer: Mapping[str, int | None]) -> list[str]:
    """Each import of a higher layer, and each module no layer names."""
    out = [f"{m or 'inspector'}: in no layer" for m in graph if layer.get(m) is None]
    for m, targets in graph.items():
        for t in sorted(targets):
            lm, lt = layer.get(m), layer.get(t)
            if lm is not None and lt is not None and lt > lm:
                out.append(f"{m or 'inspector'} (layer {lm}) imports {t or 'inspector'} (layer {lt})")
    return out


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


# -- the contract on inspector/ ---------------------------------------------------------------------


def test_every_import_goes_to_the_same_layer_or_a_lower_one() -> None:
    graph = import_graph()
    assert len(graph) > 100 and "replay.run" in graph and "policies.pi" in graph
    assert violations(graph, {m: layer_of(m) for m in graph}) == []


def test_no_import_cycle() -> None:
    assert cycles(import_graph()) == []


#: Packages whose submodules still import the package itself (none since the cache2 branch).
REENTRY_ALLOWED: frozenset[str] = frozenset()


def test_no_submodule_imports_its_own_package() -> None:
    """A submodule imports its siblings directly (``from .settings import X``), never through its
    package (``from . import settings``): the package's ``__init__`` imports the submodule, so going
    back through the package is a package ⇄ submodule cycle (the graph above counts ``from . import
    settings`` as an import of ``settings`` alone, so the cycle test does not see it)."""
    report = reentry_report()
    assert {p: lines for p, lines in report.items() if p not in REENTRY_ALLOWED} == {}


def test_the_engine_never_imports_the_front_ends() -> None:
    graph = import_graph()
    front = layer_of("ui")
    engine = [m for m in graph if (layer_of(m) or 0) < layer_of("doctor")]  # type: ignore[operator]
    assert engine and all(layer_of(t) != front for m in engine for t in graph[m])


# -- the checker itself fails on a planted violation ----------------------------------------------


def test_a_planted_upward_import_inside_a_function_is_found() -> None:
    known = {"", "session", "session.tree", "replay", "replay.run", "pruning", "pruning.base"}
    src = "from __future__ import annotations\nfrom ..session.tree import X\n\ndef f():\n    from ..replay import run\n"
    found = imports_of("pruning.base", False, src, known)
    assert found == {"session.tree", "replay.run"}
    layer = {m: layer_of(m) for m in known}
    assert violations({"pruning.base": found}, layer) == [
        "pruning.base (layer 5) imports replay.run (layer 6)"
    ]
    assert violations({"replay.run": {"pruning.base"}}, layer) == []


def test_absolute_imports_and_package_names_resolve() -> None:
    known = {"", "policies", "policies.pi", "replay", "replay.settings"}
    src = "import inspector.policies.pi\nfrom inspector.replay import settings, replay\nfrom inspector import __version__\n"
    assert imports_of("ui.x", False, src, known) == {"policies.pi", "replay.settings", "replay", ""}
    # ``from . import name`` inside a package: the sibling module when there is one, else the package
    assert imports_of("replay.run", False, "from . import settings\nfrom . import replay\n", known) == {
        "replay.settings",
        "replay",
    }


def test_every_form_of_a_planted_reentry_is_found() -> None:
    src = (
        "from . import settings\n"
        "from .settings import X\n"
        "import inspector.replay\n"
        "import inspector.replay.settings as s\n"
        "from inspector.replay import replay\n"
        "from inspector.replay.settings import Y\n"
        "from .. import compaction\n"
        "def f():\n"
        "    from . import query\n"
    )
    assert reentries("replay.run", False, src) == [
        "replay.run:1: from . import settings",
        "replay.run:3: import inspector.replay",
        "replay.run:5: from inspector.replay import replay",
        "replay.run:9: from . import query",
    ]
    # a subpackage's __init__ belongs to the package above it; the root package is not checked
    assert reentries("ui.pages", True, "from .. import figures\nfrom . import tree\n") == [
        "ui.pages:1: from .. import figures"
    ]
    assert reentries("cli", True, "from .. import __version__\n") == []


def test_a_reentry_counts_where_the_package_imports_its_submodules(tmp_path: Path) -> None:
    files = {
        "__init__.py": "",
        "quiet/__init__.py": '"""imports nothing"""\n',
        "quiet/x.py": "from . import y\n",
        "quiet/y.py": "",
        "busy/__init__.py": "from .x import X\n",
        "busy/x.py": "from . import y\nX = 1\n",
        "busy/y.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert reentry_report(tmp_path) == {"busy": ["busy.x:1: from . import y"]}


def test_a_module_in_no_layer_and_a_planted_cycle_are_found() -> None:
    assert layer_of("brand_new_module") is None
    assert violations({"brand_new_module": set()}, {"brand_new_module": None}) == [
        "brand_new_module: in no layer"
    ]
    assert layer_of("replay.run") == layer_of("replay") and layer_of("") == layer_of("compaction")
    assert layer_of("ui.pages.replay") == layer_of("cli")
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
