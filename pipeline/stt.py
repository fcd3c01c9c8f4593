"""Streaming STT on faster-whisper: stable partials while the caller speaks, then one final.

`WhisperSTT` (`pipeline/stages/whisper.py`) is the model: one blocking pass over 16 kHz audio.
`StreamingTranscriber` turns any such backend into a stream: partial passes at a budget-aware
cadence with LocalAgreement-2 (a word is stable once two consecutive passes agree on it, and is
never revised), and a final pass started at VAD speech-stop so the transcript is ready when the
turn is committed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .base.audio import INPUT_RATE_HZ
from .base.clock import Clock, cancel_and_wait, perf_s
from .base.protocols import STT as STTBackend
from .base.protocols import (
    ConfidentSTT,
    PrefixSTT,
    QuickSTT,
    ScoredSTT,
    SpeechConfidence,
    takes_keyword,
)
from .stages.stt_text import agreed_prefix, same_words, word_errors, words_within
from .stages.whisper import WINDOWS, WhisperSTT

# silence kept after the VAD's speech end in a final pass: the speech-stop confirmation's 160 ms
# and a little more, so a soft last consonant the VAD scored low is still heard
SPEECH_PAD_MS = 250
__all__ = ["WINDOWS", "Partial", "StreamingTranscriber", "WhisperSTT", "agreed_prefix", "same_words",
           "word_errors", "words_within"]


@dataclass
class PartialStats:
    passes: int = 0
    finals_discarded: int = 0  # final passes made stale because the caller resumed
    skipped: int = 0  # partial ticks that found the previous pass still running
    compute_s: float = 0.0
    final_compute_s: float = 0.0
    early_compute_s: float = 0.0  # passes before speech-stop for a speculation (`start_early_pass`)
    speech_s: float = 0.0

    @property
    def cadence_hz(self) -> float:
        return self.passes / self.speech_s if self.speech_s else 0.0


@dataclass
class Partial:
    stable: str
    tentative: str
    delta: str  # newly stable text since the last partial


@dataclass
class _TurnAudio:
    chunks: list[np.ndarray] = field(default_factory=list)
    samples: int = 0

    def append(self, x: np.ndarray) -> None:
        self.chunks.append(x)
        self.samples += len(x)

    def array(self) -> np.ndarray:
        if len(self.chunks) > 1:
            self.chunks = [np.concatenate(self.chunks)]
        return self.chunks[0] if self.chunks else np.zeros(0, np.float32)


class StreamingTranscriber:
    """One turn's audio in, partials and a final out; runs passes off the event loop."""

    def __init__(self, backend: STTBackend, clock: Clock, *, partial_interval_ms: int | None = None,
                 min_partial_ms: int = 300, prompt: str | None = None) -> None:
        """A full-window tiny.en pass over a few seconds takes a median 447 ms on 2 cores, so a
        pass every 500 ms keeps at most one in flight; a sized one 93 ms, so every 250 ms
        (`python -m bench.stt_window`, bench/results/2026-12-01-stt-window.md; the backend's
        `partial_interval_ms` says which, 500 ms when it says nothing). Under 300 ms of audio
        Whisper mostly hallucinates."""
        self.backend = backend
        self.clock = clock
        # what the call is about, for every pass of a backend that takes it (stages/stt_context.py)
        self._context: dict[str, str] = (
            {"prompt": prompt} if prompt and takes_keyword(backend.transcribe, "prompt") else {})
        if partial_interval_ms is None:
            partial_interval_ms = getattr(backend, "partial_interval_ms", 500)
        self.partial_interval_samples = partial_interval_ms * INPUT_RATE_HZ // 1000
        self.min_partial_samples = min_partial_ms * INPUT_RATE_HZ // 1000
        # a cheap pass over the whole turn at speech-stop, for a speculation (QuickSTT)
        self.quick = isinstance(backend, QuickSTT) and backend.quick_pass
        self.on_partial: Callable[[Partial], None] | None = None
        self._partial_task: asyncio.Task[None] | None = None
        self._final_task: asyncio.Task[str] | None = None
        self._quick_task: asyncio.Task[str | None] | None = None
        self._early_task: asyncio.Task[str] | None = None
        self._generation = 0
        self.reset()

    def reset(self) -> None:
        """Forget the turn (cancelling passes in flight) and start a new one."""
        for task in (self._partial_task, self._final_task, self._quick_task, self._early_task):
            if task is not None and not task.done():
                task.cancel()
        self._generation += 1
        self.audio = _TurnAudio()
        self.stable_words: list[str] = []
        self._last_hypothesis: list[str] = []
        self._last_partial_at = 0
        self._partial_task = None
        self._final_task = None
        self._quick_task = None
        self._early_task = None
        self.latest_text = ""
        self.logprobs: dict[str, float] = {}  # text -> how sure the pass that wrote it was
        self.confidences: dict[str, SpeechConfidence] = {}  # the same, in full, where known
        self.speech_end_samples: int | None = None  # where the VAD heard the speech end
        self.stats = PartialStats()

    def append(self, samples: np.ndarray) -> None:
        self.audio.append(samples)

    def partial_due(self) -> bool:
        return (self.audio.samples >= self.min_partial_samples
                and self.audio.samples - self._last_partial_at >= self.partial_interval_samples)

    def poll_partial(self) -> None:
        """Start a partial pass if one is due; while one runs, skip (never queue) the tick.

        Results reach `on_partial`. Skipping keeps a slow CPU from falling behind real time.
        """
        if not self.partial_due():
            return
        self._last_partial_at = self.audio.samples
        if self._partial_task is not None and not self._partial_task.done():
            self.stats.skipped += 1
            return
        audio = self.audio.array().copy()
        self._partial_task = asyncio.ensure_future(self._run_partial(audio))

    async def _run_partial(self, audio: np.ndarray) -> None:
        generation = self._generation
        text = await self._timed(audio, final=False)
        if self.on_partial is not None and generation == self._generation:
            self.on_partial(self._agree(text))

    def _agree(self, text: str) -> Partial:
        words = text.split()
        agreed = agreed_prefix(self._last_hypothesis, words)
        new_stable: list[str] = []
        if agreed > len(self.stable_words):
            new_stable = words[len(self.stable_words):agreed]
            self.stable_words += new_stable
        self._last_hypothesis = words
        keep = agreed_prefix(self.stable_words, words)
        tentative = words[keep:] if keep == len(self.stable_words) else words[len(self.stable_words):]
        self.latest_text = " ".join(self.stable_words + tentative)
        return Partial(" ".join(self.stable_words), " ".join(tentative), " ".join(new_stable))

    async def _timed(self, audio: np.ndarray, *, final: bool, prefix: str = "", early: bool = False) -> str:
        t0 = perf_s()
        backend, context = self.backend, self._context
        if prefix and isinstance(backend, PrefixSTT) and backend.prefix_final:
            text = await self.clock.run_in_thread(lambda: backend.transcribe_after(audio, prefix, **context))
        elif isinstance(backend, ConfidentSTT):
            text, confidence = await self.clock.run_in_thread(
                lambda: backend.transcribe_confident(audio, final=final, **context))
            self.logprobs[text.strip()] = confidence.avg_logprob
            self.confidences[text.strip()] = confidence
        elif isinstance(backend, ScoredSTT):
            text, logprob = await self.clock.run_in_thread(
                lambda: backend.transcribe_scored(audio, final=final, **context))
            self.logprobs[text.strip()] = logprob
        else:
            text = await self.clock.run_in_thread(lambda: backend.transcribe(audio, final=final, **context))
        spent = perf_s() - t0
        if early:
            self.stats.early_compute_s += spent
        elif final:
            self.stats.final_compute_s += spent
        else:
            self.stats.passes += 1
            self.stats.compute_s += spent
        return text

    def start_quick_pass(self) -> asyncio.Task[str | None]:
        """At VAD speech-stop, just before `start_final`: the backend's quick pass over the whole
        turn, all its words (the last partial began up to a cadence before the speech ended),
        ready soon after speech-stop (a sized pass): a speculation's start while the final pass, the one the
        reply must agree with, still runs. Its text is None where the quick pass declined."""
        if self._quick_task is not None and not self._quick_task.done():
            self._quick_task.cancel()
        backend, audio, context = self.backend, self.audio.array().copy(), self._context
        assert isinstance(backend, QuickSTT)
        self._quick_task = asyncio.ensure_future(
            self.clock.run_in_thread(lambda: backend.transcribe_quick(audio, **context)))
        return self._quick_task

    async def settled_pass(self, task: asyncio.Task[str] | asyncio.Task[str | None]) -> str | None:
        """A quick or early pass's text, or None: it declined, the caller resumed, or it failed
        (the final pass, which a failure would fail too, says so; a speculation only waits)."""
        try:
            text = await asyncio.shield(task)
        except (asyncio.CancelledError, Exception):
            return None
        return text if task is self._quick_task or task is self._early_task else None

    def mark_speech_end(self, samples: int | None) -> None:
        """The VAD heard the speech end this many samples into the turn's audio (None: the
        caller speaks again). A final pass then reads no further than that and `SPEECH_PAD_MS`:
        Whisper writes words out of silence ("and momentum." for a "mm hmm" followed by a
        second of it), and a pass started at commit would otherwise read all the pause."""
        self.speech_end_samples = samples

    def _final_audio(self) -> np.ndarray:
        audio = self.audio.array()
        if self.speech_end_samples is not None:
            audio = audio[:self.speech_end_samples + SPEECH_PAD_MS * INPUT_RATE_HZ // 1000]
        return audio.copy()

    def start_final(self) -> asyncio.Task[str]:
        """At VAD speech-stop: transcribe everything heard so far in the background."""
        if self._final_task is not None and not self._final_task.done():
            self._final_task.cancel()
        # LocalAgreement never revises a stable word, so the final may start from them
        self._final_task = asyncio.ensure_future(self._timed(self._final_audio(), final=True,
                                                             prefix=" ".join(self.stable_words)))
        return self._final_task

    def start_early_pass(self) -> asyncio.Task[str]:
        """Before speech-stop, as the final pass would run now: its words start a speculation
        only. The final pass still runs at speech-stop, over the audio it always read (a little
        less silence changes Whisper's words on one turn in eight: bench/README.md)."""
        if self._early_task is not None and not self._early_task.done():
            self._early_task.cancel()
        self._early_task = asyncio.ensure_future(self._timed(
            self._final_audio(), final=True, prefix=" ".join(self.stable_words), early=True))
        return self._early_task

    async def settled_final(self, task: asyncio.Task[str]) -> str | None:
        """The text of a final pass started by `start_final`, or None if it was discarded or
        superseded (the caller resumed) before it finished."""
        try:
            text = await asyncio.shield(task)
        except asyncio.CancelledError:
            return None
        return text if task is self._final_task else None

    def sure_of(self, text: str, min_logprob: float) -> bool:
        """A pass wrote `text` at least this sure (True when the backend gives no score)."""
        return self.logprobs.get(text.strip(), 0.0) >= min_logprob

    def audio_tail(self, seconds: float) -> np.ndarray:
        """The last `seconds` of the turn's audio (what an audio end-of-turn model reads)."""
        audio = self.audio.array()
        return audio[-int(seconds * INPUT_RATE_HZ):]

    def discard_final(self) -> None:
        """The caller resumed: the pending final (and quick or early pass) no longer covers the turn."""
        for task in (self._quick_task, self._early_task):
            if task is not None and not task.done():
                task.cancel()
        self._quick_task = self._early_task = None
        if self._final_task is not None:
            self.stats.finals_discarded += 1
            if not self._final_task.done():
                self._final_task.cancel()
        self._final_task = None

    @property
    def partial_running(self) -> bool:
        """A partial pass is under way (its words come when it lands)."""
        return self._partial_task is not None and not self._partial_task.done()

    @property
    def final_ready(self) -> bool:
        return self._final_task is not None and self._final_task.done() and not self._final_task.cancelled()

    @property
    def final_running(self) -> bool:
        """A final pass over the whole turn is under way (started at speech-stop)."""
        return self._final_task is not None and not self._final_task.done()

    def peek_final(self) -> str | None:
        if self.final_ready:
            assert self._final_task is not None
            return self._final_task.result() if self._final_task.exception() is None else None
        return None

    async def final(self) -> str:
        """The final transcript of the whole turn (reusing the pass started at speech-stop)."""
        if self._final_task is None:  # none pending (a resume discarded it): transcribe now
            self.start_final()
        assert self._final_task is not None
        text = await self._final_task
        self.stats.speech_s = self.audio.samples / INPUT_RATE_HZ
        self.latest_text = text
        return text

    async def aclose(self) -> None:
        await cancel_and_wait(self._partial_task, self._final_task, self._quick_task, self._early_task)
