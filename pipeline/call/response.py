"""One response: LLM tokens -> sentence chunker -> TTS -> playback, cancellable in four places.

A response sees only its `ResponseContext` (the models, the clock, the event stream, the
speaker and the tool hooks), never the session.

Two inner coroutines run together (tokens into chunks, chunks into audio) and a `finally` stops the
LLM thread, cancels synthesis and waits for every task, so cancellation is designed in. A response
may start *held* (preemptive generation): its events and audio are kept back until it is adopted
at turn commit, or dropped silently.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ..base import events as ev
from ..base.clock import Clock, cancel_and_wait
from ..base.config import Config
from ..base.conversation import Conversation, Item
from ..base.errors import PipelineError, SpokenError
from ..base.protocols import LLM, TTS, AsyncTTS, Generation
from ..chunker import SentenceChunker
from ..stages.playback import Playback
from ..tools.schema import ToolCall, ToolSpec
from ..tools.stream import ToolCallStream, starts_tool_call
from .heard import SpokenChunk, heard_text
from .states import RESPONSE_MOVES, GuardedState, ResponseStatus


class ToolHooks(Protocol):
    """What a response needs of the session's tools (implemented by `tools.desk.ToolDesk`)."""

    history_version: int  # bumped whenever tool results enter the conversation

    def __len__(self) -> int: ...

    def grammar(self) -> str | None: ...

    def spec(self, name: str) -> ToolSpec | None: ...

    def specs(self) -> list[ToolSpec]: ...

    def say_param(self, spec: ToolSpec, param: str) -> bool: ...

    def start(self, response: Response, call_id: str, call: ToolCall) -> None: ...

    def prompt(self) -> str | None:
        """The tools' part of the instructions (None without tools)."""

    def settle(self, response: Response, *, clean: bool) -> None:
        """A response the caller could hear has ended: sort its tool results out."""

    def heard(self, response: Response) -> None:
        """The caller heard this response to its end."""


@dataclass(frozen=True)
class ResponseOptions:
    """What one response.create may set beyond the session's settings (the defaults: none)."""

    instructions: str | None = None  # replaces the session's instructions for this response
    text_only: bool = False  # output_modalities ["text"]: reply text as it is written, no voice
    out_of_band: bool = False  # conversation "none": its items stay out of the conversation
    metadata: dict[str, str] | None = None  # echoed in response.created / response.done
    input: tuple[Item, ...] | None = None  # the context instead of the conversation


@dataclass
class ResponseContext:
    """Everything a response may touch."""

    llm: LLM
    tts: TTS
    clock: Clock
    config: Config
    emit: Callable[[ev.Event], None]
    log: Callable[..., None]
    playback: Playback
    conversation: Conversation
    tools: ToolHooks

    def __post_init__(self) -> None:
        # a capability check on a runtime protocol costs microseconds (6 µs for isinstance(ToneTTS(),
        # AsyncTTS) under `python -m timeit` on an Intel Xeon); ask once, not per chunk
        self.async_tts: AsyncTTS | None = self.tts if isinstance(self.tts, AsyncTTS) else None


