"""A tool's JSON schema read from its Python signature and its Google-style docstring."""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Any, Literal

JsonSchema = dict[str, Any]

_SCALARS: dict[type, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_SUPPORTED = "str, int, float, bool, Literal[...] or list[str]"


def schema_from_signature(
    tool_name: str,
    func: Callable[..., Any],
    arg_docs: dict[str, str],
    spoken: tuple[str, ...],
) -> JsonSchema:
    hints = typing.get_type_hints(func)
    properties: dict[str, JsonSchema] = {}
    required: list[str] = []
    for pname, param in inspect.signature(func).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise TypeError(
                f"Tool {tool_name!r} takes {pname!r} in a way the model cannot fill; "
                "give every parameter a name the model passes by keyword."
            )
        if pname not in hints:
            raise TypeError(
                f"Parameter {pname!r} of tool {tool_name!r} needs a type hint ({_SUPPORTED})."
            )
        prop = _schema_for_type(tool_name, pname, hints[pname])
        if pname in arg_docs:
            prop["description"] = arg_docs[pname]
        if pname in spoken:
            prop["spoken"] = True
        properties[pname] = prop
        if param.default is inspect.Parameter.empty:
            required.append(pname)
    stray = set(arg_docs) - set(properties)
    if stray:
        raise ValueError(
            f"The docstring of tool {tool_name!r} documents {sorted(stray)}, which the function "
            "does not take; fix the Args: section."
        )
    return {"type": "object", "properties": properties, "required": required}


def _schema_for_type(tool_name: str, pname: str, hint: Any) -> JsonSchema:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        # `x: str | None = None` offers the model a str; the default covers absence.
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return _schema_for_type(tool_name, pname, rest[0])
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    if origin is Literal:
        kinds = {type(v) for v in args}
        if len(kinds) == 1 and next(iter(kinds)) in _SCALARS:
            return {"type": _SCALARS[next(iter(kinds))], "enum": list(args)}
    if origin is list and len(args) == 1:
        return {"type": "array", "items": _schema_for_type(tool_name, pname, args[0])}
    raise TypeError(
        f"Parameter {pname!r} of tool {tool_name!r} has type {hint!r}, which a tool schema "
        f"cannot express; use {_SUPPORTED}."
    )


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The first paragraph, and parameter descriptions from a Google-style `Args:` section."""
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    for line in lines:
        if not line.strip():
            break
        summary.append(line.strip())
    arg_docs: dict[str, str] = {}
    start = next(
        (i for i, line in enumerate(lines) if line.strip() in ("Args:", "Arguments:")), None
    )
    if start is None:
        return " ".join(summary), arg_docs
    base = _indent(lines[start])
    entry_indent: int | None = None
    current: str | None = None
    for line in lines[start + 1 :]:
        if not line.strip():
            continue
        indent = _indent(line)
        if indent <= base:
            break
        if entry_indent is None:
            entry_indent = indent
        match = re.match(r"^(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$", line.strip())
        if indent == entry_indent and match:
            current = match.group(1)
            arg_docs[current] = match.group(2).strip()
        elif current is not None:
            arg_docs[current] = (arg_docs[current] + " " + line.strip()).strip()
    return " ".join(summary), arg_docs


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())
