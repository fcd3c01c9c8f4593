"""How an agent names its MCP servers and the options of their tools, and their schemas adapted.

A server is a stdio command (`command`, `args`, `env`, `cwd`) or a streamable-HTTP `url`, given
as an `McpServer` or as the same keys in a dict (a desk's module, a scenario's `tools_args`, a
TOML table). Its tool schemas are cut down to what `ToolSpec` and the tool grammar take
(strings, numbers, booleans, enums and arrays of those); a tool that needs more is refused at
load with a message that names the server and the tool and says how to leave it out.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from mcp.types import Tool

from .declare import with_sources
from .schema import ToolSpec
from .signature import JsonSchema

_FLAT = ("string", "integer", "number", "boolean")
HOLDING_LINE = "holding_line"


@dataclass(frozen=True, kw_only=True)
class McpToolOptions:
    """What the agent adds to one of a server's tools (MCP has no word for any of it).

    `holding_line`: the tool gets a spoken argument of that name (True: "holding_line") that the
    agent says while the server works, as `spoken=` does for a Python tool; it is never sent on.
    `business_key`: the arguments whose values name the effect ("refund of order 4417"), so the
    ledger runs it once however often it is asked for; required with `side_effect`.
    `grounded`: the arguments the caller must have said before it runs (None: every argument
    by its kind, `provenance`). `sources`: where an argument's value may come from, where its
    kind's default does not fit ({"summary": "composed"}), as `@tool(sources=...)`. `tells`: the
    phrases that state a finished effect's facts ("{amount} dollars"), as `@tool(tells=...)`.
    `read_back`: said back and run on the caller's yes, as `@tool(read_back=...)`.
    """

    side_effect: bool = False
    holding_line: bool | str = False
    timeout_s: float = 10.0
    grounded: tuple[str, ...] | None = None
    sources: dict[str, str | list[str]] | None = None
    tells: tuple[str, ...] = ()
    read_back: bool | str = False
    business_key: tuple[str, ...] | Callable[[dict[str, Any]], str] | None = None

    @property
    def spoken(self) -> str | None:
        if self.holding_line is True:
            return HOLDING_LINE
        return self.holding_line or None


@dataclass(frozen=True, kw_only=True)
class McpServer:
    """One MCP server an agent loads tools from: by `command` (stdio) or by `url` (HTTP).

    `allow` (only these tools) and `deny` (not these) filter by the server's tool names;
    `prefix` goes in front of each (two servers with a `search` tool); `label` is how the agent
    names the server to the caller when it fails ("the booking system did not answer").
    """

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] | None = None  # sent with every HTTP request (Authorization, ...)
    allow: tuple[str, ...] | None = None
    deny: tuple[str, ...] = ()
    prefix: str = ""
    label: str | None = None
    connect_timeout_s: float = 10.0
    tools: dict[str, McpToolOptions] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if (self.command is None) == (self.url is None):
            raise ValueError(f"MCP server {self.name!r} needs either command= (a program run over "
                             "stdio) or url= (streamable HTTP), not both or neither.")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"MCP server {self.name!r}: url {self.url!r} must start with http:// "
                             "or https:// (a streamable-HTTP endpoint, e.g. http://127.0.0.1:8000/mcp).")
        if self.headers and self.url is None:
            raise ValueError(f"MCP server {self.name!r}: headers= go with url=; a stdio server "
                             "takes env= instead.")
        both = sorted(set(self.deny) & set(self.tools))
        if both:
            raise ValueError(f"MCP server {self.name!r}: {both} denied and also given options; "
                             "remove one.")

    @property
    def spoken_name(self) -> str:
        return self.label or f"the {self.name} server"

    def wanted(self, tool: str) -> bool:
        return (self.allow is None or tool in self.allow) and tool not in self.deny

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> McpServer:
        """The same keys as the fields, `tools` a dict of tool name -> options (lists for tuples)."""
        known = {f.name for f in fields(cls)}
        where = f"MCP server {data.get('name', '?')!r}"
        unknown = sorted(set(data) - known)
        if unknown or "name" not in data:
            raise ValueError(f"{where}: {'unknown keys ' + str(unknown) if unknown else 'no name'}; "
                             f"a server takes {sorted(known)}.")
        values = dict(data)
        for key in ("args", "allow", "deny"):
            if values.get(key) is not None:
                values[key] = tuple(values[key])
        option_keys = {f.name for f in fields(McpToolOptions)}
        tools: dict[str, McpToolOptions] = {}
        for tool, options in (data.get("tools") or {}).items():
            if isinstance(options, McpToolOptions):
                tools[tool] = options
                continue
            stray = sorted(set(options) - option_keys)
            if stray:
                raise ValueError(f"{where}, tool {tool!r}: unknown options {stray}; a tool takes "
                                 f"{sorted(option_keys)}.")
            opts = dict(options)
            for key in ("grounded", "business_key", "tells"):
                if isinstance(opts.get(key), str):  # one argument, written without brackets
                    opts[key] = (opts[key],)
                elif isinstance(opts.get(key), list):
                    opts[key] = tuple(opts[key])
            tools[tool] = McpToolOptions(**opts)
        values["tools"] = tools
        return cls(**values)


def as_server(server: McpServer | dict[str, Any]) -> McpServer:
    return server if isinstance(server, McpServer) else McpServer.from_dict(server)


def key_function(server: McpServer, tool: str,
                 key: tuple[str, ...] | Callable[[dict[str, Any]], str] | None,
                 params: JsonSchema) -> Callable[[dict[str, Any]], str] | None:
    """The ledger's business key: a function as given, or the named arguments' values."""
    if key is None or callable(key):
        return key
    missing = [k for k in key if k not in params.get("properties", {})]
    if not key or missing:
        raise ValueError(f"MCP server {server.name!r}, tool {tool!r}: business_key names "
                         f"{missing or 'nothing'}; name the tool's arguments that identify the "
                         f"effect, e.g. business_key = [\"booking_id\"].")
    return lambda args: f"{tool}:" + ":".join(str(args.get(k, "")) for k in key)


def adapt_schema(server: McpServer, tool: str, schema: dict[str, Any],
                 spoken: str | None) -> JsonSchema:
    """The tool's input schema as `ToolSpec` takes it; the spoken argument, if any, first."""
    where = f"MCP server {server.name!r}, tool {tool!r}"
    defs = schema.get("$defs") or schema.get("definitions") or {}
    props: dict[str, JsonSchema] = {}
    if spoken is not None:
        if spoken in (schema.get("properties") or {}):
            raise ValueError(f"{where}: the holding line {spoken!r} is already one of the tool's "
                             "arguments; give holding_line another name.")
        props[spoken] = {"type": "string", "spoken": True, "description": (
            "What to say aloud while this runs, e.g. \"One moment while I check.\"")}
    for pname, prop in (schema.get("properties") or {}).items():
        props[pname] = _flat_value(where, tool, pname, prop, defs)
    required = ([spoken] if spoken else []) + [p for p in schema.get("required", []) if p in props]
    return {"type": "object", "properties": props, "required": required}


