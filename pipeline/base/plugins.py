"""Entry-point registry: every stage is found by group and name.

Groups: pipeline.vad, pipeline.stt, pipeline.turns, pipeline.llm, pipeline.tts, pipeline.transport,
pipeline.denoise.
A third-party package registers its own stage in its pyproject and is selected by name; a plugin
that fails to import is a warning naming its package, never a crash of the whole process.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from .errors import ConfigError

log = logging.getLogger(__name__)

GROUPS = ("vad", "stt", "turns", "llm", "tts", "transport", "denoise")


class PluginWarning(UserWarning):
    pass


@dataclass(frozen=True)
class PluginInfo:
    group: str
    name: str
    target: str
    package: str
    version: str


def _entry_points(group: str) -> list[EntryPoint]:
    return sorted(entry_points(group=f"pipeline.{group}"), key=lambda ep: ep.name)


def _package_of(ep: EntryPoint) -> tuple[str, str]:
    dist = getattr(ep, "dist", None)
    return (dist.name, dist.version) if dist is not None else ("?", "?")


def available(group: str) -> list[PluginInfo]:
    """Installed entry points of one group (without importing them)."""
    return [PluginInfo(group, ep.name, ep.value, *_package_of(ep)) for ep in _entry_points(group)]


def load(group: str, name: str) -> Any:
    """Import and return the object an entry point names.

    Unknown names list the installed ones; an import failure names the package to fix.
    """
    if group not in GROUPS:
        raise ConfigError(f"unknown stage group {group!r}; groups are: {', '.join(GROUPS)}")
    matches = [ep for ep in _entry_points(group) if ep.name == name]
    if not matches:
        names = ", ".join(p.name for p in available(group)) or "none installed"
        raise ConfigError(f"no {group} stage named {name!r}; installed: {names}")
    ep = matches[0]
    try:
        return ep.load()
    except Exception as exc:  # a broken third-party plugin must not look like our bug
        package, version = _package_of(ep)
        raise ConfigError(
            f"the {group} plugin {name!r} from package {package} {version} failed to import "
            f"({type(exc).__name__}: {exc}); reinstall or fix that package"
        ) from exc


def check_all() -> dict[str, list[tuple[PluginInfo, str | None]]]:
    """Import every plugin; failures become warnings naming the package (for `plugins`)."""
    report: dict[str, list[tuple[PluginInfo, str | None]]] = {}
    for group in GROUPS:
        rows = []
        for info in available(group):
            problem = None
            try:
                load(group, info.name)
            except ConfigError as exc:
                problem = str(exc)
                warnings.warn(problem, PluginWarning, stacklevel=2)
            rows.append((info, problem))
        report[group] = rows
    return report
