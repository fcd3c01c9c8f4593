"""A desk whose instructions hold the caller's account (real VAD and Whisper, a Piper-voiced
caller, the desk's scripted model, simulated clock): "a refund for the kettle, on my Mastercard"
runs once on the order, amount and card the account holds, is told only when the confirmation is
heard (a talk-over gets a reminder), and a card change while it is pending moves the one refund;
the same desk without the account asks, and runs nothing."""

from __future__ import annotations

import json
import sys

import pytest

from pipeline.testing import call, with_stages
from pipeline.tools import Ledger
from pipeline.transports.scripted import Clip, after_stage

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "examples"))
import account_desk as desk  # noqa: E402
import refund_desk  # noqa: E402

pytestmark = [pytest.mark.models, pytest.mark.slow]

ASK = "Hi, I'd like a refund for the kettle, please. Put it on my Mastercard."


class Desk:
    def __init__(self, tmp_path, *, latency_s: float = 1.0, account: bool = True) -> None:
        self.ledger = Ledger(tmp_path / "ledger.sqlite3")
        self.latency_s, self.account = latency_s, account
        self.provider: refund_desk.PaymentProvider | None = None

    def setup(self, session) -> None:
        self.provider = refund_desk.PaymentProvider(session.clock, latency_s=self.latency_s)
        session.client.update(instructions=desk.INSTRUCTIONS if self.account else desk.DESK)
        session.use_tools(desk.build_tools(self.provider), ledger=self.ledger,
                          queries={"issue_refund": self.provider.lookup})

    def run(self, stages, clips):
        return call(with_stages(stages, llm=desk.scripted_llm()), clips, setup=self.setup)

    def mismatches(self, rec) -> list[str]:
        return refund_desk.mismatches(self.ledger, rec.agent_lines, self.provider)


def _outputs(rec) -> list[dict]:
    return [json.loads(i.output) for i in rec.session.conversation.items if i.type == "function_call_output"]


def test_the_refund_runs_on_the_account_once_and_is_told(real_stages, say, tmp_path):
    d = Desk(tmp_path)
    rec = d.run(real_stages, [Clip(say(ASK), 0.3)])
    story = rec.timeline()
    calls = [json.loads(c.arguments) for c in rec.of("response.function_call_arguments.done")]
    assert [(c["order_id"], c["amount"], c["card_last4"]) for c in calls] == [("5120", 64.5, "5555")], story
    assert [o["status"] for o in _outputs(rec)] == ["committed"], story
    assert [(e["order_id"], e["card_last4"], e["amount"]) for e in d.provider.effects] == [("5120", "5555", "64.50")]
    assert any("64.50 dollars is on its way to the card ending 5555" in line for line in rec.agent_lines), story
    assert d.ledger.get("refund:5120").told
    assert d.mismatches(rec) == []


def test_without_the_account_nothing_runs_and_the_caller_is_asked(real_stages, say, tmp_path):
    d = Desk(tmp_path, account=False)
    rec = d.run(real_stages, [Clip(say(ASK), 0.3)])
    story = rec.timeline()
    assert d.provider.effects == [] and d.ledger.get("refund:5120") is None, story
    assert any("order number" in line and "?" in line for line in rec.agent_lines), story


def test_talking_over_the_confirmation_gets_a_reminder(real_stages, say, tmp_path):
    d = Desk(tmp_path)
    rec = d.run(real_stages, [Clip(say(ASK), 0.3),
                              Clip(say("Sorry, one more question, how long does shipping take?"), None,
                                   after=after_stage("first_audio_out", 2), delay_s=0.8)])
    story = rec.timeline()
    truncated = rec.of("conversation.item.truncated")
    assert len(truncated) == 1 and "5555" not in truncated[0].transcript, story
    lines = rec.agent_lines
    shipping = next(i for i, line in enumerate(lines) if "three days" in line)
    reminder = next(i for i, line in enumerate(lines) if line.startswith("Just to confirm"))
    assert shipping < reminder, story
    row = d.ledger.get("refund:5120")
    assert row.told and row.tell_attempts == 1
    assert len(d.provider.effects) == 1 and d.mismatches(rec) == []


def test_a_card_change_to_another_card_on_file_moves_the_one_refund(real_stages, say, tmp_path):
    d = Desk(tmp_path, latency_s=8.0)
    rec = d.run(real_stages, [Clip(say(ASK), 0.3),
                              Clip(say("Actually, put it on my Visa instead."), None,
                                   after=after_stage("heard_in_full", 1), delay_s=0.2)])
    story = rec.timeline()
    assert [e["card_last4"] for e in d.provider.effects] == ["4242"], story
    assert d.ledger.get("refund:5120").arguments["card_last4"] == "4242"
    confirmations = [line for line in rec.agent_lines if "on its way to the card ending" in line]
    assert len(confirmations) == 1 and "4242" in confirmations[0], story
    assert d.ledger.get("refund:5120").told and d.mismatches(rec) == []
