"""Time-outs run on the session clock: on the simulated clock a tool's time-out fires in
simulated time, exactly like any other policy delay (they used real time and never fired)."""

from __future__ import annotations

import asyncio
import json

import pytest

from pipeline.base import events as ev
from pipeline.base.clock import RealClock, SimClock
from pipeline.stages.fakes import ScriptedLLM, ToneTTS
from pipeline.testing import call, make_config, with_stages
from pipeline.tools import Ledger, ToolRegistry, tool
from pipeline.transports.scripted import Clip


def test_wait_for_times_out_on_the_simulated_clock_without_real_waiting():
    async def scenario() -> tuple[float, float]:
        clock = SimClock()
        driver = asyncio.ensure_future(clock.drive())
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            with pytest.raises(TimeoutError):
                await clock.wait_for(clock.sleep(3600.0), 30.0)
            done = await clock.wait_for(clock.sleep(1.0), 30.0)
            assert done is None
        finally:
            driver.cancel()
        return clock.now(), loop.time() - started

    simulated, real = asyncio.run(scenario())
    assert simulated == pytest.approx(31.0)  # 30 s of time-out, then the 1 s sleep
    assert real < 5.0


def test_wait_for_on_the_real_clock_returns_the_result_and_cancels_on_time_out():
    async def scenario() -> bool:
        clock = RealClock()
        cancelled = asyncio.Event()

        async def stuck() -> None:
            try:
                await asyncio.sleep(60)
            finally:
                cancelled.set()

        assert await clock.wait_for(asyncio.sleep(0.01, result="ok"), 1.0) == "ok"
        with pytest.raises(TimeoutError):
            await clock.wait_for(stuck(), 0.05)
        return cancelled.is_set()

    assert asyncio.run(scenario())


def _stages(real_stages, rules):
    """Real VAD and Whisper; a scripted LLM that answers by rule (a speculative reply that is
    dropped must not use up a scripted answer); a tone for the agent's voice."""
    return with_stages(real_stages, llm=ScriptedLLM(rules=rules, replies=["Okay."]), tts=ToneTTS())


@pytest.mark.models
def test_a_side_effect_that_times_out_leaves_its_ledger_row_unknown(real_stages, say, tmp_path):
    clock_of = {}

    @tool(side_effect=True, business_key=lambda a: f"refund:{a['order_id']}",
          tells=("{amount} dollars", "to the card ending {card_last4}"), timeout_s=3.0)
    async def refund(order_id: str, holding_line: str) -> dict:
        """Refund an order.

        Args:
            order_id: The order to refund.
            holding_line: What to say while the refund runs.
        """
        await clock_of["clock"].sleep(60.0)  # the gateway never answers
        return {"refunded": order_id}

    ledger = Ledger(tmp_path / "ledger.sqlite3")

    def setup(session) -> None:
        clock_of["clock"] = session.clock
        session.use_tools(ToolRegistry(specs=[refund]), ledger=ledger)

    call_reply = {"name": "refund", "arguments": {"order_id": "A1", "holding_line": "One moment."}}
    stages = _stages(real_stages, [["result of refund", "I am still checking on that refund."],
                                   ["refund", call_reply]])
    rec = call(stages, [Clip(say("Please refund order A1."), 0.3)], setup=setup)
    story = rec.timeline()
    asked = rec.of("response.function_call_arguments.done")
    outputs = [e for e in rec.of("conversation.item.created") if e.item["type"] == "function_call_output"]
    assert len(asked) == 1 and len(outputs) == 1, story
    assert outputs[0].ts - asked[0].ts == pytest.approx(3.0, abs=0.05), story  # simulated seconds
    assert json.loads(outputs[0].item["output"])["status"] == "unknown", story
    row = ledger.get("refund:A1")
    assert row is not None and row.state == "unknown", row  # queried later, never retried blindly


@pytest.mark.models
def test_an_end_call_abandoned_by_its_time_out_reopens_the_line(real_stages, say):
    """end_call waits for quiet after the goodbye; a grace longer than its 30 s time-out (and a
    hang-up cap that lets it run, since the cap bounds the grace) means the tool times out, and
    the line must be left open, not half-closed."""
    goodbye = {"name": "end_call", "arguments": {"goodbye": "Thanks for calling, goodbye!",
                                                 "reason": "caller is done"}}
    config = make_config(call={"end_call": True, "close_grace_ms": 40_000, "hangup_cap_ms": 40_000})
    stages = _stages(real_stages, [["result of end_call", "Sorry, I could not hang up."],
                                   ["one more thing", "Sure, what else?"], [r"all\W+thanks", goodbye]])
    outputs = lambda e: (isinstance(e, ev.ItemCreated)  # noqa: E731
                         and e.item["type"] == "function_call_output")
    rec = call(stages, [Clip(say("That's all, thanks."), 0.3),
                        Clip(say("Actually, one more thing."), None, after=outputs, delay_s=3.0)],
               config=config)
    story = rec.timeline()
    out = [e for e in rec.of("conversation.item.created") if e.item["type"] == "function_call_output"]
    asked = rec.of("response.function_call_arguments.done")
    assert len(out) == 1 and "did not answer within 30 s" in out[0].item["output"], story
    assert out[0].ts - asked[0].ts == pytest.approx(30.0, abs=0.1), story
    control = rec.session.control
    assert control.state == "open" and control.teardowns == 0, story
    assert not [e for e in rec.of("x.log") if e.message.startswith("(hangs up")], story
    assert "one more thing" in rec.transcripts[-1].lower() and rec.agent_lines[-1] == "Sure, what else?", story
