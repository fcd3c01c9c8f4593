"""Repeat runs: a scenario with `vary` is run once per combination of the values it names, and
passes when at least `min_pass` of them do, so a flaky behaviour shows as a rate (k of N).

    vary = { "line.*.speed" = [0.85, 1.0, 1.2], "agent.world.provider.latency_s" = [0.5, 6.0] }
    min_pass = 6

A path walks the scenario's fields, tables and lists: `line.2.delay_s` is the second line's,
`line.*.delay_s` every line's, `agent.tools_args.lookup_latency_s` a tool factory's argument.
"""

from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path
from typing import Any

from pipeline.base.errors import ConfigError

from .scenario import Scenario
from .scenario_result import ScenarioResult
from .scenario_run import run

_ALIASES = {"line": "lines"}  # the TOML's [[line]] is the dataclass's `lines`


def _set(target: Any, path: list[str], value: Any, whole: str) -> None:
    head, rest = _ALIASES.get(path[0], path[0]), path[1:]
    if isinstance(target, list):
        if head == "*":
            items = target
        elif head.isdigit() and 1 <= int(head) <= len(target):
            items = [target[int(head) - 1]]
        else:
            raise ConfigError(f"vary.{whole}: {head!r} is not a line number (1-{len(target)}) or *")
        if not rest:
            raise ConfigError(f"vary.{whole} must name a key of the line")
        for item in items:
            _set(item, rest, value, whole)
        return
    if is_dataclass(target):
        names = [f.name for f in fields(target)]
        if head not in names:
            raise ConfigError(f"vary.{whole}: no {head!r} here; there is {', '.join(names)}")
        if rest:
            _set(getattr(target, head), rest, value, whole)
        else:
            setattr(target, head, value)
        return
    if isinstance(target, dict):
        if rest:
            _set(target.setdefault(head, {}), rest, value, whole)
        else:
            target[head] = value
        return
    raise ConfigError(f"vary.{whole}: cannot go into {type(target).__name__} at {head!r}")


def expand(scenario: Scenario) -> list[tuple[str, Scenario]]:
    """(label, scenario) for every combination of the varied values; the scenario alone if none."""
    if not scenario.vary:
        return [("", scenario)]
    keys = list(scenario.vary)
    out = []
    for values in itertools.product(*(scenario.vary[k] for k in keys)):
        variant = copy.deepcopy(scenario)
        variant.vary, variant.path = {}, scenario.path
        for key, value in zip(keys, values, strict=True):
            _set(variant, key.split("."), value, key)
        label = ", ".join(f"{k}={v}" for k, v in zip(keys, values, strict=True))
        variant.name = f"{scenario.name} [{label}]"
        out.append((label, variant.check()))
    return out


def run_varied(scenario: Scenario, *, artefacts: Path | None = None) -> Repeated:
    """Every variant, its artefacts in a folder of its own (`run-1`, `run-2`, ...)."""
    runs = [(label, run(variant, artefacts=artefacts / f"run-{i}" if artefacts is not None else None))
            for i, (label, variant) in enumerate(expand(scenario), 1)]
    return Repeated(scenario, runs)


@dataclass
class Repeated:
    """Every run of a varied scenario; `passed` when at least `needed` of them passed."""

    scenario: Scenario
    runs: list[tuple[str, ScenarioResult]]

    @property
    def needed(self) -> int:
        return self.scenario.min_pass if self.scenario.min_pass is not None else len(self.runs)

    @property
    def passes(self) -> int:
        return sum(r.passed for _, r in self.runs)

    @property
    def passed(self) -> bool:
        return self.passes >= self.needed

    @property
    def wall_s(self) -> float:
        return sum(r.wall_s for _, r in self.runs)

    def summary(self) -> str:
        return f"{self.passes} of {len(self.runs)} runs passed (needs {self.needed})"

    def report(self) -> str:
        lines = [f"scenario {self.scenario.name!r}: {self.summary()}"]
        for label, r in self.runs:
            if not r.passed:
                lines.append(f"--- [{label}]")
                lines += [str(f) for f in r.failures]
        return "\n".join(lines)
