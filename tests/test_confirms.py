"""The "confirms" judgement: do the heard words state a finished effect and name its facts?"""

from __future__ import annotations

from decimal import Decimal

import pytest

from pipeline.call.owed import STILL_RUNNING as STILL
from pipeline.tools.confirms import (
    claims_done,
    confirms,
    facts,
    spoken_amounts,
    spoken_digit_runs,
    statement,
)
from pipeline.tools.ledger_rows import Row


def row(state: str = "committed", *, result: dict | None = None, arguments: dict | None = None,
        target: str = "") -> Row:
    return Row(business_key="refund:4417", tool="refund", idempotency_key="k", intent_digest="d",
               arguments=arguments if arguments is not None else {"order_id": "4417", "amount": 64.5,
                                                                   "card_last4": "9075"},
               target=target, state=state, call_ids=("c1",), result=result, error=None, told=False,
               tell_attempts=0, created_at=0.0, updated_at=0.0)


COMMITTED = row(result={"refund_id": "re_1", "amount": "64.50", "card_last4": "9075"})
# the shop's refund states these (its `tells`); the core knows no field by name
SHOP = ("{amount} dollars", "to the card ending {card_last4}")


@pytest.mark.parametrize("text, value", [
    ("64.50", "64.50"), ("$64.50", "64.50"), ("64.50 dollars", "64.5"), ("sixty-four fifty", "64.50"),
    ("sixty four dollars and fifty cents", "64.50"), ("64 dollars and 50 cents", "64.50"),
    ("sixty-four dollars fifty", "64.50"), ("sixty-four point five zero", "64.50"),
    ("forty-two dollars", "42"), ("one thousand two hundred dollars", "1200"), ("$1,200.00", "1200"),
])
def test_spoken_amounts_read_digits_and_words(text, value):
    assert Decimal(value) in spoken_amounts(text)


@pytest.mark.parametrize("text", ["sixty-four", "six forty-five", "64.05", "the card ending 6450"])
def test_other_amounts_are_not_the_amount(text):
    assert Decimal("64.50") not in spoken_amounts(text)


@pytest.mark.parametrize("text", ["ending in 9075", "ending nine zero seven five", "ending ninety seventy-five",
                                  "nine oh seven five", "card 4000 0000 0000 9075"])
def test_card_digits_as_spoken(text):
    assert any("9075" in run for run in spoken_digit_runs(text))


def test_facts_prefer_what_moved_over_what_was_asked():
    moved = row(result={"amount": "$42.00", "card_last4": "5678"},
                arguments={"amount": 80, "card_last4": "1234"})
    assert facts(moved, SHOP) == {"amount": "$42.00", "card_last4": "5678"}
    assert facts(row(result=None), SHOP) == {"amount": "64.5", "card_last4": "9075"}
    assert facts(row(arguments={"order_id": "7"}), SHOP) == {}
    assert facts(moved) == {}  # a tool that names no facts is told by its outcome


@pytest.mark.parametrize("heard", [
    "Yes, that went through: 64.50 dollars to the card ending in 9075.",
    "Done. Your refund of $64.50 is on its way to the card ending 9075.",
    "Just to confirm, sixty-four fifty went back to the card ending nine zero seven five.",
    "Yes, that went through. It was sixty-four dollars and fifty cents, to the card ending ninety seventy-five.",
    "Good news! Your refund of 64.50 has been processed to card 9075. Anything else?",
])
def test_a_confirmation_with_outcome_amount_and_target_is_told(heard):
    verdict = confirms(COMMITTED, heard, SHOP)
    assert verdict.told, verdict.why


@pytest.mark.parametrize("heard, why", [
    ("I can't change a refund that has already gone through.", "amount"),
    ("Yes, that went through to the card ending 9075.", "amount"),
    ("Yes, that went through: 64.50 dollars.", "card_last4"),
    ("Yes, that went through: 64.50 dollars to the card ending in 90", "card_last4"),  # cut off mid-card
    ("Yes, that went through: 64.50 dollars to the card ending in 1234.", "card_last4"),
    ("It is still processing: 64.50 dollars to the card ending 9075.", "went through"),
    ("We can't tell yet whether 64.50 dollars went to the card ending 9075.", "went through"),
    ("The refund of 64.50 dollars to the card ending 9075 did not go through.", "went through"),
    ("Did 64.50 dollars go through to the card ending 9075?", "went through"),
    ("Sixty-four dollars to the card ending 9075 went through.", "amount"),
    ("", "went through"),
])
def test_words_that_leave_out_a_fact_or_the_outcome_are_not_told(heard, why):
    verdict = confirms(COMMITTED, heard, SHOP)
    assert not verdict.told and why in verdict.why


def test_a_failure_is_told_by_its_outcome():
    failed = row("failed")
    assert confirms(failed, "I'm sorry, the refund did not go through: the card issuer declined it.").told
    assert confirms(failed, "That refund could not be processed.").told
    assert not confirms(failed, "Let me check on that refund for you.").told
    assert not confirms(failed, "It went through to the card ending 9075, 64.50 dollars.").told


def test_unfinished_effects_are_never_told():
    for state in ("pending", "unknown", "not_started"):
        assert not confirms(row(state), "Yes, that went through: 64.50 dollars to the card ending 9075.").told


def test_a_row_without_amount_or_target_needs_only_the_outcome():
    booking = row(arguments={"room": "sea-view double"}, result={"booking_id": "B7"})
    assert confirms(booking, "All done, your room is booked and confirmed.").told
    assert not confirms(booking, "I am still working on that booking.").told


@pytest.mark.parametrize(("result", "arguments", "tells", "said"), [
    ({"amount": "64.50", "card_last4": "9075"}, {}, SHOP, "That went through: 64.50 dollars to the card ending 9075."),
    ({"refunded": True}, {"order_id": "4417", "card_last4": "1234"}, SHOP, "That went through to the card ending 1234."),
    ({"amount": 20}, {"account": "DE89 3704 0044 0532 0130 00"}, ("{amount} euros", "from the account ending {account}"),
     "That went through: 20 euros from the account ending 3000."),
    ({"booking_id": "B7"}, {"room": "sea-view double", "nights": 3}, ("{nights} nights in the {room} room",),
     "That went through: 3 nights in the sea-view double room."),
    ({}, {}, SHOP, "That went through."),
])
def test_the_sessions_statement_of_an_effect_is_one_that_tells_it(result, arguments, tells, said):
    """What the session says after a reply that did not state an effect (`statement`) states it
    as `confirms` reads it, facts and all, in whatever domain the tool's `tells` speaks."""
    done = row(result=result, arguments=arguments)
    assert statement(done, tells) == said
    assert confirms(done, said, tells).told
    failed = row("failed")
    assert confirms(failed, statement(failed)).told
    assert statement(row("pending")) is None


@pytest.mark.parametrize(("sentence", "claims"), [
    ("Yes, it went through.", True), ("Your refund has been processed.", True),
    ("Done: order 4417 went back to the card.", True),
    ("Did that go through?", False), ("It did not go through.", False),
    ("It is still processing.", False), (STILL, False), ("The card was declined.", False),
    ("Let me process that refund.", False), ("I can't tell yet whether it went through.", False),
])
def test_a_claim_that_something_went_through(sentence, claims):
    assert claims_done(sentence) is claims
