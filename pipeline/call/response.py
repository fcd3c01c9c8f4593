"""One response: LLM tokens -> sentence chunker -> TTS -> playback, cancellable in four places.

A response sees only its `ResponseContext` (the models, the clock, the event stream, the
speaker and the tool hooks), never the session.

It runs in four steps: generate (the LLM thread streams tokens), chunk (tokens into speakable
chunks, or a tool call), speak (chunks into audio) and finish (its status, its item, response.done).
Generate-and-chunk and speak run together, and a `finally` stops the LLM thread, cancels synthesis
and waits for every task, so cancellation is designed in. How it goes out is three strategies
chosen once when it is made (`ResponseModes`, in `response_modes.py`): its delivery (live, or
*held*: a speculation whose events and audio are kept back until the turn commit adopts it), its
output (spoken, or text only) and its place (in the conversation, or out of band).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple, Protocol

import numpy as np

from ..base import events as ev
from ..base.clock import Clock, cancel_and_wait
from ..base.config import Config
from ..base.conversation import Conversation, Item
from ..base.errors import PipelineError, SpokenError
from ..base.protocols import LLM, TTS, AsyncTTS, Generation
from ..chunker import SentenceChunker
from ..stages.playback import Playback
from ..tools.ask import after_words
from ..tools.schema import ToolCall, ToolSpec
from ..tools.stream import CallMarkup, ToolCallStream, starts_tool_call
from .heard import SpokenChunk, heard_text
from .response_call import CallOut
from .states import RESPONSE_MOVES, GuardedState, ResponseStatus


class ToolHooks(Protocol):
    """What a response needs of the session's tools (implemented by `tools.desk.ToolDesk`)."""

    history_version: int  # bumped whenever tool results enter the conversation

    def __len__(self) -> int: ...

    def grammar(self, response: Response | None = None) -> str | None: ...

    def spec(self, name: str) -> ToolSpec | None: ...

    def specs(self) -> list[ToolSpec]: ...

    def say_param(self, spec: ToolSpec, param: str) -> bool: ...

    def offers(self, response: Response, name: str) -> bool:
        """Whether this response's grammar offered the tool (the session's tool choice)."""

    def repeats(self, response: Response, call: ToolCall) -> bool:
        """The same call (its effect's arguments) was already made in this response's turn."""

    def screen(self, response: Response, chunk: str) -> str | None: ...  # why it is not said (`call.owed`)

    async def owed(self, response: Response, reached: str | None, said: str) -> str | None:
        """Words this reply owes the caller after its own (`said`): the question back for the tool
        it reached for but did not call (`reached`) or the refusal it answers, where they ask none;
        an outcome it is about that they do not state (`call.owed`)."""

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
    generation: dict[str, Any] = field(default_factory=dict)  # ResponsePolicy fields: this one's


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
    modes: ModeChoice  # how each response goes out (response_modes.ResponseModes)

    def __post_init__(self) -> None:
        # a capability check on a runtime protocol costs microseconds (6 µs for isinstance(ToneTTS(),
        # AsyncTTS) under `python -m timeit` on an Intel Xeon); ask once, not per chunk
        self.async_tts: AsyncTTS | None = self.tts if isinstance(self.tts, AsyncTTS) else None


class Delivery(Protocol):
    """Where a response's events and audio go: out at once, or held until it is adopted."""

    held: bool
    reaches_caller: bool  # what it plays can sound (a held response's never has)

    def emit(self, event: ev.Event) -> None: ...
    def play(self, samples: np.ndarray) -> None: ...
    def defer(self, start: Callable[[], None]) -> bool: ...  # True: a tool call starts later
    async def released(self) -> None: ...  # what was held has gone out (a live one: at once)
    def stop_audio(self) -> None: ...
    # adopted: it goes live and what was held goes out, in order (a live one raises RuntimeError)
    def release(self, response: Response) -> None: ...


class Output(Protocol):
    """What the reply text becomes: speech, or written text."""

    modalities: tuple[str, ...]

    def on_text(self, response: Response, piece: str) -> list[str]: ...  # chunks to put now
    def rest(self, response: Response) -> list[str]: ...  # chunks still to put after the last token
    async def put(self, response: Response, chunks: asyncio.Queue[str | None], chunk: str) -> None: ...
    # the wait until the caller has heard it all (None: nothing is heard)
    def heard(self, response: Response) -> Coroutine[Any, Any, None] | None: ...
    def finish_item(self, response: Response) -> None: ...  # its text, status, what was heard


class Placement(Protocol):
    """Whether the response's items enter the conversation."""

    conversation: str  # the wire's "auto" | "none"

    def enter(self, response: Response) -> None: ...  # an adopted speculation's items join it
    def call_made(self, response: Response, call: ToolCall) -> None: ...  # start it, now or when adopted


class Modes(NamedTuple):
    delivery: Delivery
    output: Output
    placement: Placement


ModeChoice = Callable[["Response", bool], Modes]  # (the response, held) -> its strategies


