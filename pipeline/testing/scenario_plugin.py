"""The pytest plugin: every `*.scenario.toml` under the paths pytest collects is a test, and the
`call_scenario` fixture runs one from a test (a file, or a `Scenario` built in Python).

Installed with the package (the `pytest11` entry point); without installing, add
`-p pipeline.testing.scenario_plugin` or register it from a conftest. A scenario voiced by
Piper is marked `models` and `slow`, a text one neither, so `-m "not models"` keeps the fast ones.

    def test_my_agent(call_scenario):
        result = call_scenario("scenarios/booking.scenario.toml")
        assert result.ledger.get("refund:4417").told
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .scenario import Scenario, load
from .scenario_expect import timeline
from .scenario_result import ScenarioResult
from .scenario_run import run
from .scenario_vary import Repeated, run_varied


class ScenarioFailed(AssertionError):
    def __init__(self, result: ScenarioResult | Repeated) -> None:
        super().__init__(result.report())
        self.result = result

    def story(self) -> str:
        """The report, then the (first failing run's) timeline and where its artefacts are."""
        result = self.result
        if isinstance(result, Repeated):
            result = next(r for _, r in result.runs if not r.passed)
        where = f"\nartefacts: {result.artefacts['timeline'].parent}" if result.artefacts else ""
        return f"{self.result.report()}\n\ntimeline:\n{timeline(result)}{where}"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "scenario: a call scenario (*.scenario.toml)")


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    if file_path.name.endswith(".scenario.toml"):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


class ScenarioFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        scenario = load(self.path)
        item = ScenarioItem.from_parent(self, name=scenario.name, scenario=scenario)
        item.add_marker(pytest.mark.scenario)
        if scenario.voice != "text" or scenario.agent.voice == "piper" or scenario.agent.llm is None:
            item.add_marker(pytest.mark.models)
            item.add_marker(pytest.mark.slow)
        yield item


class ScenarioItem(pytest.Item):
    def __init__(self, *, scenario: Scenario, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario

    def runtest(self) -> None:
        folder = Path(tempfile.mkdtemp(prefix=f"scenario-{self.path.name.removesuffix('.scenario.toml')}-"))
        result = (run_varied(self.scenario, artefacts=folder) if self.scenario.vary
                  else run(self.scenario, artefacts=folder))
        if not result.passed:
            raise ScenarioFailed(result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ScenarioFailed):
            return excinfo.value.story()
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"scenario: {self.name}"


@pytest.fixture
def call_scenario(tmp_path: Path) -> Callable[..., Any]:
    """Runs a scenario (a path or a `Scenario`) with its artefacts under the test's tmp_path and
    returns its result (a `Repeated` for one with `vary`); `check=True` fails the test on a
    failed expectation, with the events."""
    count = [0]

    def play(scenario: str | Path | Scenario, *, check: bool = False) -> ScenarioResult | Repeated:
        count[0] += 1
        scenario = scenario if isinstance(scenario, Scenario) else load(scenario)
        folder = tmp_path / f"scenario-{count[0]}"
        result = run_varied(scenario, artefacts=folder) if scenario.vary else run(scenario, artefacts=folder)
        if check and not result.passed:
            raise ScenarioFailed(result)
        return result

    return play
