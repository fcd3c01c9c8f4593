"""A spoken goodbye the server says on its own: the end of a drain (`ops_http.drain`).

What the agent is saying is cut (as a barge-in would cut it, so the conversation keeps what was
heard), then the line is said as a response of its own, out of band (`conversation: none`: not
in the conversation), through the session's own voice and playback, so a client sees an ordinary
response (`response.created`, audio deltas, `response.done`) before the socket closes. The line
comes from a scripted model, never from the session's LLM: a stuck model must not hold up the
shutdown, and what a caller hears on a restart is decided here.
"""

from __future__ import annotations

import asyncio

from ..call.handle import Purpose
from ..call.response import ResponseOptions
from ..call.session import Session

GOODBYE = "Sorry, I have to end this call now. Please call back and we will carry on."
GOODBYE_S = 10.0  # at most this long for the goodbye to be heard, then the line closes anyway
REASON = "server_shutdown"


async def say_goodbye(session: Session, text: str = GOODBYE, *,
                      timeout_s: float = GOODBYE_S) -> bool:
    """Cut what the agent is saying and say `text`; True once it was heard to its end."""
    responder = session.responder
    responder.cancel_active(REASON)

    async def say() -> bool:
        while responder.active is not None:  # the cut reply ends (or a held one is dropped)
            await session.core.floor.wait()
        goodbye = responder.say(text, purpose=Purpose.GOODBYE, options=ResponseOptions(out_of_band=True))
        return await goodbye.wait_heard()

    try:
        return await asyncio.wait_for(say(), timeout_s)
    except TimeoutError:
        return False
