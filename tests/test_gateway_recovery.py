"""Recovery and amount changes against a gateway with Stripe's idempotency rules: the caller is
told what actually happened. A real SQLite ledger file; a crash is a SIGKILL between the money
moving and the ledger's receipt, and a new process recovers."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.base.clock import SimClock
from pipeline.testing import call, with_stages
from pipeline.tools import Ledger, ToolCall
from pipeline.tools.runner import ToolRunner
from pipeline.transports.scripted import Clip, after_stage

from . import stripe_double as sd

ROOT = Path(__file__).resolve().parents[1]
KEY = "refund:4417"
ASK = ("Hi, I need a refund, please. Sixty-four dollars fifty for order forty four seventeen, to the card ending "
       "nine zero seven five.")

# One agent process: the refund runs through the runner and the ledger; the moment the gateway
# has moved the money, the process says so and freezes until it is killed: no receipt is written.
_AGENT = """
import asyncio, sys, time
from pathlib import Path
from pipeline.base.clock import RealClock
from pipeline.tools import Ledger, ToolCall
from pipeline.tools.runner import ToolRunner
from tests import stripe_double as sd

def moved():
    print("moved", flush=True)
    time.sleep(600)

clock = RealClock()
gateway = sd.StripeLikeGateway(Path(sys.argv[2]), clock=clock, after_effect=moved)
runner = ToolRunner(sd.build_tools(gateway), ledger=Ledger(sys.argv[1]), clock=clock)
call = sd.refund_call("64.50")
asyncio.run(runner.run(ToolCall(name=call["name"], arguments=call["arguments"]), call_id="c1",
                       response_id="r1", turn_id="t1"))
