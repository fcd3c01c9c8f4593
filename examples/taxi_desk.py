"""A taxi dispatcher that reads the booking back before it books: the consequential tool is
marked `read_back`, so the caller hears "A taxi from 42 Elm Street at 6 PM, is that right?" and
the ride is booked only on their yes, as read back (a correction is read back again).

    pipeline test examples/taxi_desk.scenario.toml   # on the embedded model, with a correction
    pipeline serve --desk examples/taxi_desk.py      # the desk for phone callers
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.base import config as cfg
from pipeline.tools import Ledger, ToolRegistry, tool

HERE = Path(__file__).resolve().parent
CONFIG = cfg.read_toml(HERE / "taxi_desk.toml", "the dispatcher's settings")  # for `serve --desk`


class Dispatch:
    """The cab company's booking system (this example's stand-in): the rides it has booked."""

    def __init__(self) -> None:
        self.rides: list[dict[str, Any]] = []

    async def book(self, pickup_address: str, pickup_time: str) -> dict[str, Any]:
        self.rides.append({"pickup_address": pickup_address, "pickup_time": pickup_time})
        return {"booked": True, "ride": f"R-{len(self.rides):03d}", "pickup_time": pickup_time}


def build_tools(dispatch: Dispatch) -> ToolRegistry:
    @tool(side_effect=True, business_key=lambda a: f"ride:{a['pickup_address'].lower()}",
          read_back="A taxi from {pickup_address} at {pickup_time}", tells="for {pickup_time}")
    async def book_taxi(pickup_address: str, pickup_time: str) -> dict[str, Any]:
        """Book a taxi for the caller.

        Args:
            pickup_address: The street address to pick the caller up at.
            pickup_time: When to pick them up, HH:MM on the 24-hour clock.
        """
        return await dispatch.book(pickup_address, pickup_time)

    return ToolRegistry(specs=[book_taxi])


def desk(session: Any, ledger: Ledger) -> None:
    """Each phone call's tools on `pipeline serve --desk examples/taxi_desk.py`."""
    session.use_tools(build_tools(Dispatch()), ledger=ledger)
