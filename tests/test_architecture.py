"""The shape of pipeline/ stays as docs/architecture.md draws it: the folders (and the design
card's four modules) are the layers and imports point only down them, no import cycles, no
reaching into another module's private attributes, no module past about 400 lines (a smell to
look at, not a rule that moves code); of the tests, only the benchmark's own import bench/."""

from __future__ import annotations

import ast
import functools
from collections.abc import Collection
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pipeline"
MAX_LINES = 420  # "about 400": a module past this has outgrown one responsibility

# Third-party internals we knowingly read, each with its reason.
ALLOWED_PRIVATE = {
    ("llm.py", "_model"): "llama-cpp-python exposes the vocabulary only on the model object",
    ("llm.py", "_ctx"): "llama-cpp-python exposes the last position's logits only on the context",
    ("text_eot.py", "_ctx"): "the same: the end-of-turn model reads the last position's logits",
}


# The layers, bottom up. Each key is a place: a folder, or one of the design card's modules at
# the top of the package (stt, turns, chunker, bargein). A module imports freely within its own
# place and only strictly downward out of it: two places on one layer never import each other.
LAYERS: dict[str, int] = {
    "pipeline": 0,  # the package itself: __version__ only
    "pipeline.base": 1,  # foundations
    "pipeline.tools": 2,  # what a tool is and how one runs
    "pipeline.turns": 2,  # end-of-turn detection and the completeness signals the stages build on
    "pipeline.stages": 3,  # the models and playback
    "pipeline.stt": 4, "pipeline.chunker": 4,  # the card's modules over the stages they stream
    "pipeline.bargein": 4,  # the gate and the words verdict: decisions, no call
    "pipeline.call": 5,
    "pipeline.transports": 6,
    "pipeline.testing": 7,  # what tests, the benchmark and users share (it may run transports)
    "pipeline.cli": 8,  # the command line
    "pipeline.__main__": 9,  # `python -m pipeline`: the command line's entry
}


def place_of(module: str) -> str:
    """The longest LAYERS key `module` is under; a module the table does not place is an error."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        if (prefix := ".".join(parts[:n])) in LAYERS:
            return prefix
    raise KeyError(f"{module} is in no layer: add its folder to LAYERS and docs/architecture.md")


def layer_of(module: str) -> int:
    return LAYERS[place_of(module)]


def _modules(package: Path) -> dict[str, Path]:
    mods = {}
    for path in package.rglob("*.py"):
        name = ".".join(path.relative_to(package.parent).with_suffix("").parts)
        mods[name.removesuffix(".__init__")] = path
    return mods


def _tree(path: Path) -> ast.Module:
    return _parse(path.read_text())


@functools.cache
def _parse(source: str) -> ast.Module:  # each text parsed once, for every check that reads it
    return ast.parse(source)


def module_imports(name: str, path: Path, known: Collection[str]) -> set[str]:
    """The modules of `known` that module `name`, read from `path`, imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(_tree(path)):
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
        found |= {t for t in targets if t in known and t != name}
    return found


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the pipeline modules it imports (TYPE_CHECKING imports count too)."""
    mods = _modules(package)
    return {name: module_imports(name, path, mods) for name, path in mods.items()}


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
    """Imports out of a module's place that do not point strictly down."""
    return sorted(f"{m} (layer {layer_of(m)}) imports {d} (layer {layer_of(d)})"
                  for m, deps in graph.items() for d in deps
                  if d != "pipeline" and place_of(d) != place_of(m) and layer_of(d) >= layer_of(m))


def test_every_module_is_in_a_layer() -> None:
    for module in import_graph():
        layer_of(module)


def test_imports_point_down_the_layers() -> None:
    assert upward_imports(import_graph()) == []


@pytest.mark.parametrize("module, line, caught", [
    ("base/audio.py", "from ..call import session", [  # a foundation reaching up to the call
        "pipeline.base.audio (layer 1) imports pipeline.call (layer 5)",
        "pipeline.base.audio (layer 1) imports pipeline.call.session (layer 5)"]),
    ("bargein.py", "from .call.turn_taking import TurnTaking", [  # the gate reaching into the call
        "pipeline.bargein (layer 4) imports pipeline.call.turn_taking (layer 5)"]),
    ("turns.py", "from .stages.vad import SileroVAD", [  # a card module above what it serves
        "pipeline.turns (layer 2) imports pipeline.stages.vad (layer 3)"]),
    ("chunker.py", "from . import stt", [  # two places on one layer
        "pipeline.chunker (layer 4) imports pipeline.stt (layer 4)"]),
    ("stages/tts.py", "from ..stt import Partial", [  # a folder reaching up to a card module
        "pipeline.stages.tts (layer 3) imports pipeline.stt (layer 4)"]),
])
def test_an_upward_import_is_caught(tmp_path: Path, module: str, line: str, caught: list[str]) -> None:
    source = PACKAGE / module
    planted = tmp_path / source.name  # the module with one more import, in place of its own
    planted.write_text(source.read_text() + f"\n\n{line}  # noqa: E402\n")
    graph = import_graph()
    name = "pipeline." + ".".join(Path(module).with_suffix("").parts)
    graph[name] = module_imports(name, planted, graph)
    assert upward_imports(graph) == caught


