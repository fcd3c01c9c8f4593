"""Tool definitions: their JSON schema, validation of arguments, and parsing a tool call.

A tool is an async function described by a `ToolSpec`. The schema is built from the type
hints and the Google-style docstring, so the function is the single source of truth. A
parameter marked *spoken* (typically `holding_line`) is text the agent says aloud while the
tool runs, so the caller never sits in silence.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .signature import JsonSchema

_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
MAX_ARRAY_ITEMS = 8  # a list argument the grammar bounds when its schema gives no maxItems


@dataclass(frozen=True, kw_only=True)
class ToolSpec:
    """One tool the model may call: its schema, how it is spoken, and how it is deduplicated."""

    name: str
    description: str
    parameters: JsonSchema
    fn: Callable[..., Awaitable[Any]] | None = field(default=None, compare=False)
    spoken: tuple[str, ...] = ()
    side_effect: bool = False
    timeout_s: float = 10.0
    business_key: Callable[[dict[str, Any]], str] | None = field(default=None, compare=False)
    # the model must see this tool's result even when its response was interrupted (end_call)
    keep_on_interrupt: bool = False
    # the arguments the provenance rule checks (`provenance`); None: every one, by its kind;
    # (): none
    grounded: tuple[str, ...] | None = None
    # it ends the conversation (end_call): offered only after the caller's words close it (`choice`)
    closes: bool = False
    # the phrases that state a finished effect, its fields in braces ("{amount} dollars", "to the
    # card ending {card_last4}"): what the caller must hear for it to count as told (`confirms`)
    tells: tuple[str, ...] = ()
    # said back to the caller before it runs, and run on their yes (`call.readback`): True, or a
    # sentence with its arguments in braces ("A taxi from {pickup_address} at {pickup_time}")
    read_back: bool | str = False

    def __post_init__(self) -> None:
        if not _NAME_RE.match(self.name):
            raise ValueError(
                f"Tool name {self.name!r} is not usable: use 1-64 letters, digits, '_' or '-'."
            )
        if not self.description.strip():
            raise ValueError(
                f"Tool {self.name!r} needs a description: the model picks tools by it, "
                "so add a docstring or pass description=..."
            )
        if self.timeout_s <= 0:
            raise ValueError(f"Tool {self.name!r} needs a positive timeout_s.")
        _check_object_schema(self.name, self.parameters)
        props = self.parameters.get("properties", {})
        required = self.parameters.get("required", [])
        for pname in self.spoken:
            if pname not in props:
                raise ValueError(
                    f"Tool {self.name!r} marks {pname!r} as spoken but has no such parameter; "
                    "add the parameter or remove it from spoken=."
                )
            if props[pname].get("type") != "string" or "enum" in props[pname]:
                raise ValueError(
                    f"Spoken parameter {pname!r} of tool {self.name!r} must be a free string, "
                    "because it is read aloud to the caller."
                )
            if pname not in required:
                raise ValueError(
                    f"Spoken parameter {pname!r} of tool {self.name!r} must be required (give it "
                    "no default): small models skip optional parameters, so an optional holding "
                    "line would leave dead air while the tool runs."
                )
        for pname in self.grounded or ():
            if pname not in props or pname in self.spoken:
                raise ValueError(
                    f"Tool {self.name!r} lists {pname!r} as grounded but it is "
                    f"{'spoken' if pname in self.spoken else 'not a parameter'}; name arguments "
                    "the caller gives (ids, dates, names)."
                )
        if isinstance(self.read_back, str):
            unknown = [f for f in re.findall(r"\{(\w+)\}", self.read_back) if f not in props]
            if unknown:
                raise ValueError(f"Tool {self.name!r} reads back {unknown}, which are not its arguments "
                                 f"({', '.join(props)}); name them in braces as the schema does.")
        if self.side_effect and self.business_key is None:
            raise ValueError(
                f"Tool {self.name!r} has side effects but no business_key; pass e.g. "
                "business_key=lambda a: f\"booking:{a['booking_id']}\" so a repeated request for the "
                "same thing runs the effect once."
            )

    async def __call__(self, **arguments: Any) -> Any:
        if self.fn is None:
            raise RuntimeError(
                f"Tool {self.name!r} was loaded from a definition without code; "
                "pass fn= to ToolSpec.from_openai() to make it callable."
            )
        return await self.fn(**arguments)

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(self.parameters.get("required", ()))

    def key_for(self, arguments: dict[str, Any]) -> str | None:
        """The business key for these arguments, or None for a tool without side effects."""
        return None if self.business_key is None else self.business_key(arguments)

    def validate(self, arguments: Any) -> dict[str, Any]:
        """Check arguments against the schema; returns them, or raises ValueError saying why."""
        if not isinstance(arguments, dict):
            raise ValueError(f"Arguments for tool {self.name!r} must be a JSON object.")
        props = self.parameters.get("properties", {})
        missing = [p for p in self.required if p not in arguments]
        if missing:
            raise ValueError(f"Tool {self.name!r} is missing required argument(s): {missing}.")
        unknown = [k for k in arguments if k not in props]
        if unknown:
            raise ValueError(
                f"Tool {self.name!r} has no parameter(s) {unknown}; it takes {list(props)}."
            )
        for key, value in arguments.items():
            problem = _value_problem(props[key], value)
            if problem:
                raise ValueError(f"Argument {key!r} of tool {self.name!r} {problem}.")
        return arguments

    def to_openai(self) -> dict[str, Any]:
        """A hosted-API style function tool definition; spoken parameters keep `"spoken": true`."""
        return {
            "type": "function",
            "name": self.name,
            "description": self.description,
            "parameters": copy.deepcopy(self.parameters),
        }

    @classmethod
    def from_openai(
        cls,
        definition: dict[str, Any],
        *,
        fn: Callable[..., Awaitable[Any]] | None = None,
        side_effect: bool = False,
        timeout_s: float = 10.0,
        business_key: Callable[[dict[str, Any]], str] | None = None,
    ) -> ToolSpec:
        """Build a spec from a hosted-API tool definition (flat or nested under "function")."""
        body = definition.get("function", definition)
        if definition.get("type", "function") != "function" or "name" not in body:
            raise ValueError(
                "Only function tools can be loaded: pass a definition like "
                '{"type": "function", "name": ..., "description": ..., "parameters": {...}}.'
            )
        parameters = copy.deepcopy(body.get("parameters") or {"type": "object", "properties": {}})
        spoken: list[str] = []
        for pname, prop in parameters.get("properties", {}).items():
            # The hosted spelling "poly_spoken" means the same as ours.
            flagged = bool(prop.pop("poly_spoken", False)) or bool(prop.get("spoken", False))
            prop.pop("spoken", None)
            if flagged:
                prop["spoken"] = True
                spoken.append(pname)
        return cls(
            name=body["name"],
            description=body.get("description", ""),
            parameters=parameters,
            fn=fn,
            spoken=tuple(spoken),
            side_effect=side_effect,
            timeout_s=timeout_s,
            business_key=business_key,
        )


class ToolRegistry:
    """The tools offered to the model, by name, in the order they were added."""

    def __init__(self, *, specs: Iterable[ToolSpec] = ()) -> None:
        self._specs: dict[str, ToolSpec] = {}
        for spec in specs:
            self.add(spec)

    def add(self, spec: ToolSpec) -> ToolSpec:
        if spec.name in self._specs:
            raise ValueError(f"A tool named {spec.name!r} is already registered; rename one.")
        self._specs[spec.name] = spec
        return spec

    def get(self, name: str) -> ToolSpec | None:
        return self._specs.get(name)

    def __getitem__(self, name: str) -> ToolSpec:
        try:
            return self._specs[name]
        except KeyError:
            raise KeyError(f"No tool named {name!r}; known tools: {list(self._specs)}.") from None

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __iter__(self) -> Iterator[ToolSpec]:
        return iter(self._specs.values())

    def __len__(self) -> int:
        return len(self._specs)

    def specs(self) -> list[ToolSpec]:
        return list(self._specs.values())

    def to_openai(self) -> list[dict[str, Any]]:
        return [spec.to_openai() for spec in self._specs.values()]


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """A tool call parsed from the model's output."""

    name: str
    arguments: dict[str, Any]


