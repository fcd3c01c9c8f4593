"""The refund desk's tools on their own (no models): what the provider is asked for."""

from __future__ import annotations

import asyncio
import sys

from pipeline.base.clock import SimClock
from pipeline.tools import Ledger, ToolCall
from pipeline.tools.runner import ToolRunner

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "examples"))
import refund_desk as desk  # noqa: E402


def test_the_card_is_refunded_by_its_digits_as_whisper_spelled_them_or_not(tmp_path) -> None:
    """Whisper writes a card read out digit by digit as "1-2-3-4", and Qwen copied that into
    `card_last4`; the provider is asked for card 1234 either way."""
    clock = SimClock()
    provider = desk.PaymentProvider(clock, latency_s=0.0)
    runner = ToolRunner(desk.build_tools(provider), ledger=Ledger(tmp_path / "ledger.sqlite3"), clock=clock)
    for n, card in enumerate(["1-2-3-4", "1234"]):
        call = ToolCall(name="refund", arguments={"holding_line": "One moment.", "order_id": f"44{n}",
                                                  "card_last4": card})
        result = asyncio.run(runner.run(call, call_id=f"c{n}", response_id="r1", turn_id="t1"))
        assert result.output["status"] == "committed", result.output
    assert [e["card_last4"] for e in provider.effects] == ["1234", "1234"]