def test_only_main_imports_the_cli() -> None:
    importers = sorted(m for m, deps in import_graph().items() if "pipeline.cli" in deps)
    assert importers == ["pipeline.__main__"]


def imports_bench(path: Path) -> bool:
    """Does this file import bench/ anywhere (a function's own import too)?"""
    for node in ast.walk(_tree(path)):
        names = ([node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                 else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
        if any(n == "bench" or n.startswith("bench.") for n in names):
            return True
    return False


def test_the_bench_import_finder_finds_one_inside_a_function(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from bench.eot import commit_after_ms\n")
    assert imports_bench(probe)
    probe.write_text("import bench.soak as soak\n")
    assert imports_bench(probe)
    probe.write_text("from pipeline.testing import call\nbenchmark = 1\n")
    assert not imports_bench(probe)


def test_only_the_benchmark_tests_import_bench() -> None:
    """The other tests take what they share with the benchmark from pipeline.testing: a test of
    the pipeline must not need the benchmark (its data sets, its results) to run."""
    importers = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("*.py")
                       if not p.name.startswith("test_bench") and imports_bench(p))
    assert importers == []


def _private_reads(path: Path) -> list[tuple[int, str]]:
    """`x._name` where x is not self/cls and `_name` is not defined in this module."""
    tree = _tree(path)
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


def turn_writes(path: Path, fields: Collection[str]) -> list[tuple[int, str]]:
    """Assignments to one of `fields` on anything but self (`x.loud = ...`, `x.texts_checked[k] = ...`)."""
    found = []
    for node in ast.walk(_tree(path)):
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AugAssign | ast.AnnAssign) else [])
        for target in [e for t in targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])]:
            while isinstance(target, ast.Subscript):
                target = target.value
            if (isinstance(target, ast.Attribute) and target.attr in fields
                    and not (isinstance(target.value, ast.Name) and target.value.id in ("self", "cls"))):
                found.append((node.lineno, ast.unparse(target)))
    return found


def test_a_turn_is_written_by_turn_taking_alone(tmp_path: Path) -> None:
    """Barge-in, speculation, the session and the transports read a `Turn` (or know it by its
    id); only `TurnTaking` changes one. (Where a turn can reach: the call, the gate, above.)"""
    import dataclasses

    from pipeline.call.turn import Turn

    fields = {f.name for f in dataclasses.fields(Turn)}
    probe = tmp_path / "probe.py"
    probe.write_text("def f(turns, turn):\n    turns.turn.loud = True\n    turn.texts_checked['x'] = 1.0\n"
                     "    turn.held.response, x = None, 1\n")
    assert turn_writes(probe, fields) == [(2, "turns.turn.loud"), (3, "turn.texts_checked")]
    places = [PACKAGE / "call", PACKAGE / "transports", PACKAGE / "testing", PACKAGE / "bargein.py"]
    paths = [p for place in places for p in ([place] if place.is_file() else place.rglob("*.py"))
             if p.name not in ("turn.py", "turn_taking.py")]
    assert {str(p.relative_to(ROOT)): w for p in paths if (w := turn_writes(p, fields))} == {}


# --- the core knows no domain ----------------------------------------------------------------------

# What a shop's refund desk calls its things: the words that once lived in the core's rules
SHOP_WORDS = ("order", "orders", "card", "cards", "amount", "amounts", "refund", "refunds", "refunded",
              "visa", "mastercard", "amex", "invoice")
_SQL_ORDER = ("ORDER BY",)


def shop_words_in_code(source: str) -> list[tuple[int, str]]:
    """(line, word) of each shop word in a string the code uses (a cue list, a pattern, a field
    name), not in its docstrings or comments, which may give a shop as an example."""
    tree = ast.parse(source)
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            text = node.value
            for sql in _SQL_ORDER:
                text = text.replace(sql, "")
            words = {w.lower() for w in __import__("re").findall(r"[A-Za-z]+", text)}
            found += [(node.lineno, w) for w in SHOP_WORDS if w in words]
    return found


def test_the_shop_word_finder_finds_a_cue_list_and_not_a_docstring() -> None:
    source = '"""Refund an order to a card."""\n_CUES = {"order": {"order", "invoice"}}\nX = "SELECT 1 ORDER BY a"\n'
    assert sorted({w for _, w in shop_words_in_code(source)}) == ["invoice", "order"]


def test_the_tool_and_call_core_holds_no_shop_words() -> None:
    """Roles and cue words come from each agent's own tools (their parameter names, descriptions,
    `cues`, `tells`), never from the core: a clinic or a taxi line gets the same rules as a shop."""
    found = {}
    for folder in ("tools", "call"):
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            if hits := shop_words_in_code(path.read_text()):
                found[str(path.relative_to(ROOT))] = hits
    assert found == {}
