"""Call edges: ending a call with a spoken goodbye, and never hanging up mid-sentence.

`end_call` is a tool with a required spoken `goodbye`: the farewell is said in the same response
as the call. The line closes only once that response is done (heard to the end) and the speaker
has drained, capped at `hangup_cap_ms`. A caller who talks over the goodbye keeps the line open; a
caller who answers the farewell ("okay, bye!") is let finish; a new request cancels the close.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .tools import ToolSpec, tool
from .tools.runner import current_call

if TYPE_CHECKING:
    from .session import Session

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
        return await ctx.control.end_call(response_id=ctx.response_id, reason=reason)

    from dataclasses import replace

    # "we did not hang up because..." must reach the model even when the goodbye was cut off
    return replace(end_call, keep_on_interrupt=True)


class CallControl:
    """The one place that closes the line; teardown runs exactly once."""

    def __init__(self, session: Session) -> None:
        self.session = session
        policy = session.config.call
        self.cap_s = policy.hangup_cap_ms / 1000
        self.grace_s = policy.close_grace_ms / 1000
        self.repeat_grace_s = policy.repeat_close_grace_ms / 1000
        self.state = "open"  # "open" | "closing" | "closed"
        self.closes_requested = 0
        self.teardowns = 0
        self.farewell_said = False
        self._why: str | None = None
        self._checked = False

    @property
    def closed(self) -> bool:
        return self.state == "closed"

    async def end_call(self, *, response_id: str, reason: str) -> dict[str, Any]:
        s = self.session
        self.closes_requested += 1
        if self.closed:
            return {"hung_up": True, "note": "the line was already closed"}
        self.state, self._why = "closing", None
        check = None
        if s.config.call.pre_hangup_check and not self._checked:
            check = s.spawn(self._pre_hangup_check())
        try:
            return await self._close(response_id, reason, check)
        finally:  # however this ends (a timeout, a cancel), the call is never left half-closed
            if self.state == "closing":
                self.state = "open"
            if check is not None and not check.done():
                check.cancel()

    async def _close(self, response_id: str, reason: str, check: Any) -> dict[str, Any]:
        s = self.session
        clock = s.clock
        repeat = self.farewell_said
        deadline = clock.now() + self.cap_s
        response = s.response_by_id(response_id)
        while response is not None and response.status == "in_progress" and clock.now() < deadline:
            await clock.sleep(0.02)
        if response is not None and response.status == "in_progress":  # the goodbye never finished
            s.log(f"the goodbye did not finish within {self.cap_s:g} s; hanging up anyway", level="warning")
            self.teardown(reason)
            return {"hung_up": True, "note": "goodbye cut short by the hang-up cap"}
        if response is not None and response.status != "completed":
            return {"hung_up": False, "why": "the caller talked over the goodbye"}
        self.farewell_said = True
        while not s.playback.drained.is_set() and clock.now() < deadline:
            await clock.sleep(0.02)
        if check is not None:
            missing = await check
            self._checked = True  # asked and answered: at most once per call
            if missing:
                return {"hung_up": False, "why": f"before hanging up, still to do: {missing}"}
        # let a caller who answers the farewell finish; a new request cancels the close
        grace = self.repeat_grace_s if repeat else self.grace_s
        quiet_since: float | None = None
        while True:
            if self.state != "closing":
                return {"hung_up": False, "why": self._why or "the call went on"}
            if s.caller_speaking:
                quiet_since = None
            elif quiet_since is None:
                quiet_since = clock.now()
            elif clock.now() - quiet_since >= grace:
                break
            await clock.sleep(0.02)
        self.teardown(reason)
        return {"hung_up": True}

    def on_caller_turn(self, text: str) -> bool:
        """A caller turn while closing: True if it was a farewell (the close goes on)."""
        if self.state != "closing":
            return False
        if looks_like_farewell(text):
            self.session.log(f"the caller answered the farewell: {text!r}")
            return True
        self.state, self._why = "open", "the caller made a new request after the goodbye"
        return False

    def teardown(self, reason: str) -> None:
        if self.teardowns:
            return
        self.teardowns += 1
        self.state = "closed"
        s = self.session
        s.log(f"(hangs up: {reason})")
        hang_up = getattr(s.sink, "hang_up", None)
        if hang_up is not None:
            hang_up()

    async def _pre_hangup_check(self) -> str | None:
        """One LLM call: do the instructions still require an action? Fails open."""
        s = self.session
        transcript = "\n".join(f"{i.role}: {i.text}" for i in s.conversation.items if i.type == "message")
        messages = [
            {"role": "system", "content": "You check a phone call before it ends. Answer NONE, or "
                                          "the one missing action in at most twelve words."},
            {"role": "user", "content": f"Instructions:\n{s.config.response.instructions}\n\n"
                                        f"Call so far:\n{transcript}\n\nDo the instructions still "
                                        "require an action before hanging up?"},
        ]
        try:
            import asyncio

            text = await asyncio.wait_for(s.clock.run_in_thread(lambda: s.llm.complete(messages)),
                                          timeout=s.config.call.pre_hangup_timeout_ms / 1000)
        except Exception as exc:  # an error or a timeout never keeps the caller on the line
            s.log(f"pre-hangup check skipped: {type(exc).__name__}: {exc}")
            return None
        answer = text.strip().splitlines()[0].strip() if text.strip() else ""
        return None if not answer or answer.upper().startswith("NONE") else answer[:120]
