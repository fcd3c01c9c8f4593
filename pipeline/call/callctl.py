"""Call edges: ending a call with a spoken goodbye, and never hanging up mid-sentence.

`end_call` is a tool with a required spoken `goodbye`: the farewell is said in the same response
as the call. The line closes only once that response is done (heard to the end) and the speaker
has drained, capped at `hangup_cap_ms`. A caller who talks over the goodbye keeps the line open; a
caller who answers the farewell ("okay, bye!") is let finish; a new request cancels the close.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Awaitable, Callable
from typing import Any

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
        deadline = clock.now() + self.cap_s
        response = self.find_response(response_id)
        if response is not None and response.status is ResponseStatus.IN_PROGRESS:
            await self._until(response.wait(), deadline)
        if response is not None and response.status is ResponseStatus.IN_PROGRESS:  # never finished
            self.core.log(f"the goodbye did not finish within {self.cap_s:g} s; hanging up anyway",
                          level="warning")
            self.teardown(reason)
            return {"hung_up": True, "note": "goodbye cut short by the hang-up cap"}
        if response is not None and response.status is not ResponseStatus.COMPLETED:
            return {"hung_up": False, "why": "the caller talked over the goodbye"}
        self.farewell_said = True
        await self._until(self.playback.drained.wait(), deadline)
        if check is not None:
            missing = await check
            if missing:
                return {"hung_up": False, "why": f"before hanging up, still to do: {missing}"}
        # let a caller who answers the farewell finish; a new request cancels the close. The
        # grace is quiet after the drain, bounded by the cap: a goodbye that drains 7.5 s into an
        # 8 s cap closes at 8 s, not 8.3. A caller still talking is heard out (a farewell goes on
        # closing, a new request keeps the line): the cap never cuts the caller off.
        grace = self.repeat_grace_s if repeat else self.grace_s
        quiet_since: float | None = None
        while True:
            if self._state is not CallState.CLOSING:
                return {"hung_up": False, "why": self._why or "the call went on"}
            if self.caller_speaking():
                quiet_since = None
                await self.core.floor.wait()
                continue
            quiet_since = clock.now() if quiet_since is None else quiet_since
            left = min(grace - (clock.now() - quiet_since), deadline - clock.now())
            if left <= 0:
                break
            await self._until(self.core.floor.wait(), clock.now() + left)
        self.teardown(reason)
        return {"hung_up": True}

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