@dataclass
class Response:
    ctx: ResponseContext
    turn_id: str | None
    messages: list[dict[str, Any]]
    held: bool = False
    transcript: str | None = None  # the user text a held (preemptive) response answers
    purpose: str = "turn"  # "turn" | "tool_result" | "reminder" | "client"
    about_keys: tuple[str, ...] = ()  # ledger keys whose outcome this response is meant to state
    options: ResponseOptions = field(default_factory=ResponseOptions)
    id: str = field(default_factory=lambda: ev.new_id("resp"))
    item: Item = field(default_factory=lambda: Item(type="message", role="assistant", status="in_progress"))
    reason: str | None = None
    error: str | None = None
    status = GuardedState(RESPONSE_MOVES, ResponseStatus.IN_PROGRESS)  # not a field: moved only
    failure: str | None = None  # known before it starts (the context cannot fit): it fails at once

    def __post_init__(self) -> None:
        config = self.ctx.config
        self.cancel_llm = threading.Event()
        self.chunker = SentenceChunker(quick_first_fragment=config.chunker.quick_first_fragment,
                                       min_fragment_words=config.chunker.min_fragment_words,
                                       first_phrase_words=config.chunker.first_phrase_words)
        self.spoken: list[SpokenChunk] = []
        self.generated = 0
        self.generation = Generation()
        self._held_events: list[ev.Event] = []
        self._held_audio: list[np.ndarray] = []
        self._tasks: list[asyncio.Future[Any]] = []
        self.done = asyncio.Event()
        self._adopted = asyncio.Event()
        self.text_so_far = ""
        self.history_version = self.ctx.tools.history_version
        self.call_item: Item | None = None  # the function call this response made, if any
        self._call_opened: Item | None = None  # announced at its first argument delta
        self._deferred_calls: list[tuple[str, ToolCall]] = []  # held responses start no tool
        self.heard_in_full = False
        self.call_id, self._call_item_id = ev.new_id("call"), ev.new_id("item")
        self._call = ToolCallStream(self.ctx.tools.spec, say_param=self.ctx.tools.say_param)
        self._first_chunk_marked = False
        self._spoken_failure: SpokenError | None = None  # apologised for; fails once heard
        self.item.audio = not self.options.text_only

    # --- emission (held until adopted) ---------------------------------------------------------

    def _emit(self, event: ev.Event) -> None:
        if self.held:
            self._held_events.append(event)
        else:
            self.ctx.emit(event)

    def _mark(self, stage: str, **detail: Any) -> None:
        self._emit(ev.StageMark(stage=stage, response_id=self.id, turn_id=self.turn_id, detail=detail))

    def _play(self, samples: np.ndarray) -> None:
        if self.held:
            self._held_audio.append(samples)
        else:
            self.ctx.playback.enqueue(samples, item_id=self.item.id, response_id=self.id)

    @property
    def may_still_tell(self) -> bool:
        """Still being made, or made and still playing: the caller may yet hear it all."""
        if self.status is ResponseStatus.IN_PROGRESS:
            return True
        return self.status is ResponseStatus.COMPLETED and not self.heard_in_full and not self.item.interrupted

    def adopt(self) -> None:
        """Turn commit confirmed the speculation: release what was held, in order."""
        ctx = self.ctx
        self.held = False
        if not self.options.out_of_band:
            ctx.conversation.add(self.item)
            if self.call_item is not None:
                ctx.conversation.add(self.call_item)
        for samples in self._held_audio:
            ctx.playback.enqueue(samples, item_id=self.item.id, response_id=self.id)
        for event in self._held_events:
            ctx.emit(event)  # re-stamped with the clock as it is released
        self._held_events.clear()
        self._held_audio.clear()
        for call_id, call in self._deferred_calls:  # only now may a side effect happen
            ctx.tools.start(self, call_id, call)
        self._deferred_calls.clear()
        self._adopted.set()

    # --- lifecycle -----------------------------------------------------------------------------

    async def run(self) -> None:
        try:
            self._mark("response_start")  # its item is in the history since `Responder.begin`
            self._emit(ev.ResponseCreated(response={"id": self.id, "status": "in_progress", "output": [],
                                                    **self._described()}))
            self._emit(ev.OutputItemAdded(response_id=self.id, item=self.item.to_dict()))
            if self.failure is not None:
                raise PipelineError(self.failure)
            chunks: asyncio.Queue[str | None] = asyncio.Queue()
            self._tasks = [asyncio.ensure_future(self._tokens_to_chunks(chunks)),
                           asyncio.ensure_future(self._chunks_to_audio(chunks))]
            await asyncio.gather(*self._tasks)
            if self.status is ResponseStatus.IN_PROGRESS and not self.options.text_only:
                self._tasks.append(asyncio.ensure_future(self._play_out()))
                await self._tasks[-1]
            if self.status is ResponseStatus.IN_PROGRESS and self._spoken_failure is not None:
                raise self._spoken_failure  # the apology was heard; the response still failed
            if self.status is ResponseStatus.IN_PROGRESS:
                cut = self.generation.finish_reason == "length"
                self.status = ResponseStatus.INCOMPLETE if cut else ResponseStatus.COMPLETED
                self.reason = "max_output_tokens" if cut else None
        except asyncio.CancelledError:
            if self.status is ResponseStatus.IN_PROGRESS:
                self.status, self.reason = ResponseStatus.CANCELLED, self.reason or "client_cancelled"
        except Exception as exc:  # a stage failed: the response fails, the call goes on
            self.status, self.error = ResponseStatus.FAILED, f"{type(exc).__name__}: {exc}"
            self.ctx.log(f"response {self.id} failed: {self.error}", level="error")
        finally:
            self.cancel_llm.set()
            await cancel_and_wait(*self._tasks)
            self._finish()

    async def _tokens_to_chunks(self, chunks: asyncio.Queue[str | None]) -> None:
        ctx = self.ctx
        loop = asyncio.get_running_loop()
        tokens: asyncio.Queue[str | None] = asyncio.Queue()
        grammar = ctx.tools.grammar()
        policy = ctx.config.response  # a session's own temperature and length, where it set them
        own = {"temperature": policy.temperature} if policy.temperature is not None else {}

        def produce() -> None:
            try:
                for piece in ctx.llm.stream(self.messages, cancel=self.cancel_llm, result=self.generation,
                                            grammar=grammar, max_tokens=policy.max_output_tokens, **own):
                    loop.call_soon_threadsafe(tokens.put_nowait, piece)
            finally:
                loop.call_soon_threadsafe(tokens.put_nowait, None)

        producer = asyncio.ensure_future(ctx.clock.run_in_thread(produce))
        self._tasks.append(producer)
        first = True
        streaming = ctx.config.response.mode == "streaming"
        call_mode: bool | None = None if len(ctx.tools) else False  # decided by the first visible char
        while (piece := await tokens.get()) is not None:
            if first:
                self._mark("llm_first_token")
                first = False
            self.text_so_far += piece
            if call_mode is None:
                call_mode = starts_tool_call(self.text_so_far)
            if call_mode:
                for chunk in self._call_progress():
                    await self._put_chunk(chunks, chunk)
            elif call_mode is False and self.options.text_only:
                self._write_text(self.text_so_far.lstrip()[len(self.item.text):])
            elif call_mode is False and streaming:
                for chunk in self.chunker.push(piece):
                    await self._put_chunk(chunks, chunk)
        try:
            await producer  # re-raises a failure of the model thread
            self._mark("llm_done")  # the last token (traces time the request to it)
        except SpokenError as exc:  # the caller hears a short apology, not silence
            self._spoken_failure = exc
            self.chunker.reset()
            await self._put_chunk(chunks, exc.apology)
            await chunks.put(None)
            return
        if call_mode:
            for chunk in self._call_progress():
                await self._put_chunk(chunks, chunk)
            self._finish_call()
        if self.options.text_only and not call_mode:
            remaining = []
        elif not streaming and not call_mode:  # the baseline: the whole reply in one piece
            rest = " ".join(self.chunker.push(self.text_so_far) + self.chunker.flush())
            remaining = [rest] if rest else []
        else:  # a reply cut at its token limit ends at its last whole sentence
            remaining = self.chunker.flush(complete_only=self.generation.finish_reason == "length")
        for chunk in remaining:
            await self._put_chunk(chunks, chunk)
        await chunks.put(None)

    # --- tool calls ---------------------------------------------------------------------------

    def _call_progress(self) -> list[str]:
        """Streams argument deltas; a spoken argument is said as soon as its string is complete."""
        delta, said = self._call.progress(self.text_so_far)
        if delta and self._call.name:
            self._open_call(self._call.name)
            self._emit(ev.FunctionCallArgumentsDelta(
                response_id=self.id, item_id=self._call_item_id, call_id=self.call_id, delta=delta))
        out: list[str] = []
        for text in said:
            out += self.chunker.push(text + " ") + self.chunker.flush()
        return out

    def _open_call(self, name: str) -> Item:
        """The call's item, announced once, before its first argument delta."""
        if self._call_opened is None:
            self._call_opened = Item(type="function_call", id=self._call_item_id, call_id=self.call_id,
                                     name=name, arguments="", status="in_progress")
            self._emit(ev.OutputItemAdded(response_id=self.id, item=self._call_opened.to_dict(), output_index=1))
        return self._call_opened

    def _finish_call(self) -> None:
        call = ToolCallStream.finish(self.text_so_far, self.ctx.tools.specs())
        arguments = json.dumps(call.arguments)
        self.call_item = self._open_call(call.name)
        self.call_item.name, self.call_item.arguments = call.name, arguments
        self.call_item.status = "completed"
        self._emit(ev.FunctionCallArgumentsDone(response_id=self.id, item_id=self.call_item.id,
                                                call_id=self.call_id, name=call.name, arguments=arguments))
        self._emit(ev.OutputItemDone(response_id=self.id, item=self.call_item.to_dict(), output_index=1))
        if self.options.out_of_band:
            self.ctx.tools.start(self, self.call_id, call)
        elif self.held:
            self._deferred_calls.append((self.call_id, call))
        else:
            self.ctx.conversation.add(self.call_item)
            self.ctx.tools.start(self, self.call_id, call)  # before the holding line ends

    def _write_text(self, delta: str) -> None:
        """Text-only: the reply text goes out as it is written (the item keeps all of it)."""
        if delta:
            self.item.text += delta
            self._emit(ev.OutputTextDelta(response_id=self.id, item_id=self.item.id, delta=delta))

    async def _put_chunk(self, chunks: asyncio.Queue[str | None], chunk: str) -> None:
        if not self._first_chunk_marked:
            self._first_chunk_marked = True
            self._mark("first_chunk", text=chunk)
        if self.options.text_only:  # a spoken argument (holding line) is written instead
            self._write_text((" " if self.item.text else "") + chunk)
            return
        await chunks.put(chunk)

    async def _chunks_to_audio(self, chunks: asyncio.Queue[str | None]) -> None:
        ctx = self.ctx
        tts = ctx.tts
        delta_samples = tts.sample_rate_hz * ctx.config.response.output_delta_ms // 1000
        while (chunk := await chunks.get()) is not None:
            if self.cancel_llm.is_set():
                return
            if ctx.async_tts is not None:  # a voice that waits (a network TTS) waits on the clock
                audio = await ctx.async_tts.synthesize_async(chunk, clock=ctx.clock)
            elif (speed := ctx.config.response.speed) is None:
                audio = await ctx.clock.run_in_thread(tts.synthesize, chunk)
            else:  # a session's own speaking rate: a voice that takes it (protocols.takes_keyword)
                paced: Any = tts
                audio = await ctx.clock.run_in_thread(
                    lambda c=chunk, voice=paced: voice.synthesize(c, speed=speed))
            if self.cancel_llm.is_set():
                return
            if not self.spoken:
                self._mark("tts_first_audio", samples=len(audio))
            self.spoken.append(SpokenChunk(chunk, self.generated, len(audio)))
            self._emit(ev.OutputTranscriptDelta(response_id=self.id, item_id=self.item.id,
                                                delta=(" " if self.generated else "") + chunk))
            for i in range(0, len(audio), delta_samples):
                piece = audio[i:i + delta_samples]
                self._emit(ev.OutputAudioDelta(response_id=self.id, item_id=self.item.id, delta=piece,
                                               sample_rate_hz=tts.sample_rate_hz,
                                               audio_ms=(self.generated + i) * 1000 / tts.sample_rate_hz))
                self._play(piece)
                if i == 0 and not self.generated:  # let playback sound the first frame before
                    await asyncio.sleep(0)  # the rest of the chunk's deltas are announced
            self.generated += len(audio)

    async def _play_out(self) -> None:
        """A response lasts until the caller has heard it: a barge-in during playout cancels it.

        We own the speaker, so unlike a hosted API (done when generated, truncated later by the
        client) "done" here means heard, and a talk-over always ends in `cancelled`. Audio that
        was dropped from the speaker ends the wait too.
        """
        if self.held:
            await self._adopted.wait()
        await self.ctx.playback.wait_heard(self.item.id, self.generated)

    def cancel(self, reason: str) -> None:
        """Stop in all four places: playback, synthesis, generation, stream state."""
        if self.status is not ResponseStatus.IN_PROGRESS:
            return
        self.status, self.reason = ResponseStatus.CANCELLED, reason
        if not self.held:
            self.ctx.playback.clear()  # 1. stop playback: queued audio is dropped at once
        self.cancel_llm.set()  # 3. the model thread stops within one token
        for task in self._tasks:  # 2. synthesis (and the token pump) stop at their next await
            task.cancel()
        self.chunker.reset()  # 4. no half sentence survives into the next response

    def truncate_to_played(self) -> None:
        """Keep only what the caller heard: audio_end_ms = played, transcript = words heard."""
        ctx = self.ctx
        played = min(ctx.playback.heard(self.item.id), self.generated)  # never more than was made
        heard = heard_text(self.spoken, played)
        audio_end_ms = int(played * 1000 / ctx.tts.sample_rate_hz)
        # the item itself, in the conversation or not: an out-of-band reply's never is, and a
        # client may have deleted an in-band one while it played (both found by the fuzz test)
        self.item.truncate(audio_end_ms=audio_end_ms, heard_text=heard)
        self._emit(ev.ItemTruncated(item_id=self.item.id, audio_end_ms=audio_end_ms, transcript=heard))

    def _described(self) -> dict[str, Any]:
        """The response's own settings, for response.created and response.done."""
        return {"modalities": ["text"] if self.options.text_only else ["audio"],
                "conversation": "none" if self.options.out_of_band else "auto",
                "metadata": self.options.metadata}

    def _finish(self) -> None:
        if not self.options.text_only:
            self.item.text = " ".join(c.text for c in self.spoken)
        status = self.status.value  # the wire's plain string
        if status == "cancelled" and not self.held and not self.options.text_only:
            self.truncate_to_played()
        else:
            self.item.status = "completed" if status == "completed" else "incomplete"
        details: dict[str, Any] | None = None
        if status != "completed":
            details = {"type": status, "reason": self.reason}
            if self.error:
                details["error"] = {"type": "server_error", "message": self.error}
        usage = {"input_tokens": self.generation.prompt_tokens, "output_tokens": self.generation.output_tokens,
                 "total_tokens": self.generation.prompt_tokens + self.generation.output_tokens}
        output = [self.item.to_dict()] + ([self.call_item.to_dict()] if self.call_item else [])
        self._emit(ev.ResponseDone(response={
            "id": self.id, "status": status, "status_details": details,
            "output": output, "usage": usage, **self._described()}))
        self.done.set()
