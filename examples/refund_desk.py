"""A kitchen shop's refund desk: refund order 4417 to a card, and never lose track of it.

Shows side-effecting tools done right: a spoken holding line while the refund runs, one effect
per order however often it is asked for, a ledger that survives a crash, and a caller who is
told the outcome even when they talked over the first confirmation.

    python examples/refund_desk.py            # a scripted call, printed as a transcript
    python examples/refund_desk.py --llm llama-cpp   # the same calls on the embedded Qwen model
    python -m pipeline serve --desk examples/refund_desk.py   # the desk for phone callers

`mismatches(ledger, heard, provider)` is the reconciliation the tests assert with: it finds
duplicate effects, effects the caller was never told, and a last-heard card the ledger lacks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pipeline.base.clock import Clock
from pipeline.stages.fakes import ScriptedLLM
from pipeline.tools import Ledger, ToolRegistry, tool
from pipeline.tools.runner import current_call


class ProviderError(Exception):
    pass


@dataclass
class _Request:
    order_id: str
    card_last4: str
    settles_at: float
    amount: str
    result: dict[str, Any] | None = None


@dataclass
class PaymentProvider:
    """A card processor with idempotency keys: a key is one refund, updatable until it settles."""

    clock: Clock
    latency_s: float = 1.0
    fail_with: str | None = None  # the next request fails with this message
    effects: list[dict[str, Any]] = field(default_factory=list)  # money that actually moved
    _requests: dict[str, _Request] = field(default_factory=dict)

    async def refund(self, *, order_id: str, card_last4: str, idempotency_key: str,
                     amount: str = "$42.00") -> dict[str, Any]:
        req = self._requests.get(idempotency_key)
        if req is not None and req.result is not None:
            return req.result  # the same key again: the stored outcome, no second refund
        if self.fail_with:
            message, self.fail_with = self.fail_with, None
            raise ProviderError(message)
        if req is None:
            req = self._requests[idempotency_key] = _Request(order_id, card_last4,
                                                            self.clock.now() + self.latency_s, amount)
        else:
            req.card_last4 = card_last4  # still pending: the one refund is redirected
        while req.result is None:
            await self.clock.sleep_until(req.settles_at)
            if req.result is None and self.clock.now() >= req.settles_at:
                req.result = {"order_id": req.order_id, "card_last4": req.card_last4, "amount": req.amount,
                              "refund_id": f"re_{len(self.effects) + 1:03d}"}
                self.effects.append(dict(req.result))
        return req.result

    async def lookup(self, idempotency_key: str) -> dict[str, Any] | None:
        req = self._requests.get(idempotency_key)
        return req.result if req is not None else None


# what callers call a card by: its brand names say the digits after them are the card's
CARD_NAMES = ("visa", "mastercard", "amex", "discover")
ORDERS = {"4417": "a cast-iron skillet, delivered last Tuesday", "5120": "a chef's knife, in transit"}


def build_tools(provider: PaymentProvider, *, lookup_latency_s: float = 0.5) -> ToolRegistry:
    @tool(spoken=("holding_line",), side_effect=True, business_key=lambda a: f"refund:{a['order_id']}",
          tells=("{amount} dollars", "to the card ending {card_last4}"),
          cues={"card_last4": CARD_NAMES}, timeout_s=20.0)
    async def refund(holding_line: str, order_id: str, card_last4: str) -> dict[str, Any]:
        """Refund an order to the caller's card.

        Args:
            holding_line: What to say while the refund runs, e.g. "Let me process that refund."
            order_id: The order number, e.g. "4417".
            card_last4: The last four digits of the card to refund to.
        """
        # the digits alone: Whisper writes a card read out digit by digit as "1-2-3-4", and a
        # model copies that into the argument as it is
        return await provider.refund(order_id=order_id, card_last4=re.sub(r"\D", "", card_last4),
                                     idempotency_key=current_call().idempotency_key)

    @tool(spoken=("holding_line",))
    async def look_up_order(holding_line: str, order_id: str) -> dict[str, Any]:
        """Look up an order's contents and delivery status.

        Args:
            holding_line: What to say while looking, e.g. "Let me pull up that order."
            order_id: The order number.
        """
        await provider.clock.sleep(lookup_latency_s)
        return {"order_id": order_id, "status": ORDERS.get(order_id, "not found")}

    return ToolRegistry(specs=[refund, look_up_order])


INSTRUCTIONS = (
    "You are the refund desk of a kitchen shop, on the phone. Answer in one or two short, plain "
    "sentences. To refund an order you need its number and the last four digits of the card; "
    "ask for what the caller has not said, then call the refund tool. Say what the tool returned.")
CONFIG = {"response": {"instructions": INSTRUCTIONS}}  # `pipeline serve --desk`: under --set


# The embedded model that calls tools (SmolLM2, the default, called none in the tool-choice set)
REAL_MODEL = "qwen2.5-coder-0.5b"


def real_model_config(overrides: list[str] | None = None) -> Any:
    """The desk on an embedded model: its instructions, `llm.model` Qwen, then `overrides`
    (`--set section.key=value`) over both."""
    from pipeline.base import config as cfg

    base = cfg.apply(cfg.Config.default(), {**CONFIG, "llm": {"model": REAL_MODEL}})
    return cfg.load(overrides=overrides or [], base=base)


def desk(session: Any, ledger: Ledger) -> None:
    """Each phone call's tools on `pipeline serve --desk examples/refund_desk.py`: the refund and
    the order lookup, through the server's ledger. The provider is this example's stand-in (a
    real desk would call its card processor here)."""
    provider = PaymentProvider(session.clock)
    session.use_tools(build_tools(provider), ledger=ledger, queries={"refund": provider.lookup})


def refund_call(order: str, card: str, line: str = "Let me process that refund for you.") -> dict[str, Any]:
    return {"name": "refund", "arguments": {"holding_line": line, "order_id": order, "card_last4": card}}


def scripted_llm() -> ScriptedLLM:
    """A deterministic model for the desk: rules on the latest message, as a small model might do."""
    return ScriptedLLM(rules=[
        [r"not heard this outcome", "Just to confirm, your refund of {amount} went to the card ending {card_last4}."],
        [r"result of refund.*\"status\": \"failed\"", "I'm sorry, the refund did not go through: {error}."],
        [r"result of refund.*already_done", "That refund already went through to the card ending {card_last4}."],
        [r"result of refund.*committed",
         "Done. Your refund of {amount} for order {order_id} is on its way to the card ending {card_last4}."],
        [r"result of look_up_order", "Order {order_id} is {status}."],
        [r"wrong card|different (credit )?card|other card", refund_call("4417", "5678", "Okay, switching it to the other card.")],
        [r"go through|went through|did it work", "It is still processing. I will tell you the moment it lands."],
        [r"shipping", "Shipping usually takes three days."],
        [r"again", refund_call("4417", "1234", "Let me try that again.")],
        [r"where is|where's|status of|look up", {"name": "look_up_order",
                                          "arguments": {"holding_line": "Let me pull up that order for you.",
                                                        "order_id": "5120"}}],
        [r"refund", refund_call("4417", "1234")],
    ], replies=["Happy to help."])


_CARD = re.compile(r"card ending (\d{4})")


def mismatches(ledger: Ledger, heard: list[str], provider: PaymentProvider | None = None) -> list[str]:
    """What the caller heard versus what happened. Empty when the books and the call agree."""
    problems = []
    if provider is not None:
        per_order: dict[str, int] = {}
        for effect in provider.effects:
            per_order[effect["order_id"]] = per_order.get(effect["order_id"], 0) + 1
        problems += [f"order {o} was refunded {n} times" for o, n in per_order.items() if n > 1]
    problems += [f"{r.business_key} is {r.state} but the caller was never told" for r in ledger.untold()]
    cards = [c for line in heard for c in _CARD.findall(line)]
    if cards:
        held = {str((r.result or {}).get("card_last4") or r.arguments.get("card_last4"))
                for r in ledger.rows() if r.state == "committed"}
        if cards[-1] not in held:
            problems.append(f"the caller last heard card {cards[-1]}, the ledger holds {sorted(held)}")
    return problems


def main(argv: list[str] | None = None) -> None:  # pragma: no cover - a demonstration on the real models
    import argparse
    import asyncio
    import tempfile
    from pathlib import Path

    from pipeline.base.audio import INPUT_RATE_HZ, resample
    from pipeline.base.config import Config
    from pipeline.call.session import Stages
    from pipeline.transports.runtime import run_call
    from pipeline.transports.scripted import Clip, ScriptedCaller, after_stage

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llm", choices=("scripted", "llama-cpp"), default="scripted",
                        help="scripted: the desk's rules (deterministic); llama-cpp: the embedded "
                             f"{REAL_MODEL} (scripts/download_models.sh --only llm-qwen)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="a configuration override for --llm llama-cpp, e.g. llm.max_tokens=64")
    args = parser.parse_args(argv)
    config = real_model_config(args.set) if args.llm == "llama-cpp" else Config.default()
    stages = Stages.load(config)
    if args.llm == "scripted":
        stages.llm = scripted_llm()

    def say(text: str):
        return resample(stages.tts.synthesize(text), stages.tts.sample_rate_hz, INPUT_RATE_HZ)

    ask = say("I would like a refund for order forty four seventeen, to the card ending one two three four.")

    def scenario(title: str, second: str, latency_s: float) -> None:
        print(f"--- {title}")
        ledger = Ledger(Path(tempfile.mkdtemp()) / "ledger.sqlite3")
        world: dict[str, PaymentProvider] = {}

        def setup(session) -> None:
            provider = world["provider"] = PaymentProvider(session.clock, latency_s=latency_s)
            session.use_tools(build_tools(provider), ledger=ledger, queries={"refund": provider.lookup})

        caller = ScriptedCaller([
            Clip(ask, 0.5), Clip(say(second), None, after=after_stage("heard_in_full", 1), delay_s=0.3)])
        result = asyncio.run(run_call(config, stages, caller, printer=print, setup=setup))
        heard = [i.text for i in result.session.conversation.items if i.role == "assistant" and i.type == "message"]
        print("reconciliation:", mismatches(ledger, heard, world["provider"]) or "books and call agree")

    scenario("'did that go through?' while the refund runs", "Did that go through?", 6.0)
    # both calls answer when the one refund lands: one reply sees both results, said once
    scenario("a card change while pending lands with the refund: confirmed once",
             "Wait, please use a different credit card instead.", 8.0)


if __name__ == "__main__":
    main()
