"""Listeners called in a declared order.

Who hears first is part of what the wiring means: the barge-in gate reads a VAD window before
turn taking does; a transport is handed a frame of agent audio before the session's own
bookkeeping of it; the session's owners see an event before transports and printers do. So a
listener is added with a phase, and the phase, not where in a list it happened to land, says
when it is called.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from enum import IntEnum
from typing import Any, Generic, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class Ordered(Generic[F]):
    """Callables by phase (the lowest first), then in the order they were added within a phase.

    `phases` is the IntEnum of the phases this list has; a member of another enum is refused.
    """

    def __init__(self, phases: type[IntEnum]) -> None:
        self.phases = phases
        self._added: list[tuple[int, int, F]] = []  # (phase, order added, listener)
        self._calls: tuple[F, ...] = ()

    def add(self, listener: F, phase: IntEnum) -> None:
        if not isinstance(phase, self.phases):
            raise TypeError(f"{phase!r} is not one of {self.phases.__name__}")
        self._added.append((int(phase), len(self._added), listener))
        self._added.sort(key=lambda entry: entry[:2])
        self._calls = tuple(entry[2] for entry in self._added)

    def append(self, listener: F) -> None:
        """A listener after every declared phase, as `list.append` placed one before phases
        existed (a third-party transport's `session.listeners.append(fn)` keeps working)."""
        self.add(listener, max(self.phases))

    def __iter__(self) -> Iterator[F]:
        # a snapshot: a listener added while they are being called hears from the next call on
        return iter(self._calls)

    def __len__(self) -> int:
        return len(self._calls)

    def clear(self) -> None:
        self._added.clear()
        self._calls = ()


def listener_name(listener: Callable[..., Any]) -> str:
    """A listener as a person finds it in the code, e.g. `Connection._on_event`."""
    return getattr(listener, "__qualname__", None) or repr(listener)
