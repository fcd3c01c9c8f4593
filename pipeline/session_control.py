"""Client control of a session: the realtime-API client events that act on it.

A mixin of `Session` (pipeline/session.py): session.update, input commit/clear without server
VAD, response.create, conversation.item.truncate.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import events as ev
from .conversation import Item
from .stt import StreamingTranscriber
from .turns import Turn
from .vad import WINDOW_MS

if TYPE_CHECKING:
    from .session import Session

    _Base = Session
else:
    _Base = object


class ClientControlMixin(_Base):

    def update(self, *, instructions: str | None = None, turn: dict[str, Any] | None = None,
               turn_detection: bool | None = None) -> None:
        """Apply a session.update: instructions and turn-detection settings take effect at once."""
        from dataclasses import replace

        if instructions is not None:
            self.config.response = replace(self.config.response, instructions=instructions)
        if turn:
            from .config import apply

            self.config = apply(self.config, {"turn": turn})
            self.detector.set_policy(self.config.turn)  # keeps an open turn's speech state
        if turn_detection is not None:
            self.turn_detection = turn_detection
        self.emit(ev.SessionUpdated(session=self.describe()))

    def _manual_turn_window(self, end_ms: float) -> None:
        """Without server VAD, all input since the last commit belongs to one manual turn."""
        if self.turn is None:
            stt = StreamingTranscriber(self.stages.stt, self.clock)
            self.turn = Turn(item_id=ev.new_id("item"), audio_start_ms=max(0.0, end_ms - WINDOW_MS), stt=stt)
            stt.append(self._history_since(end_ms - WINDOW_MS))

    async def commit_input(self) -> str | None:
        """input_audio_buffer.commit: end the current turn after the audio sent before it;
        returns its item id (None if there was nothing to commit)."""
        return await self._after_queued_audio(self._commit_now)

    def _commit_now(self) -> str | None:
        if self.turn is None:
            return None
        item_id = self.turn.item_id
        self._commit("client")
        return item_id

    async def clear_input(self) -> None:
        """input_audio_buffer.clear: drop the open turn's audio and any speculation on it."""
        await self._after_queued_audio(self._clear_now)

    def _clear_now(self) -> None:
        if self.turn is not None:
            self._drop_preemptive(self.turn)
            self.turn = None
            self.detector.reset()
        self.emit(ev.InputCleared())

    async def _after_queued_audio(self, command: Callable[[], Any]) -> Any:
        if not self.ready:  # a client that commits wants its audio processed now
            self.mark_ready()
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def run() -> None:
            try:
                done.set_result(command())
            except Exception as exc:  # the client hears of it; the input loop goes on
                done.set_exception(exc)

        self._inbox.put_nowait(run)
        return await done

    def request_response(self) -> None:
        """response.create: start a response as soon as none is active (does not wait for it)."""
        self.spawn(self.create_response(purpose="client"))

    def truncate(self, item_id: str, audio_end_ms: int) -> Item:
        """conversation.item.truncate: the client played only `audio_end_ms` of an agent item."""
        item = self.conversation.get(item_id)
        response = self._response_of_item(item_id)
        if item is None or item.role != "assistant" or response is None:
            raise KeyError(f"no assistant audio item {item_id!r} in this conversation")
        total_ms = response.generated * 1000 / self.tts.sample_rate_hz
        if audio_end_ms < 0 or audio_end_ms > total_ms + 1:
            raise ValueError(f"audio_end_ms {audio_end_ms} is past the item's audio ({total_ms:.0f} ms)")
        samples = int(audio_end_ms * self.tts.sample_rate_hz / 1000)
        if self.playback.current_item == item_id:
            self.playback.clear()
        self.playback.set_heard(item_id, samples)
        if response.status == "in_progress":  # the client stopped listening: stop making it too
            response.cancel("client_truncated")  # its end truncates to what was heard
        else:
            response.truncate_to_played()
        return item
