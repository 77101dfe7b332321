"""The core's import graph has no circle, function-level imports included ("no circle"),
never runs up the declared layers (docs/ARCHITECTURE.md's picture), and never reaches the front
ends (the app or the command line); the app never imports the command line either."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "simplex_core"

#: The core's layers, lowest first: one folder (package) per layer, as docs/ARCHITECTURE.md draws
#: them. A module imports only from its own folder, a folder of its own layer, or a lower layer,
#: function-level and type-checking imports included; a new folder is placed here.
#: ``simplex_core.cli`` sits above them all (and only it and ``__main__`` import it).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("data",),  # the table and its contract, scales, patterns, built-in datasets, gold labels, text and CSV helpers
    ("model",),  # settings and the PyMC graph, priors, the numba density, simulation, geometry, the rank rule
    ("inference",),  # fitting and its engines, reweighting, a fit's identity and cache, the cluster
    ("methods", "figures"),  # the baselines and what to label next; Plotly figures that take tables
    ("summaries",),  # what a fit is read into: tables, result.json, the leaderboard, scores against the truth
    ("studies", "jobs"),  # studies of many fits; fits for a long-lived program
)


def _module_of(path: Path) -> str:
    parts = path.relative_to(CORE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, module: str | None = None) -> set[str]:
    """Every ``simplex_core`` module this file imports, at load time or inside a function (``module``:
    the file's dotted name, read from its place in the repository when not given)."""
    module = module or _module_of(path)
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
    assert "simplex_core.inference" in graph and "simplex_core.model" in graph["simplex_core.inference"]
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


def test_every_module_lives_in_a_layer_folder():
    loose = [p.name for p in CORE.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert not loose, f"modules outside the layer folders: {loose}"
    folders = {p.name for p in CORE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == {name for names in LAYERS for name in names} | {"cli"}


def test_no_module_imports_from_a_higher_layer():
    layer = _layer_of()
    undeclared, upward = [], []
    for path in sorted(CORE.rglob("*.py")):
        module = _module_of(path)
        unit = _unit(module)
        if module in ("simplex_core", "simplex_core.__main__") or unit == "simplex_core.cli":
            continue
        if unit not in layer:
            undeclared.append(module)
            continue
        for imported in sorted(_imports(path)):
            target = _unit(imported)
            if target not in layer:  # e.g. ``simplex_core.cli``: the test below
                continue
            if layer[target] > layer[unit]:
                upward.append(f"{module} (layer {layer[unit]}) imports {imported} (layer {layer[target]})")
    assert not undeclared, f"modules in no layer folder: {undeclared}"
    assert not upward, "imports running up the layers:\n" + "\n".join(upward)


def test_modules_import_no_circle_within_their_folders():
    graph: dict[str, set[str]] = {}
    for path in CORE.rglob("*.py"):
        module = _module_of(path)
        graph[module] = {m for m in _imports(path) if m != module and _unit(m) == _unit(module)
                         and not path.name == "__init__.py"}
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nb in sorted(graph.get(node, ())):
            if state.get(nb) == 1:
                raise AssertionError("import circle: " + " → ".join(path[path.index(nb):] + [node, nb])
                                     if nb in path else f"import circle through {node} → {nb}")
            if nb in graph and state.get(nb) is None:
                visit(nb, path + [node])
        state[node] = 2

    for node in sorted(graph):
        if state.get(node) is None:
            visit(node, [])


def test_only_the_command_line_imports_the_command_line_and_nothing_imports_the_app():
    for path in CORE.rglob("*.py"):
        text = path.read_text()
        assert "import streamlit" not in text and "from streamlit" not in text, path
        assert "app_support" not in {m.split(".")[0] for m in _imports(path)}, path
        if _unit(_module_of(path)) not in ("simplex_core.cli", "simplex_core", "simplex_core.__main__"):
            assert not any(_unit(m) == "simplex_core.cli" for m in _imports(path)), path


def _private_imports(path: Path) -> list[str]:
    """``from simplex_core.x import _name`` in this file: a private name used outside its module."""
    return [f"{node.module}.{a.name}" for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("simplex_core")
            for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]


def test_no_private_name_crosses_a_module_of_the_core(tmp_path):
    crossing = [f"{path.relative_to(CORE).as_posix()} imports {name}" for path in sorted(CORE.rglob("*.py"))
                for name in _private_imports(path)]
    assert not crossing, "make these public, or move them to the module that uses them:\n" + "\n".join(crossing)
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from simplex_core.cli.fit_commands import _prepare, write_output\n")
    assert _private_imports(probe) == ["simplex_core.cli.fit_commands._prepare"]  # the rule is live


APP = [CORE.parent / "app.py", *sorted((CORE.parent / "pages").glob("*.py")), *sorted((CORE.parent / "app_support").glob("*.py"))]


def test_the_app_never_imports_the_command_line():
    """The app is a front end beside the command line, not on top of it: what both need (the command
    lines the Export page shows, for one) lives in the core's layers."""
    assert len(APP) > 10 and all(p.exists() for p in APP)
    reaching = [f"{p.relative_to(CORE.parent).as_posix()} imports {m}" for p in APP for m in sorted(_imports(p))
                if _unit(m) == "simplex_core.cli"]
    assert not reaching, "the app imports the command line:\n" + "\n".join(reaching)


def test_the_import_reader_sees_a_page_importing_the_command_line_inside_a_function(tmp_path):
    page = tmp_path / "page.py"
    page.write_text("import simplex_core.data.table\n\ndef f():\n    from simplex_core.cli.fit_commands import register\n")
    found = _imports(page, module="pages.page")
    assert [m for m in found if _unit(m) == "simplex_core.cli"] == ["simplex_core.cli.fit_commands"]


#: Rooms stay small enough to read: no module over MAX_MODULE_LINES lines, no function (or method) over
#: MAX_FUNCTION_LINES, docstring included. The numba kernels are exempt: numba's disk cache tracks one
#: source file per kernel, so they stay in one file (model/fast_density.py says so at its top).
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 150
SIZE_EXEMPT = ("model/fast_density.py",)


def _oversized(path: Path, name: str) -> list[str]:
    text = path.read_text()
    out = []
    if len(text.splitlines()) > MAX_MODULE_LINES:
        out.append(f"{name}: {len(text.splitlines())} lines (at most {MAX_MODULE_LINES})")
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = node.end_lineno - node.lineno + 1
            if lines > MAX_FUNCTION_LINES:
                out.append(f"{name}: {node.name} is {lines} lines (at most {MAX_FUNCTION_LINES})")
    return out


def test_no_module_is_over_800_lines_and_no_function_over_150():
    too_big = []
    for path in sorted(CORE.rglob("*.py")):
        name = path.relative_to(CORE).as_posix()
        if name not in SIZE_EXEMPT:
            too_big += _oversized(path, name)
    assert not too_big, "split these by idea:\n" + "\n".join(too_big)
    assert all((CORE / name).exists() for name in SIZE_EXEMPT)  # an exemption names a real file


def test_the_size_rule_sees_a_long_function_and_a_long_module(tmp_path):
    body = "".join(f"        x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    long_function = tmp_path / "long_function.py"
    long_function.write_text("def short():\n    return 1\n\n\nclass Room:\n    def long(self):\n" + body)
    assert _oversized(long_function, "long_function.py") == [
        f"long_function.py: long is {MAX_FUNCTION_LINES + 1} lines (at most {MAX_FUNCTION_LINES})"]
    long_module = tmp_path / "long_module.py"
    long_module.write_text("".join(f"X{i} = {i}\n" for i in range(MAX_MODULE_LINES + 1)))
    assert _oversized(long_module, "long_module.py") == [
        f"long_module.py: {MAX_MODULE_LINES + 1} lines (at most {MAX_MODULE_LINES})"]
