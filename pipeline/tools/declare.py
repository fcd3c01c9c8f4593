"""`@tool`: an async function as a tool the model may call, with what the session must know of it
(its spoken holding line, its side effect and business key, where each argument's value may come
from, the words that name them, how an outcome is told, whether it is read back first)."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from .schema import ToolSpec
from .signature import JsonSchema, parse_docstring, schema_from_signature
from .spoken import SOURCE_KEY, sources_of
from .spoken.kinds import CUES_KEY


@typing.overload
def tool(fn: Callable[..., Awaitable[Any]], /) -> ToolSpec: ...


@typing.overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    spoken: Iterable[str] | None = None,
    side_effect: bool = False,
    timeout_s: float = 10.0,
    business_key: Callable[[dict[str, Any]], str] | None = None,
    grounded: Iterable[str] | None = None,
    sources: Mapping[str, str | Iterable[str]] | None = None,
    tells: str | Iterable[str] = (),
    cues: Mapping[str, Iterable[str]] | None = None,
    read_back: bool | str = False,
) -> Callable[[Callable[..., Awaitable[Any]]], ToolSpec]: ...


def tool(
    fn: Callable[..., Awaitable[Any]] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    spoken: Iterable[str] | None = None,
    side_effect: bool = False,
    timeout_s: float = 10.0,
    business_key: Callable[[dict[str, Any]], str] | None = None,
    grounded: Iterable[str] | None = None,
    sources: Mapping[str, str | Iterable[str]] | None = None,
    tells: str | Iterable[str] = (),
    cues: Mapping[str, Iterable[str]] | None = None,
    read_back: bool | str = False,
) -> ToolSpec | Callable[[Callable[..., Awaitable[Any]]], ToolSpec]:
    """Turn an async function into a `ToolSpec`; usable bare (`@tool`) or with options.

    With `spoken` left out, a parameter called `holding_line` is spoken if the function has one.
    `grounded` names the arguments the caller must have said before it runs (`provenance`).
    `sources` says where an argument's value may come from, where its kind's default does not
    fit (`provenance`): `sources={"summary": "composed", "account_id": ["caller", "instructions"]}`
    (written into its schema as `x-source`, which a realtime client may send as well).
    `cues`: more words that name an argument, beyond its name and description (`cues={"card_last4":
    ("visa", "mastercard")}`: "the Visa ending 1111" gives the card's digits; written as `x-cues`).
    `read_back`: say the call's values back and run it on the caller's yes (True, or a sentence
    with its arguments in braces: "A taxi from {pickup_address} at {pickup_time}").
    `tells`: for a side effect, the phrases that state its outcome's facts, fields in braces
    (`tells=("{amount} dollars", "to the card ending {card_last4}")`): the caller must hear them
    for the effect to count as told, and the session says them when a reply did not.
    The returned spec is itself awaitable: `await refund(order_id="A1", holding_line="...")`.
    """

    def build(func: Callable[..., Awaitable[Any]]) -> ToolSpec:
        tool_name = name or func.__name__
        if not inspect.iscoroutinefunction(func):
            raise TypeError(
                f"Tool {tool_name!r} must be an async function (async def): tools run while "
                "the caller is on the line and must not block audio."
            )
        summary, arg_docs = parse_docstring(func.__doc__ or "")
        params = inspect.signature(func).parameters
        if spoken is None:
            spoken_names: tuple[str, ...] = ("holding_line",) if "holding_line" in params else ()
        else:
            spoken_names = tuple(spoken)
        return ToolSpec(
            name=tool_name,
            description=description if description is not None else summary,
            parameters=with_sources(tool_name, schema_from_signature(tool_name, func, arg_docs, spoken_names),
                                    sources, cues),
            fn=func,
            spoken=spoken_names,
            side_effect=side_effect,
            timeout_s=timeout_s,
            business_key=business_key,
            grounded=None if grounded is None else tuple(grounded),
            tells=(tells,) if isinstance(tells, str) else tuple(tells),
            read_back=read_back,
        )

    return build if fn is None else build(fn)


def with_sources(tool_name: str, parameters: JsonSchema, sources: Mapping[str, str | Iterable[str]] | None,
                 cues: Mapping[str, Iterable[str]] | None = None) -> JsonSchema:
    """The schema with each named argument's `x-source` and `x-cues` set (`provenance`); checked
    here, so a misspelt argument or source fails when the tool is declared, not on its first call."""
    props = parameters.get("properties", {})
    for option, given in (("sources", sources or {}), ("cues", cues or {})):
        for pname in given:
            if pname not in props:
                raise ValueError(f"Tool {tool_name!r} gives {option} for {pname!r}, which is not one of "
                                 f"its arguments ({', '.join(props)}).")
    for pname, where in (sources or {}).items():
        props[pname][SOURCE_KEY] = where if isinstance(where, str) else list(where)
        sources_of(pname, props[pname])  # raises, naming the sources there are
    for pname, words in (cues or {}).items():
        props[pname][CUES_KEY] = [words] if isinstance(words, str) else list(words)
    return parameters
