"""Your own agent in one file: a dental clinic's front desk with a tool, on the embedded model.

    python examples/my_agent.py                     # a scripted caller talks to it (its scenario)
    python examples/my_agent.py --live              # talk to it: microphone and speakers
    pipeline serve --desk examples/my_agent.py      # its tool for phone callers (docs/telephony.md)
    pipeline test examples/my_agent.scenario.toml   # what a caller must get, checked

Its settings (instructions, end_call) are in my_agent.toml; docs/agent.md walks through it.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from pipeline.base import config as cfg
from pipeline.base.clock import Clock
from pipeline.tools import ToolRegistry, tool

HERE = Path(__file__).resolve().parent
CONFIG = cfg.read_toml(HERE / "my_agent.toml", "the agent's settings")  # for `serve --desk`
APPOINTMENTS = {"patel": {"patient": "Maria Patel", "day": "Tuesday", "time": "10:30 in the morning",
                          "dentist": "Dr. Okafor"}}


def build_tools(clock: Clock) -> ToolRegistry:
    @tool
    async def find_appointment(holding_line: str, last_name: str) -> dict[str, Any]:
        """Find a patient's next appointment by their last name.

        Args:
            holding_line: What to say while looking, e.g. "Let me check the calendar."
            last_name: The patient's last name.
        """
        await clock.sleep(0.5)  # the clinic's calendar takes a moment; the holding line covers it
        found = APPOINTMENTS.get(last_name.split()[-1].lower() if last_name.strip() else "")
        return found or {"error": f"no appointment under {last_name}"}

    return ToolRegistry(specs=[find_appointment])


def desk(clock: Clock) -> ToolRegistry:
    """Each phone call's tools on `pipeline serve --desk examples/my_agent.py`."""
    return build_tools(clock)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--live", action="store_true", help="talk on the microphone and speakers")
    if not parser.parse_args().live:
        from pipeline.testing.scenario import load
        from pipeline.testing.scenario_expect import timeline
        from pipeline.testing.scenario_run import run

        result = run(load(HERE / "my_agent.scenario.toml"))
        print(timeline(result), result.report(), sep="\n\n")
        return 0 if result.passed else 1

    from pipeline.call.session import Stages
    from pipeline.transports.runtime import run_call
    from pipeline.transports.soundcard import SoundCardTransport

    config = cfg.apply(cfg.Config.default(), CONFIG)
    with SoundCardTransport() as phone:  # Ctrl-C hangs up
        stages = Stages.load(config, progress=print)
        asyncio.run(run_call(config, stages, phone, realtime=True, printer=print,
                             setup=lambda session: session.use_tools(build_tools(session.clock))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