class Response:
    status = GuardedState(RESPONSE_MOVES, ResponseStatus.IN_PROGRESS)  # not a field: moved only

    def __init__(self, ctx: ResponseContext, turn_id: str | None, messages: list[dict[str, Any]], *,
                 held: bool = False, transcript: str | None = None, purpose: str = "turn",
                 about_keys: tuple[str, ...] = (), options: ResponseOptions | None = None,
                 failure: str | None = None) -> None:
        config = ctx.config
        self.ctx = ctx
        self.turn_id = turn_id
        self.messages = messages
        self.transcript = transcript  # the user text a held (preemptive) response answers
        self.purpose = purpose  # "turn" | "tool_result" | "reminder" | "client"
        self.about_keys = about_keys  # ledger keys whose outcome this response is meant to state
        self.options = options or ResponseOptions()
        self.failure = failure  # known before it starts (the context cannot fit): it fails at once
        self.id = ev.new_id("resp")
        self.item = Item(type="message", role="assistant", status="in_progress")
        self.reason: str | None = None
        self.error: str | None = None
        self.cancel_llm = threading.Event()
        self.chunker = SentenceChunker(quick_first_fragment=config.chunker.quick_first_fragment,
                                       min_fragment_words=config.chunker.min_fragment_words,
                                       first_phrase_words=config.chunker.first_phrase_words)
        self.spoken: list[SpokenChunk] = []
        self.generated = 0
        self.generation = Generation()
        self._tasks: list[asyncio.Future[Any]] = []
        self.done = asyncio.Event()
        self.text_so_far = ""
        self._said, self._screened = "", True  # the chunks put out to be spoken; screened (`call.owed`)
        self.history_version = ctx.tools.history_version
        self.call_item: Item | None = None  # the function call this response made, if any
        self.heard_in_full = False
        self.call_id = ev.new_id("call")
        self.call_out = CallOut(self)
        self._first_chunk_marked = False
        self._spoken_failure: SpokenError | None = None  # apologised for; fails once heard
        self.delivery, self.output, self.placement = ctx.modes(self, held)
        self.item.audio = "audio" in self.output.modalities

    @property
    def held(self) -> bool:
        """A speculation not yet adopted: nothing of it has gone out."""
        return self.delivery.held

    def emit(self, event: ev.Event) -> None:
        """Out through the response's delivery (held while it is a speculation)."""
        self.delivery.emit(event)

    def _mark(self, stage: str, **detail: Any) -> None:
        self.emit(ev.StageMark(stage=stage, response_id=self.id, turn_id=self.turn_id, detail=detail))

    @property
    def may_still_tell(self) -> bool:
        """Still being made, or made and still playing: the caller may yet hear it all."""
        if self.status is ResponseStatus.IN_PROGRESS:
            return True
        return self.status is ResponseStatus.COMPLETED and not self.heard_in_full and not self.item.interrupted

    def adopt(self) -> None:
        """Turn commit confirmed the speculation: release what was held, in order."""
        self.delivery.release(self)

    # --- the steps -----------------------------------------------------------------------------

    async def run(self) -> None:
        try:
            self._mark("response_start")  # its item is in the history since `Responder.begin`
            self.emit(ev.ResponseCreated(response={"id": self.id, "status": "in_progress", "output": [],
                                                    **self._described()}))
            self.emit(ev.OutputItemAdded(response_id=self.id, item=self.item.to_dict()))
            if self.failure is not None:
                raise PipelineError(self.failure)
            chunks: asyncio.Queue[str | None] = asyncio.Queue()
            self._tasks = [asyncio.ensure_future(self._chunk(chunks)),
                           asyncio.ensure_future(self._speak(chunks))]
            await asyncio.gather(*self._tasks)
            if self.status is ResponseStatus.IN_PROGRESS and (heard := self.output.heard(self)) is not None:
                self._tasks.append(asyncio.ensure_future(heard))
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

    def _generate(self, tokens: asyncio.Queue[str | None]) -> asyncio.Future[None]:
        """Step 1: the LLM streams the reply from its thread into `tokens` (None ends it)."""
        ctx = self.ctx
        loop = asyncio.get_running_loop()
        grammar = ctx.tools.grammar(self)
        policy = replace(ctx.config.response, **self.options.generation)  # the session's, this one's
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
        return producer

    async def _chunk(self, chunks: asyncio.Queue[str | None]) -> None:
        """Step 2: tokens into chunks to speak (the output decides when), or a tool call."""
        tokens: asyncio.Queue[str | None] = asyncio.Queue()
        producer = self._generate(tokens)
        first = True
        call_mode: bool | None = None if len(self.ctx.tools) else False  # decided by the first visible char
        markup = CallMarkup()  # a call written inside a spoken reply is never said
        while (piece := await tokens.get()) is not None:
            if first:
                self._mark("llm_first_token")
                first = False
            if call_mode is None:
                call_mode = starts_tool_call(self.text_so_far + piece)
            piece = markup.push(piece) if call_mode is False else piece
            self.text_so_far += piece
            if call_mode:
                for chunk in self.call_out.progress(self.text_so_far):
                    await self._put_chunk(chunks, chunk)
            elif call_mode is False:
                for chunk in self.output.on_text(self, piece):
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
            for chunk in self.call_out.progress(self.text_so_far):
                await self._put_chunk(chunks, chunk)
            self.call_out.finish(ToolCallStream.finish(self.text_so_far, self.ctx.tools.specs()))
        elif call_mode is False:
            self.text_so_far += (tail := markup.finish())  # held back, and words after all
            for chunk in self.output.on_text(self, tail):
                await self._put_chunk(chunks, chunk)
            reached = self.call_out.written(markup.call)
            for chunk in self.output.rest(self) if len(self.ctx.tools) else []:  # screened before owed
                await self._put_chunk(chunks, chunk)
            said = self.text_so_far if self.options.text_only else self._said
            if len(self.ctx.tools) and (owed := await self.ctx.tools.owed(self, reached, said)):
                owed = after_words(said or self.text_so_far, owed)  # never silence where words are owed
                self.text_so_far += owed
                self._screened = False  # the session's own words
                for chunk in self.output.on_text(self, owed):
                    await self._put_chunk(chunks, chunk)
        for chunk in self.chunker.flush() if call_mode or len(self.ctx.tools) else self.output.rest(self):
            await self._put_chunk(chunks, chunk)
        await chunks.put(None)

    def write_text(self, delta: str) -> None:
        """Text-only: the reply text goes out as it is written (the item keeps all of it)."""
        if delta:
            self.item.text += delta
            self.emit(ev.OutputTextDelta(response_id=self.id, item_id=self.item.id, delta=delta))

    async def _put_chunk(self, chunks: asyncio.Queue[str | None], chunk: str) -> None:
        if self._screened and len(self.ctx.tools) and (why := self.ctx.tools.screen(self, chunk)) is not None:
            self.ctx.log(f"{self.id}: not said, {why}: {chunk!r}")
            return
        self._said += (" " if self._said else "") + chunk
        if not self._first_chunk_marked:
            self._first_chunk_marked = True
            self._mark("first_chunk", text=chunk)
        await self.output.put(self, chunks, chunk)

    async def _speak(self, chunks: asyncio.Queue[str | None]) -> None:
        """Step 3: each chunk synthesized as it comes, in deltas of at most output_delta_ms."""
        ctx = self.ctx
        tts = ctx.tts
        delta_samples = tts.sample_rate_hz * ctx.config.response.output_delta_ms // 1000
        while (chunk := await chunks.get()) is not None:
            if self.cancel_llm.is_set():
                return
            if ctx.async_tts is not None:  # a voice that waits (a network TTS) waits on the clock
                audio = await ctx.async_tts.synthesize_async(chunk, clock=ctx.clock)
            elif (speed := self.options.generation.get("speed", ctx.config.response.speed)) is None:
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
            self.emit(ev.OutputTranscriptDelta(response_id=self.id, item_id=self.item.id,
                                                delta=(" " if self.generated else "") + chunk))
            for i in range(0, len(audio), delta_samples):
                piece = audio[i:i + delta_samples]
                self.emit(ev.OutputAudioDelta(response_id=self.id, item_id=self.item.id, delta=piece,
                                               sample_rate_hz=tts.sample_rate_hz,
                                               audio_ms=(self.generated + i) * 1000 / tts.sample_rate_hz))
                self.delivery.play(piece)
                if i == 0 and not self.generated:  # let playback sound the first frame before
                    await asyncio.sleep(0)  # the rest of the chunk's deltas are announced
            self.generated += len(audio)

    def cancel(self, reason: str) -> None:
        """Stop in all four places: playback, synthesis, generation, stream state."""
        if self.status is not ResponseStatus.IN_PROGRESS:
            return
        self.status, self.reason = ResponseStatus.CANCELLED, reason
        self.delivery.stop_audio()  # 1. stop playback: queued audio is dropped at once
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
        self.emit(ev.ItemTruncated(item_id=self.item.id, audio_end_ms=audio_end_ms, transcript=heard))

    def _described(self) -> dict[str, Any]:
        """The response's own settings, for response.created and response.done."""
        return {"modalities": list(self.output.modalities), "conversation": self.placement.conversation,
                "metadata": self.options.metadata}

    def _finish(self) -> None:
        """Step 4: the item as it ends (what was heard of it), then response.done."""
        self.output.finish_item(self)
        status = self.status.value  # the wire's plain string
        details: dict[str, Any] | None = None
        if status != "completed":
            details = {"type": status, "reason": self.reason}
            if self.error:
                details["error"] = {"type": "server_error", "message": self.error}
        usage = {"input_tokens": self.generation.prompt_tokens, "output_tokens": self.generation.output_tokens,
                 "total_tokens": self.generation.prompt_tokens + self.generation.output_tokens}
        output = [self.item.to_dict()] + ([self.call_item.to_dict()] if self.call_item else [])
        self.emit(ev.ResponseDone(response={
            "id": self.id, "status": status, "status_details": details,
            "output": output, "usage": usage, **self._described()}))
        self.done.set()
