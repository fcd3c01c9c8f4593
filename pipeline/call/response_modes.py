"""How a response goes out: the variants of its steps, as strategies chosen once when it is made.

Three choices, each independent of the others (`ResponseModes`):

- delivery: `Live` (its events and audio go out at once) or `Held` (a speculation begun at
  speech-stop: kept back until the turn commit adopts it, then released in order, or dropped
  silently);
- output: `Voice` (the chunker cuts the reply as it comes, each chunk is spoken and played) or
  `TextOnly` (output modalities ["text"]: the reply is written as it is generated);
- placement: `InConversation` or `OutOfBand` (conversation "none": its items never enter the
  history, and its tool call starts at once).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base import events as ev
from ..tools.schema import ToolCall
from .response import Delivery, Modes, Output, Placement, Response, ResponseContext
from .states import ResponseStatus

# --- delivery --------------------------------------------------------------------------------------


class Live:
    """Events to the session, audio to the speaker, tool calls started as they are made."""

    held = False
    reaches_caller = True

    def __init__(self, ctx: ResponseContext, *, response_id: str, item_id: str) -> None:
        self.ctx = ctx
        self.response_id = response_id
        self.item_id = item_id

    def emit(self, event: ev.Event) -> None:
        self.ctx.emit(event)

    def play(self, samples: np.ndarray) -> None:
        self.ctx.playback.enqueue(samples, item_id=self.item_id, response_id=self.response_id)

    def defer(self, start: Callable[[], None]) -> bool:
        return False

    async def released(self) -> None:
        return None

    def stop_audio(self) -> None:
        self.ctx.playback.clear()  # queued audio is dropped at once

    def release(self, response: Response) -> None:
        raise RuntimeError(f"response {response.id} is not held: only a speculation is adopted")


class Held:
    """A speculation: everything it makes is kept, in order, until it is adopted; a held
    response starts no tool (a side effect waits for the caller's turn to be committed)."""

    held = True
    reaches_caller = False

    def __init__(self, live: Live) -> None:
        self.live = live  # what it becomes when adopted
        self._events: list[ev.Event] = []
        self._audio: list[np.ndarray] = []
        self._starts: list[Callable[[], None]] = []
        self._adopted = asyncio.Event()

    def emit(self, event: ev.Event) -> None:
        self._events.append(event)

    def play(self, samples: np.ndarray) -> None:
        self._audio.append(samples)

    def defer(self, start: Callable[[], None]) -> bool:
        self._starts.append(start)
        return True

    async def released(self) -> None:
        await self._adopted.wait()

    def stop_audio(self) -> None:
        return None  # none of it has sounded

    def release(self, response: Response) -> None:
        response.delivery = self.live
        response.placement.enter(response)
        for samples in self._audio:
            self.live.play(samples)
        for event in self._events:
            self.live.emit(event)  # re-stamped with the clock as it is released
        self._events.clear()
        self._audio.clear()
        for start in self._starts:  # only now may a side effect happen
            start()
        self._starts.clear()
        self._adopted.set()


# --- output ----------------------------------------------------------------------------------------


class Voice:
    """Spoken: a chunk as soon as the chunker has one (a quick first fragment, then sentences)."""

    modalities: tuple[str, ...] = ("audio",)

    def on_text(self, response: Response, piece: str) -> list[str]:
        return response.speech.chunker.push(piece)

    def rest(self, response: Response) -> list[str]:
        # a reply cut at its token limit ends at its last whole sentence
        return response.speech.chunker.flush(complete_only=response.generating.cut)

    async def put(self, response: Response, chunks: asyncio.Queue[str | None], chunk: str) -> None:
        await chunks.put(chunk)

    def heard(self, response: Response) -> Coroutine[Any, Any, None] | None:
        return self._play_out(response)

    async def _play_out(self, response: Response) -> None:
        """A response lasts until the caller has heard it: a barge-in during playout cancels it.

        We own the speaker, so unlike a hosted API (done when generated, truncated later by the
        client) "done" here means heard, and a talk-over always ends in `cancelled`. Audio that
        was dropped from the speaker ends the wait too.
        """
        await response.delivery.released()
        await response.ctx.playback.wait_heard(response.item.id, response.speech.generated)

    def finish_item(self, response: Response) -> None:
        response.item.text = " ".join(c.text for c in response.speech.spoken)
        if response.status is ResponseStatus.CANCELLED and response.delivery.reaches_caller:
            response.speech.truncate_to_played()  # the item keeps what the caller heard
        else:
            response.item.status = "completed" if response.status is ResponseStatus.COMPLETED else "incomplete"


class TextOnly:
    """Written: the reply text goes out as it is generated; a spoken argument (a holding line)
    is written too. Nothing is synthesized, so nothing is waited for or truncated.

    Where the session screens replies (it has tools, or checks facts: `call.owed`), the text goes
    out a sentence at a time, each screened as a spoken one is: a reader is not shown what a
    caller would not hear (a tool's identifier, "you could return the following JSON object:",
    an id nobody gave). Those sentences are cleaned for speech, so markdown is not kept there."""

    modalities: tuple[str, ...] = ("text",)

    def on_text(self, response: Response, piece: str) -> list[str]:
        if response.ctx.tools.screens():
            return response.speech.chunker.push(piece)  # written by `put` once admitted
        self._write(response, response.text_so_far.lstrip()[len(response.item.text):])
        return []

    def rest(self, response: Response) -> list[str]:
        if response.ctx.tools.screens():
            return response.speech.chunker.flush(complete_only=response.generating.cut)
        return []

    async def put(self, response: Response, chunks: asyncio.Queue[str | None], chunk: str) -> None:
        self._write(response, (" " if response.item.text else "") + chunk)

    @staticmethod
    def _write(response: Response, delta: str) -> None:
        """The reply text goes out as it is written (the item keeps all of it)."""
        if delta:
            response.item.text += delta
            response.emit(ev.OutputTextDelta(response_id=response.id, item_id=response.item.id, delta=delta))

    def heard(self, response: Response) -> Coroutine[Any, Any, None] | None:
        return None

    def finish_item(self, response: Response) -> None:
        response.item.status = "completed" if response.status is ResponseStatus.COMPLETED else "incomplete"


# --- placement -------------------------------------------------------------------------------------


class InConversation:
    """Its items are in the history (a live one's since `Responder.begin`; a held one's from
    its adoption), its tool call too, before the call starts."""

    conversation = "auto"

    def enter(self, response: Response) -> None:
        response.ctx.conversation.add(response.item)
        if response.call_out.made is not None:
            response.ctx.conversation.add(response.call_out.made)

    def call_made(self, response: Response, call: ToolCall) -> None:
        def start() -> None:
            response.ctx.tools.start(response, response.call_out.call_id, call)

        if response.delivery.defer(start):  # held: it starts, in the history, when adopted
            return
        assert response.call_out.made is not None
        response.ctx.conversation.add(response.call_out.made)
        start()  # before the holding line ends


class OutOfBand:
    """conversation "none": the history never sees its items; its tool call starts at once."""

    conversation = "none"

    def enter(self, response: Response) -> None:
        return None

    def call_made(self, response: Response, call: ToolCall) -> None:
        response.ctx.tools.start(response, response.call_out.call_id, call)


# --- the choice ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResponseModes:
    """Chooses a response's strategies from how it was asked for (held, its options). `voice`
    makes the spoken output: the benchmark's sequential baseline swaps it (bench/sequential.py)."""

    voice: Callable[[], Output] = Voice

    def __call__(self, response: Response, held: bool) -> Modes:
        live = Live(response.ctx, response_id=response.id, item_id=response.item.id)
        delivery: Delivery = Held(live) if held else live
        options = response.asked.options
        output: Output = TextOnly() if options.text_only else self.voice()
        placement: Placement = OutOfBand() if options.out_of_band else InConversation()
        return Modes(delivery, output, placement)


DEFAULT_MODES = ResponseModes()
