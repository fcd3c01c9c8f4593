"""A card gateway double with Stripe's idempotency rules, its state in its own SQLite file.

The rules (Stripe's "Idempotent requests"): the first request with a key runs and its response
is stored; the same key with the same parameters replays that response (no second refund); the
same key with different parameters is refused (400, "Keys for idempotent requests can only be
used with the same parameters they were first used with"); the same key while the first request
is still running is refused (409, "another in-progress request"). The state is a file, not
memory, because the gateway is another system: it outlives a crash of the agent's process.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pipeline.base.clock import Clock
from pipeline.stages.fakes import ScriptedLLM
from pipeline.tools import ToolRegistry, tool
from pipeline.tools.runner import current_call

_SCHEMA = """
CREATE TABLE IF NOT EXISTS requests (key TEXT PRIMARY KEY, params TEXT NOT NULL, response TEXT);
CREATE TABLE IF NOT EXISTS refunds (id INTEGER PRIMARY KEY, key TEXT NOT NULL, body TEXT NOT NULL);
"""


class IdempotencyError(Exception):
    """What the gateway answers when a key is reused wrongly; `status` is the HTTP status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class StripeLikeGateway:
    """Refunds with idempotency keys. A refund settles after `latency_s`, or once `settle_when()`
    returns; `after_effect` runs once money has moved (where a crash can be staged)."""

    def __init__(self, path: Path, *, clock: Clock, latency_s: float = 0.0,
                 settle_when: Callable[[], Awaitable[None]] | None = None,
                 after_effect: Callable[[], None] | None = None) -> None:
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.executescript(_SCHEMA)
        self.clock, self.latency_s, self.after_effect = clock, latency_s, after_effect
        self.settle_when = settle_when

    async def refund(self, *, charge: str, amount: str, card_last4: str, idempotency_key: str) -> dict[str, Any]:
        params = json.dumps({"charge": charge, "amount": amount, "card_last4": card_last4}, sort_keys=True)
        seen = self.db.execute("SELECT params, response FROM requests WHERE key = ?", (idempotency_key,)).fetchone()
        if seen is not None:
            if seen[1] is None:
                raise IdempotencyError(409, "There is currently another in-progress request using this "
                                            "idempotency key; retry after it has completed.")
            if seen[0] != params:
                raise IdempotencyError(400, "Keys for idempotent requests can only be used with the same "
                                            "parameters they were first used with.")
            return json.loads(seen[1])
        self.db.execute("INSERT INTO requests (key, params) VALUES (?, ?)", (idempotency_key, params))
        if self.settle_when is not None:
            await self.settle_when()
        else:
            await self.clock.sleep(self.latency_s)
        body = {"object": "refund", "status": "succeeded", "charge": charge, "amount": amount,
                "currency": "usd", "card_last4": card_last4}
        self.db.execute("BEGIN")
        cursor = self.db.execute("INSERT INTO refunds (key, body) VALUES (?, ?)", (idempotency_key, "{}"))
        body["id"] = f"re_{cursor.lastrowid:04d}"
        self.db.execute("UPDATE refunds SET body = ? WHERE id = ?", (json.dumps(body), cursor.lastrowid))
        self.db.execute("UPDATE requests SET response = ? WHERE key = ?", (json.dumps(body), idempotency_key))
        self.db.execute("COMMIT")
        if self.after_effect is not None:
            self.after_effect()
        return body

    async def lookup(self, idempotency_key: str) -> dict[str, Any] | None:
        """The refund made under this key, if any (a search on the key the refund carries)."""
        found = self.db.execute("SELECT body FROM refunds WHERE key = ?", (idempotency_key,)).fetchone()
        return json.loads(found[0]) if found else None

    def effects(self) -> list[dict[str, Any]]:
        """Every refund that moved money."""
        return [json.loads(b) for (b,) in self.db.execute("SELECT body FROM refunds ORDER BY id")]


def build_tools(gateway: StripeLikeGateway) -> ToolRegistry:
    @tool(spoken=("holding_line",), side_effect=True, business_key=lambda a: f"refund:{a['order_id']}",
          tells=("{amount} dollars", "to the card ending {card_last4}"),
          timeout_s=30.0)
    async def refund(holding_line: str, order_id: str, amount: str, card_last4: str) -> dict[str, Any]:
        """Refund part or all of an order to the card it was paid with.

        Args:
            holding_line: What to say while the refund runs, e.g. "One moment."
            order_id: The order number, e.g. "4417".
            amount: The amount in dollars, e.g. "64.50".
            card_last4: The last four digits of the card.
        """
        return await gateway.refund(charge=f"ch_{order_id}", amount=amount, card_last4=card_last4,
                                    idempotency_key=current_call().idempotency_key)

    return ToolRegistry(specs=[refund])


def refund_call(amount: str, line: str = "One moment while I process that refund.", *,
                card: str = "9075") -> dict[str, Any]:
    return {"name": "refund", "arguments": {"holding_line": line, "order_id": "4417", "amount": amount,
                                            "card_last4": card}}


def scripted_llm() -> ScriptedLLM:
    """A refund desk's model written from the seeds: rules on the latest message."""
    return ScriptedLLM(rules=[
        [r"not heard this outcome", "Just to confirm: your refund of {amount} dollars went to the card ending "
                                    "in {card_last4}."],
        [r"result of refund.*change_refused", "I'm sorry, I can't change the amount while the first refund "
                                              "is still being processed."],
        [r"result of refund.*\"status\": \"refused\"", "I can't change a refund that has already gone "
                                                       "through; a person has to reverse it first."],
        [r"result of refund.*\"status\": \"failed\"", "I'm sorry, that refund did not go through: {error}."],
        [r"result of refund.*\"status\": \"unknown\"", "I can't tell yet whether that went through; we are "
                                                       "checking with the bank."],
        [r"result of refund.*(committed|already_done)", "Yes, that went through: {amount} dollars are on "
                                                        "their way back to the card ending in {card_last4}."],
        [r"result of refund.*error", "Sorry, something went wrong on our side."],
        [r"different card|other card", refund_call("64.50", "Let me switch that card.", card="5678")],
        [r"eighty|instead", refund_call("80.00", "Let me change that for you.")],
        [r"(refund|4417).*(go through|went through)", refund_call("64.50", "Let me check on that refund.")],
        [r"go through|went through", "Yes, that went through: {amount} dollars to the card ending in "
                                     "{card_last4}."],
        [r"how long|arrive", "Refunds usually take five to ten days to arrive."],
        [r"refund|sixty|64\.?50", refund_call("64.50")],
    ], replies=["Happy to help."])
