"""The orchestrator: input frames -> VAD -> turns + streaming STT -> one response at a time.

The event loop only routes: model inference runs in threads (`clock.run_in_thread`), except the
Silero window (~130 us, cheaper than a thread hand-off). Everything is timed on one clock, so the
same code runs a scripted call in simulated time and a live call in real time.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import events as ev
from .audio import INPUT_RATE_HZ, PickupBuffer, StreamResampler, dbfs
from .bargein import BargeInGate
from .clock import Clock
from .config import Config, build_stage
from .conversation import Conversation, Item
from .playback import AudioSink, Playback
from .response import Response
from .session_control import ClientControlMixin
from .session_tools import ToolsMixin, _tools_prompt
from .stt import Partial, StreamingTranscriber
from .tools import ToolRegistry
from .tools.buffer import TurnResultBuffer
from .tools.runner import ToolRunner
from .turns import Turn, TurnDetector
from .vad import WINDOW_MS, WINDOW_SAMPLES

log = logging.getLogger(__name__)

_HISTORY_MS = 1500  # input kept for prefix padding (>= padding + speech-start confirmation)


@dataclass
class Stages:
    """The loaded stage objects; `load` builds each from its entry point."""

    vad: Any
    stt: Any
    completeness: Any
    llm: Any
    tts: Any

    @classmethod
    def load(cls, config: Config, *, progress: Callable[[str], None] | None = None) -> Stages:
        built: dict[str, Any] = {}
        for kind in ("vad", "stt", "llm", "tts", "turns"):
            if progress:
                progress(f"loading {kind}: {config.stage(kind).name}")
            built[kind] = build_stage(kind, config.stage(kind), llm=built.get("llm"))
        return cls(vad=built["vad"], stt=built["stt"], completeness=built["turns"],
                   llm=built["llm"], tts=built["tts"])


class Session(ToolsMixin, ClientControlMixin):
    def __init__(self, config: Config, stages: Stages, *, clock: Clock, sink: AudioSink,
                 events: ev.EventLog | None = None) -> None:
        self.config = config
        self.clock = clock
        self.stages = stages
        self.llm, self.tts = stages.llm, stages.tts
        self.events = events if events is not None else ev.EventLog()
        self.listeners: list[Callable[[ev.Event], None]] = []
        self.conversation = Conversation()
        # a sink that buffers (a socket, a sound card) gets frames a little ahead of time
        self.playback = Playback(clock, sink, self.tts.sample_rate_hz, on_frame=self._on_frame_played,
                                 lead_s=getattr(sink, "lead_s", 0.0))
        self.echo: Any = None
        if config.bargein.echo_guard:  # speakers, not headphones: the agent's voice reaches the mic
            from .echo import EchoGuard

            self.echo = EchoGuard()
            self._echo_resampler = StreamResampler(self.tts.sample_rate_hz, INPUT_RATE_HZ)
            self.playback.on_audio = self._on_reference
        # Silero is recurrent: each session needs its own state (the weights are shared)
        self.vad = stages.vad.fork() if hasattr(stages.vad, "fork") else stages.vad
        self.turn_detection = True  # False: the client commits input itself (realtime API)
        self.auto_respond = True  # False: a committed turn becomes an item; the client asks for replies
        self.detector = TurnDetector(config.turn)
        self.gate = BargeInGate(config.bargein)
        self.pickup = PickupBuffer(cap_ms=config.call.pickup_cap_ms)
        self.ready = False
        self.turn: Turn | None = None
        self.active: Response | None = None
        self.responses: list[Response] = []
        self.preemptive_used = 0
        self.preemptive_discarded = 0
        # frames, and client commands that must act after the frames sent before them
        self._inbox: asyncio.Queue[np.ndarray | Callable[[], None] | None] = asyncio.Queue()
        self._window = np.zeros(0, np.float32)
        self._samples_in = 0  # input samples processed: the input audio clock
        self._history: deque[tuple[int, np.ndarray]] = deque()
        self._tasks: set[asyncio.Future[Any]] = set()
        self._runner: list[asyncio.Future[Any]] = []
        self._response_idle = asyncio.Event()
        self._response_idle.set()
        self._played_first: set[str] = set()
        self._paused_at_ms: float | None = None  # playback held on a barge-in candidate
        self._samples_pushed = 0  # input handed to the session, held or not
        self._ref_offset: int | None = None
        # tools
        self.tools = ToolRegistry()
        self.runner: ToolRunner | None = None
        self.ledger: Any = None
        self.results = TurnResultBuffer()
        self.calls: dict[str, tuple[str, str | None]] = {}  # call_id -> (response_id, turn_id)
        self._delivered: set[str] = set()
        self.history_version = 0  # bumped whenever tool results enter the conversation
        self.ledger_keys: set[str] = set()  # side effects this call asked for
        from .callctl import CallControl, end_call_tool

        self.sink = sink
        self.control = CallControl(self)
        if config.call.end_call:
            self.use_tools(ToolRegistry(specs=[end_call_tool()]))
        self._reply_pending: set[str] = set()  # keys with a confirmation waiting to start

    # --- events --------------------------------------------------------------------------------

    def emit(self, event: ev.Event) -> None:
        event.ts = self.clock.now()
        self.events.append(event)
        for listener in self.listeners:
            listener(event)

    def log(self, message: str, *, level: str = "info") -> None:
        self.emit(ev.CallLog(message=message, level=level))

    def spawn(self, coro: Any) -> asyncio.Future[Any]:
        """Run a coroutine as part of this session: cancelled on close, failures reported."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(self._report_crash)
        return task

    def _report_crash(self, task: asyncio.Future[Any]) -> None:
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            log.error("session task failed", exc_info=exc)
            self.emit(ev.error_event("server_error", f"{type(exc).__name__}: {exc}"))

    # --- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the input and playback loops (call from inside the event loop)."""
        self._runner = [asyncio.ensure_future(self._input_loop()), asyncio.ensure_future(self.playback.run())]
        for task in self._runner:  # a crashed input or playback loop must not go unnoticed
            task.add_done_callback(self._report_crash)
        self.emit(ev.SessionCreated(session=self.describe()))

    def describe(self) -> dict[str, Any]:
        c = self.config
        return {"object": "realtime.session", "instructions": c.response.instructions,
                "turn_detection": {"type": "server_vad", "threshold": c.turn.vad_threshold,
                                   "prefix_padding_ms": c.turn.prefix_padding_ms,
                                   "silence_duration_ms": c.turn.min_silence_ms,
                                   "max_silence_duration_ms": c.turn.max_silence_ms},
                "stages": {k: c.stage(k).name for k in ("vad", "stt", "turns", "llm", "tts")}}

    def mark_ready(self) -> None:
        """Models and client are ready: flush held frames, in order, ahead of live ones."""
        held = self.pickup.drain()
        for frame in held:
            self._inbox.put_nowait(frame)
        self.ready = True
        held_s = sum(len(f) for f in held) / INPUT_RATE_HZ
        dropped_s = self.pickup.dropped_samples / INPUT_RATE_HZ
        self.log(f"held {held_s:.2f} s" + (f" (dropped the oldest {dropped_s:.2f} s)" if dropped_s else ""))

    def push_audio(self, frame: np.ndarray) -> None:
        """A 16 kHz mono float32 frame from the transport; cheap and non-blocking."""
        self._samples_pushed += len(frame)
        if self.ready:
            self._inbox.put_nowait(frame)
        else:
            self.pickup.hold(frame)

    @property
    def now_ms(self) -> float:
        return self._samples_in * 1000.0 / INPUT_RATE_HZ

    @property
    def idle(self) -> bool:
        """Nothing in flight: no open turn, no response, no pending work, speaker drained."""
        return (self.turn is None and self.active is None and not self._tasks
                and self._inbox.empty() and self.playback.drained.is_set())

    async def close(self) -> None:
        if self.active is not None:
            self.active.cancel("client_cancelled")
        if self.turn is not None:
            await self.turn.stt.aclose()
        for task in [*self._tasks, *self._runner]:
            task.cancel()
        for task in [*self._tasks, *self._runner]:
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass

    # --- input path ----------------------------------------------------------------------------

    async def _input_loop(self) -> None:
        while (frame := await self._inbox.get()) is not None:
            if callable(frame):
                frame()
            else:
                self._process_frame(frame)

    def _process_frame(self, frame: np.ndarray) -> None:
        frame = np.asarray(frame, dtype=np.float32).reshape(-1)
        if self.echo is not None:  # everything downstream hears the caller, not the agent's echo
            frame = self.echo.process(frame, self._samples_in)
        self._history.append((self._samples_in, frame))
        while self._history and self._history[0][0] < self._samples_in - _HISTORY_MS * INPUT_RATE_HZ // 1000:
            self._history.popleft()
        if self.turn is not None:
            self.turn.stt.append(frame)
        self._window = np.concatenate([self._window, frame])
        consumed = self._samples_in - (len(self._window) - len(frame))  # sample index of window start
        self._samples_in += len(frame)
        while len(self._window) >= WINDOW_SAMPLES:
            window, self._window = self._window[:WINDOW_SAMPLES], self._window[WINDOW_SAMPLES:]
            consumed += WINDOW_SAMPLES
            self._on_window(window, consumed * 1000.0 / INPUT_RATE_HZ)

    def _on_reference(self, samples: np.ndarray, at_s: float) -> None:
        # where this frame lands on the input timeline: the clock's time plus the input that
        # arrived before the clock started (a microphone opens before the models load)
        if self._ref_offset is None:  # fixed once: a jittery offset would defeat the filter
            arrived = self._samples_pushed - self.pickup.dropped_samples  # dropped never reach echo
            self._ref_offset = arrived - int(round(self.clock.now() * INPUT_RATE_HZ))
        at_sample = int(round(at_s * INPUT_RATE_HZ)) + self._ref_offset
        self.echo.push_reference(self._echo_resampler.process(samples), at_sample)

    def _on_window(self, window: np.ndarray, end_ms: float) -> None:
        prob = self.vad.probability(window)
        if self.config.bargein.enabled and self.playback.speaking:
            level = dbfs(window)
            if self.gate.update(level_dbfs=level, voice_prob=prob, window_ms=WINDOW_MS, end_ms=end_ms):
                self._paused_at_ms = None
                self._barge_in(end_ms)
            else:
                self._judge_candidate(end_ms)
        else:
            self.gate.reset()
            self._paused_at_ms = None
        if not self.turn_detection:
            self._manual_turn_window(end_ms)
            return
        signal = self.detector.on_window(prob, end_ms)
        if signal is not None and signal.kind == "speech_started":
            self._on_speech_started(signal.at_ms)
        elif signal is not None and signal.kind == "speech_stopped":
            self._on_speech_stopped(signal.at_ms)
        turn = self.turn
        if turn is None:
            return
        if self.detector.in_speech:
            if prob >= self.config.turn.vad_threshold:  # not in the trailing windows: a pass
                turn.stt.poll_partial()  # started there would hold up the final one
        else:
            self._check_end_of_turn(end_ms)

    def _on_speech_started(self, onset_ms: float) -> None:
        padding = self.config.turn.prefix_padding_ms
        start_ms = max(0.0, onset_ms - padding)
        turn = self.turn
        if turn is None:
            stt = StreamingTranscriber(self.stages.stt, self.clock)
            turn = self.turn = Turn(item_id=ev.new_id("item"), audio_start_ms=start_ms, stt=stt,
                                    over_agent=self.playback.speaking and self.config.bargein.enabled)
            stt.on_partial = lambda p, t=turn: self._on_partial(t, p)
            stt.append(self._history_since(start_ms))  # the padding and the confirmed onset
        else:  # the caller resumed: the pending final and any speculation are stale
            turn.stt.discard_final()
            self._drop_preemptive(turn)
        turn.segment_start_ms = start_ms
        self._drop_unheard_reply()
        if not turn.over_agent:
            self._announce(turn)

    def _drop_unheard_reply(self) -> None:
        """The caller speaks again before a word of the reply has sounded ("...for order 42"):
        the reply answers a question that is still being asked, so it goes; the next turn's
        reply will see everything. (Once audible, only the barge-in gate may stop it.)"""
        r = self.active
        if (r is not None and not r.held and r.status == "in_progress" and self.config.bargein.enabled
                and self.playback.heard(r.item.id) == 0):
            r.cancel("turn_detected")

    def _announce(self, turn: Turn) -> None:
        """Tell clients speech started. Over the agent, only once it is a real interruption:
        clients stop their playback on this event, and a "mm-hmm" must not do that."""
        if not turn.announced:
            turn.announced = True
            self.emit(ev.SpeechStarted(item_id=turn.item_id, audio_start_ms=int(turn.segment_start_ms)))

    def _on_speech_stopped(self, end_ms: float) -> None:
        turn = self.turn
        if turn is None:
            return
        turn.speech_end_ms = end_ms
        if turn.over_agent and not self.playback.speaking:
            turn.over_agent = False  # the caller outlasted the agent: a real turn after all
            self._announce(turn)
        if turn.announced:
            self.emit(ev.SpeechStopped(item_id=turn.item_id, audio_end_ms=int(end_ms)))
        if self.config.response.mode == "sequential":
            return  # the baseline starts its final pass only once the turn is committed
        turn.stt.start_final()  # at speech-stop, not at commit: ready when the turn ends
        self.spawn(self._after_final(turn))

    def _history_since(self, from_ms: float) -> np.ndarray:
        """Input audio from `from_ms` on, out of the history ring (prefix padding, trims)."""
        start = int(from_ms * INPUT_RATE_HZ / 1000)
        parts = [f[max(0, start - first):] for first, f in self._history if first + len(f) > start]
        return np.concatenate(parts) if parts else np.zeros(0, np.float32)

    async def _after_final(self, turn: Turn) -> None:
        task = turn.stt._final_task
        if task is None:
            return
        try:
            text = await asyncio.shield(task)
        except asyncio.CancelledError:
            return
        if self.turn is not turn or task is not turn.stt._final_task:
            return
        await self._score(turn, text)
        if self.turn is turn and not self.detector.in_speech:
            self._start_preemptive(turn, text)
            self._check_end_of_turn(self.now_ms)

    def _on_partial(self, turn: Turn, partial: Partial) -> None:
        self.emit(ev.TranscriptionDelta(item_id=turn.item_id, delta=partial.delta,
                                        stable=partial.stable, tentative=partial.tentative))
        self.spawn(self._score(turn, turn.stt.latest_text))

    async def _score(self, turn: Turn, text: str) -> None:
        """Completeness of a transcript, computed once per distinct text, off the loop."""
        if text in turn.texts_checked:
            return
        turn.texts_checked[text] = await self.clock.run_in_thread(self.stages.completeness.probability, text)

    def _check_end_of_turn(self, now_ms: float) -> None:
        turn = self.turn
        if turn is None:
            return
        text = turn.stt.peek_final()
        if text is None:
            text = turn.stt.latest_text
        prob = turn.texts_checked.get(text)
        reason = self.detector.end_of_turn(now_ms, prob)
        if reason is not None:
            self._commit(reason)

    def _commit(self, reason: str) -> None:
        turn = self.turn
        assert turn is not None
        self.turn = None
        turn.commit_reason = reason
        self.detector.reset()
        end_ms = turn.speech_end_ms if turn.speech_end_ms is not None else self.now_ms
        if turn.over_agent and not turn.barged_in:  # talk under the agent that never interrupted
            self.spawn(self._finish_turn(turn))
            return
        self.emit(ev.InputCommitted(item_id=turn.item_id, audio_start_ms=int(turn.audio_start_ms),
                                    audio_end_ms=int(end_ms), reason=reason,
                                    previous_item_id=self.conversation.items[-1].id if self.conversation.items else None))
        self.spawn(self._finish_turn(turn))

    async def _finish_turn(self, turn: Turn) -> None:
        text = (await turn.stt.final()).strip()
        stats = turn.stt.stats
        if turn.over_agent and not turn.barged_in:
            self._drop_preemptive(turn)
            self.log(f"backchannel while the agent spoke, not a turn: {text!r}")
            return
        self.emit(ev.TranscriptionCompleted(item_id=turn.item_id, transcript=text))
        self.emit(ev.StageMark(stage="stt_final", turn_id=turn.item_id, detail={
            "final_compute_ms": round(stats.final_compute_s * 1000, 1), "partial_passes": stats.passes,
            "partials_skipped": stats.skipped, "partial_cadence_hz": round(stats.cadence_hz, 2),
            "finals_discarded": stats.finals_discarded}))
        if not text:
            self._drop_preemptive(turn)
            self.log("turn had no words; nothing to answer")
            return
        if self.control.on_caller_turn(text):  # "okay, bye!" after our goodbye: no reply
            item = self.conversation.add(Item(type="message", role="user", text=text, id=turn.item_id))
            self.emit(ev.ItemCreated(item=item.to_dict(), previous_item_id=self.conversation.previous_id(item)))
            return
        if not self.auto_respond:
            item = self.conversation.add(Item(type="message", role="user", text=text, id=turn.item_id))
            self.emit(ev.ItemCreated(item=item.to_dict(), previous_item_id=self.conversation.previous_id(item)))
            return
        item = self.conversation.add(Item(type="message", role="user", text=text, id=turn.item_id))
        self.emit(ev.ItemCreated(item=item.to_dict(), previous_item_id=self.conversation.previous_id(item)))
        await self._respond(turn, text)

    # --- responses -----------------------------------------------------------------------------

    def _messages(self, extra_user: str | None = None, system_note: str | None = None) -> list[dict[str, Any]]:
        instructions = self.config.response.instructions
        if len(self.tools):
            instructions += "\n\n" + _tools_prompt(self.tools)
        messages = self.conversation.to_messages(instructions)
        if extra_user is not None:
            messages.append({"role": "user", "content": extra_user})
        if system_note is not None:
            messages.append({"role": "system", "content": system_note})
        return messages

    def _start_preemptive(self, turn: Turn, text: str) -> None:
        """Speculate at speech-stop: generate (held) while the turn may still be committed."""
        if (not self.config.response.preemptive or self.config.response.mode == "sequential"
                or not self.auto_respond
                or not text.strip() or self.active is not None
                or turn.preemptive is not None or turn.over_agent):
            return
        response = Response(self, turn.item_id, self._messages(text), held=True, transcript=text)
        turn.preemptive = response
        self._begin(response)

    def _drop_preemptive(self, turn: Turn) -> None:
        if turn.preemptive is not None:
            turn.preemptive.cancel("discarded")
            turn.preemptive = None
            self.preemptive_discarded += 1

    def _begin(self, response: Response) -> None:
        if self.control.closed:  # the line is down: nobody to speak to
            response.status = "cancelled"
            response.done.set()
            return
        self.active = response
        self._response_idle.clear()
        self.responses.append(response)
        task = self.spawn(response.run())
        task.add_done_callback(lambda _t, r=response: self._ended(r))

    def _ended(self, response: Response) -> None:
        if self.active is response:
            self.active = None
            self._response_idle.set()
        if not response.held:  # a held one settles when adopted (or never, when dropped)
            self.response_settled(response)

    def response_settled(self, response: Response) -> None:
        """A client-visible response has ended: sort its tool results out."""
        self._record_results(*self.results.settle(response.id, clean=response.status == "completed"))
        if response.status == "completed":  # a response completes once its audio has played
            self._on_heard(response)

    async def _respond(self, turn: Turn, text: str) -> None:
        spec = turn.preemptive
        turn.preemptive = None
        if spec is not None and spec.transcript == text and spec.status == "in_progress":
            self.preemptive_used += 1
            spec.adopt()
            await spec.done.wait()
            return
        if spec is not None:
            spec.cancel("discarded")
            self.preemptive_discarded += 1
            await spec.done.wait()
        await self.create_response(turn_id=turn.item_id)

    async def create_response(self, *, turn_id: str | None = None, purpose: str = "turn",
                              about_keys: tuple[str, ...] = (), system_note: str | None = None) -> Response:
        """Start a response once no other is active (one at a time); returns when it ends."""
        while self.active is not None:
            await self._response_idle.wait()
        response = Response(self, turn_id, self._messages(system_note=system_note), purpose=purpose,
                            about_keys=about_keys)
        self._begin(response)
        await response.done.wait()
        return response

    def cancel_response(self, reason: str = "client_cancelled") -> bool:
        if self.active is None or self.active.held:
            return False
        self.active.cancel(reason)
        return True

    # --- barge-in ------------------------------------------------------------------------------

    def _barge_in(self, fire_ms: float) -> None:
        """The caller talks over the agent: stop whatever is sounding and what is being made."""
        if self.turn is not None and self.gate.window_start_ms is not None:
            # the interruption starts where the gate's window did (plus padding): anything the
            # turn picked up before that was under the agent's voice (echo residue, breath)
            start_ms = max(0.0, self.gate.window_start_ms - self.config.turn.prefix_padding_ms)
            if start_ms > self.turn.audio_start_ms:
                self.turn.stt.reset()
                self.turn.stt.append(self._history_since(start_ms))
                self.turn.audio_start_ms = self.turn.segment_start_ms = start_ms
        if self.turn is not None:
            self.turn.barged_in = True
            self._announce(self.turn)
        playing = self._response_of_item(self.playback.current_item)
        target = self.active if self.active is not None and not self.active.held else playing
        self.emit(ev.StageMark(stage="barge_in", response_id=target.id if target else None, detail={
            "fire_ms": fire_ms, "window_start_ms": self.gate.window_start_ms}))
        if target is not None and target.status == "in_progress":
            target.cancel("turn_detected")  # all four steps; truncation happens as it ends
        else:  # generation already finished; only its audio is still sounding
            self.playback.clear()
            if playing is not None:
                playing.truncate_to_played()
                # the caller cut it off: its read-only results are now stale
                self._record_results(*self.results.settle(playing.id, clean=False))

    def _judge_candidate(self, end_ms: float) -> None:
        """Pause while a possible interruption is judged; resume where it stopped if it was not one.

        A "mm-hmm" or a door slam costs the caller a pause of its own length, never the reply.
        """
        policy = self.config.bargein
        if self.gate.candidate and policy.pause_on_candidate and self._paused_at_ms is None:
            self._paused_at_ms = end_ms
            self.playback.pause()
        elif self._paused_at_ms is not None and (
                not self.gate.candidate or end_ms - self._paused_at_ms >= policy.resume_after_false_ms):
            self.emit(ev.StageMark(stage="false_interruption", detail={
                "paused_ms": end_ms - self._paused_at_ms}))
            self._paused_at_ms = None
            self.playback.resume()

    def response_by_id(self, response_id: str) -> Response | None:
        return next((r for r in reversed(self.responses) if r.id == response_id), None)

    @property
    def caller_speaking(self) -> bool:
        """The caller holds the floor: speaking, or paused inside a turn not yet committed.

        Without server VAD the open turn is only a buffer the client will commit: unknown."""
        return self.turn is not None and self.turn_detection

    def _response_of_item(self, item_id: str | None) -> Response | None:
        return next((r for r in reversed(self.responses) if r.item.id == item_id), None)

    def _on_frame_played(self, response_id: str, item_id: str, at_s: float) -> None:
        if response_id not in self._played_first:  # every 20 ms: look the response up only once
            self._played_first.add(response_id)
            response = self._response_of_item(item_id)
            self.emit(ev.StageMark(stage="first_audio_out", response_id=response_id,
                                   turn_id=response.turn_id if response else None))

    def _on_heard(self, response: Response) -> None:
        """The caller heard this response to its end (nothing was cut off)."""
        if response.heard_in_full:
            return
        response.heard_in_full = True
        self.emit(ev.StageMark(stage="heard_in_full", response_id=response.id, turn_id=response.turn_id))
        if self.ledger is not None and response.purpose in ("tool_result", "reminder"):
            for key in response.about_keys:
                row = self.ledger.get(key)
                if row is not None and row.state in ("committed", "failed") and not row.told:
                    self.ledger.mark_told(key)
        if response.purpose == "turn":
            self._maybe_remind()
