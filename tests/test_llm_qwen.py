"""Qwen2.5-Coder-0.5B-Instruct on llama.cpp: chosen by `llm.model`, spoken to in its own tool
format (`<tools>`, `<tool_call>`), and its calls run through the same desk, buffer and ledger as
any model's (a tone for the caller's voice, scripted transcripts, simulated time)."""

from __future__ import annotations

import json

import pytest

from pipeline.base import config as cfg
from pipeline.base.models import model_file
from pipeline.call.session import Stages
from pipeline.stages.backchannel import syllables
from pipeline.stages.fakes import ScriptedSTT, ToneTTS
from pipeline.stages.llm import MODELS
from pipeline.testing.calls import call
from pipeline.tools import Ledger, ToolRegistry, tool
from pipeline.tools.dialect import JSON, QWEN
from pipeline.transports.scripted import Clip
from pipeline.turns import HeuristicCompleteness

from .test_listeners import LoudVAD, caller_tone

QWEN_PATH = model_file(MODELS["qwen2.5-coder-0.5b"])
needs_qwen = pytest.mark.skipif(not QWEN_PATH.is_file(),
                                reason="Qwen not downloaded: scripts/download_models.sh --only llm-qwen")


def test_llm_model_names_an_embedded_model() -> None:
    pytest.importorskip("llama_cpp")
    stage = cfg.check_stage("llm", cfg.StageConfig("llama-cpp", {"model": "qwen2.5-coder-0.5b"}))
    assert stage.params["model"] == "qwen2.5-coder-0.5b"
    from pipeline.stages.llm import LlamaLLM

    with pytest.raises(ValueError, match="qwen2.5-coder-0.5b"):
        LlamaLLM(model="qwen-7b")
    assert cfg.Config.default().llm.params.get("model") == "qwen2.5-coder-0.5b"  # the embedded default
    assert MODELS["smollm2-135m"] == "llm/SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.fixture(scope="module")
def qwen():
    from pipeline.stages.llm import LlamaLLM

    return LlamaLLM(model="qwen2.5-coder-0.5b")


def refund_tools(effects: list[dict]) -> ToolRegistry:
    @tool(spoken=("holding_line",), side_effect=True, business_key=lambda a: f"refund:{a['order_id']}",
          tells=("{amount} dollars", "to the card ending {card_last4}"))
    async def refund(holding_line: str, order_id: str, amount: float) -> dict:
        """Refund an amount of an order to the caller's card.

        Args:
            holding_line: What to say while the refund runs, e.g. "Let me process that refund."
            order_id: The order number the caller gave.
            amount: The amount to refund, in dollars.
        """
        effects.append({"order_id": order_id, "amount": amount})
        return {"refunded": amount, "order_id": order_id}

    return ToolRegistry(specs=[refund])


@pytest.mark.models
@needs_qwen
def test_the_dialect_is_read_from_each_models_chat_template(qwen) -> None:
    from pipeline.stages.llm import LlamaLLM

    assert qwen.tool_dialect is QWEN
    assert LlamaLLM(n_ctx=256).tool_dialect is JSON  # SmolLM2's template has no tools


def qwen_call(qwen, transcript: str, tmp_path, *, setup_extra=None, config=None):
    effects: list[dict] = []
    ledger = Ledger(tmp_path / "ledger.sqlite3")

    def setup(session) -> None:
        session.use_tools(refund_tools(effects), ledger=ledger)

    stages = Stages(vad=LoudVAD(), stt=ScriptedSTT(transcripts=[transcript]),
                    completeness=HeuristicCompleteness(), llm=qwen, tts=ToneTTS(ms_per_char=30.0))
    # the tone lasts as long as the words take to say (five syllables a second): a transcript
    # the speech heard cannot hold is no turn (pipeline.stages.backchannel.unspoken)
    seconds = max(1.5, syllables(transcript) / 5)
    rec = call(stages, [Clip(caller_tone(seconds), at_s=0.3)], setup=setup, config=config)
    return rec, effects, ledger


@pytest.mark.models
@pytest.mark.slow
@needs_qwen
def test_qwen_calls_the_refund_tool_with_the_callers_order_and_amount(qwen, tmp_path) -> None:
    rec, effects, ledger = qwen_call(qwen, "I'd like a refund of 64.50 for order A1234, please.", tmp_path)
    calls = rec.of("response.function_call_arguments.done")
    assert [c.name for c in calls] == ["refund"], rec.timeline()
    args = json.loads(calls[0].arguments)
    assert (args["order_id"], args["amount"]) == ("A1234", 64.5), args
    # the same stream as any model's: argument deltas that add up, the holding line spoken
    # in the response that made the call, one effect in the ledger
    deltas = "".join(d.delta for d in rec.of("response.function_call_arguments.delta"))
    assert json.loads(deltas) == args
    first = rec.done[0].response
    assert [o["type"] for o in first["output"]] == ["message", "function_call"]
    assert first["output"][0]["content"][0]["transcript"].strip() == args["holding_line"].strip()
    assert effects == [{"order_id": "A1234", "amount": 64.5}]
    assert ledger.get("refund:A1234").state == "committed"


@pytest.mark.models
@pytest.mark.slow
@needs_qwen
def test_qwen_inventing_an_order_id_is_refused_and_nothing_moves(qwen, tmp_path) -> None:
    """Asked for a refund with no order and no amount, Qwen calls the refund with made-up ones;
    the guard refuses the call, the model reads why, and neither the tool nor the ledger runs.
    (The tool choice, off here, does not even offer it the refund: see the next test.)"""
    no_choice = cfg.load(overrides=["call.tool_choice=false"])
    rec, effects, ledger = qwen_call(qwen, "Hi, I want a refund for my order, please.", tmp_path,
                                     config=no_choice)
    calls = rec.of("response.function_call_arguments.done")
    assert calls and calls[0].name == "refund", rec.timeline()  # the invention this guards against
    outputs = [json.loads(i.output) for i in rec.session.conversation.items if i.type == "function_call_output"]
    assert outputs and all(o["status"] == "not_run" for o in outputs), outputs
    assert effects == []
    assert ledger.untold() == [] and ledger.get(f"refund:{json.loads(calls[0].arguments)['order_id']}") is None


@pytest.mark.models
@pytest.mark.slow
@needs_qwen
def test_with_the_tool_choice_qwen_asks_instead_of_inventing(qwen, tmp_path) -> None:
    """The same line with the tool choice on: the refund is not in the grammar (no order, no
    card said), so no call is made at all and nothing moves. (What Qwen says instead is not yet
    a question: it may write the refund in a markdown block, which is neither said nor run, and
    the reply is then silent.)"""
    rec, effects, ledger = qwen_call(qwen, "Hi, I want a refund for my order, please.", tmp_path)
    assert rec.of("response.function_call_arguments.done") == [], rec.timeline()
    assert not any("{" in line or "`" in line for line in rec.agent_lines), rec.timeline()
    assert effects == [] and ledger.rows() == [], rec.timeline()
