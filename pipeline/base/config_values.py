"""One configured value checked against its type annotation (and converted, for a CLI string)."""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, get_args, get_origin

from .errors import ConfigError


def coerce(key: str, value: Any, annotation: Any) -> Any:
    """Check (and for CLI strings, convert) one value against a type annotation."""
    if get_origin(annotation) is Literal:
        allowed = get_args(annotation)
        if value not in allowed:
            raise ConfigError(f"{key} = {value!r} is not allowed; use one of: {', '.join(map(str, allowed))}")
        return value
    if get_origin(annotation) in (typing.Union, types.UnionType):
        options = [a for a in get_args(annotation) if a is not type(None)]
        if value is None:
            return None
        return coerce(key, value, options[0]) if options else value
    if annotation is bool:
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
            return value.lower() in ("true", "1", "yes")
        if not isinstance(value, bool):
            raise ConfigError(f"{key} must be true or false, got {value!r}")
        return value
    if annotation in (int, float):
        if isinstance(value, str):
            try:
                value = annotation(value)
            except ValueError:
                raise ConfigError(f"{key} must be a number, got {value!r}") from None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{key} must be a number, got {value!r}")
        if annotation is int and float(value) != int(value):
            raise ConfigError(f"{key} must be a whole number, got {value!r}")
        return annotation(value)
    if annotation is str and not isinstance(value, str):
        raise ConfigError(f"{key} must be a string, got {value!r}")
    if get_origin(annotation) is tuple:  # a list in TOML, or "a, b, c" on the command line
        items = [v.strip() for v in value.split(",")] if isinstance(value, str) else value
        if not isinstance(items, list | tuple) or not all(isinstance(v, str) and v for v in items):
            raise ConfigError(f"{key} must be a list of words, got {value!r}")
        return tuple(items)
    return value
