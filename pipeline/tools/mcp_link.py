"""One client connection to one MCP server, kept on a loop of its own, and what its failures mean.

The connections live on a private event loop in a daemon thread, not on a call's loop: a server
answers every call the process takes (a desk connects once, at import, before any loop runs;
a scenario run makes a loop per call), and the SDK's transports must be entered and left in one
task. A call crosses over with `run_coroutine_threadsafe`; cancelling it there cancels it here.

What a failure means for a side effect decides how it is raised, so that `ToolRunner` records
it the one way it records every tool's outcome:
- `McpToolError`: the server answered that the tool failed (an isError result, a JSON-RPC
  error). Nothing happened: the ledger row is `failed`.
- `McpUnavailable`: the server could not be reached, so the request was never sent.
- `McpNoAnswer` (a TimeoutError): the request went out and no answer came back (the process
  exited, the connection dropped). It may have happened: the ledger row is `unknown`.
A lost connection is reopened once, by the next call (stdio: the command is run again; HTTP: a
new session). A read that lost its answer is asked again on the new connection; a side effect
never is.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, Implementation, Tool

from .mcp_config import McpServer

T = TypeVar("T")
_CONNECTION_CLOSED = -32000  # the SDK's code for a transport that closed under a request
_CLOSE_TIMEOUT_S = 5.0


class McpToolError(Exception):
    """The server answered: the tool failed (nothing happened)."""


class McpUnavailable(Exception):
    """The server could not be reached; the request was not sent."""


class McpNoAnswer(TimeoutError):
    """The request was sent and no answer came: whether it happened is unknown."""


class _Lost(Exception):
    """The connection went away while a request was on it."""


class McpLoop:
    """A private event loop in a daemon thread, where the connections live."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="mcp", daemon=True)
        self._thread.start()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=_CLOSE_TIMEOUT_S)
        if not self._thread.is_alive():
            self.loop.close()


