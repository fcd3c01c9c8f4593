"""The refund desk scenarios, each asserted with the reconciliation (real VAD and Whisper,
Piper-voiced caller, the desk's scripted model, simulated clock)."""

from __future__ import annotations

import json
import sys

import pytest

from pipeline.tools import Ledger
from pipeline.transports.scripted import Clip, after_stage

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "examples"))
import refund_desk as desk  # noqa: E402

from pipeline.testing import call, with_stages

pytestmark = [pytest.mark.models, pytest.mark.slow]

ASK = "I would like a refund for order forty four seventeen, to the card ending one two three four."


class Desk:
    """One call's world: the provider, the ledger file, the session's tools."""

    def __init__(self, tmp_path, *, latency_s: float = 1.0, fail_with: str | None = None,
                 lookup_latency_s: float = 0.5, ledger_path=None) -> None:
        self.ledger_path = ledger_path or tmp_path / "ledger.sqlite3"
        self.latency_s, self.fail_with, self.lookup_latency_s = latency_s, fail_with, lookup_latency_s
        self.ledger: Ledger | None = None
        self.provider: desk.PaymentProvider | None = None
        self.llm = desk.scripted_llm()

    def setup(self, session) -> None:
        self.provider = self.provider or desk.PaymentProvider(session.clock, latency_s=self.latency_s,
                                                              fail_with=self.fail_with)
        self.provider.clock = session.clock
        self.ledger = Ledger(self.ledger_path)
        session.use_tools(desk.build_tools(self.provider, lookup_latency_s=self.lookup_latency_s),
                          ledger=self.ledger, queries={"refund": self.provider.lookup})

    def run(self, stages, clips, **kw):
        rec = call(with_stages(stages, llm=self.llm), clips, setup=self.setup, **kw)
        return rec

    def mismatches(self, rec) -> list[str]:
        return desk.mismatches(self.ledger, rec.agent_lines, self.provider)


def _outputs(rec) -> list[dict]:
    return [json.loads(i.output) for i in rec.session.conversation.items if i.type == "function_call_output"]


def test_refund_is_spoken_over_runs_once_and_is_confirmed(real_stages, say, tmp_path):
    d = Desk(tmp_path)
    rec = d.run(real_stages, [Clip(say(ASK), 0.3)])
    calls = rec.of("response.function_call_arguments.done")
    assert [c.name for c in calls] == ["refund"]
    deltas = [d for d in rec.of("response.function_call_arguments.delta") if d.call_id == calls[0].call_id]
    assert len(deltas) > 3 and {d.response_id for d in deltas} == {calls[0].response_id}
    assert json.loads("".join(d.delta for d in deltas)) == json.loads(calls[0].arguments)
    # the holding line is in the same response as the call, and the tool started before it ended
    first = rec.done[0].response
    assert [o["type"] for o in first["output"]] == ["message", "function_call"]
    assert "process that refund" in first["output"][0]["content"][0]["transcript"]
    assert any("on its way to the card ending 1234" in line for line in rec.agent_lines)
    assert d.ledger.get("refund:4417").told
    assert d.mismatches(rec) == []


def test_a_repeated_request_is_the_same_effect(real_stages, say, tmp_path):
    d = Desk(tmp_path)
    rec = d.run(real_stages, [Clip(say(ASK), 0.3),
                              Clip(say("Actually, please refund it again."), None,
                                   after=after_stage("heard_in_full", 2), delay_s=0.5)])
    assert len(d.provider.effects) == 1
    assert _outputs(rec)[-1]["status"] == "already_done"
    row = d.ledger.get("refund:4417")
    assert len(row.call_ids) == 2 and row.state == "committed"
    assert any("already went through" in line for line in rec.agent_lines)
    assert d.mismatches(rec) == []


def test_wrong_card_while_pending_updates_the_one_refund(real_stages, say, tmp_path):
    d = Desk(tmp_path, latency_s=8.0)
    rec = d.run(real_stages, [Clip(say(ASK), 0.3),
                              # the caller gives the new card: one the model made up is never used
                              Clip(say("Wait, please use a different credit card instead, the one "
                                       "ending five six seven eight."), None,
                                   after=after_stage("heard_in_full", 1), delay_s=0.2)])
    assert len(d.provider.effects) == 1 and d.provider.effects[0]["card_last4"] == "5678", rec.timeline()
    assert d.ledger.get("refund:4417").arguments["card_last4"] == "5678"
    assert "5678" in " ".join(rec.agent_lines)
    assert d.mismatches(rec) == []
    # both calls answer when the one refund lands: one reply sees both results, one confirmation
    confirmations = [line for line in rec.agent_lines if "on its way to the card ending" in line]
    assert len(confirmations) == 1, rec.timeline()
    assert len([r for r in rec.session.responder.responses if r.purpose == "tool_result"]) == 1


