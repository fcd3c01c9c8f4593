"""The grounding guard in a whole call (real VAD and Whisper, a Piper-voiced caller, the refund
desk's scripted model, simulated clock): a card the model makes up is refused, the caller is
asked for it in the session's words, and the one refund keeps the card the caller gave."""

from __future__ import annotations

import json

import pytest

from pipeline.transports.scripted import Clip, after_stage

from .test_refund_desk import ASK, Desk

pytestmark = [pytest.mark.models, pytest.mark.slow]

# the reply about a refusal is the session's question back (`call.desk`), not the model's
ASK_DIGITS = "Could you tell me the last four digits of the card to refund to?"


def test_a_card_the_model_made_up_is_refused_and_the_caller_is_asked(real_stages, say, tmp_path):
    d = Desk(tmp_path, latency_s=8.0)
    rec = d.run(real_stages, [Clip(say(ASK), 0.3),
                              # no digits said: the model's "5678" is its own invention
                              Clip(say("Wait, please use a different credit card instead."), None,
                                   after=after_stage("heard_in_full", 1), delay_s=0.2)])
    story = rec.timeline()
    calls = [json.loads(c.arguments) for c in rec.of("response.function_call_arguments.done")]
    assert [c["card_last4"] for c in calls] == ["1234", "5678"], story
    outputs = [json.loads(i.output) for i in rec.session.conversation.items if i.type == "function_call_output"]
    refused = [o for o in outputs if o.get("status") == "not_run"]
    assert len(refused) == 1 and "card_last4" in refused[0]["message"], outputs
    assert ASK_DIGITS in rec.agent_lines, story
    assert [e["card_last4"] for e in d.provider.effects] == ["1234"]
    assert d.ledger.get("refund:4417").arguments["card_last4"] == "1234"
    assert d.mismatches(rec) == []
