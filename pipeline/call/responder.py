"""One response at a time: start, end, adopt a speculation, and know what the caller heard.

The responder owns the responses of a call: the one active now (at most one speaks at a time),
the list of all of them, the floor (free when no response runs and the caller is not holding it),
and the heard-in-full bookkeeping that tools and reminders rely on. Outside the reply side
(barge-in, the client facade, call control, the goodbye) it hands out each response's
`ReplyHandle`, never the response itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..base import events as ev
from ..base.conversation import Conversation
from ..base.protocols import LLM, TTS, CountingLLM
from ..stages.fakes import ScriptedLLM
from ..stages.playback import FramePhase, Playback
from .context import ContextOverflowError, fit_conversation
from .core import SessionCore
from .handle import Purpose, ReplyHandle
from .response import ModeChoice, Response, ResponseContext, ResponseOptions, ToolHooks
from .response_modes import DEFAULT_MODES
from .states import ResponseStatus

_TEMPLATE_TOKENS = 8  # chat-template tokens around one message (ChatML adds 5)
_DROP_STEP = 8  # drop turns eight at a time: the prompt's start, and the model's cache, survive


_STOPPABLE = (ResponseStatus.IN_PROGRESS, ResponseStatus.CANCELLED)


class Responder:
    def __init__(self, core: SessionCore, *, llm: LLM, tts: TTS, playback: Playback, tools: ToolHooks,
                 caller_speaking: Callable[[], bool], line_open: Callable[[], bool],
                 modes: ModeChoice = DEFAULT_MODES) -> None:
        self.core = core
        self.playback = playback
        self.tools = tools
        self.caller_speaking = caller_speaking
        self.line_open = line_open
        self.ctx = ResponseContext(llm=llm, tts=tts, clock=core.clock, config=core.config, emit=core.emit,
                                   log=core.log, playback=playback, conversation=core.conversation,
                                   tools=tools, modes=modes)
        self._counting = llm if isinstance(llm, CountingLLM) else None  # asked once, not per response
        self.auto_respond = True  # False: a committed turn becomes an item; the client asks for replies
        self.text_only = False  # the session's output modalities are ["text"]: no voice by default
        self._active: Response | None = None
        self.responses: list[Response] = []
        self._client_cancelled: Response | None = None  # the last one cancel_active stopped
        self._played_first: set[str] = set()
        self._fit_cache: dict[Any, int] = {}  # token counts per turn, for the life of the call
        playback.frame_listeners.add(self._on_frame_played, FramePhase.SESSION)

    # --- making responses ------------------------------------------------------------------------

    def messages(self, *, extra_user: str | None = None, system_note: str | None = None,
                 options: ResponseOptions | None = None, mark_fit: bool = True) -> list[dict[str, Any]]:
        """The LLM context: instructions (with the tools), the conversation, and any extras,
        fitted to the model's context window (the oldest turns go first; ContextOverflowError
        when even the latest turn cannot fit). `options` may replace the instructions and the
        conversation for one response. `mark_fit`: tell clients when turns were left out (not
        for a prefill's prompt, which no reply reads yet)."""
        options = options or ResponseOptions()
        instructions = options.instructions
        if instructions is None:
            instructions = self.core.config.response.instructions
        tools_prompt = self.tools.prompt()
        if tools_prompt:
            instructions += "\n\n" + tools_prompt
        items = self.core.conversation.items if options.input is None else list(options.input)
        extra = [{"role": "user", "content": extra_user}] if extra_user is not None else []
        extra += [{"role": "system", "content": system_note}] if system_note is not None else []
        context = Conversation()
        context.items = items
        messages = context.to_messages(instructions) + extra
        llm = self._counting
        if llm is None:
            return messages
        budget = llm.context_window - llm.max_tokens
        # a token covers at least one byte: a prompt with fewer bytes (plus the template's few
        # tokens a message) than the budget fits without tokenizing it, the common case
        if sum(len(str(m["content"]).encode()) + _TEMPLATE_TOKENS for m in messages) <= budget:
            return messages
        fit = fit_conversation(instructions, items, count_tokens=llm.count_tokens,
                               max_prompt_tokens=budget, extra_messages=extra, cache=self._fit_cache,
                               drop_step=_DROP_STEP)
        if fit.turns_omitted and mark_fit:
            self.core.emit(ev.StageMark(stage=ev.Milestone.CONTEXT_FIT, detail={
                "prompt_tokens": fit.prompt_tokens, "turns_omitted": fit.turns_omitted,
                "count_calls": fit.count_calls}))
        return fit.messages

    @property
    def active(self) -> ReplyHandle | None:
        """The response running now (at most one), held or not."""
        return self._active.handle if self._active is not None else None

    def new(self, turn_id: str | None, *, held: bool = False, transcript: str | None = None,
            purpose: Purpose = Purpose.TURN, about_keys: tuple[str, ...] = (), also_turns: tuple[str, ...] = (),
            system_note: str | None = None, options: ResponseOptions | None = None) -> Response:
        """A response over the current context (a held one answers `transcript`, not yet added).

        `also_turns`: other turns it answers for (a reply about results that landed together,
        called in different turns): what their replies said is not said again either."""
        options = options or ResponseOptions(text_only=self.text_only)
        failure = None
        try:
            messages = self.messages(extra_user=transcript if held else None, system_note=system_note,
                                     options=options)
        except ContextOverflowError as exc:  # this response fails clearly; the next turn may fit
            messages, failure = [], str(exc)
            self.core.emit(ev.error_event("context_length_exceeded", failure))
        response = Response(self.ctx, turn_id, messages, held=held, transcript=transcript, purpose=purpose,
                            about_keys=about_keys, options=options, failure=failure)
        turns = {turn_id, *also_turns} - {None}
        if turns:  # the holding line is not said again in the reply about its result
            # (words that reached the caller: a speculation dropped unheard said nothing)
            response.speech.chunker.said_before(r.item.text for r in self.responses
                                                if r.turn_id in turns and r.delivery.reaches_caller)
        return response

    def start(self, turn_id: str | None, *, purpose: Purpose, options: ResponseOptions | None = None) -> ReplyHandle:
        """A response over the current context, begun now (`new`, then `begin`)."""
        response = self.new(turn_id, purpose=purpose, options=options)
        self.begin(response)
        return response.handle

    def say(self, text: str, *, purpose: Purpose, options: ResponseOptions) -> ReplyHandle:
        """A response of given words, begun now: said by a scripted model in the session's voice,
        never by its LLM (a stuck model must not hold up what the server itself has to say)."""
        ctx = replace(self.ctx, llm=ScriptedLLM(replies=[text]))
        response = Response(ctx, None, [], purpose=purpose, options=options)
        response.words.the_sessions_own()
        self.begin(response)
        return response.handle

    def begin(self, response: Response) -> None:
        if not self.line_open():  # the line is down: nobody to speak to
            response.handle.status = ResponseStatus.CANCELLED
            response.handle.mark_done()
            return
        self._active = response
        self.responses.append(response)
        if not response.held and not response.asked.options.out_of_band:
            # in the history from the moment it begins: a reply started a moment later builds on
            # it, not on a context where the agent has not yet spoken
            self.core.conversation.add(response.item)
        task = self.core.spawn(response.run())
        task.add_done_callback(lambda _task: self._ended(response))

    def _ended(self, response: Response) -> None:
        if self._active is response:
            self._active = None
            self.core.floor.pulse()
        if not response.held:  # a held one settles when adopted (or never, when dropped)
            self.settled(response)

    def settled(self, response: Response) -> None:
        """A client-visible response has ended: sort its tool results out."""
        self.tools.settle(response, clean=response.status is ResponseStatus.COMPLETED)
        if response.status.played_to_its_end:  # its status is set once its audio has played
            self._on_heard(response)

    async def create_response(self, *, turn_id: str | None = None, purpose: Purpose = Purpose.TURN,
                              about_keys: tuple[str, ...] = (), system_note: str | None = None,
                              options: ResponseOptions | None = None) -> ReplyHandle:
        """Start a response once no other is active (one at a time); returns when it ends."""
        while self._active is not None:
            await self.core.floor.wait()
        response = self.new(turn_id, purpose=purpose, about_keys=about_keys, system_note=system_note,
                            options=options)
        self.begin(response)
        await response.handle.wait()
        return response.handle

    async def floor_free(self) -> None:
        """Wait until no response is running and the caller is not holding the floor."""
        while self._active is not None or self.caller_speaking():
            await self.core.floor.wait()

    # --- stopping ------------------------------------------------------------------------------

    def cancel_active(self, reason: str = "client_cancelled") -> bool:
        """Stop the response being made; False when there is none. A cancel repeated before any
        new response begins acts on the one already cancelled, in silence, whether or not it has
        ended yet: two cancels sent back to back (the Agents SDK's interrupt) must not race its end."""
        active = self._active
        # one being made, or one a barge-in stopped that is still ending (cancel is then a no-op)
        if active is not None and not active.held and active.status in _STOPPABLE:
            active.handle.cancel(reason)
            self._client_cancelled = active
            return True
        # Nothing to stop. A response that ended on its own is still `active` for one pass of
        # the loop after its response.done went out (the long fuzz under load landed a cancel
        # there): it is not cancelled, so the cancel is refused, as once it is gone.
        last = self.responses[-1] if self.responses else None
        return last is not None and last is self._client_cancelled

    @property
    def making(self) -> ReplyHandle | None:
        """The client-visible response still being made: not held, not ending (one that ended
        on its own or was cancelled is `active` until its task's last step has run)."""
        active = self._active
        making = active is not None and not active.held and active.status is ResponseStatus.IN_PROGRESS
        return active.handle if making and active is not None else None

    def drop_unheard_reply(self) -> None:
        """The caller speaks again before a word of the reply has sounded ("...for order 42"):
        the reply answers a question that is still being asked, so it goes; the next turn's
        reply will see everything. (Once audible, only the barge-in gate may stop it.)"""
        r = self._active
        if (r is not None and not r.held and r.status is ResponseStatus.IN_PROGRESS and self.core.config.bargein.enabled
                and self.playback.heard(r.item.id) == 0):
            r.handle.cancel("turn_detected")

    def barge_in_target(self) -> ReplyHandle | None:
        """What a barge-in stops: the response being made, else the one still sounding."""
        target = self._target()
        return target.handle if target is not None else None

    def _target(self) -> Response | None:
        if self._active is not None and not self._active.held:
            return self._active
        return self._of_item(self.playback.current_item)

    def interrupt(self) -> None:
        """The caller talks over the agent: stop whatever is sounding and what is being made."""
        target = self._target()
        if target is not None and target.status is ResponseStatus.IN_PROGRESS:
            target.handle.cancel("turn_detected")  # all four steps; truncation happens as it ends
            return
        playing = self._of_item(self.playback.current_item)
        self.playback.clear()  # generation already finished; only its audio is still sounding
        if playing is not None:
            playing.handle.truncate_to_heard()
            self.tools.settle(playing, clean=False)  # cut off: its read-only results are stale

    # --- lookups -------------------------------------------------------------------------------

    def response_by_id(self, response_id: str) -> ReplyHandle | None:
        return next((r.handle for r in reversed(self.responses) if r.id == response_id), None)

    def response_of_item(self, item_id: str | None) -> ReplyHandle | None:
        response = self._of_item(item_id)
        return response.handle if response is not None else None

    def _of_item(self, item_id: str | None) -> Response | None:
        return next((r for r in reversed(self.responses) if r.item.id == item_id), None)

    def recent_agent_text(self) -> str:
        """What the last two replies said (or have said so far): words heard back from the caller's
        side that are only these are the agent's own echo."""
        return " ".join(r.item.text or r.text_so_far for r in self.responses[-2:])

    # --- what was heard ------------------------------------------------------------------------

    def _on_frame_played(self, response_id: str, item_id: str, at_s: float) -> None:
        if response_id not in self._played_first:  # every 20 ms: look the response up only once
            self._played_first.add(response_id)
            response = self._of_item(item_id)
            self.core.emit(ev.StageMark(stage=ev.Milestone.FIRST_AUDIO_OUT, response_id=response_id,
                                        turn_id=response.turn_id if response else None))

    def _on_heard(self, response: Response) -> None:
        """The caller heard this response to its end (nothing was cut off)."""
        if response.handle.heard_in_full:
            return
        response.handle.heard_in_full = True
        self.core.emit(ev.StageMark(stage=ev.Milestone.HEARD_IN_FULL, response_id=response.id, turn_id=response.turn_id))
        self.tools.heard(response)
