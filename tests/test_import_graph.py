"""The core's import graph has no circle, function-level imports included (issue 15: "no circle"),
never runs up the declared layers (docs/ARCHITECTURE.md's picture), and never reaches the front
ends (the app or the command line)."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "simplex_core"

#: The core's layers, lowest first (docs/ARCHITECTURE.md's picture). A module imports only from its
#: own layer or a lower one, function-level and type-checking imports included; a new module is
#: placed here. ``simplex_core.cli`` sits above them all (and only it and ``__main__`` import it).
LAYERS: tuple[tuple[str, ...], ...] = (
    # foundations: levels, settings and the model's density, geometry, the cluster, status types, style, spreadsheet-safe CSV
    ("text", "spreadsheet", "scale", "patterns", "geometry", "distributed", "priors", "model", "fast_density", "jobs.status",
     "figures.style", "ordinal_density"),
    # the data: tables and counts, built-in datasets, gold labels, simulated data, a fit's identity
    ("data", "datasets", "gold", "simulate", "labelling", "fit_identity"),
    # ranking methods and fitting: baselines, the engines, prior reweighting, the fit cache, one job
    ("baselines", "ordinal", "reweighting", "fast_engine", "mode_mass", "tempering", "inference", "fit_cache", "jobs.book",
     "jobs.worker"),
    # what a fit is read into: tables, scores, the leaderboard, figures
    ("summaries", "evaluation", "leaderboard", "figures", "figures.simplex", "figures.results",
     "figures.geometry_lab", "calibration_figures"),
    # studies and long-lived programs
    ("experiments", "sensitivity", "posterior_views", "calibration", "jobs", "jobs.manager", "figures.slides"),
)


def _module_of(path: Path) -> str:
    parts = path.relative_to(CORE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every ``simplex_core`` module this file imports, at load time or inside a function."""
    module = _module_of(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            if base == "simplex_core":  # from simplex_core import fast_density, ...
                out.update(f"simplex_core.{a.name}" for a in node.names)
            elif base.startswith("simplex_core."):
                out.add(base)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("simplex_core."))
    return out


def _unit(module: str) -> str:
    """The unit of the graph: a top-level module, or a sub-package as a whole (figures, jobs, cli)."""
    parts = module.split(".")
    return ".".join(parts[:2])


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in CORE.rglob("*.py"):
        unit = _unit(_module_of(path))
        if unit == "simplex_core":  # the package's own __init__ / __main__
            continue
        graph.setdefault(unit, set()).update(_unit(m) for m in _imports(path) if _unit(m) != unit)
    return graph


def test_core_import_graph_has_no_cycle():
    graph = _graph()
    assert "simplex_core.inference.fitting" in graph and "simplex_core.inference.reweighting" in graph["simplex_core.inference.fitting"]
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nb in sorted(graph.get(node, ())):
            if state.get(nb) == 1:
                raise AssertionError("import circle: " + " → ".join(path[path.index(nb):] + [nb]))
            if nb in graph and state.get(nb) is None:
                visit(nb)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if state.get(node) is None:
            visit(node)


def _layer_of() -> dict[str, int]:
    out: dict[str, int] = {}
    for i, names in enumerate(LAYERS):
        for name in names:
            assert f"simplex_core.{name}" not in out, f"{name} is declared in two layers"
            out[f"simplex_core.{name}"] = i
    return out


def test_no_module_imports_from_a_higher_layer():
    layer = _layer_of()
    undeclared, upward = [], []
    for path in sorted(CORE.rglob("*.py")):
        module = _module_of(path)
        if module in ("simplex_core", "simplex_core.__main__") or _unit(module) == "simplex_core.cli":
            continue
        if module not in layer:
            undeclared.append(module)
            continue
        for imported in sorted(_imports(path)):
            if imported not in layer:  # e.g. ``simplex_core.cli``: the test below
                continue
            if layer.get(imported, -1) > layer[module]:
                upward.append(f"{module} (layer {layer[module]}) imports {imported} (layer {layer[imported]})")
    assert not undeclared, f"modules missing from LAYERS: {undeclared}"
    assert not upward, "imports running up the layers:\n" + "\n".join(upward)
    assert len(layer) == sum(len(names) for names in LAYERS)


def test_only_the_command_line_imports_the_command_line_and_nothing_imports_the_app():
    for path in CORE.rglob("*.py"):
        text = path.read_text()
        assert "import streamlit" not in text and "from streamlit" not in text, path
        assert "app_support" not in {m.split(".")[0] for m in _imports(path)}, path
        if _unit(_module_of(path)) not in ("simplex_core.cli", "simplex_core", "simplex_core.__main__"):
            assert not any(_unit(m) == "simplex_core.cli" for m in _imports(path)), path
