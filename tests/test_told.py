"""`told` follows what the caller heard, whichever response said it (real VAD, Whisper and Piper,
a Piper-voiced caller, a scripted model, the simulated clock, a gateway with Stripe's rules)."""

from __future__ import annotations

import asyncio

import pytest

from pipeline.base import events as ev
from pipeline.testing import call, with_stages
from pipeline.tools import Ledger
from pipeline.transports.scripted import Clip, after_stage

from . import stripe_double as sd

pytestmark = [pytest.mark.models, pytest.mark.slow]

KEY = "refund:4417"
ASK = ("Hi, I need a refund, please. Sixty-four dollars fifty for order forty four seventeen, to the card ending "
       "nine zero seven five.")


class CardDesk:
    """One call's world: the gateway (its own file), the ledger file, the session's tools.

    `settle_on_speech=n`: the refund settles half a second after the caller starts speaking for
    the nth time, so it lands while they are asking.
    """

    def __init__(self, tmp_path, *, latency_s: float = 1.0, settle_on_speech: int | None = None) -> None:
        self.tmp_path, self.latency_s, self.settle_on_speech = tmp_path, latency_s, settle_on_speech
        self.ledger: Ledger | None = None
        self.gateway: sd.StripeLikeGateway | None = None

    def setup(self, session) -> None:
        settle_when = None
        if self.settle_on_speech is not None:
            spoke = asyncio.Event()
            starts = []

            def listen(event) -> None:
                if event.type == "input_audio_buffer.speech_started":
                    starts.append(event)
                    if len(starts) == self.settle_on_speech:
                        spoke.set()

            session.listeners.add(listen, ev.EventPhase.OBSERVER)

            async def settle_when() -> None:
                await spoke.wait()
                await session.clock.sleep(0.5)

        self.gateway = sd.StripeLikeGateway(self.tmp_path / "gateway.sqlite3", clock=session.clock,
                                            latency_s=self.latency_s, settle_when=settle_when)
        self.ledger = Ledger(self.tmp_path / "ledger.sqlite3")
        session.use_tools(sd.build_tools(self.gateway), ledger=self.ledger, queries={"refund": self.gateway.lookup})

    def run(self, stages, clips):
        return call(with_stages(stages, llm=sd.scripted_llm()), clips, setup=self.setup)


def _confirming(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if "64.50" in line and "9075" in line]


def test_a_turn_reply_heard_in_full_that_confirms_marks_told(real_stages, say, tmp_path):
    """The refund lands while the caller asks "did that go through?"; the answer to that turn
    states it, is heard to its last sample, and no reminder repeats it."""
    d = CardDesk(tmp_path, settle_on_speech=2)
    rec = d.run(real_stages, [Clip(say(ASK), 0.3),
                              Clip(say("Sorry, did that go through?"), None, after=after_stage("heard_in_full", 1),
                                   delay_s=0.3)])
    story = rec.timeline()
    landed = [e.ts for e in rec.of("conversation.item.created") if e.item["type"] == "function_call_output"]
    assert len(landed) == 1 and landed[0] < rec.commits[1].ts, story  # the result landed while the caller was still asking
    lines = rec.agent_lines
    assert len(_confirming(lines)) == 1 and lines[-1].startswith("Yes, that went through"), story
    assert not rec.of("conversation.item.truncated"), story  # heard in full
    row = d.ledger.get(KEY)
    assert row.state == "committed" and row.told and row.tell_attempts == 0, story
    assert not any(line.startswith("Just to confirm") for line in lines), story


def test_a_reply_that_names_neither_amount_nor_card_is_followed_by_the_statement(real_stages, say, tmp_path):
    """The confirmation is cut off before the card; the caller asks for another card; the refusal
    ("can't change a refund that has already gone through") names neither amount nor card, so
    on its own it tells nothing. The session says the outcome after it, in the same reply
    (`call.owed`), and that heard is what marks it told: no reminder is needed."""
    d = CardDesk(tmp_path, latency_s=1.0)
    rec = d.run(real_stages, [
        Clip(say(ASK), 0.3),
        # the caller gives the other card: one the model made up would be refused before the ledger
        Clip(say("Wait, please put it on a different card, the one ending five six seven eight."), None,
             after=after_stage("first_audio_out", 2), delay_s=0.8),
        Clip(say("Okay. How long will it take to arrive?"), None, after=after_stage("heard_in_full", 3),
             delay_s=0.5),
    ])
    story = rec.timeline()
    truncated = rec.of("conversation.item.truncated")
    assert len(truncated) == 1 and "9075" not in truncated[0].transcript, story  # cut before the card
    lines = rec.agent_lines
    refusal = next((line for line in lines if line.startswith("I can't change a refund")), None)
    assert refusal is not None, story
    assert refusal.endswith("That went through: 64.50 dollars to the card ending 9075."), story
    assert not any(line.startswith("Just to confirm") for line in lines), story
    row = d.ledger.get(KEY)
    assert row.told and row.tell_attempts == 0, story
    assert [e["amount"] for e in d.gateway.effects()] == ["64.50"]


def test_a_reply_superseded_by_the_callers_turn_still_gets_a_reminder(real_stages, say, tmp_path):
    """The refund lands while the caller asks something else; the answer to that turn sees the
    result but does not state it, and the reply about the result is dropped as superseded: a
    reminder must still follow, without the caller having to speak again."""
    d = CardDesk(tmp_path, settle_on_speech=2)
    rec = d.run(real_stages, [Clip(say(ASK), 0.3),
                              Clip(say("Sorry, how long do refunds usually take to arrive?"), None,
                                   after=after_stage("heard_in_full", 1), delay_s=0.3)])
    story = rec.timeline()
    lines = rec.agent_lines
    days = next((i for i, line in enumerate(lines) if "five to ten days" in line), None)
    reminder = next((i for i, line in enumerate(lines) if line.startswith("Just to confirm")), None)
    assert days is not None and reminder is not None, story
    assert reminder > days and reminder in _confirming(lines), story
    assert d.ledger.get(KEY).told, story
