"""What a played scenario leaves: the call's record, the caller, the world, the ledger, the verdict."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.tools import Ledger

from .calls import CallRecord
from .scenario import Scenario
from .scenario_caller import ScenarioCaller


@dataclass
class Failure:
    expectation: str  # as written: `tool_called = "refund", times = 1`
    why: str
    events: list[str] = field(default_factory=list)  # the timeline lines that show it

    def __str__(self) -> str:
        lines = [f"expected {self.expectation}: {self.why}"]
        return "\n".join(lines + [f"    {e}" for e in self.events])


@dataclass
class ScenarioResult:
    scenario: Scenario
    record: CallRecord
    caller: ScenarioCaller
    world: dict[str, Any]
    ledger: Ledger
    failures: list[Failure]
    wall_s: float
    artefacts: dict[str, Path] = field(default_factory=dict)
    persona_lines: list[tuple[float, str]] = field(default_factory=list)  # an LLM-played caller's

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def call_s(self) -> float:
        return self.caller.ended_at_s or 0.0

    def report(self) -> str:
        head = f"scenario {self.scenario.name!r}: " + ("passed" if self.passed else
                                                      f"{len(self.failures)} expectation(s) failed")
        return "\n".join([head, *map(str, self.failures)])
