"""A whole seed call on the embedded Qwen2.5-Coder-0.5B (`llm.model`, the refund desk's
instructions, end_call offered): the caller asks for a refund with the order, the amount and
the card said; the holding line is spoken while the gateway runs; one refund moves money; the
reply about it is heard and states it (told: not yet, see the last test); the caller's goodbye ends the call once the
agent's goodbye has been heard. A tone for the caller, scripted transcripts, simulated time:
the model is the only real stage, and the assertions are on what the pipeline guarantees
around it (markup never spoken, no sentence said twice in a turn, the call not run again)."""

from __future__ import annotations

import json
import re
import sys

import pytest

from pipeline.base import config as cfg
from pipeline.base.models import model_file
from pipeline.call.session import Stages
from pipeline.stages.backchannel import syllables
from pipeline.stages.fakes import ScriptedSTT, ToneTTS
from pipeline.stages.llm import MODELS
from pipeline.stages.repeats import sentence_key
from pipeline.testing.calls import call
from pipeline.tools import Ledger
from pipeline.transports.scripted import Clip, after_stage
from pipeline.turns import HeuristicCompleteness

from . import stripe_double as sd
from .conftest import ROOT
from .test_listeners import LoudVAD, caller_tone

sys.path.insert(0, str(ROOT / "examples"))
import refund_desk  # noqa: E402

pytestmark = [pytest.mark.models, pytest.mark.slow,
              pytest.mark.skipif(not model_file(MODELS["qwen2.5-coder-0.5b"]).is_file(),
                                 reason="Qwen not downloaded: scripts/download_models.sh --only llm-qwen")]

ASK = ("Hi, I need a refund, please. Sixty-four dollars fifty for order forty four seventeen, to the card ending "
       "nine zero seven five.")
BYE = "That's all, thanks, goodbye."


def tone_for(text: str) -> float:
    return max(1.5, syllables(text) / 5)  # as long as the words take to say (pipeline.stages.backchannel)


@pytest.fixture(scope="module")
def seed_call(tmp_path_factory):
    """The one call both tests read (a minute or more of Qwen on two loaded cores)."""
    pytest.importorskip("llama_cpp")
    tmp_path = tmp_path_factory.mktemp("seed_call")
    config = refund_desk.real_model_config(["call.end_call=true"])
    llm = cfg.build_stage("llm", config.stage("llm"))
    world: dict = {}

    def setup(session) -> None:
        world["gateway"] = sd.StripeLikeGateway(tmp_path / "gateway.sqlite3", clock=session.clock, latency_s=1.0)
        world["ledger"] = Ledger(tmp_path / "ledger.sqlite3")
        session.use_tools(sd.build_tools(world["gateway"]), ledger=world["ledger"],
                          queries={"refund": world["gateway"].lookup})

    stages = Stages(vad=LoudVAD(), stt=ScriptedSTT(transcripts=[ASK, BYE]), completeness=HeuristicCompleteness(),
                    llm=llm, tts=ToneTTS(ms_per_char=30.0))
    rec = call(stages, [Clip(caller_tone(tone_for(ASK)), at_s=0.3),
                        # the goodbye once the reply about the refund has been heard
                        Clip(caller_tone(tone_for(BYE)), None, after=after_stage("heard_in_full", 2), delay_s=0.5)],
               setup=setup, config=config)
    return rec, world


def test_a_refund_on_qwen_is_held_over_run_once_and_the_goodbye_ends_the_call(seed_call) -> None:
    rec, world = seed_call
    story = rec.timeline()
    lines = rec.agent_lines
    # the refund: called once, with the caller's order, amount and card, and its holding line
    # spoken in the response that made it, while the gateway ran
    calls = rec.of("response.function_call_arguments.done")
    refunds = [c for c in calls if c.name == "refund"]
    assert len(refunds) == 1, story
    args = json.loads(refunds[0].arguments)
    assert (args["order_id"], args["amount"], args["card_last4"]) == ("4417", "64.50", "9075"), story
    first = rec.done[0].response
    assert [o["type"] for o in first["output"]] == ["message", "function_call"], story
    assert first["output"][0]["content"][0]["transcript"].strip(), story
    result_at = next(e.ts for e in rec.of("conversation.item.created") if e.item["type"] == "function_call_output")
    first_audio = next(e.ts for e in rec.of("x.stage") if e.stage == "first_audio_out")
    assert first_audio < result_at, story  # the holding line sounded before the result was in
    # one effect, in the gateway and in the ledger
    assert [(e["amount"], e["card_last4"]) for e in world["gateway"].effects()] == [("64.50", "9075")], story
    row = world["ledger"].get("refund:4417")
    assert row.state == "committed", story
    # nothing of a call is spoken, and no sentence is said twice
    assert not any("tool_call" in line or '"name"' in line or "{" in line for line in lines), story
    keys = [sentence_key(s) for line in lines for s in re.split(r"(?<=[.!?])\s+", line) if s.strip()]
    assert len(keys) == len(set(keys)), story
    # the goodbye: end_call, its farewell heard in full, then the line closes, once
    assert calls[-1].name == "end_call", story
    bye = next(d for d in rec.done if any(o["type"] == "function_call" and o["name"] == "end_call"
                                          for o in d.response["output"]))
    assert bye.response["status"] == "completed", story
    assert bye.response["output"][0]["content"][0]["transcript"].strip(), story  # the goodbye said
    hangups = [e for e in rec.of("x.log") if e.message.startswith("(hangs up")]
    assert len(hangups) == 1 and hangups[0].ts >= bye.ts and rec.caller.hung_up, story


def test_the_reply_about_the_refund_on_qwen_states_it_and_marks_it_told(seed_call) -> None:
    rec, world = seed_call
    assert world["ledger"].get("refund:4417").told, rec.timeline()
