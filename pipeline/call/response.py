"""One response: LLM tokens -> sentence chunker -> TTS -> playback, cancellable in four places.

A response sees only its `ResponseContext` (the models, the clock, the event stream, the
speaker and the tool hooks), never the session; everyone outside it holds its `ReplyHandle`
(`handle.py`: stop it, wait for it, what was heard).

It runs in four steps, each a part in its own module: generate (`response_generate`: the LLM
thread streams tokens), write (tokens into speakable chunks, `response_words`, screened and with
the words it owes; or a tool call, `response_call`), speak (`response_speech`: chunks into audio)
and finish (its status, its item, response.done). Write and speak run together, and a `finally`
stops the LLM thread, cancels synthesis and waits for every task, so cancellation is designed in.
How it goes out is three strategies chosen once when it is made (`ResponseModes`, in
`response_modes.py`): its delivery (live, or *held*: a speculation whose events and audio are
kept back until the turn commit adopts it), its output (spoken, or text only) and its place (in
the conversation, or out of band).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple, Protocol

import numpy as np

from ..base import events as ev
from ..base.clock import Clock, cancel_and_wait
from ..base.config import Config
from ..base.conversation import Conversation, Item
from ..base.errors import PipelineError, SpokenError
from ..base.protocols import LLM, TTS, AsyncTTS
from ..stages.playback import Playback
from ..tools.schema import ToolCall, ToolSpec
from ..tools.stream import starts_tool_call
from .handle import Heard, Purpose, ReplyHandle
from .response_call import CallOut
from .response_generate import Generating
from .response_speech import Speech
from .response_words import Words
from .states import ResponseStatus


class ToolHooks(Protocol):
    """What a response needs of the session's tools (implemented by `desk.ToolDesk`)."""

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

    def screens(self) -> bool:
        """Whether replies are screened and owed words (the session has tools, or checks facts)."""

    def screen(self, response: Response, chunk: str) -> str | None: ...  # why it is not said (`call.owed`)

    async def owed(self, response: Response, reached: str | None, said: str) -> str | None:
        """Words this reply owes the caller after its own (`said`): the question back for the tool
        it reached for but did not call (`reached`) or the refusal it answers, where they ask none;
        an outcome it is about that they do not state (`call.owed`)."""

    def prepare(self, response: Response, call_id: str, call: ToolCall) -> ToolCall:
        """The call as it will be made (`tools.provenance`): optional arguments nobody gave left
        out. A client's call with a required one nobody gave is not handed to the client
        (`handed`)."""

    def handed(self, call_id: str) -> bool:
        """Whether this call goes to whoever runs it (a client's call refused in `prepare` does not)."""

    def start(self, response: Response, call_id: str, call: ToolCall) -> None: ...

    def said_back(self, response: Response) -> str | None:
        """The read-back this reply's call owes after its words (`call.readback`), once."""

    def takes_turn(self, turn_id: str, text: str) -> bool:
        """The caller's committed turn answers a read-back (`call.readback`): a yes runs the
        call and its result is the reply (True); else the turn is the model's (False)."""

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