def spec_for(server: McpServer, listed: Tool, fn: Callable[..., Any] | None) -> ToolSpec:
    """The `ToolSpec` of one listed tool with the agent's options; `fn` calls the server."""
    options = server.tools.get(listed.name, McpToolOptions())
    where = f"MCP server {server.name!r}, tool {listed.name!r}"
    if options.side_effect and options.business_key is None:
        raise ValueError(f"{where} has side_effect but no business_key; name the arguments that "
                         "identify the effect (business_key = [\"booking_id\"]), so the ledger runs "
                         "it once however often it is asked for.")
    params = adapt_schema(server, listed.name, listed.input_schema, options.spoken)
    try:
        params = with_sources(listed.name, params, options.sources)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    # MCP names may hold dots and slashes; the call still goes out under the server's own name
    name = server.prefix + re.sub(r"[^A-Za-z0-9_-]", "_", listed.name)
    try:
        return ToolSpec(
            name=name,
            description=listed.description or listed.title or f"{listed.name} ({server.name})",
            parameters=params,
            fn=fn,
            spoken=(options.spoken,) if options.spoken else (),
            side_effect=options.side_effect,
            timeout_s=options.timeout_s,
            business_key=key_function(server, name, options.business_key, params),
            grounded=options.grounded,
            tells=tuple(options.tells),
            read_back=options.read_back,
        )
    except ValueError as exc:
        raise ValueError(f"{where}: {exc} {_LEAVE_OUT.format(tool=listed.name)}") from None


_LEAVE_OUT = "Leave it out with deny = [\"{tool}\"] (or an allow list without it)."


def _flat_value(where: str, tool: str, pname: str, prop: dict[str, Any],
                defs: dict[str, Any]) -> JsonSchema:
    prop = _resolve(prop, defs)
    branches = prop.get("anyOf") or prop.get("oneOf")
    if branches:  # `x: str | None`: the model is offered the value; absence covers None
        real = [_resolve(b, defs) for b in branches if _resolve(b, defs).get("type") != "null"]
        if len(real) == 1:
            prop = {**{k: v for k, v in prop.items() if k not in ("anyOf", "oneOf")}, **real[0]}
    kind = prop.get("type")
    if isinstance(kind, list):  # ["string", "null"]
        rest = [k for k in kind if k != "null"]
        kind = rest[0] if len(rest) == 1 else kind
    out: JsonSchema = {}
    if "description" in prop:
        out["description"] = str(prop["description"])
    for key in ("format", "x-source", "x-kind", "x-cues"):  # what the value is, its source (`provenance`)
        if key in prop:
            out[key] = prop[key]
    if "const" in prop:
        out["enum"] = [prop["const"]]
    elif "enum" in prop:
        out["enum"] = list(prop["enum"])
    elif kind in _FLAT:
        out["type"] = kind
    elif kind == "array":
        out["type"] = "array"
        out["items"] = _flat_value(where, tool, f"{pname}[]", prop.get("items") or {"type": "string"},
                                   defs)
        if "maxItems" in prop:
            out["maxItems"] = prop["maxItems"]
    else:
        shown = kind if kind is not None else "no single type"
        raise ValueError(f"{where}: argument {pname!r} is {shown!r}, which the tool grammar cannot "
                         f"express (it takes strings, numbers, booleans, enums and arrays of "
                         f"those). {_LEAVE_OUT.format(tool=tool)}")
    return out


def _resolve(prop: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = prop.get("$ref")
    if not isinstance(ref, str):
        return prop
    target = defs.get(ref.rsplit("/", 1)[-1])
    if target is None:
        return prop
    return {**copy.deepcopy(target), **{k: v for k, v in prop.items() if k != "$ref"}}
