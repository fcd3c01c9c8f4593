"""The shape of pipeline/ stays as docs/architecture.md draws it: the folders are the layers and
imports point only down them, no import cycles, no reaching into another module's private
attributes, no module past about 400 lines (a smell to look at, not a rule that moves code)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pipeline"
MAX_LINES = 420  # "about 400": a module past this has outgrown one responsibility

# Third-party internals we knowingly read, each with its reason.
ALLOWED_PRIVATE = {
    ("llm.py", "_model"): "llama-cpp-python exposes the vocabulary only on the model object",
    ("llm.py", "_ctx"): "llama-cpp-python exposes the last position's logits only on the context",
    ("text_eot.py", "_ctx"): "the same: the end-of-turn model reads the last position's logits",
}


# The layers, bottom up: a module may import its own layer and the layers below. The design
# card's files stay at the top of the package and belong to the layer named here.
LAYERS: dict[str, int] = {
    "pipeline": 0,  # the package itself: __version__ only
    "pipeline.base": 1,  # foundations
    "pipeline.stages": 2, "pipeline.stt": 2, "pipeline.turns": 2, "pipeline.chunker": 2,
    "pipeline.tools": 2,
    "pipeline.call": 3, "pipeline.bargein": 3,
    "pipeline.transports": 4,
    "pipeline.cli": 5, "pipeline.__main__": 5,  # entry points
    "pipeline.testing": 5,  # what tests, the benchmark and users share (it may run transports)
}


def layer_of(module: str) -> int:
    """The layer of the longest LAYERS prefix; a module the table does not place is an error."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        if (prefix := ".".join(parts[:n])) in LAYERS:
            return LAYERS[prefix]
    raise KeyError(f"{module} is in no layer: add its folder to LAYERS and docs/architecture.md")


def _modules(package: Path) -> dict[str, Path]:
    mods = {}
    for path in package.rglob("*.py"):
        name = ".".join(path.relative_to(package.parent).with_suffix("").parts)
        mods[name.removesuffix(".__init__")] = path
    return mods


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the pipeline modules it imports (TYPE_CHECKING imports count too)."""
    mods = _modules(package)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    parts = parts[: len(parts) - node.level + 1]
                    base = ".".join(parts + ([node.module] if node.module else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            graph[name] |= {t for t in targets if t in graph and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_pipeline_has_no_import_cycle() -> None:
    assert cycles(import_graph()) == []


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{m} (layer {layer_of(m)}) imports {d} (layer {layer_of(d)})"
                  for m, deps in graph.items() for d in deps
                  if d != "pipeline" and layer_of(d) > layer_of(m))


def test_every_module_is_in_a_layer() -> None:
    for module in import_graph():
        layer_of(module)


def test_imports_point_down_the_layers() -> None:
    assert upward_imports(import_graph()) == []


def test_an_upward_import_is_caught(tmp_path: Path) -> None:
    import shutil

    planted = tmp_path / "pipeline"
    shutil.copytree(PACKAGE, planted, ignore=shutil.ignore_patterns("__pycache__", "web"))
    audio = planted / "base" / "audio.py"
    audio.write_text(audio.read_text() + "\n\nfrom ..call import session  # noqa: E402\n")
    assert upward_imports(import_graph(planted)) == [
        "pipeline.base.audio (layer 1) imports pipeline.call (layer 3)",
        "pipeline.base.audio (layer 1) imports pipeline.call.session (layer 3)"]


def test_only_main_imports_the_cli() -> None:
    importers = sorted(m for m, deps in import_graph().items() if "pipeline.cli" in deps)
    assert importers == ["pipeline.__main__"]


def _private_reads(path: Path) -> list[tuple[int, str]]:
    """`x._name` where x is not self/cls and `_name` is not defined in this module."""
    tree = ast.parse(path.read_text())
    own = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            own.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            own.add(node.attr)
        elif isinstance(node, ast.Name):
            own.add(node.id)
    out = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
                and node.attr not in own and (path.name, node.attr) not in ALLOWED_PRIVATE):
            out.append((node.lineno, node.attr))
    return out


def test_private_reader_flags_a_foreign_private() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / "probe.py"
        probe.write_text("def f(session):\n    return session._inbox, session.items\n")
        assert _private_reads(probe) == [(2, "_inbox")]


def test_no_module_reads_another_modules_private_attributes() -> None:
    found = {str(p.relative_to(ROOT)): reads for p in PACKAGE.rglob("*.py") if (reads := _private_reads(p))}
    assert found == {}


def test_no_module_outgrows_one_responsibility() -> None:
    sizes = {str(p.relative_to(ROOT)): len(p.read_text().splitlines()) for p in PACKAGE.rglob("*.py")}
    assert {p: n for p, n in sizes.items() if n > MAX_LINES} == {}