def test_the_reply_about_results_of_two_turns_says_neither_holding_line_again(real_stages, say, tmp_path):
    """The refund (asked in the first turn) and the card change (the second) land together, and
    one reply answers both: a model that opens it with the second turn's holding line, as Qwen
    did, has that sentence dropped too, not only the first turn's."""
    d = Desk(tmp_path, latency_s=8.0)
    again = "Okay, switching it to the other card."
    d.llm.rules.insert(0, next((p, again + " " + r) for p, r in d.llm.rules if "committed" in p.pattern))
    rec = d.run(real_stages, [Clip(say(ASK), 0.3),
                              Clip(say("Wait, please use a different credit card instead, the one "
                                       "ending five six seven eight."), None,
                                   after=after_stage("heard_in_full", 1), delay_s=0.2)])
    assert d.provider.effects[0]["card_last4"] == "5678" and d.mismatches(rec) == []
    said = " ".join(rec.agent_lines)
    assert said.count(again) == 1 and said.count("on its way to the card ending 5678") == 1, rec.timeline()


def test_the_reply_about_a_result_does_not_repeat_a_later_turns_holding_line(real_stages, say, tmp_path):
    """The card change on Qwen: the caller's second turn made another call (a look-up, with its
    holding line) while the refund ran; the refund landed, and the reply about it opened with
    the look-up's holding line, said a moment before. It says only what is new."""
    d = Desk(tmp_path, latency_s=8.0, lookup_latency_s=9.0)  # under the tools' 10 s timeout
    again = "Let me pull up that order for you."
    d.llm.rules.insert(0, next((p, again + " " + r) for p, r in d.llm.rules if "committed" in p.pattern))
    rec = d.run(real_stages, [Clip(say(ASK), 0.3),
                              Clip(say("Where is my order?"), None, after=after_stage("heard_in_full", 1),
                                   delay_s=0.2)])
    said = " ".join(rec.agent_lines)
    assert said.count(again) == 1 and said.count("on its way to the card ending 1234") == 1, rec.timeline()
    assert d.mismatches(rec) == []


def test_a_provider_error_is_said_and_nothing_moves(real_stages, say, tmp_path):
    d = Desk(tmp_path, fail_with="the card issuer declined the refund")
    rec = d.run(real_stages, [Clip(say(ASK), 0.3)])
    assert d.provider.effects == []
    assert d.ledger.get("refund:4417").state == "failed"
    assert any("did not go through" in line and "declined" in line for line in rec.agent_lines)
    assert d.ledger.get("refund:4417").told
    assert d.mismatches(rec) == []


def test_did_that_go_through_mid_flight_then_hears_the_confirmation(real_stages, say, tmp_path):
    d = Desk(tmp_path, latency_s=6.0)
    rec = d.run(real_stages, [Clip(say(ASK), 0.3),
                              Clip(say("Did that go through?"), None, after=after_stage("heard_in_full", 1),
                                   delay_s=0.3)])
    lines = rec.agent_lines
    still = next(i for i, line in enumerate(lines) if "still processing" in line)
    done = next(i for i, line in enumerate(lines) if "on its way" in line)
    assert still < done  # asked mid-flight; the confirmation came when the result landed
    assert d.ledger.get("refund:4417").told
    assert d.mismatches(rec) == []


def test_talking_over_the_confirmation_gets_a_reminder_after_the_next_answer(real_stages, say, tmp_path):
    d = Desk(tmp_path)
    rec = d.run(real_stages, [Clip(say(ASK), 0.3),
                              Clip(say("Sorry, one more question, how long does shipping take?"), None,
                                   after=after_stage("first_audio_out", 2), delay_s=0.8)])
    story = rec.timeline()
    truncated = rec.of("conversation.item.truncated")
    assert len(truncated) == 1 and "1234" not in truncated[0].transcript, story  # cut before the card
    lines = rec.agent_lines
    shipping = next(i for i, line in enumerate(lines) if "three days" in line)
    reminder = next(i for i, line in enumerate(lines) if line.startswith("Just to confirm"))
    assert shipping < reminder
    row = d.ledger.get("refund:4417")
    assert row.told and row.tell_attempts == 1
    assert d.mismatches(rec) == []


