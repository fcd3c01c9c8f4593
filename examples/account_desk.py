"""A refund desk that knows its caller: the account is in the instructions, as a deployment puts
it there from its CRM (orders, amounts, cards on file).

The caller says "a refund for the kettle, on my Mastercard": no order number, no card digits. The
refund runs on the order, amount and card the account holds, because the instructions are a
source a tool's arguments may come from (`pipeline.tools.provenance`); a value in neither the
caller's words nor the account is still refused, and the same desk without the account asks for
the order and the card instead of running anything.

    python -m pipeline serve --desk examples/account_desk.py   # the desk for phone callers
"""

from __future__ import annotations

import re
from typing import Any

from refund_desk import CARD_NAMES, PaymentProvider

from pipeline.stages.fakes import ScriptedLLM
from pipeline.tools import Ledger, ToolRegistry, tool
from pipeline.tools.runner import current_call

DESK = ("You are the refund desk of a kitchen shop, on the phone. Answer in one or two short, "
        "plain sentences. To refund an order you need the order, the amount and a card on file; "
        "ask for what you cannot tell, then call the refund tool. Say what the tool returned.")
ACCOUNT = ("The caller's account, matched by their phone number: Dana Whitfield. "
           "Orders: order 5120, an electric kettle, 64.50 dollars, paid with the Mastercard ending 5555; "
           "order 4417, a cast-iron skillet, 42.00 dollars, paid with the Visa ending 4242. "
           "Cards on file: the Visa ending 4242 and the Mastercard ending 5555.")
INSTRUCTIONS = DESK + "\n\n" + ACCOUNT
CONFIG = {"response": {"instructions": INSTRUCTIONS}}  # `pipeline serve --desk`: under --set


def build_tools(provider: PaymentProvider) -> ToolRegistry:
    @tool(spoken=("holding_line",), side_effect=True, business_key=lambda a: f"refund:{a['order_id']}",
          tells=("{amount} dollars", "to the card ending {card_last4}"), cues={"card_last4": CARD_NAMES},
          timeout_s=20.0)
    async def issue_refund(holding_line: str, order_id: str, amount: float, card_last4: str) -> dict[str, Any]:
        """Refund an order to one of the caller's cards.

        Args:
            holding_line: What to say while the refund runs, e.g. "Let me process that refund."
            order_id: The order number.
            amount: The amount to refund, in dollars.
            card_last4: The last four digits of the card to refund to.
        """
        return await provider.refund(order_id=order_id, card_last4=re.sub(r"\D", "", card_last4),
                                     amount=f"{amount:.2f}", idempotency_key=current_call().idempotency_key)

    return ToolRegistry(specs=[issue_refund])


def desk(session: Any, ledger: Ledger) -> None:
    """Each phone call's tools on `pipeline serve --desk examples/account_desk.py`."""
    provider = PaymentProvider(session.clock)
    session.use_tools(build_tools(provider), ledger=ledger, queries={"issue_refund": provider.lookup})


def refund_call(card: str, line: str = "Let me process that refund for you.") -> dict[str, Any]:
    return {"name": "issue_refund", "arguments": {"holding_line": line, "order_id": "5120", "amount": 64.50,
                                                  "card_last4": card}}


def scripted_llm() -> ScriptedLLM:
    """A deterministic model for the desk: it reads the kettle's order, amount and card off the
    account, as a model given the account would."""
    return ScriptedLLM(rules=[
        [r"not heard this outcome", "Just to confirm, your refund of {amount} dollars went to the card ending "
                                    "{card_last4}."],
        [r"result of issue_refund.*not_run", "Could you tell me the order number, the amount and the last "
                                             "four digits of the card?"],
        [r"result of issue_refund.*already_done", "That refund already went through to the card ending "
                                                  "{card_last4}."],
        [r"result of issue_refund.*committed", "Done. Your refund of {amount} dollars is on its way to the card "
                                               "ending {card_last4}."],
        [r"(?i)visa", refund_call("4242", "Okay, switching it to your Visa.")],
        [r"go through|went through|did it work", "It is still processing. I will tell you the moment it lands."],
        [r"shipping", "Shipping usually takes three days."],
        [r"(?i)kettle|refund", refund_call("5555")],
    ], replies=["Happy to help."])
