"""Client control: the one facade through which a transport changes a live session.

A realtime-API client (or any transport) changes settings, commits or clears input, asks for and
cancels responses, adds and truncates items and hands back function outputs here, and nowhere
else: no transport reaches into the session's parts.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from ..base import events as ev
from ..base.config import apply
from ..base.conversation import Item
from ..stages.playback import FrameListener, FramePhase, Playback
from ..tools import ToolRegistry, ToolSpec
from .core import SessionCore
from .desk import ToolDesk
from .handle import Purpose
from .input_path import InputPath
from .interruption import BargeIn
from .responder import Responder
from .response import ResponseOptions
from .states import ResponseStatus
from .turn_taking import TurnTaking

PENDING_TRANSCRIPT_WAIT_S = 15.0  # a client's response waits this long for committed turns' words


class ResponseInProgress(Exception):
    """response.create while a response is active: the client must wait for its response.done."""

    def __init__(self, response_id: str) -> None:
        super().__init__(response_id)
        self.response_id = response_id


class ClientControl:
    def __init__(self, core: SessionCore, *, input_path: InputPath, turns: TurnTaking,
                 bargein: BargeIn, responder: Responder, tools: ToolDesk, playback: Playback) -> None:
        self.core = core
        self._input = input_path
        self._turns = turns
        self._bargein = bargein
        self._responder = responder
        self._tools = tools
        self._playback = playback
        self._starting = 0  # client responses asked for and not yet begun
        self._untranscribed: set[str] = set()  # committed turns whose words are not yet an item
        self._transcribed = asyncio.Event()
        core.listeners.add(self._follow_turns, ev.EventPhase.SESSION)

    # --- settings ------------------------------------------------------------------------------

    @property
    def server_vad(self) -> bool:
        return self._turns.server_vad

    @property
    def auto_respond(self) -> bool:
        return self._responder.auto_respond

    @property
    def interrupt_response(self) -> bool:
        return self.core.config.bargein.enabled

    @property
    def text_only(self) -> bool:
        """The session's output modalities are ["text"]: replies are written, not spoken."""
        return self._responder.text_only

    def update(self, *, instructions: str | None = None, turn: dict[str, Any] | None = None,
               server_vad: bool | None = None, create_response: bool | None = None,
               interrupt_response: bool | None = None, tools: list[ToolSpec] | None = None,
               text_only: bool | None = None, generation: dict[str, Any] | None = None) -> None:
        """A session.update: every setting given takes effect at once; session.updated follows.

        turn: turn-policy keys (`min_silence_ms`, `vad_threshold`, ...), checked like `--set`.
        server_vad False: the client commits input itself. create_response False: a committed
        turn becomes an item and the client asks for replies. interrupt_response: barge-in.
        tools: the client's own tools (it runs them and sends function_call_output).
        text_only: output modalities ["text"]: replies are written, not spoken.
        generation: `temperature`, `max_output_tokens`, `speed` (ResponsePolicy's; None: the stage's).
        """
        config = self.core.config
        if instructions is not None:
            config.response = replace(config.response, instructions=instructions)
        if generation:
            config.response = replace(config.response, **generation)
        if turn:
            config.turn = apply(config, {"turn": turn}).turn
            self._turns.update_options(config.turn)
        if interrupt_response is not None:
            config.bargein = replace(config.bargein, enabled=interrupt_response)
        if turn or interrupt_response is not None:  # the owners hold their policies: push them
            self._bargein.update_options(config.bargein, prefix_padding_ms=config.turn.prefix_padding_ms)
        if create_response is not None:
            self._responder.auto_respond = create_response
        if server_vad is not None:
            self._turns.set_server_vad(server_vad)
        if tools is not None:
            self._tools.use(ToolRegistry(specs=tools))
        if text_only is not None:
            self._responder.text_only = text_only
        self.core.emit(ev.SessionUpdated(session=self.describe()))

    def describe(self) -> dict[str, Any]:
        """The session's settings, in the realtime API's words plus our stage names."""
        c = self.core.config
        vad = None
        if self.server_vad:
            vad = {"type": "server_vad", "threshold": c.turn.vad_threshold,
                   "prefix_padding_ms": c.turn.prefix_padding_ms,
                   "silence_duration_ms": c.turn.min_silence_ms,
                   "max_silence_duration_ms": c.turn.max_silence_ms,
                   "create_response": self.auto_respond, "interrupt_response": self.interrupt_response}
        return {"object": "realtime.session", "instructions": c.response.instructions,
                "turn_detection": vad,
                "output_modalities": ["text"] if self._responder.text_only else ["audio"],
                "temperature": c.response.temperature, "max_output_tokens": c.response.max_output_tokens,
                "speed": c.response.speed, "stages": {k: c.stage(k).name for k in ("vad", "stt", "turns", "llm", "tts")}}

    # --- input ---------------------------------------------------------------------------------

    async def commit_input(self) -> str | None:
        """input_audio_buffer.commit: end the current turn after the audio sent before it;
        returns its item id (None if there was nothing to commit)."""
        return await self._input.after_queued_audio(self._turns.commit_now)

    async def clear_input(self) -> None:
        """input_audio_buffer.clear: drop the open turn's audio and any speculation on it."""
        await self._input.after_queued_audio(self._turns.clear_now)

    # --- responses -----------------------------------------------------------------------------

    def request_response(self, options: ResponseOptions | None = None) -> None:
        """response.create: start a response now (does not wait for it to end).

        It first waits for the words of turns already committed (they are part of its context).
        ResponseInProgress while another response is being made, as on a hosted API; one asked
        for as the active one ends (its response.done sent, or a cancel stopping it), and an
        out-of-band one (`options.out_of_band`), wait for it instead.
        """
        options = options or ResponseOptions(text_only=self._responder.text_only)
        making = self._responder.making  # one that is ending is waited for instead
        if not options.out_of_band and (self._starting or making is not None):
            raise ResponseInProgress(making.id if making is not None else "(starting)")
        self._starting += 1
        self.core.spawn(self._start_response(options))

    async def _start_response(self, options: ResponseOptions) -> None:
        try:
            if self._untranscribed:
                self._transcribed.clear()
                try:
                    await self.core.clock.wait_for(self._transcribed.wait(), PENDING_TRANSCRIPT_WAIT_S)
                except TimeoutError:
                    self.core.log("a committed turn had no transcript in time; responding without it",
                                  level="warning")
            while (active := self._responder.active) is not None:  # a held speculation, or out-of-band
                # the open turn's held reply waits for a commit only more audio can bring, and
                # would hold the client's response: dropped (the turn, once committed, is
                # answered afresh, after the client's reply, in context)
                if active.held and (turn := self._turns.turn) is not None:
                    self._turns.speculation.drop(turn)
                await self.core.floor.wait()
            reply = self._responder.start(None, purpose=Purpose.CLIENT, options=options)
        finally:
            self._starting -= 1
        await reply.wait()

    def _follow_turns(self, event: ev.Event) -> None:
        if isinstance(event, ev.InputCommitted):
            self._untranscribed.add(event.item_id)
        elif isinstance(event, ev.TranscriptionCompleted):  # its item is added right after
            self._untranscribed.discard(event.item_id)
            if not self._untranscribed:
                self._transcribed.set()

    def cancel_response(self, reason: str = "client_cancelled") -> bool:
        """response.cancel: False when no response is active."""
        return self._responder.cancel_active(reason)

    def on_agent_frame(self, listener: FrameListener) -> None:
        """Be told of each frame of agent audio as it is handed to the sink (before the session's
        own bookkeeping of it), with its response and item."""
        self._playback.frame_listeners.add(listener, FramePhase.TRANSPORT)

    @property
    def agent_rate_hz(self) -> int:
        return self._playback.rate_hz

    # --- the conversation ----------------------------------------------------------------------

    def item(self, item_id: str) -> Item | None:
        return self.core.conversation.get(item_id)

    def add_message(self, role: str, text: str, *, item_id: str | None = None) -> Item:
        """conversation.item.create of a typed message; ValueError if `item_id` is taken."""
        if item_id is not None and self.item(item_id) is not None:
            raise ValueError(f"item {item_id!r} already exists")
        item = (Item(type="message", role=role, text=text, audio=False, id=item_id) if item_id
                else Item(type="message", role=role, text=text, audio=False))  # a fresh id
        return self.core.add_item(item)

    def delete_item(self, item_id: str) -> Item:
        """conversation.item.delete: KeyError for an unknown item."""
        item = self.core.conversation.remove(item_id)
        self.core.emit(ev.ItemDeleted(item_id=item_id))
        return item

    def retrieve(self, item_id: str) -> Item:
        """conversation.item.retrieve: KeyError for an unknown item."""
        item = self.item(item_id)
        if item is None:
            raise KeyError(item_id)
        self.core.emit(ev.ItemRetrieved(item=item.to_dict()))
        return item

    def deliver_function_output(self, call_id: str, output: str, item_id: str | None = None) -> bool:
        """A client's function_call_output, bound to its call (KeyError for an unknown call)."""
        return self._tools.deliver_client_output(call_id, output, item_id)

    def truncate(self, item_id: str, audio_end_ms: int) -> Item:
        """conversation.item.truncate: the client played only `audio_end_ms` of an agent item."""
        item = self.item(item_id)
        reply = self._responder.response_of_item(item_id)
        if item is None or item.role != "assistant" or reply is None:
            raise KeyError(f"no assistant audio item {item_id!r} in this conversation")
        rate_hz = self._playback.rate_hz
        total_ms = reply.made_ms
        if audio_end_ms < 0 or audio_end_ms > total_ms + 1:
            raise ValueError(f"audio_end_ms {audio_end_ms} is past the item's audio ({total_ms:.0f} ms)")
        if self._playback.current_item == item_id:
            self._playback.clear()
        self._playback.set_heard(item_id, int(audio_end_ms * rate_hz / 1000))
        if reply.status is ResponseStatus.IN_PROGRESS:  # the client stopped listening: stop making it too
            reply.cancel("client_cancelled")  # its end truncates to what was heard
        else:
            reply.truncate_to_heard()
        return item
