"""The grounding guard against the embedded Qwen2.5-Coder-0.5B (`llm.model`), in a call with
scripted transcripts, a tone for the caller and simulated time: where the model makes up an
order id (or takes the card's digits for one), the refund is refused back to it with the
`not_run` error that tells it to ask the caller, and neither the tool nor the ledger moves.
These assert on the ledger and the refusal, never on the model's words."""

from __future__ import annotations

import json

import pytest

from pipeline.base import config as cfg
from pipeline.base.models import model_file
from pipeline.call.session import Stages
from pipeline.stages.fakes import ScriptedSTT, ToneTTS
from pipeline.stages.llm import MODELS
from pipeline.testing.calls import call
from pipeline.tools import Ledger, ToolRegistry, tool
from pipeline.transports.scripted import Clip
from pipeline.turns import HeuristicCompleteness

from .test_listeners import LoudVAD, caller_tone

pytestmark = [pytest.mark.models, pytest.mark.slow,
              pytest.mark.skipif(not model_file(MODELS["qwen2.5-coder-0.5b"]).is_file(),
                                 reason="Qwen not downloaded: scripts/download_models.sh --only llm-qwen")]


@pytest.fixture(scope="module")
def qwen():
    pytest.importorskip("llama_cpp")
    config = cfg.load(overrides=["llm.model=qwen2.5-coder-0.5b"])  # what `--set llm.model=...` builds
    return cfg.build_stage("llm", config.stage("llm"))


def refund_desk(effects: list[dict]) -> ToolRegistry:
    @tool(spoken=("holding_line",), side_effect=True, business_key=lambda a: f"refund:{a['order_id']}",
          tells=("{amount} dollars", "to the card ending {card_last4}"))
    async def refund(holding_line: str, order_id: str, amount: float, card_last4: str) -> dict:
        """Refund an amount of an order to the caller's card.

        Args:
            holding_line: What to say while the refund runs, e.g. "Let me process that refund."
            order_id: The order number the caller gave.
            amount: The amount to refund, in dollars.
            card_last4: The last four digits of the card to refund to.
        """
        effects.append({"order_id": order_id, "amount": amount, "card_last4": card_last4})
        return {"refunded": amount, "order_id": order_id}

    return ToolRegistry(specs=[refund])


def run_line(qwen, transcript: str, tmp_path, tone_s: float):
    effects: list[dict] = []
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    stages = Stages(vad=LoudVAD(), stt=ScriptedSTT(transcripts=[transcript]),
                    completeness=HeuristicCompleteness(), llm=qwen, tts=ToneTTS(ms_per_char=30.0))
    # the tool choice off: with it, the refund is not offered on these lines at all (nothing said
    # as an order), and the guard behind it has nothing to refuse
    rec = call(stages, [Clip(caller_tone(tone_s), at_s=0.3)],
               setup=lambda s: s.use_tools(refund_desk(effects), ledger=ledger),
               config=cfg.load(overrides=["call.tool_choice=false"]))
    return rec, effects, ledger


def assert_refused_and_nothing_moved(rec, effects, ledger, *, refused: str) -> None:
    story = rec.timeline()
    calls = [json.loads(c.arguments) for c in rec.of("response.function_call_arguments.done")]
    assert calls, f"the model called no tool here (nothing for the guard to refuse):\n{story}"
    outputs = [json.loads(i.output) for i in rec.session.conversation.items if i.type == "function_call_output"]
    assert outputs and all(o["status"] == "not_run" for o in outputs), outputs
    # the model is told it was not run and to ask the caller for what it made up
    assert refused in outputs[0]["message"] and "Ask the caller" in outputs[0]["message"], outputs
    assert "tool_result" in [r.purpose for r in rec.session.responder.responses], story
    assert effects == [] and ledger.rows() == [], (effects, ledger.rows())


def test_an_order_id_qwen_makes_up_for_an_amount_the_caller_gave_is_refused(qwen, tmp_path) -> None:
    """The caller gives an amount and no order: whatever order id the model puts in is its own."""
    rec, effects, ledger = run_line(qwen, "I want a refund, it was forty dollars.", tmp_path, 2.4)
    assert_refused_and_nothing_moved(rec, effects, ledger, refused="order_id")


def test_the_cards_digits_qwen_takes_for_the_order_are_refused(qwen, tmp_path) -> None:
    """The slip the role check exists for: the card's last four said, no order; the digits are
    the caller's, but not as an order number."""
    rec, effects, ledger = run_line(qwen, "I'd like a refund of twenty dollars to my card ending 1234.",
                                    tmp_path, 3.0)
    assert_refused_and_nothing_moved(rec, effects, ledger, refused="order_id")
