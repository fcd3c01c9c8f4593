"""Listeners called in a declared order, each isolated from the others.

Who hears first is part of what the wiring means: the barge-in gate reads a VAD window before
turn taking does; a transport is handed a frame of agent audio before the session's own
bookkeeping of it; the session's owners see an event before transports and printers do. So a
listener is added with a phase, and the phase, not where in a list it happened to land, says
when it is called.

Every in-process callback of a call goes through this one mechanism (events, caller frames, VAD
windows, played frames, the echo reference): a listener that raises does not stop the others or
the loop that called it. Its first failure is reported; later ones are swallowed, so a listener
that fails on every 20 ms frame does not flood the log.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from enum import IntEnum
from typing import Any, Generic, TypeVar

F = TypeVar("F", bound=Callable[..., Any])
# (listener, what it raised, the arguments it was called with): told of a listener's first failure
FailureReport = Callable[[Callable[..., Any], Exception, tuple[Any, ...]], None]

log = logging.getLogger(__name__)


def listener_name(listener: Callable[..., Any]) -> str:
    """A listener as a person finds it in the code, e.g. `Connection._on_event`."""
    return getattr(listener, "__qualname__", None) or repr(listener)


def log_failure(listener: Callable[..., Any], error: Exception, _args: tuple[Any, ...]) -> None:
    """The default report: a logged error naming the listener, with its traceback."""
    log.error("listener %s failed (it is not reported again)", listener_name(listener), exc_info=error)


class Ordered(Generic[F]):
    """Callables by phase (the lowest first), then in the order they were added within a phase.

    `phases` is the IntEnum of the phases this list has; a member of another enum is refused.
    Calling the list calls every listener with the same arguments (`on_window(window, prob,
    end_ms)`); `on_failure` is told of each listener's first failure, once all have been called.
    """

    def __init__(self, phases: type[IntEnum], *, on_failure: FailureReport = log_failure) -> None:
        self.phases = phases
        self.on_failure = on_failure
        self._added: list[tuple[int, int, F]] = []  # (phase, order added, listener)
        self._calls: tuple[F, ...] = ()
        self._failed: set[int] = set()  # listeners (by id; each is held in `_calls`) reported

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

    def __call__(self, *args: Any) -> None:
        # runs per audio frame: nothing is allocated unless a listener fails
        failures: list[tuple[F, Exception]] | None = None
        for listener in self._calls:
            try:
                listener(*args)
            except Exception as exc:  # one listener's bug must not end the call
                if id(listener) not in self._failed:
                    self._failed.add(id(listener))
                    failures = [*(failures or ()), (listener, exc)]
        for listener, error in failures or ():
            self.on_failure(listener, error, args)

    def __iter__(self) -> Iterator[F]:
        # a snapshot: a listener added while they are being called hears from the next call on
        return iter(self._calls)

    def __len__(self) -> int:
        return len(self._calls)

    def clear(self) -> None:
        """Forget every listener (and which of them failed)."""
        self._added.clear()
        self._calls = ()
        self._failed.clear()