@pytest.mark.parametrize("latency_s", [0.6, 1.5])
def test_result_and_interruption_together_keep_the_side_effect(real_stages, say, tmp_path, latency_s):
    """0.6 s: the result lands inside the gate's hold window; 1.5 s: just after the barge-in."""
    d = Desk(tmp_path, latency_s=latency_s)
    rec = d.run(real_stages, [Clip(say(ASK), 0.3),
                              Clip(say("Sorry, how long does shipping take?"), None,
                                   after=after_stage("first_audio_out", 1), delay_s=0.4)])
    story = rec.timeline()
    outputs = [i for i in rec.session.conversation.items if i.type == "function_call_output"]
    assert len(outputs) == 1 and len(d.provider.effects) == 1, story
    fired = rec.stages("barge_in")[0].ts
    landed = next(e.ts for e in rec.of("conversation.item.created") if e.item["type"] == "function_call_output")
    if landed > fired:
        assert outputs[0].note == "completed during an interruption", story
    assert not any(line.startswith("Done.") for line in rec.agent_lines), story  # no reply forced
    assert any(line.startswith("Just to confirm") for line in rec.agent_lines), story
    assert d.mismatches(rec) == []


def test_a_late_read_only_result_after_cancel_never_leaks(real_stages, say, tmp_path):
    d = Desk(tmp_path, lookup_latency_s=3.0)
    rec = d.run(real_stages, [Clip(say("Where is my order fifty one twenty?"), 0.3),
                              Clip(say("Never mind that, how long does shipping take?"), None,
                                   after=after_stage("first_audio_out", 1), delay_s=0.5)])
    assert [c.name for c in rec.of("response.function_call_arguments.done")] == ["look_up_order"], rec.timeline()
    assert _outputs(rec) == []
    assert any("dropped the look_up_order result" in e.message for e in rec.of("x.log"))
    for request in d.llm.requests:
        assert "in transit" not in json.dumps(request)
    assert not any("in transit" in line for line in rec.agent_lines)


def test_crash_and_restart_recovers_pending_and_committed_rows(real_stages, say, tmp_path):
    import asyncio

    from pipeline.base.clock import SimClock

    path = tmp_path / "ledger.sqlite3"
    clock = SimClock()
    provider = desk.PaymentProvider(clock, latency_s=0.0)
    before = Ledger(path)

    async def first_process() -> None:
        # 4417 committed but the process died before the caller heard it; 5120's refund reached
        # the provider, then the process died before the ledger recorded the result.
        before.intend(business_key="refund:4417", tool="refund", arguments={"order_id": "4417",
                      "card_last4": "1234"}, target="", call_id="c1")
        before.commit("refund:4417", {"order_id": "4417", "card_last4": "1234", "amount": "$42.00"})
        intent = before.intend(business_key="refund:5120", tool="refund", arguments={"order_id": "5120",
                               "card_last4": "1234"}, target="", call_id="c2")
        await provider.refund(order_id="5120", card_last4="1234", idempotency_key=intent.row.idempotency_key)

    asyncio.run(first_process())
    before.close()  # the crash

    after = Ledger(path)
    unknown = after.recover()
    assert [r.business_key for r in unknown] == ["refund:5120"]
    row = asyncio.run(after.resolve_unknown("refund:5120", provider.lookup))
    assert row.state == "committed"  # queried, not retried, never reported as rolled back
    assert len(provider.effects) == 1
    assert {r.business_key for r in after.untold()} == {"refund:4417", "refund:5120"}
    after.close()

    d = Desk(tmp_path, ledger_path=path)
    d.provider = provider

    def setup(session) -> None:
        d.setup(session)
        session.tools.ledger_keys |= {r.business_key for r in d.ledger.untold()}  # this caller's effects

    rec = call(with_stages(real_stages, llm=d.llm), [Clip(say("Hello, how long does shipping take?"), 0.3)],
               setup=setup)
    assert any(line.startswith("Just to confirm") for line in rec.agent_lines)
    assert d.ledger.untold() == []
    assert d.mismatches(rec) == []
