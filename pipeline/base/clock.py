"""One clock abstraction: real time for devices and servers, simulated time for scripted calls.

The simulated clock jumps forward only when the whole pipeline is idle: no coroutine is ready and
no model job is running in a thread. Model compute therefore takes zero simulated time, which makes
a scripted call exact and repeatable; real compute durations are measured separately (`perf_s`).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the clock started."""

    async def sleep_until(self, t: float) -> None: ...

    async def sleep(self, seconds: float) -> None: ...

    async def run_in_thread(self, fn: Callable[..., T], *args: Any) -> T:
        """Run blocking work (model inference) off the event loop."""

    async def wait_for(self, awaitable: Awaitable[T], timeout_s: float) -> T:
        """`awaitable`'s result, or TimeoutError once `timeout_s` of this clock's time passed."""


# Model work (STT passes, token streams, synthesis, ledger writes) runs on one pool for the whole
# process, not on each event loop's default executor: that one is made afresh by every
# `asyncio.run` (a thread started on the hot path of each call's first turn) and holds only
# cores + 4 threads, too few for a server whose calls each keep a token stream open.
_MODEL_THREADS = ThreadPoolExecutor(max_workers=32, thread_name_prefix="model")
_in_flight = [0]  # model jobs submitted and not yet finished, over every event loop
_in_flight_lock = threading.Lock()


async def in_model_thread(fn: Callable[..., T], *args: Any) -> T:
    with _in_flight_lock:
        _in_flight[0] += 1
    job = _MODEL_THREADS.submit(fn, *args)
    job.add_done_callback(_job_done)  # finished, failed, or cancelled before it started
    return await asyncio.wrap_future(job)


def _job_done(_job: Future[Any]) -> None:
    with _in_flight_lock:
        _in_flight[0] -= 1


def model_jobs_in_flight() -> int:
    """Model jobs running or waiting (for a thread, or for their model's lock) right now: the
    depth of the queue in front of the models, which grows when calls outrun them."""
    return _in_flight[0]


def perf_s() -> float:
    """Real monotonic seconds, for compute measurements on either clock."""
    return time.perf_counter()


async def wait_for(clock: Clock, awaitable: Awaitable[T], timeout_s: float) -> T:
    """Race `awaitable` against `timeout_s` of `clock` time; on time-out it is cancelled (and
    awaited) and TimeoutError is raised. On the simulated clock a tool's or a check's time-out
    therefore fires in simulated time, exactly like any other policy delay."""
    work = asyncio.ensure_future(awaitable)
    timer = asyncio.ensure_future(clock.sleep(timeout_s))
    try:
        await asyncio.wait({work, timer}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        work.cancel()
        raise
    finally:
        timer.cancel()
    if work.done():
        return work.result()
    await cancel_and_wait(work)
    raise TimeoutError(f"no answer within {timeout_s:g} s")


async def cancel_and_wait(*tasks: asyncio.Future[Any] | None) -> None:
    """Cancel tasks and wait until each has finished, swallowing what they end with: the one
    graceful stop that responses, transcription passes and sessions all use."""
    live = [t for t in tasks if t is not None]
    for task in live:
        if not task.done():
            task.cancel()
    for task in live:
        try:
            await task
        except (asyncio.CancelledError, Exception):
            pass


class Pulse:
    """Wakes everyone waiting when something changed (the floor, a response's audio heard).

    An `asyncio.Event` that resets itself: `wait()` returns at the next `pulse()`, so waiters
    re-check their condition instead of polling it every 20 ms.
    """

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def pulse(self) -> None:
        self._event.set()
        self._event = asyncio.Event()

    async def wait(self) -> None:
        await self._event.wait()


class RealClock:
    """Wall-clock time from the event loop's monotonic clock."""

    def __init__(self) -> None:
        self._t0 = time.monotonic()

    def now(self) -> float:
        return time.monotonic() - self._t0

    async def sleep_until(self, t: float) -> None:
        await asyncio.sleep(max(0.0, t - self.now()))

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))

    async def run_in_thread(self, fn: Callable[..., T], *args: Any) -> T:
        return await in_model_thread(fn, *args)

    async def wait_for(self, awaitable: Awaitable[T], timeout_s: float) -> T:
        return await wait_for(self, awaitable, timeout_s)


class SimClock:
    """Simulated time that advances to the next sleeper once nothing else can run.

    `drive()` must run as a task on the same loop. Idle means: the busy count (thread jobs in
    flight) is zero and a few loop iterations passed with no new work scheduled.
    """

    _IDLE_SPINS = 8  # loop iterations with nothing new before time may jump

    def __init__(self) -> None:
        self._now = 0.0
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()
        self._busy = 0
        self._activity = 0

    def now(self) -> float:
        return self._now

    async def sleep_until(self, t: float) -> None:
        if t <= self._now:
            await asyncio.sleep(0)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (t, next(self._seq), fut))
        self._activity += 1
        await fut

    async def sleep(self, seconds: float) -> None:
        await self.sleep_until(self._now + max(0.0, seconds))

    async def run_in_thread(self, fn: Callable[..., T], *args: Any) -> T:
        self._busy += 1
        self._activity += 1
        try:
            return await in_model_thread(fn, *args)
        finally:
            self._busy -= 1
            self._activity += 1

    async def wait_for(self, awaitable: Awaitable[T], timeout_s: float) -> T:
        return await wait_for(self, awaitable, timeout_s)

    def touch(self) -> None:
        """Mark activity from outside the clock (e.g. a queue put from a thread)."""
        self._activity += 1

    async def _settle(self) -> None:
        """Wait until the loop has had nothing new to do for a few iterations."""
        while True:
            seen = self._activity
            for _ in range(self._IDLE_SPINS):
                await asyncio.sleep(0)
            if self._busy:
                await asyncio.sleep(0.0005)
                continue
            if seen == self._activity:
                return

    async def drive(self) -> None:
        """Advance time forever; cancel the task to stop."""
        while True:
            await self._settle()
            while self._sleepers and self._sleepers[0][2].cancelled():
                heapq.heappop(self._sleepers)
            if not self._sleepers:
                await asyncio.sleep(0.0005)
                continue
            t, _, _ = self._sleepers[0]
            self._now = max(self._now, t)
            while self._sleepers and self._sleepers[0][0] <= self._now:
                _, _, fut = heapq.heappop(self._sleepers)
                if not fut.done():
                    fut.set_result(None)
