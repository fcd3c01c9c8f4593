"""Every server event, checked against the openai SDK's own models (GA and beta unions).

Strict: JSON types must match exactly (no 1.0 for an int, no "1" for a number), a `type` the SDK
does not know fails, and so does any field its models do not declare (the SDK's models allow
extras, so drift would otherwise pass silently) except the few the hosted API itself sends
(`ALLOWED_EXTRAS`).
"""

from __future__ import annotations

import json
import typing
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

# The hosted API sends these in its session objects though the SDK's models do not declare them.
ALLOWED_EXTRAS = {"session.id", "session.object"}


def _by_type(union: Any) -> dict[str, type[BaseModel]]:
    members = typing.get_args(typing.get_args(union)[0])
    out = {}
    for model in members:
        for literal in typing.get_args(model.model_fields["type"].annotation):
            out[literal] = model
    return out


def _models() -> dict[str, dict[str, type[BaseModel]]]:
    from openai.types.beta.realtime.realtime_server_event import RealtimeServerEvent as Beta
    from openai.types.realtime.realtime_server_event import RealtimeServerEvent as GA

    return {"ga": _by_type(GA), "beta": _by_type(Beta)}


def extras(value: Any, path: str = "") -> list[str]:
    """Dotted paths of every field a model received but does not declare."""
    found: list[str] = []
    if isinstance(value, BaseModel):
        for key in value.model_extra or {}:
            found.append(f"{path}.{key}".lstrip("."))
        for name in type(value).model_fields:
            found += extras(getattr(value, name), f"{path}.{name}")
    elif isinstance(value, list):
        for i, entry in enumerate(value):
            found += extras(entry, f"{path}[{i}]")
    return found


@dataclass
class WireCheck:
    validated: int = 0
    by_type: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    _models: dict[str, dict[str, type[BaseModel]]] = field(default_factory=_models)

    def check(self, raw: str, dialect: str) -> None:
        kind = json.loads(raw).get("type", "")
        if kind.startswith("x."):
            return  # local extensions, sent only to clients that asked for them
        self.validated += 1
        self.by_type[f"{dialect}:{kind}"] = self.by_type.get(f"{dialect}:{kind}", 0) + 1
        model = self._models[dialect].get(kind)
        if model is None:
            self.failures.append(f"{dialect}: the SDK has no server event {kind!r}")
            return
        try:
            parsed = model.model_validate_json(raw, strict=True)
        except ValidationError as exc:
            self.failures.append(f"{dialect} {kind}: {exc}")
            return
        unknown = [p for p in extras(parsed) if p not in ALLOWED_EXTRAS]
        if unknown:
            self.failures.append(f"{dialect} {kind}: fields the SDK does not declare: {unknown}")