print("receipt", flush=True)
"""


def crash_after_the_money_moved(tmp_path: Path) -> tuple[Path, Path]:
    """Run the refund in a process killed (SIGKILL) after the gateway moved the money and before
    the ledger recorded it; returns the ledger and gateway files."""
    ledger_path, gateway_path = tmp_path / "ledger.sqlite3", tmp_path / "gateway.sqlite3"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    agent = subprocess.Popen([sys.executable, "-c", _AGENT, str(ledger_path), str(gateway_path)], env=env,
                             cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = agent.stdout.readline().strip()
        assert line == "moved", agent.stderr.read()
        agent.send_signal(signal.SIGKILL)
        assert agent.wait(timeout=60) == -signal.SIGKILL
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
    with Ledger(ledger_path) as ledger:
        assert ledger.get(KEY).state == "pending"  # the receipt never reached the ledger
    return ledger_path, gateway_path


def _run(coro_fn):
    """Run `coro_fn(clock)` on a simulated clock."""
    async def main():
        clock = SimClock()
        driver = asyncio.ensure_future(clock.drive())
        try:
            return await coro_fn(clock)
        finally:
            driver.cancel()
    return asyncio.run(main())


def _call(amount: str) -> ToolCall:
    c = sd.refund_call(amount)
    return ToolCall(name=c["name"], arguments=c["arguments"])


def test_after_a_crash_recovery_reports_what_the_gateway_found(tmp_path):
    ledger_path, gateway_path = crash_after_the_money_moved(tmp_path)
    with Ledger(ledger_path) as ledger:  # the new process
        assert [r.business_key for r in ledger.recover()] == [KEY]

        async def retry(clock):
            gateway = sd.StripeLikeGateway(gateway_path, clock=clock)
            runner = ToolRunner(sd.build_tools(gateway), ledger=ledger, queries={"refund": gateway.lookup},
                                clock=clock)
            result = await runner.run(_call("64.50"), call_id="c2", response_id="r2", turn_id="t2")
            return result, gateway.effects()

        result, effects = _run(retry)
        assert result.output["status"] == "already_done", result.output
        assert result.output["result"]["amount"] == "64.50" and result.output["recovered"]
        assert len(effects) == 1  # queried, never retried
        row = ledger.get(KEY)
        assert row.state == "committed" and row.result == effects[0] and not row.told


def test_a_refused_amount_change_leaves_the_pending_refund_to_settle(tmp_path):
    with Ledger(tmp_path / "ledger.sqlite3") as ledger:
        async def change_while_pending(clock):
            gateway = sd.StripeLikeGateway(tmp_path / "gateway.sqlite3", clock=clock, latency_s=5.0)
            runner = ToolRunner(sd.build_tools(gateway), ledger=ledger, clock=clock)
            first = asyncio.ensure_future(runner.run(_call("64.50"), call_id="c1", response_id="r1",
                                                     turn_id="t1"))
            await clock.sleep(1.0)
            change = await runner.run(_call("80.00"), call_id="c2", response_id="r2", turn_id="t2")
            during = ledger.get(KEY)
            return change, during, await first, gateway.effects()

        change, during, first, effects = _run(change_while_pending)
        assert change.output["status"] == "change_refused" and "in-progress" in change.output["error"]
        assert change.output["still_in_progress"]["amount"] == "64.50"
        assert during.state == "pending" and during.arguments["amount"] == "64.50"  # left alone
        assert first.output["status"] == "committed" and first.output["result"]["amount"] == "64.50"
        assert [e["amount"] for e in effects] == ["64.50"]
        row = ledger.get(KEY)
        assert row.state == "committed" and row.arguments["amount"] == "64.50" and row.result == effects[0]


# --- on the line: what the caller hears (real VAD, Whisper and Piper; scripted model) ------------

def _desk_call(stages, clips, *, ledger_path: Path, gateway_path: Path, latency_s: float = 0.0):
    world: dict = {}

    def setup(session) -> None:
        gateway = world["gateway"] = sd.StripeLikeGateway(gateway_path, clock=session.clock, latency_s=latency_s)
        world["ledger"] = Ledger(ledger_path)
        session.use_tools(sd.build_tools(gateway), ledger=world["ledger"], queries={"refund": gateway.lookup})

    rec = call(with_stages(stages, llm=sd.scripted_llm()), clips, setup=setup)
    return rec, world["ledger"], world["gateway"]


@pytest.mark.models
@pytest.mark.slow
def test_the_caller_hears_what_recovery_found(real_stages, say, tmp_path):
    ledger_path, gateway_path = crash_after_the_money_moved(tmp_path)
    with Ledger(ledger_path) as ledger:  # the new process, at startup
        ledger.recover()
    rec, ledger, gateway = _desk_call(
        real_stages, [Clip(say("Hello, I am calling about my refund, please. Order forty four seventeen. "
                               "Did it go through?"), 0.3)],
        ledger_path=ledger_path, gateway_path=gateway_path)
    story = rec.timeline()
    outputs = [json.loads(i.output) for i in rec.session.conversation.items if i.type == "function_call_output"]
    assert [o["status"] for o in outputs] == ["already_done"], story
    assert not any("can't tell" in line for line in rec.agent_lines), story
    assert any("64.50" in line and "9075" in line for line in rec.agent_lines), story
    assert len(gateway.effects()) == 1
    row = ledger.get(KEY)
    assert row.state == "committed" and row.told, story


@pytest.mark.models
@pytest.mark.slow
def test_a_refused_amount_change_tells_the_caller_the_amount_that_moved(real_stages, say, tmp_path):
    rec, ledger, gateway = _desk_call(
        real_stages,
        [Clip(say(ASK), 0.3),
         Clip(say("Actually, make it eighty dollars instead."), None, after=after_stage("heard_in_full", 1),
              delay_s=0.3)],
        ledger_path=tmp_path / "ledger.sqlite3", gateway_path=tmp_path / "gateway.sqlite3", latency_s=12.0)
    story = rec.timeline()
    assert [e["amount"] for e in gateway.effects()] == ["64.50"], story
    row = ledger.get(KEY)
    assert row.state == "committed" and row.arguments["amount"] == "64.50", story
    lines = rec.agent_lines
    assert not any("did not go through" in line or "went wrong" in line for line in lines), story
    refused = next((i for i, line in enumerate(lines) if "can't change the amount" in line), None)
    landed = next((i for i, line in enumerate(lines) if "64.50" in line and "9075" in line), None)
    assert refused is not None and landed is not None, story
    assert refused < landed and "80" not in lines[landed], story
    assert row.told, story


class _SettlesWithTheChange(sd.StripeLikeGateway):
    """The first refund stays pending until a second request under its key has waited
    `change_s` at the gateway; then both answer at the same moment (the change refused with a
    409, the first refund landed), after both holding lines have been said."""

    def __init__(self, *args, change_s: float = 3.0, **kwargs) -> None:
        self.changed, self.change_s = asyncio.Event(), change_s
        super().__init__(*args, settle_when=self.changed.wait, **kwargs)

    async def refund(self, **kwargs):
        if self.db.execute("SELECT 1 FROM requests WHERE key = ?", (kwargs["idempotency_key"],)).fetchone():
            await self.clock.sleep(self.change_s)
            self.changed.set()
        return await super().refund(**kwargs)


@pytest.mark.models
@pytest.mark.slow
def test_two_results_that_land_together_are_answered_in_one_reply(real_stages, say, tmp_path):
    world: dict = {}

    def setup(session) -> None:
        gateway = world["gateway"] = _SettlesWithTheChange(tmp_path / "gateway.sqlite3", clock=session.clock)
        world["ledger"] = Ledger(tmp_path / "ledger.sqlite3")
        session.use_tools(sd.build_tools(gateway), ledger=world["ledger"], queries={"refund": gateway.lookup})

    rec = call(with_stages(real_stages, llm=sd.scripted_llm()),
               [Clip(say(ASK), 0.3),
                Clip(say("Actually, make it eighty dollars instead."), None,
                     after=after_stage("heard_in_full", 1), delay_s=0.3)], setup=setup)
    story = rec.timeline()
    gateway, ledger = world["gateway"], world["ledger"]
    assert [e["amount"] for e in gateway.effects()] == ["64.50"], story
    calls = [e for e in rec.of("response.function_call_arguments.done") if e.name == "refund"]
    assert len(calls) == 2, story  # the request and the change; no third call
    outputs = [json.loads(i.output) for i in rec.session.conversation.items if i.type == "function_call_output"]
    assert sorted(o["status"] for o in outputs) == ["change_refused", "committed"], story
    replies = [r for r in rec.session.responder.responses if r.purpose == "tool_result"]
    assert len(replies) == 1, story  # one reply saw both results
    confirmations = [line for line in rec.agent_lines if "64.50" in line and "9075" in line]
    assert len(confirmations) == 1, story  # the caller hears the refund confirmed once
    assert ledger.get(KEY).told, story
