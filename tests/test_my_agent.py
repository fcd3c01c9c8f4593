"""The "build your own agent" example (examples/my_agent.py, docs/agent.md): its tool and settings
without a model, then the example as the README runs it, on the embedded default LLM."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.base import config as cfg
from pipeline.base.models import model_file
from pipeline.stages.llm import MODELS
from pipeline.testing.scenario import load
from pipeline.testing.scenario_run import agent_config
from pipeline.transports.runtime import load_desk

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "my_agent.py"
SCENARIO = ROOT / "examples" / "my_agent.scenario.toml"

sys.path.insert(0, str(EXAMPLE.parent))
import my_agent  # noqa: E402


class NoWait:
    async def sleep(self, seconds: float) -> None:
        pass


def test_the_tool_finds_the_appointment_by_the_last_name_the_caller_gave() -> None:
    find = my_agent.build_tools(NoWait())["find_appointment"]
    for said in ("Patel", " Patel", "Maria Patel"):  # as a small model writes the argument
        found = asyncio.run(find(holding_line="One moment.", last_name=said))
        assert found["day"] == "Tuesday", said
    assert "error" in asyncio.run(find(holding_line="One moment.", last_name="Nobody"))
    assert find.spoken == ("holding_line",)  # said while the calendar is read


def test_the_scenario_the_desk_and_the_script_run_one_agent() -> None:
    scenario = load(SCENARIO)
    assert scenario.agent.llm is None  # the configured model: the embedded default
    config = agent_config(scenario)
    assert config.llm == cfg.Config.default().llm
    desk = load_desk(str(EXAMPLE))  # `pipeline serve --desk examples/my_agent.py`
    assert desk.base_config().response == config.response
    assert config.response.instructions != cfg.DEFAULT_INSTRUCTIONS and config.call.end_call
    names = [spec.name for spec in my_agent.build_tools(NoWait())]
    assert {e.tool_called for e in scenario.expect if e.tool_called} <= set(names)


def _embedded_model_or_skip() -> None:
    path = model_file(MODELS[cfg.Config.default().llm.params["model"]])
    if path.is_file():
        return
    message = f"the embedded default LLM is not downloaded ({path}): run scripts/download_models.sh"
    if os.environ.get("PIPELINE_REQUIRE_MODELS"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.mark.models
@pytest.mark.slow
def test_the_example_runs_its_scenario_on_the_embedded_model() -> None:
    pytest.importorskip("llama_cpp")
    _embedded_model_or_skip()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, str(EXAMPLE)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=900)
    story = proc.stdout + proc.stderr
    assert proc.returncode == 0, story
    assert proc.stdout.rstrip().endswith(": passed"), story  # every expectation met


def _code(line: str) -> str:
    return line.split("  #")[0].strip()


@pytest.mark.parametrize("page", ["README.md", "docs/agent.md"])
def test_the_code_the_guides_show_is_the_example_s(page: str) -> None:
    example = {_code(line) for line in EXAMPLE.read_text("utf-8").splitlines()}
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / page).read_text("utf-8"), re.S)
    assert blocks, f"{page} shows no code of the example"
    stale = [line for block in blocks for line in block.splitlines() if _code(line) not in example]
    assert not stale, f"{page} shows lines examples/my_agent.py does not have: {stale}"