@dataclass(frozen=True)
class Asked:
    """What a response was asked to answer, fixed when it is made."""

    messages: list[dict[str, Any]]  # the model's context
    options: ResponseOptions
    transcript: str | None = None  # the user text a held (preemptive) response answers
    about_keys: tuple[str, ...] = ()  # ledger keys whose outcome it is meant to state
    failure: str | None = None  # known before it starts (the context cannot fit): it fails at once
    history_version: int = 0  # the tools' history version it saw (`ToolHooks.history_version`)


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
        # a check on a runtime protocol walks its members: ask once, not per chunk
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
    """One reply, made by its parts behind its handle (`self.handle`)."""

    def __init__(self, ctx: ResponseContext, turn_id: str | None, messages: list[dict[str, Any]], *,
                 held: bool = False, transcript: str | None = None, purpose: Purpose = Purpose.TURN,
                 about_keys: tuple[str, ...] = (), options: ResponseOptions | None = None,
                 failure: str | None = None) -> None:
        self.ctx = ctx
        options = options or ResponseOptions()
        self.asked = Asked(messages, options, transcript, about_keys, failure, ctx.tools.history_version)
        self.handle = ReplyHandle(self, response_id=ev.new_id("resp"), turn_id=turn_id, purpose=Purpose(purpose))
        self.item = Item(type="message", role="assistant", status="in_progress")
        self.text_so_far = ""  # the reply as written: markup read off, owed words on
        self._tasks: list[asyncio.Future[Any]] = []
        self.generating = Generating(ctx.llm, ctx.clock)
        self.speech = Speech(self, ctx, generation=options.generation, stopped=self.generating.cancel,
                             pause=self.generating.paused)
        self.call_out = CallOut(self, self.speech.chunker)
        self.words = Words(self)
        self.delivery, self.output, self.placement = ctx.modes(self, held)
        self.item.audio = "audio" in self.output.modalities

    @property
    def id(self) -> str:
        return self.handle.id

    @property
    def turn_id(self) -> str | None:
        return self.handle.turn_id

    @property
    def purpose(self) -> Purpose:
        return self.handle.purpose

    @property
    def status(self) -> ResponseStatus:
        return self.handle.status

    @property
    def heard_in_full(self) -> bool:
        return self.handle.heard_in_full

    @property
    def held(self) -> bool:
        """A speculation not yet adopted: nothing of it has gone out."""
        return self.delivery.held

    def emit(self, event: ev.Event) -> None:
        """Out through the response's delivery (held while it is a speculation)."""
        self.delivery.emit(event)

    def mark(self, stage: ev.Milestone, **detail: Any) -> None:
        self.emit(ev.StageMark(stage=stage, response_id=self.id, turn_id=self.turn_id, detail=detail))

    @property
    def may_still_tell(self) -> bool:
        """Still being made, or made and still playing: the caller may yet hear it all."""
        if self.status is ResponseStatus.IN_PROGRESS:
            return True
        return (self.status is ResponseStatus.COMPLETED and not self.handle.heard_in_full
                and not self.item.interrupted)

    def adopt(self) -> None:
        """Turn commit confirmed the speculation: release what was held, in order."""
        self.delivery.release(self)

    # --- the steps -----------------------------------------------------------------------------

    async def run(self) -> None:
        handle = self.handle
        try:
            self.mark(ev.Milestone.RESPONSE_START)  # its item is in the history since `Responder.begin`
            self.emit(ev.ResponseCreated(response={"id": self.id, "status": "in_progress", "output": [],
                                                    **self._described()}))
            self.emit(ev.OutputItemAdded(response_id=self.id, item=self.item.to_dict()))
            if self.asked.failure is not None:
                raise PipelineError(self.asked.failure)
            chunks: asyncio.Queue[str | None] = asyncio.Queue()
            self._tasks = [asyncio.ensure_future(self._write(chunks)),
                           asyncio.ensure_future(self.speech.speak(chunks))]
            await asyncio.gather(*self._tasks)
            if handle.status is ResponseStatus.IN_PROGRESS and (heard := self.output.heard(self)) is not None:
                self._tasks.append(asyncio.ensure_future(heard))
                await self._tasks[-1]
            if handle.status is ResponseStatus.IN_PROGRESS and self.generating.failure is not None:
                raise self.generating.failure  # the apology was heard; the response still failed
            if handle.status is ResponseStatus.IN_PROGRESS:
                cut = self.generating.cut
                handle.status = ResponseStatus.INCOMPLETE if cut else ResponseStatus.COMPLETED
                handle.reason = "max_output_tokens" if cut else None
        except asyncio.CancelledError:
            if handle.status is ResponseStatus.IN_PROGRESS:
                handle.status, handle.reason = ResponseStatus.CANCELLED, handle.reason or "client_cancelled"
        except Exception as exc:  # a stage failed: the response fails, the call goes on
            handle.status, handle.error = ResponseStatus.FAILED, f"{type(exc).__name__}: {exc}"
            self.ctx.log(f"response {self.id} failed: {handle.error}", level="error")
        finally:
            self.generating.cancel.set()
            await cancel_and_wait(*self._tasks)
            self._finish()

    def _generate(self, tokens: asyncio.Queue[str | None]) -> asyncio.Future[None]:
        """Step 1: the LLM streams the reply from its thread into `tokens` (None ends it)."""
        ctx = self.ctx
        grammar = ctx.tools.grammar(self)
        policy = replace(ctx.config.response, **self.asked.options.generation)  # the session's, this one's
        producer = self.generating.start(self.asked.messages, tokens, grammar=grammar, policy=policy)
        self._tasks.append(producer)
        return producer

    async def _write(self, chunks: asyncio.Queue[str | None]) -> None:
        """Step 2: tokens into chunks to speak (the output decides when), or a tool call. Which
        one the reply is, the first visible character decides (only with tools: else words)."""
        tokens: asyncio.Queue[str | None] = asyncio.Queue()
        producer = self._generate(tokens)
        first = True
        route: CallOut | Words | None = None if len(self.ctx.tools) else self.words
        while (piece := await tokens.get()) is not None:
            if first:  # with the prefill it took: the prompt, and the part the model held evaluated
                done = self.generating.result
                self.mark(ev.Milestone.LLM_FIRST_TOKEN, **({} if done.cached_tokens is None else {
                    "prompt_tokens": done.prompt_tokens, "cached_tokens": done.cached_tokens}))
                first = False
            if route is None and (call := starts_tool_call(self.text_so_far + piece)) is not None:
                route = self.call_out if call else self.words
            if route is None:
                self.text_so_far += piece
                continue
            for chunk in route.push(piece):
                await self._put(chunks, chunk)
        try:
            await producer  # re-raises a failure of the model thread
            # the last token (traces time the request to it), and how many: the decode rate
            self.mark(ev.Milestone.LLM_DONE, output_tokens=self.generating.result.output_tokens)
            if route is not None:
                async for chunk in route.end():
                    await self._put(chunks, chunk)
        except SpokenError as exc:  # the caller hears a short apology, not silence
            self.generating.failure = exc
            self.speech.chunker.reset()
            await self._put(chunks, exc.apology)
            await chunks.put(None)
            return
        last = self.speech.chunker.flush() if route is self.call_out or len(self.ctx.tools) else self.output.rest(self)
        for chunk in last:
            await self._put(chunks, chunk)
        await chunks.put(None)

    async def _put(self, chunks: asyncio.Queue[str | None], chunk: str) -> None:
        if self.words.admit(chunk):
            await self.output.put(self, chunks, chunk)

    # --- behind the handle ---------------------------------------------------------------------

    def stop(self) -> None:
        """Stop in all four places: playback, synthesis, generation, stream state."""
        self.delivery.stop_audio()  # 1. stop playback: queued audio is dropped at once
        self.generating.cancel.set()  # 3. the model thread stops within one token
        for task in self._tasks:  # 2. synthesis (and the token pump) stop at their next await
            task.cancel()
        self.speech.chunker.reset()  # 4. no half sentence survives into the next response

    def heard(self) -> Heard:
        return self.speech.heard()

    def made_ms(self) -> float:
        return self.speech.generated * 1000 / self.ctx.tts.sample_rate_hz

    def truncate_to_played(self) -> None:
        self.speech.truncate_to_played()

    async def played_out(self) -> None:
        if not self.held and (heard := self.output.heard(self)) is not None:
            await heard

    # --- the end -------------------------------------------------------------------------------

    def _described(self) -> dict[str, Any]:
        """The response's own settings, for response.created and response.done."""
        return {"modalities": list(self.output.modalities), "conversation": self.placement.conversation,
                "metadata": self.asked.options.metadata}

    def _finish(self) -> None:
        """Step 4: the item as it ends (what was heard of it), then response.done."""
        self.output.finish_item(self)
        handle, result = self.handle, self.generating.result
        status = handle.status.value  # the wire's plain string
        details: dict[str, Any] | None = None
        if status != "completed":
            details = {"type": status, "reason": handle.reason}
            if handle.error:
                details["error"] = {"type": "server_error", "message": handle.error}
        usage = {"input_tokens": result.prompt_tokens, "output_tokens": result.output_tokens,
                 "total_tokens": result.prompt_tokens + result.output_tokens}
        call = self.call_out.made
        output = [self.item.to_dict()] + ([call.to_dict()] if call else [])
        self.emit(ev.ResponseDone(response={
            "id": self.id, "status": status, "status_details": details,
            "output": output, "usage": usage, **self._described()}))
        handle.mark_done()
