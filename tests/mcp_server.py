"""A small MCP server for tests/test_mcp.py, written with the SDK (stdio, or streamable HTTP).

    python tests/mcp_server.py STATE_DIR                 # stdio
    python tests/mcp_server.py STATE_DIR --http PORT     # streamable HTTP on 127.0.0.1:PORT/mcp

STATE_DIR holds what the test reads and steers: `refunds.log` (one line per `issue_refund` the
server ran, so a test counts effects where they happen) and `crash_next` (while it exists, the
next `issue_refund` records its effect and the process exits before answering: a crash after
the effect, whose outcome the client cannot know).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

STATE = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".")
server = MCPServer("test-shop", log_level="WARNING")

ORDERS = {"4417": "a cast-iron skillet, delivered last Tuesday"}


@server.tool()
def look_up_order(order_id: str) -> dict[str, Any]:
    """Look up an order's contents and delivery status."""
    return {"order_id": order_id, "status": ORDERS.get(order_id, "not found")}


@server.tool()
def check_stock(sku: str) -> str:
    """Say whether an item is in stock; this shop's stock system is down, so it always fails."""
    raise ToolError(f"stock system unavailable for {sku}")


@server.tool()
async def slow_search(query: str) -> str:
    """Search the catalogue; it never answers (a server that hangs)."""
    await asyncio.sleep(3600)
    return query


@server.tool()
def crash(reason: str) -> str:
    """Exit the server process in the middle of the call."""
    os._exit(3)


@server.tool()
def desk_header(ctx: Context) -> str:
    """The X-Desk header of the HTTP request that asked ("" over stdio)."""
    request = ctx.request_context.request
    return getattr(request, "headers", {}).get("x-desk", "")


@server.tool()
def process_id() -> int:
    """The server process's id (a test kills it between calls)."""
    return os.getpid()


@server.tool()
def issue_refund(
    order_id: Annotated[str, Field(description='The order number, e.g. "4417".')],
    card_last4: Annotated[str, Field(description="The last four digits of the card to refund to.")],
    amount: Annotated[float, Field(description="The amount to refund, in dollars.")],
) -> dict[str, Any]:
    """Refund an order to the caller's card."""
    with (STATE / "refunds.log").open("a", encoding="utf-8") as log:
        log.write(f"{order_id} {card_last4} {amount}\n")
    marker = STATE / "crash_next"
    if marker.exists():
        marker.unlink()
        os._exit(3)  # the money moved, the answer never leaves
    return {"refund_id": f"re_{order_id}", "card_last4": card_last4, "amount": amount}


@server.tool()
def set_reminder(when: dict[str, Any]) -> str:
    """Set a reminder (its object-typed argument is one the tool grammar cannot take)."""
    return "ok"


if __name__ == "__main__":
    if "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--http") + 1])
        server.run("streamable-http", host="127.0.0.1", port=port)
    else:
        server.run()
