"""Call edges: ending a call with a spoken goodbye, and never hanging up mid-sentence.

`end_call` is a tool with a required spoken `goodbye`: the farewell is said in the same response
as the call. The line closes only once that response is done (heard to the end) and the speaker
has drained, capped at `hangup_cap_ms`. A caller who talks over the goodbye keeps the line open; a
caller who answers the farewell ("okay, bye!") is let finish; a new request cancels the close.

The cap bounds a silent close (a goodbye that stalls, or quiet after it), never a conversation:
its clock and the grace's stop while the caller holds the floor, from the first word until the
turn's words are known. The words, not the turn-end threshold, decide farewell or new request.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from ..base import events as ev
from ..base.clock import Clock
from ..base.conversation import Item
from ..base.protocols import LLM, AudioSink, HangUpSink
from ..stages.playback import Playback
from ..tools import ToolSpec, tool
from ..tools.runner import current_call
from .core import SessionCore
from .handle import ReplyHandle
from .states import CALL_MOVES, CallState, ResponseStatus

# (conversation items, instructions) -> the one missing action, or None
Audit = Callable[[list[Item], str], Awaitable[str | None]]

_FAREWELL_WORDS = {
    "ok", "okay", "bye", "goodbye", "good", "bye-bye", "thanks", "thank", "you", "too", "take",
    "care", "cheers", "have", "a", "nice", "great", "day", "night", "evening", "alright", "all",
    "right", "sure", "yes", "yeah", "see", "ya", "then", "so", "much", "will", "do", "perfect",
}
_WORD = re.compile(r"[a-z'-]+")


def looks_like_farewell(text: str) -> bool:
    """"Okay, bye!" or "thanks, you too" — and nothing that asks for more."""
    words = _WORD.findall(text.lower())
    return bool(words) and "?" not in text and all(w in _FAREWELL_WORDS for w in words)


def end_call_tool() -> ToolSpec:
    # the cap (8 s) plus a caller's farewell and the grace period; past it the close is abandoned
    @tool(spoken=("goodbye",), timeout_s=30.0)
    async def end_call(goodbye: str, reason: str) -> dict[str, Any]:
        """End the phone call once the caller's needs are met or they say goodbye.

        Args:
            goodbye: The farewell to say before hanging up, e.g. "Thanks for calling, goodbye!"
            reason: Why the call ends, e.g. "caller is done".
        """
        ctx = current_call()
        control: CallControl = ctx.control  # the tools layer holds it untyped (it cannot import us)
        return await control.end_call(response_id=ctx.response_id, reason=reason)

    from dataclasses import replace

    # "we did not hang up because..." must reach the model even when the goodbye was cut off
    return replace(end_call, keep_on_interrupt=True, closes=True)


class CallControl:
    """The one place that closes the line; teardown runs exactly once.

    It sees the call through narrow ports: the speaker (drained?), the responses (by id), whether
    the caller holds the floor, the line (hang up), and the LLM for the optional pre-hangup audit.
    """

    def __init__(self, core: SessionCore, *, playback: Playback, sink: AudioSink, llm: LLM,
                 find_response: Callable[[str], ReplyHandle | None],
                 caller_speaking: Callable[[], bool]) -> None:
        self.core = core
        self.playback = playback
        self.sink = sink
        self.llm = llm
        self.find_response = find_response
        self.caller_speaking = caller_speaking
        self.audit: Audit = self._llm_audit  # replaceable: a dedicated audit model, a test double
        policy = core.config.call
        self.cap_s = policy.hangup_cap_ms / 1000
        self.grace_s = policy.close_grace_ms / 1000
        self.repeat_grace_s = policy.repeat_close_grace_ms / 1000
        self._state = CallState.OPEN
        self.closes_requested = 0
        self.teardowns = 0
        self.farewell_said = False
        self._why: str | None = None
        self._checked = False
        # committed caller turns whose words are not known yet (item id -> commit time): the
        # caller still holds the floor until they are, whatever threshold committed the turn
        self._deciding: dict[str, float] = {}
        self._speech_end_s: float | None = None  # the session clock at the caller's last speech stop
        core.listeners.add(self._on_event, ev.EventPhase.SESSION)

    @property
    def state(self) -> CallState:
        return self._state

    @property
    def closed(self) -> bool:
        return self._state is CallState.CLOSED

    def _set_state(self, state: CallState, why: str | None = None) -> None:
        self._state, self._why = CALL_MOVES(self._state, state), why
        self.core.floor.pulse()  # a close waiting for quiet re-checks at once

    async def end_call(self, *, response_id: str, reason: str) -> dict[str, Any]:
        self.closes_requested += 1
        if self.closed:
            return {"hung_up": True, "note": "the line was already closed"}
        self._set_state(CallState.CLOSING)
        check = None
        if self.core.config.call.pre_hangup_check and not self._checked:
            check = self.core.spawn(self._pre_hangup_check())
        try:
            return await self._close(response_id, reason, check)
        finally:  # however this ends (a timeout, a cancel), the call is never left half-closed
            if self._state is CallState.CLOSING:
                self._set_state(CallState.OPEN)
            if check is not None and not check.done():
                check.cancel()

    async def _close(self, response_id: str, reason: str, check: Any) -> dict[str, Any]:
        clock = self.core.clock
        repeat = self.farewell_said
        cap = _CapClock(clock, self.cap_s)
        response = self.find_response(response_id)
        if response is not None and response.status is ResponseStatus.IN_PROGRESS:
            await self._until(response.wait(), cap.deadline())
        if response is not None and response.status is ResponseStatus.IN_PROGRESS:  # never finished
            self.core.log(f"the goodbye did not finish within {self.cap_s:g} s; hanging up anyway",
                          level="warning")
            self.teardown(reason)
            return {"hung_up": True, "note": "goodbye cut short by the hang-up cap"}
        if response is not None and not response.status.played_to_its_end:
            return {"hung_up": False, "why": "the caller talked over the goodbye"}
        self.farewell_said = True
        await self._until(self.playback.drained.wait(), cap.deadline())
        if check is not None:
            missing = await check
            if missing:
                return {"hung_up": False, "why": f"before hanging up, still to do: {missing}"}
        # let a caller who answers the farewell finish; a new request cancels the close. The
        # grace is quiet after the drain, bounded by the cap: a goodbye that drains 7.5 s into an
        # 8 s cap closes at 8 s, not 8.3. While the caller holds the floor neither clock runs: a
        # farewell goes on closing once its words are known, a new request keeps the line.
        grace = self.repeat_grace_s if repeat else self.grace_s
        quiet_since: float | None = None
        while True:
            if self._state is not CallState.CLOSING:
                return {"hung_up": False, "why": self._why or "the call went on"}
            if self._caller_holds_floor():
                quiet_since = None
                cap.stop()
                await self._until(self.core.floor.wait(), clock.now() + self.cap_s)  # re-checks a stale decision
                continue
            if quiet_since is None:  # quiet from the caller's last word on (now, if none was said)
                quiet_since = cap.run(since=self._speech_end_s)
            left = min(grace - (clock.now() - quiet_since), cap.left_s())
            if left <= 0:
                break
            await self._until(self.core.floor.wait(), clock.now() + left)
        self.teardown(reason)
        return {"hung_up": True}

    def _caller_holds_floor(self) -> bool:
        """Speaking, paused inside an open turn, or a committed turn whose words are not known."""
        if self.caller_speaking():
            return True
        now = self.core.clock.now()  # a turn whose words never come (a crashed pass) holds no longer than the cap
        return any(now - at < self.cap_s for at in self._deciding.values())

    def _on_event(self, event: ev.Event) -> None:
        if isinstance(event, ev.SpeechStopped):
            self._speech_end_s = event.ts
        elif isinstance(event, ev.InputCommitted) and self._state is CallState.CLOSING:
            self._deciding[event.item_id] = self.core.clock.now()
        elif isinstance(event, ev.TranscriptionCompleted) and self._deciding.pop(event.item_id, None) is not None:
            self.core.floor.pulse()  # the words are known: `on_caller_turn` decides before the close re-checks

    async def _until(self, waiting: Awaitable[Any], deadline: float) -> None:
        """Wait for something, but not past `deadline` on the session clock."""
        try:
            await self.core.clock.wait_for(waiting, max(0.0, deadline - self.core.clock.now()))
        except TimeoutError:
            pass

    def on_caller_turn(self, text: str) -> bool:
        """A caller turn while closing: True if it was a farewell (the close goes on)."""
        if self._state is not CallState.CLOSING:
            return False
        if looks_like_farewell(text):
            self.core.log(f"the caller answered the farewell: {text!r}")
            return True
        self._set_state(CallState.OPEN, "the caller made a new request after the goodbye")
        return False

    def teardown(self, reason: str) -> None:
        if self.teardowns:
            return
        self.teardowns += 1
        self._set_state(CallState.CLOSED)
        self.core.log(f"(hangs up: {reason})")
        if isinstance(self.sink, HangUpSink):
            self.sink.hang_up()

    async def _pre_hangup_check(self) -> str | None:
        """Is an action still owed before hanging up? Asked at most once per call; fails open."""
        self._checked = True  # once asked, never again this call, whatever the answer
        clock = self.core.clock
        try:
            answer = await clock.wait_for(
                self.audit(list(self.core.conversation.items), self.core.config.response.instructions),
                self.core.config.call.pre_hangup_timeout_ms / 1000)
        except Exception as exc:  # an error or a timeout never keeps the caller on the line
            self.core.log(f"pre-hangup check skipped: {type(exc).__name__}: {exc}")
            return None
        return answer[:120] if answer else None

    async def _llm_audit(self, items: list[Item], instructions: str) -> str | None:
        """One LLM call: do the instructions still require an action? Cancelled with its wait."""
        transcript = "\n".join(f"{i.role}: {i.text}" for i in items if i.type == "message")
        messages = [
            {"role": "system", "content": "You check a phone call before it ends. Answer NONE, or "
                                          "the one missing action in at most twelve words."},
            {"role": "user", "content": f"Instructions:\n{instructions}\n\n"
                                        f"Call so far:\n{transcript}\n\nDo the instructions still "
                                        "require an action before hanging up?"},
        ]
        cancel = threading.Event()
        try:
            text = await self.core.clock.run_in_thread(lambda: self.llm.complete(messages, cancel=cancel))
        finally:
            cancel.set()  # a time-out stops the model thread too, freeing its lock
        answer = text.strip().splitlines()[0].strip() if text.strip() else ""
        return None if not answer or answer.upper().startswith("NONE") else answer


class _CapClock:
    """The hang-up cap's clock: it runs while nobody is speaking and stops while the caller holds
    the floor, so the cap bounds a stalled goodbye or the quiet after it, never the caller."""

    def __init__(self, clock: Clock, cap_s: float) -> None:
        self.clock = clock
        self._left_s = cap_s
        self._since: float | None = clock.now()  # running since then; None: stopped
        self._stopped_s = 0.0

    def left_s(self) -> float:
        return self._left_s - (self.clock.now() - self._since if self._since is not None else 0.0)

    def deadline(self) -> float:
        return self.clock.now() + self.left_s()

    def stop(self) -> None:
        if self._since is not None:
            self._left_s, self._since, self._stopped_s = self.left_s(), None, self.clock.now()

    def run(self, *, since: float | None = None) -> float:
        """Run again from `since` (the caller's last word) if that came after the stop, else from
        now; returns when it runs from."""
        now = self.clock.now()
        if self._since is None:
            self._since = min(since, now) if since is not None and since >= self._stopped_s else now
            return self._since
        return now
