"""The configuration reference (docs/configuration.md), written from the code itself: each policy
section's fields (pipeline/base/config.py) and each default stage's constructor arguments, with
their types, defaults and the comments beside them. tests/test_config_reference.py fails when the
page and the code disagree: `pipeline config --reference > docs/configuration.md` rewrites it."""

from __future__ import annotations

import ast
import inspect
import io
import textwrap
import tokenize
from dataclasses import fields
from typing import Any

from . import config as cfg
from . import plugins
from .stage_config import stage_params

COMMAND = "pipeline config --reference > docs/configuration.md"

_INTRO = f"""\
# Configuration reference

Written from the code by `{COMMAND}`;
`tests/test_config_reference.py` fails when this page and the code disagree. Do not edit it by
hand: change the comment beside the setting in the code, then run the command.

A configuration is the defaults, then a TOML file (`--config FILE`), then each
`--set section.key=value` in order. `pipeline config` (with the same options) prints the one
that applies. A stage section (`[vad]`, `[stt]`, `[turns]`, `[llm]`, `[tts]`) names its entry
point with `name` (`pipeline plugins` lists the installed ones) and takes its constructor's
keyword arguments; the tables below are the default stages'. A policy section takes the keys
listed under it; any other key is an error that lists the allowed ones.
"""


def _comments(source: str) -> dict[int, str]:
    """Line number -> the text of the comment on that line."""
    out = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            out[tok.start[0]] = tok.string.lstrip("#").strip()
    return out


def _described(source: str, node: ast.stmt | ast.arg) -> str:
    """The comment block just above `node` and the comments on its own lines, as one paragraph."""
    lines, comments = source.splitlines(), _comments(source)
    start, end = node.lineno, node.end_lineno or node.lineno
    above: list[str] = []
    n = start - 1
    while n >= 1 and lines[n - 1].strip().startswith("#"):
        above.insert(0, comments.get(n, ""))
        n -= 1
    beside = [comments[i] for i in range(start, end + 1) if i in comments]
    return " ".join(part for part in [*above, *beside] if part)


def _type(annotation: ast.expr | None) -> str:
    if annotation is None:
        return ""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        annotation = ast.parse(annotation.value, mode="eval").body  # a string annotation
    if isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value) == "Literal":
        items = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
        return " or ".join(f"`{cfg.render_value(ast.literal_eval(i))}`" for i in items)
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        left, right = _type(annotation.left), _type(annotation.right)
        return f"{left}, or unset" if right == "None" else f"{left} or {right}"
    names = {"int": "integer", "float": "number", "bool": "true or false", "str": "string",
             "None": "None", "Path": "path", "str | Path": "path", "tuple[str, ...]": "list of strings"}
    text = ast.unparse(annotation)
    return names.get(text, f"`{text}`")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _row(key: str, kind: str, default: Any, what: str) -> str:
    shown = "unset" if default is None else f"`{_cell(cfg.render_value(default))}`"
    return f"| `{key}` | {_cell(kind)} | {shown} | {_cell(what)} |"


def _policy(section: str, cls: type) -> list[str]:
    source = inspect.getsource(cls)
    tree = ast.parse(source).body[0]
    assert isinstance(tree, ast.ClassDef)
    nodes = {n.target.id: n for n in tree.body
             if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    out = [f"## [{section}]", ""]
    if cls.__doc__ and not cls.__doc__.startswith(f"{cls.__name__}("):  # not dataclass's own
        out += [inspect.cleandoc(cls.__doc__), ""]
    out += ["| Key | Type | Default | What it does |", "|---|---|---|---|"]
    defaults = cls()  # every policy field has a default
    for f in fields(cls):
        node = nodes[f.name]
        out.append(_row(f.name, _type(node.annotation), getattr(defaults, f.name),
                        _described(source, node)))
    return out + [""]


def _stage(kind: str, stage: cfg.StageConfig) -> list[str]:
    cls = plugins.load(kind, stage.name)
    params = stage_params(kind, stage.name)
    out = [f"## [{kind}]: `{stage.name}` ({cls.__module__}.{cls.__qualname__})", ""]
    configured = ", ".join(f"`{k} = {cfg.render_value(v)}`" for k, v in stage.params.items())
    if configured:
        out += [f"The default configuration sets {configured}.", ""]
    try:
        source = textwrap.dedent(inspect.getsource(cls.__init__))  # type: ignore[misc]
        init = ast.parse(source).body[0]
        assert isinstance(init, ast.FunctionDef)
        nodes = {a.arg: a for a in init.args.kwonlyargs}
    except (OSError, TypeError, SyntaxError):
        source, nodes = "", {}
    if not params:
        return [*out, "No settings.", ""]
    out += ["| Key | Type | Default | What it does |", "|---|---|---|---|"]
    for name, p in params.items():
        node = nodes.get(name)
        what = _described(source, node) if node is not None else ""
        default = None if p.default is inspect.Parameter.empty else p.default
        out.append(_row(name, _type(node.annotation if node is not None else None), default, what))
    return out + [""]


def reference() -> str:
    """docs/configuration.md as the code stands."""
    config = cfg.Config.default()
    lines = [_INTRO, "# Stages", ""]
    for kind in cfg.STAGES:
        lines += _stage(kind, config.stage(kind))
    lines += ["# Policies", ""]
    for section, cls in cfg.POLICIES.items():
        lines += _policy(section, cls)
    return "\n".join(lines).rstrip() + "\n"
