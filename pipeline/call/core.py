"""What every part of a session shares: its settings, its clock, its event stream, its background
tasks and its conversation. Each owner (input path, turn taking, responder, tools, call control,
client control) gets this and the few collaborators it needs, never the whole session."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from ..base import events as ev
from ..base.clock import Clock, Pulse
from ..base.config import Config
from ..base.conversation import Conversation, Item
from ..base.listeners import Ordered, listener_name

log = logging.getLogger(__name__)

Listener = Callable[[ev.Event], None]


class SessionCore:
    def __init__(self, config: Config, clock: Clock, events: ev.EventLog | None = None) -> None:
        self.config = config
        self.clock = clock
        self.events = events if events is not None else ev.EventLog()
        self.listeners: Ordered[Listener] = Ordered(ev.EventPhase, on_failure=self.listener_failed)
        self.conversation = Conversation()
        self.tasks: set[asyncio.Future[Any]] = set()
        # pulsed when who holds the floor may have changed: a response ended, the caller's turn
        # opened or closed, a close changed state; waiters re-check instead of polling
        self.floor = Pulse()

    def emit(self, event: ev.Event) -> None:
        """Stamp an event with the session clock and hand it to the log and every listener.

        A listener that raises does not stop the others or the call: its first failure is
        logged and reported as a server_error event naming it (after every listener has had this
        event); later failures of the same listener are not reported again. A listener that
        also fails on that error event is already reported, so reporting cannot recur."""
        event.ts = self.clock.now()
        self.events.append(event)
        self.listeners(event)

    def listener_failed(self, listener: Callable[..., Any], error: Exception, args: tuple[Any, ...]) -> None:
        """The first failure of one of the call's listeners (of events, caller frames, VAD
        windows, played frames): logged, and told to the client as a server_error event."""
        name = listener_name(listener)
        event = args[0] if args and isinstance(args[0], ev.Event) else None
        what = f"event listener {name} failed on {event.type}" if event is not None else f"listener {name} failed"
        log.error("%s", what, exc_info=error)
        self.emit(ev.error_event("server_error", f"{what} ({type(error).__name__}: {error}); "
                                 "it is not reported again"))

    def drop_listeners(self) -> None:
        """The call is over: forget every listener (and which of them failed)."""
        self.listeners.clear()

    def log(self, message: str, *, level: str = "info") -> None:
        self.emit(ev.CallLog(message=message, level=level))

    def add_item(self, item: Item) -> Item:
        """Add an item to the conversation and announce it (conversation.item.created)."""
        self.conversation.add(item)
        self.emit(ev.ItemCreated(item=item.to_dict(), previous_item_id=self.conversation.previous_id(item)))
        return item

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Future[Any]:
        """Run a coroutine as part of this session: cancelled on close, failures reported."""
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        task.add_done_callback(self.report_crash)
        return task

    def report_crash(self, task: asyncio.Future[Any]) -> None:
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            log.error("session task failed", exc_info=exc)
            self.emit(ev.error_event("server_error", f"{type(exc).__name__}: {exc}"))
