"""The handle of one reply: what everyone outside the reply holds of it.

The responder, barge-in, the client facade, call control and the server's goodbye need three
things of a reply: to stop it, to wait for it, and to know what the caller heard of it. A
`ReplyHandle` gives them those and nothing else (LiveKit's `SpeechHandle` is the same idea): an
id, a typed status, `cancel`, `done` and `wait`, `heard` and `wait_heard`. The parts that make the
reply (`response.Response`: generation, speech, the tool call, the screened and owed words) sit
behind it, and only they move its status.
"""

from __future__ import annotations

import asyncio
from enum import StrEnum
from typing import NamedTuple, Protocol

from .states import RESPONSE_MOVES, GuardedState, ResponseStatus


class Purpose(StrEnum):
    """Why a reply is made. A member equals its string, so events and logs read as before."""

    TURN = "turn"  # answers the caller's committed turn
    TOOL_RESULT = "tool_result"  # speaks about tool results that landed
    REMINDER = "reminder"  # tells an outcome the caller has not heard yet
    CLIENT = "client"  # a client's response.create
    GOODBYE = "goodbye"  # the server's own goodbye as it drains


class Heard(NamedTuple):
    """What the caller has heard of a reply so far."""

    text: str  # its words up to the last sample played (a word cut in two ends in "-")
    played_ms: int


class Behind(Protocol):
    """What a handle asks of the parts that make its reply (`response.Response`)."""

    @property
    def held(self) -> bool: ...

    def stop(self) -> None: ...  # in all four places: playback, synthesis, generation, chunker

    def heard(self) -> Heard: ...

    def made_ms(self) -> float: ...  # the audio it has made so far

    def truncate_to_played(self) -> None: ...

    async def played_out(self) -> None: ...  # its audio has sounded, or was dropped


class ReplyHandle:
    """One reply as seen from outside: stop it, wait for it, ask what was heard."""

    status = GuardedState(RESPONSE_MOVES, ResponseStatus.IN_PROGRESS)  # not a field: moved only

    def __init__(self, behind: Behind, *, response_id: str, turn_id: str | None, purpose: Purpose) -> None:
        self.id = response_id
        self.turn_id = turn_id
        self.purpose = purpose
        self.reason: str | None = None  # why it ended other than completed (the wire's status_details)
        self.error: str | None = None
        self.heard_in_full = False  # set by the responder once it was heard to its end
        self._behind = behind
        self._done = asyncio.Event()

    @property
    def held(self) -> bool:
        """A speculation not yet adopted: nothing of it has gone out."""
        return self._behind.held

    def cancel(self, reason: str = "client_cancelled") -> None:
        """Stop it while it is being made (a no-op once it has ended); its end truncates it to
        what the caller heard."""
        if self.status is not ResponseStatus.IN_PROGRESS:
            return
        self.status, self.reason = ResponseStatus.CANCELLED, reason
        self._behind.stop()

    def done(self) -> bool:
        """Its response.done has gone out."""
        return self._done.is_set()

    async def wait(self) -> None:
        """Until it has ended (for a spoken reply: heard to its end, or stopped)."""
        await self._done.wait()

    def mark_done(self) -> None:
        """Its parts have finished (only the reply itself calls this)."""
        self._done.set()

    def heard(self) -> Heard:
        """What the caller has heard of it so far."""
        return self._behind.heard()

    @property
    def made_ms(self) -> float:
        """How much audio it has made so far."""
        return self._behind.made_ms()

    def truncate_to_heard(self) -> None:
        """Its item keeps only what the caller heard (conversation.item.truncated)."""
        self._behind.truncate_to_played()

    async def wait_heard(self) -> bool:
        """Until it has ended and its audio played out (or was dropped); True when the caller
        heard all of it."""
        await self.wait()
        await self._behind.played_out()
        return self.status.played_to_its_end
