"""A stage as configured: its entry-point name and its constructor's keyword arguments, checked
against the constructor; a user's choice of model replaces the default's other way of naming one."""

from __future__ import annotations

import inspect
import typing
from dataclasses import dataclass, field
from typing import Any

from . import plugins
from .config_values import coerce
from .cpu import limit_blas_threads
from .errors import ConfigError

# Keys that name one thing two ways: a stage is given at most one of each pair.
ALTERNATIVES = (("model", "model_path"),)


@dataclass
class StageConfig:
    """An entry-point name and the keyword arguments for its constructor."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)
    # the keys of params that the built-in defaults set, not a user: a user's alternative
    # (ALTERNATIVES) replaces them instead of clashing with them
    defaults: frozenset[str] = frozenset()


def merged(kind: str, current: StageConfig, name: str, values: dict[str, Any]) -> StageConfig:
    """`values` (a user's) over `current` (the same stage's, else none); a user who names the
    model both ways is told to choose one."""
    same = name == current.name
    params = (dict(current.params) if same else {}) | values
    defaults = (current.defaults if same else frozenset()) - values.keys()
    for one, other in ALTERNATIVES:
        if one not in params or other not in params:
            continue
        if one in defaults or other in defaults:
            params.pop(one if one in defaults else other)
            continue
        raise ConfigError(f"{kind}.{one} ({params[one]!r}) and {kind}.{other} ({params[other]!r}) "
                          f"both choose the {kind} stage's model; set only one of them")
    return check_stage(kind, StageConfig(name, params, defaults & params.keys()))


def stage_params(kind: str, name: str) -> dict[str, inspect.Parameter]:
    """The stage's constructor's keyword-only arguments."""
    cls = plugins.load(kind, name)
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        return {}
    return {p.name: p for p in sig.parameters.values() if p.kind is p.KEYWORD_ONLY}


def check_stage(kind: str, stage: StageConfig) -> StageConfig:
    """Validate a stage's parameters against its constructor's keyword-only arguments."""
    params = stage_params(kind, stage.name)
    if not params:
        return stage
    try:
        hints = typing.get_type_hints(plugins.load(kind, stage.name).__init__)
    except Exception:
        hints = {}
    checked = {}
    for key, value in stage.params.items():
        if key not in params:
            raise ConfigError(
                f"unknown key {kind}.{key} for the {kind} stage {stage.name!r}; "
                f"allowed: {', '.join(params) or 'none'}"
            )
        hint = hints.get(key)
        checked[key] = coerce(f"{kind}.{key}", value, hint) if hint in (bool, int, float, str) else value
    return StageConfig(stage.name, checked, stage.defaults)


def stage_defaults(kind: str, stage: StageConfig) -> dict[str, Any]:
    """The effective parameters: the constructor's defaults overlaid with the configured ones
    (a configured model drops the constructor's default for the other way of naming it)."""
    params = stage_params(kind, stage.name)
    out = {k: p.default for k, p in params.items() if p.default is not inspect.Parameter.empty}
    for one, other in ALTERNATIVES:
        for key, alternative in ((one, other), (other, one)):
            if key in stage.params:
                out.pop(alternative, None)
    out.update(stage.params)
    return out


def build_stage(kind: str, stage: StageConfig, **extra: Any) -> Any:
    """Instantiate a stage from its entry point with its configured parameters. The process that
    builds stages keeps numpy's BLAS to one thread: the models' cores are not its (base/cpu.py)."""
    limit_blas_threads()
    cls = plugins.load(kind, stage.name)
    accepted = stage_params(kind, stage.name)
    kwargs = dict(stage.params)
    kwargs.update({k: v for k, v in extra.items() if k in accepted and k not in kwargs})
    return cls(**kwargs)
