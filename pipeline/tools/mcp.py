"""Tools from Model Context Protocol servers, as the agent's own `ToolSpec`s (docs/mcp.md).

    servers = [{"name": "shop", "command": "python", "args": ["shop_server.py"],
                "tools": {"issue_refund": {"side_effect": True, "holding_line": True,
                                           "business_key": ["order_id"], "timeout_s": 20}}},
               {"name": "bookings", "url": "http://127.0.0.1:8000/mcp", "deny": ["cancel_all"]}]

    async with McpTools(servers) as mcp:         # connect, list, and close at the end
        session.use_tools(mcp.registry(clock=session.clock), ledger=ledger)

    tools = "pipeline.tools.mcp:mcp_tools"       # a scenario: one connection per process
    tools_args = { servers = [{ name = "shop", command = "python", args = ["shop_server.py"] }] }

A server's tool runs like any other: `ToolRunner` validates it, times it out, puts a side effect
through the ledger (once per business key, the caller's arguments first), and turns a failure
into an output the agent can say (`mcp_link` says which failure is which).
"""

from __future__ import annotations

import asyncio
import atexit
import json
from collections.abc import Callable, Sequence
from typing import Any

from mcp.types import CallToolResult, TextContent, Tool

from ..base.clock import Clock, RealClock
from .mcp_config import McpServer, McpToolOptions, as_server, spec_for
from .mcp_link import McpLink, McpLoop, McpNoAnswer, McpToolError, McpUnavailable
from .schema import ToolRegistry

__all__ = ["McpNoAnswer", "McpServer", "McpToolError", "McpToolOptions", "McpTools",
           "McpUnavailable", "mcp_tools"]


class McpTools:
    """The tools of some MCP servers, one connection per server held from `open` to `close`.

    Open it with `open()` (blocking: at import, before any call) or `async with` (off the
    caller's loop); `registry()` gives the tools, as often as wanted (one per call, say, with
    that call's clock). A server that cannot be reached, or a tool whose schema or options do
    not fit, fails the open with a message naming both.
    """

    def __init__(self, servers: Sequence[McpServer | dict[str, Any]]) -> None:
        self.servers = [as_server(s) for s in servers]
        names = [s.name for s in self.servers]
        if len(set(names)) != len(names):
            raise ValueError(f"MCP servers need distinct names; got {names}.")
        self.links = {s.name: McpLink(s) for s in self.servers}
        self._listed: dict[str, list[Tool]] = {}
        self._loop: McpLoop | None = None

    def open(self) -> McpTools:
        """Connect to every server and list its tools (blocks until done)."""
        if self._loop is None:
            self._loop = McpLoop()
        try:
            self._loop.submit(self._open()).result()
            self.registry()  # a schema or an option that does not fit fails here, not mid-call
        except BaseException:
            self.close()
            raise
        atexit.register(self.close)  # a stdio server's process goes with ours
        return self

    async def _open(self) -> None:
        for name, link in self.links.items():
            self._listed[name] = await link.open()
        for server in self.servers:
            listed = {t.name for t in self._listed[server.name]}
            missing = sorted(set(server.tools) - listed)
            if missing:
                raise ValueError(f"MCP server {server.name!r} has no tool(s) {missing} that its "
                                 f"options name; it offers {sorted(listed)}.")

    def close(self) -> None:
        """Close every connection (a stdio server's process exits)."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        atexit.unregister(self.close)
        try:
            for link in self.links.values():
                loop.submit(link.close()).result()
        finally:
            loop.stop()

    async def __aenter__(self) -> McpTools:
        return await asyncio.to_thread(self.open)

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.close)

    def registry(self, *, clock: Clock | None = None) -> ToolRegistry:
        """The servers' tools, filtered and with their options. Pass the session's clock: on a
        simulated clock, time then stands still while a server works, as for model work."""
        specs = []
        for server in self.servers:
            for listed in self._listed.get(server.name, []):
                if server.wanted(listed.name):
                    options = server.tools.get(listed.name, McpToolOptions())
                    specs.append(spec_for(server, listed, self._caller(server, listed.name, options,
                                                                       clock)))
        return ToolRegistry(specs=specs)

    def listed(self, server: str) -> list[Tool]:
        """Every tool the server offered when opened, before the filters."""
        return list(self._listed.get(server, []))

    def _caller(self, server: McpServer, tool: str, options: McpToolOptions,
                clock: Clock | None) -> Callable[..., Any]:
        link, spoken = self.links[server.name], options.spoken

        async def run(**arguments: Any) -> dict[str, Any]:
            if self._loop is None:
                raise McpUnavailable(f"{server.spoken_name} is not connected (the tools were closed)")
            sent = {k: v for k, v in arguments.items() if k != spoken}
            job = self._loop.submit(link.call(tool, sent, side_effect=options.side_effect,
                                              timeout_s=options.timeout_s))
            try:
                if clock is None or isinstance(clock, RealClock):
                    result = await asyncio.wrap_future(job)
                else:  # simulated time must not jump past the server's answer
                    result = await clock.run_in_thread(job.result)
            except asyncio.CancelledError:
                job.cancel()  # the runner's timeout, or the call ended: stop it over there too
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise
                # cancelled over there, not by us: the transport tore the request down
                lost = McpNoAnswer if options.side_effect else McpUnavailable
                raise lost(f"{server.spoken_name} dropped the {tool} request") from None
            return output(server, tool, result)

        return run


def output(server: McpServer, tool: str, result: CallToolResult) -> dict[str, Any]:
    """A result as a tool output: its structured content, or its text (a JSON object read as
    one); an error result raises McpToolError with the server's words."""
    texts = [c.text if isinstance(c, TextContent) else f"[{c.type} omitted]" for c in result.content]
    text = "\n".join(texts).strip()
    if result.is_error:
        raise McpToolError(f"{server.spoken_name} answered that {tool} failed: {text or 'no reason given'}")
    if isinstance(result.structured_content, dict):
        return dict(result.structured_content)
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    return parsed if isinstance(parsed, dict) else {"result": text}


_SHARED: dict[str, McpTools] = {}


def mcp_tools(servers: list[dict[str, Any]], clock: Clock | None = None) -> ToolRegistry:
    """The servers' tools for a scenario's or a desk's `tools` hook: connected on first use and
    shared by every later call in this process (closed at exit)."""
    key = json.dumps(servers, sort_keys=True, default=str)
    tools = _SHARED.get(key)
    if tools is None:
        tools = _SHARED[key] = McpTools(servers).open()
    return tools.registry(clock=clock)