def parse_tool_call(text: str, specs: Iterable[ToolSpec]) -> ToolCall | None:
    """None for plain text; a validated ToolCall for a JSON call; ValueError for a bad call."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    by_name = {spec.name: spec for spec in specs}
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"The model's tool call is not valid JSON ({exc.msg} at char {exc.pos}); "
            "generate with tool_call_grammar() so the output always parses."
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise ValueError(
            'A tool call must be a JSON object like {"name": ..., "arguments": {...}}.'
        )
    extra = set(data) - {"name", "arguments"}
    if extra:
        raise ValueError(f"A tool call has only 'name' and 'arguments', not {sorted(extra)}.")
    spec = by_name.get(data["name"])
    if spec is None:
        raise ValueError(
            f"The model called an unknown tool {data['name']!r}; known tools: {list(by_name)}."
        )
    arguments = data.get("arguments", {})
    return ToolCall(name=spec.name, arguments=spec.validate(arguments))


def _value_problem(prop: JsonSchema, value: Any) -> str | None:
    if "enum" in prop:
        if value in prop["enum"] and _same_kind(prop["enum"], value):
            return None
        return f"must be one of {prop['enum']}, not {value!r}"
    kind = prop.get("type")
    if kind == "string" and not isinstance(value, str):
        return f"must be a string, not {value!r}"
    if kind == "integer" and (not isinstance(value, int) or isinstance(value, bool)):
        return f"must be an integer, not {value!r}"
    if kind == "number" and (not isinstance(value, int | float) or isinstance(value, bool)):
        return f"must be a number, not {value!r}"
    if kind == "boolean" and not isinstance(value, bool):
        return f"must be true or false, not {value!r}"
    if kind == "array":
        if not isinstance(value, list):
            return f"must be a list, not {value!r}"
        for item in value:
            problem = _value_problem(prop.get("items", {}), item)
            if problem:
                return f"has an item that {problem}"
    return None


def _same_kind(enum: list[Any], value: Any) -> bool:
    # `True in [1]` is true in Python; an enum of ints must not accept a boolean.
    return any(type(v) is type(value) for v in enum)


def _check_object_schema(tool_name: str, schema: JsonSchema) -> None:
    if schema.get("type") != "object":
        raise ValueError(f"Parameters of tool {tool_name!r} must be a JSON schema of type object.")
    props = schema.get("properties", {})
    for pname in schema.get("required", []):
        if pname not in props:
            raise ValueError(f"Tool {tool_name!r} requires {pname!r} but does not define it.")
    for pname, prop in props.items():
        _check_value_schema(tool_name, pname, prop)


def _check_value_schema(tool_name: str, pname: str, prop: JsonSchema) -> None:
    if "enum" in prop:
        if not prop["enum"] or not all(
            isinstance(v, str | int | float | bool) for v in prop["enum"]
        ):
            raise ValueError(
                f"Parameter {pname!r} of tool {tool_name!r} needs a non-empty enum of "
                "strings, numbers or booleans."
            )
        return
    kind = prop.get("type")
    if kind == "array":
        _check_value_schema(tool_name, pname, prop.get("items", {"type": "string"}))
        if int(prop.get("maxItems", MAX_ARRAY_ITEMS)) < 1:
            raise ValueError(f"Parameter {pname!r} of tool {tool_name!r} needs maxItems >= 1.")
    elif kind not in ("string", "integer", "number", "boolean"):
        raise ValueError(
            f"Parameter {pname!r} of tool {tool_name!r} has type {kind!r}, which the tool "
            "grammar cannot express; use string, integer, number, boolean, an enum, or an "
            "array of those."
        )
