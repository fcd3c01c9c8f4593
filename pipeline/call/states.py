"""The call's states, each a small enum with its allowed moves written once.

A state is a `StrEnum`: a member compares equal to its string, so `"completed"` on the wire and in
a test's `status == "completed"` stay what they were. Every move goes through the state's
`Moves` table, which raises `IllegalMove` on one the table does not list: a bug in the code that
asked for it, never something a caller or a client can do.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any, Generic, TypeVar, overload

S = TypeVar("S", bound=StrEnum)


class IllegalMove(RuntimeError):
    """A state change its table does not allow."""


class Moves(Generic[S]):
    """The moves a state may make: `moves(old, new)` returns `new`, or raises `IllegalMove`.
    A table made `by_event` also says where each event leads: `moves.after(event, old)`."""

    def __init__(self, states: type[S], allowed: Mapping[S, Iterable[S]]) -> None:
        missing = [s for s in states if s not in allowed]
        if missing:  # a state the table forgot would make every move out of it illegal
            raise ValueError(f"{states.__name__}: no moves given for {missing}")
        self.states = states
        self.allowed: dict[S, frozenset[S]] = {s: frozenset(allowed[s]) for s in states}
        self.events: dict[str, dict[S, S]] = {}

    @classmethod
    def by_event(cls, states: type[S], events: Mapping[str, Mapping[S, S]]) -> Moves[S]:
        """The moves are the events' (old -> new) pairs; an event not listed from a state is
        illegal there."""
        allowed: dict[S, set[S]] = {s: set() for s in states}
        for table in events.values():
            for old, new in table.items():
                allowed[old].add(new)
        moves = cls(states, allowed)
        moves.events = {event: dict(table) for event, table in events.items()}
        return moves

    def after(self, event: str, old: S) -> S:
        new = self.events.get(event, {}).get(old)
        if new is None:
            raise IllegalMove(f"{self.states.__name__}: {event} from {old.value} is not allowed")
        return new

    def __call__(self, old: S, new: S) -> S:
        if new not in self.allowed[old]:
            raise IllegalMove(f"{self.states.__name__}: {old.value} -> {new.value} is not allowed")
        return new

    def terminal(self, state: S) -> bool:
        return not self.allowed[state]


class GuardedState(Generic[S]):
    """A state attribute: reading it gives the state (`initial` until first moved); assigning
    to it is a move, checked against its table (`response.status = ResponseStatus.CANCELLED`)."""

    def __init__(self, moves: Moves[S], initial: S) -> None:
        self.moves = moves
        self.initial = initial
        self._slot = ""

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self._slot = f"_{name}_state"

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> GuardedState[S]: ...
    @overload
    def __get__(self, obj: object, owner: type[Any]) -> S: ...
    def __get__(self, obj: object | None, owner: type[Any]) -> GuardedState[S] | S:
        if obj is None:
            return self
        state: S = obj.__dict__.get(self._slot, self.initial)
        return state

    def __set__(self, obj: object, new: S) -> None:
        obj.__dict__[self._slot] = self.moves(obj.__dict__.get(self._slot, self.initial), new)


class ResponseStatus(StrEnum):
    """`response.status` on the wire."""

    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"  # made and heard to its end
    CANCELLED = "cancelled"  # stopped: a barge-in, a client's cancel, a turn that went on
    INCOMPLETE = "incomplete"  # the model hit max_output_tokens
    FAILED = "failed"  # a stage failed (the call goes on)

    @property
    def played_to_its_end(self) -> bool:
        """Ended with all it said played: completed, or stopped at the model's token cap (what it
        made is still said, then the audio plays out before the status is set)."""
        return self in (ResponseStatus.COMPLETED, ResponseStatus.INCOMPLETE)


RESPONSE_MOVES = Moves(ResponseStatus, {
    ResponseStatus.IN_PROGRESS: (ResponseStatus.COMPLETED, ResponseStatus.INCOMPLETE,
                                 ResponseStatus.CANCELLED, ResponseStatus.FAILED),
    # a stage that raises while a cancel is stopping it still reports its error
    ResponseStatus.CANCELLED: (ResponseStatus.FAILED,),
    ResponseStatus.COMPLETED: (),
    ResponseStatus.INCOMPLETE: (),
    ResponseStatus.FAILED: (),
})


class CallState(StrEnum):
    """The line, as call control holds it."""

    OPEN = "open"
    CLOSING = "closing"  # the goodbye is being said; a new request reopens, quiet closes
    CLOSED = "closed"  # hung up: never reopens


CALL_MOVES = Moves(CallState, {
    CallState.OPEN: (CallState.CLOSING, CallState.CLOSED),
    # another end_call while closing closes on (the repeat grace); a new request reopens
    CallState.CLOSING: (CallState.CLOSING, CallState.OPEN, CallState.CLOSED),
    CallState.CLOSED: (),
})


class TurnStanding(StrEnum):
    """Where a caller turn stands with the agent's voice: is it a turn at all, and did it
    interrupt? (`Turn.over_agent`, `Turn.barged_in` and `Turn.under_agent` read it.)"""

    CALLER = "caller"  # the caller's turn: it began with the floor, or outlasted the agent
    UNDER_AGENT = "under_agent"  # talk over the agent's voice: no turn unless it interrupts or outlasts it
    INTERRUPTING = "interrupting"  # the barge-in gate made it an interruption over the agent's voice
    INTERRUPTION = "interruption"  # an interruption the agent no longer talks over


TURN_MOVES = Moves.by_event(TurnStanding, {
    # the barge-in gate made it an interruption (a second fire changes nothing)
    "barges_in": {TurnStanding.CALLER: TurnStanding.INTERRUPTION,
                  TurnStanding.UNDER_AGENT: TurnStanding.INTERRUPTING,
                  TurnStanding.INTERRUPTING: TurnStanding.INTERRUPTING,
                  TurnStanding.INTERRUPTION: TurnStanding.INTERRUPTION},
    # speech over the agent stopped after the agent's voice had: no longer over it
    "outlasts_agent": {TurnStanding.UNDER_AGENT: TurnStanding.CALLER,
                       TurnStanding.INTERRUPTING: TurnStanding.INTERRUPTION},
})


class BargeInPhase(StrEnum):
    """What the barge-in owner is doing about the caller's voice while the agent's sounds."""

    LISTENING = "listening"  # playback plays; the gate reads each window
    PAUSED = "paused"  # a gate candidate: playback paused while it is judged
    HEARING = "hearing"  # playback paused; the caller's words decide (backchannel or not)


BARGE_IN_MOVES = Moves(BargeInPhase, {
    BargeInPhase.LISTENING: (BargeInPhase.LISTENING, BargeInPhase.PAUSED, BargeInPhase.HEARING),
    BargeInPhase.PAUSED: (BargeInPhase.LISTENING, BargeInPhase.HEARING),
    BargeInPhase.HEARING: (BargeInPhase.LISTENING,),
})