class McpLink:
    """The connection to one server: opened, reopened once when lost, closed. Runs on McpLoop."""

    def __init__(self, server: McpServer) -> None:
        self.server = server
        self.client: Client | None = None
        self._owner: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self.lost = True  # no live connection: the next request opens one first
        self.connections = 0  # connection attempts so far (a test reads reconnects from it)
        self._reconnecting = asyncio.Lock()  # calls of many phone calls share this link

    async def open(self) -> list[Tool]:
        """Connect and list the server's tools (every page)."""
        await self._connect()
        assert self.client is not None
        tools: list[Tool] = []
        cursor: str | None = None
        while True:
            page = await asyncio.wait_for(self.client.list_tools(cursor=cursor),
                                          self.server.connect_timeout_s)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                return tools

    async def close(self) -> None:
        owner, self._owner = self._owner, None
        if self._stop is not None:
            self._stop.set()
        if owner is not None:
            await asyncio.wait({owner}, timeout=_CLOSE_TIMEOUT_S)
            owner.cancel()  # a transport that would not wind down in time is abandoned
        self.lost = True

    async def call(self, tool: str, arguments: dict[str, Any], *, side_effect: bool,
                   timeout_s: float) -> CallToolResult:
        """The tool's result; the errors above; TimeoutError past `timeout_s`."""
        sent = False
        try:
            # a little inside the runner's own time-out, so that this one says what it means
            async with asyncio.timeout(timeout_s - min(0.1, timeout_s / 10)):
                for attempt in (1, 2):
                    sent = False
                    async with self._reconnecting:
                        if self.lost:  # the dead connection's process and streams go first
                            await self.close()
                            await self._connect()
                    sent = True
                    try:
                        return await self._request(tool, arguments)
                    except _Lost as exc:
                        self.lost = True
                        if side_effect:
                            raise McpNoAnswer(f"{self.server.spoken_name} stopped answering after "
                                              f"{tool} was sent ({exc}); it may have gone through"
                                              ) from None
                        if attempt == 2:
                            raise McpUnavailable(f"{self.server.spoken_name} stopped answering "
                                                 f"({exc})") from None
        except TimeoutError:
            if not sent:  # still connecting: nothing went out
                raise McpUnavailable(f"{self.server.spoken_name} could not be reached within "
                                     f"{timeout_s:g} s") from None
            raise
        raise AssertionError("unreachable")

    async def _request(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        client, owner = self.client, self._owner
        assert client is not None and owner is not None
        request = asyncio.ensure_future(client.call_tool(tool, arguments))
        try:
            await asyncio.wait({request, owner}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            request.cancel()
            raise
        if not request.done():  # the connection ended first
            request.cancel()
            raise _Lost("the connection closed")
        try:
            return request.result()
        except MCPError as exc:
            if exc.error.code == _CONNECTION_CLOSED:
                raise _Lost(exc.error.message) from None
            raise McpToolError(f"{self.server.spoken_name} refused {tool}: {exc.error.message}") from None
        except asyncio.CancelledError:  # not ours: the transport tore its task group down
            raise _Lost("the connection was torn down") from None
        except Exception as exc:  # a transport error (HTTP, pipe): the answer is lost
            raise _Lost(f"{type(exc).__name__}: {exc}") from None

    async def _connect(self) -> None:
        self.connections += 1
        generation = self.connections
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._stop = asyncio.Event()
        self.lost = False  # before the owner starts: a server that exits at once marks it lost
        self._owner = asyncio.ensure_future(self._own(generation, ready, self._stop))
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.server.connect_timeout_s)
        except TimeoutError:
            await self.close()
            raise McpUnavailable(f"{self.server.spoken_name} did not answer when connecting "
                                 f"within {self.server.connect_timeout_s:g} s") from None

    def _ended(self, generation: int) -> None:
        if generation == self.connections:  # not an older connection finishing late
            self.lost = True

    async def _own(self, generation: int, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
        """Hold the connection open, in this one task, until told to stop or it ends."""
        try:
            transport = _watched(self._transport(), lambda: self._ended(generation))
            async with Client(transport, cache=None,
                              client_info=Implementation(name="pipeline", version="0")) as client:
                self.client = client
                ready.set_result(None)
                await stop.wait()
        except BaseException as exc:  # noqa: B036 - it ends here: a lost link is a state, not a crash
            if not ready.done():
                ready.set_exception(McpUnavailable(
                    f"{self.server.spoken_name} could not be reached ({_reason(exc)})"))
        finally:
            self._ended(generation)

    def _transport(self) -> Any:
        s = self.server
        if s.url is not None:
            return _http(s.url, s.headers)
        params = StdioServerParameters(command=s.command or "", args=list(s.args), env=s.env, cwd=s.cwd)
        return stdio_client(params, errlog=_errlog())


@asynccontextmanager
async def _watched(transport: Any, on_end: Callable[[], None]) -> AsyncIterator[Any]:
    """The transport, with its end noticed: a server that exits between calls marks the link
    lost before the next request is sent on it, so that request goes to a new connection."""
    async with transport as (read, write):
        send, receive = anyio.create_memory_object_stream[Any](0)

        async def pump() -> None:
            try:
                async with send:
                    async for message in read:
                        await send.send(message)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass
            finally:
                on_end()

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(pump)
            try:
                yield receive, write
            finally:
                tasks.cancel_scope.cancel()


@asynccontextmanager
async def _http(url: str, headers: dict[str, str] | None) -> AsyncIterator[Any]:
    # the SDK's own time-outs (30 s to connect, 300 s to read a stream); a tool's are ours
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0)) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            yield streams


def _errlog() -> Any:
    """Where a stdio server's stderr goes: ours when it is a real file, else nowhere."""
    import sys

    try:
        sys.stderr.fileno()
        return sys.stderr
    except (AttributeError, OSError, ValueError):
        return open(os.devnull, "w")  # noqa: SIM115 - the subprocess holds it for its lifetime


def _reason(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
