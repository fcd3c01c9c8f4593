"""Streaming STT on faster-whisper: stable partials while the caller speaks, then one final.

`WhisperSTT` is the model (one blocking pass over 16 kHz audio). `StreamingTranscriber` turns any
such backend into a stream: partial passes at a budget-aware cadence with LocalAgreement-2
(a word is stable once two consecutive passes agree on it, and is never revised), and a final
pass started at VAD speech-stop so the transcript is ready when the turn is committed.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .base.audio import INPUT_RATE_HZ
from .base.clock import Clock, cancel_and_wait, perf_s
from .base.cpu import default_threads
from .base.errors import ConfigError, ModelMissingError
from .base.models import model_file
from .base.protocols import STT as STTBackend
from .base.protocols import PrefixSTT, QuickSTT, ScoredSTT
from .stages.stt_text import agreed_prefix, same_words, word_errors, words_within
from .stages.stt_window import FULL_FRAMES, SizedDecoder, Window, WindowPass


class WhisperSTT:
    """faster-whisper (CTranslate2). Options are chosen for latency, each for a stated reason."""

    def __init__(
        self,
        *,
        model_path: str = "stt/whisper-tiny.en",
        device: str = "cpu",
        compute_type: str = "auto",  # int8 on CPU, float16 on CUDA: fastest with no WER loss
        language: str = "en",  # fixed: skips language detection (a full extra encoder pass)
        beam_size: int = 1,  # greedy: ~2x faster than beam 5; jfk.wav WER is equal on tiny.en
        threads: int | None = None,  # CTranslate2 intra-op threads; None: pipeline.base.cpu's split
        # final pass: force the words LocalAgreement confirmed as the decoder's prefix and decode
        # only the tail. Off: a partial's misheard word is then kept for good ("asked not" in
        # jfk.wav's final with AVX2 kernels, plus a hallucinated trailing "I"), and the encoder
        # costs the same either way (bench/README.md)
        prefix_final: bool = False,
        # encoder window: "full" pads every pass to Whisper's 30 s; "sized" encodes the audio plus
        # window_margin_ms (at least window_floor_ms) and redoes on the full window a pass that
        # looks wrong (pipeline/stages/stt_window.py); "sized-final" / "sized-partials" size only
        # those passes. Full by default: sized finals, no worse by word error rate, drop closing
        # punctuation and wrote "order 50 120" for "order? 5120." (bench/README.md)
        window: str = "full",
        window_margin_ms: int = 2000,
        window_floor_ms: int = 1000,
        # a partial pass every this much new audio; None: 250 ms when partials are sized (a pass
        # over 3 s costs ~100 ms, so one stays in flight at most), 500 ms on the full window
        # (~450 ms a pass on 2 cores)
        partial_interval_ms: int | None = None,
        # at speech-stop, before the final pass: one pass over the turn on a sized window
        # (~0.1 s, not redone when doubtful), for a speculation to start from while the final
        # pass runs; the reply is adopted only if the final says the same words
        # (response.speculate_from = "quick"; bench/results/2026-12-01-wire-ab.md)
        quick_pass: bool = True,
    ) -> None:
        from faster_whisper import WhisperModel

        if window not in WINDOWS:
            raise ConfigError(f"stt.window = {window!r} is not allowed; use one of: {', '.join(WINDOWS)}")
        path = model_file(model_path)
        if not (path / "model.bin").is_file():
            raise ModelMissingError(path / "model.bin", "Whisper model")
        if compute_type == "auto":
            compute_type = "float16" if device == "cuda" else "int8"
        self.model_path = str(path)
        self.language = language if not path.name.endswith(".en") or language == "en" else "en"
        self.beam_size = beam_size
        self.prefix_final = prefix_final
        self.threads = threads if threads is not None else default_threads("stt")
        self._model = WhisperModel(str(path), device=device, compute_type=compute_type,
                                   cpu_threads=self.threads)
        self._lock = threading.Lock()  # one inference at a time on this model
        if partial_interval_ms is not None and partial_interval_ms < 100:
            raise ConfigError(f"stt.partial_interval_ms = {partial_interval_ms} is too short; "
                              "use 100 ms or more (a pass takes ~100 ms even on a sized window)")
        self.quick_pass = quick_pass
        self._quick_window = Window(window_margin_ms, window_floor_ms)
        self.window = self._quick_window if window != "full" else None
        # "sized-final": partials on the full window; "sized-partials": only partials sized
        self.window_partials = window in ("sized", "sized-partials")
        self.window_final = window in ("sized", "sized-final")
        self.partial_interval_ms = (partial_interval_ms if partial_interval_ms is not None
                                    else 250 if self.window_partials else 500)
        self._sized_decoder: SizedDecoder | None = None  # made at the first sized pass
        self.last_pass: WindowPass | None = None  # the last sized pass, kept or redone
        self.window_stats: Counter[str] = Counter()  # passes kept sized, on the full window, redone why

    def transcribe(self, audio: np.ndarray, *, final: bool) -> str:
        return self._decode(audio, prefix=None, final=final)[0]

    def transcribe_scored(self, audio: np.ndarray, *, final: bool) -> tuple[str, float]:
        return self._decode(audio, prefix=None, final=final)

    def transcribe_after(self, audio: np.ndarray, prefix: str) -> str:
        return self._decode(audio, prefix=prefix or None, final=True)[0]

    def _decode(self, audio: np.ndarray, *, prefix: str | None, final: bool) -> tuple[str, float]:
        """The text, and the lowest segment's mean token log-probability (0.0 for no segment)."""
        audio = np.asarray(audio, dtype=np.float32)
        with self._lock:
            self.last_pass = None
            if self.window is not None and (self.window_final if final else self.window_partials):
                done = self._decode_sized(audio, prefix, self.window)
                if done is not None:
                    return done
            self.window_stats["full"] += 1
            return self._decode_full(audio, prefix)

    def transcribe_quick(self, audio: np.ndarray) -> str | None:
        """One pass on a window sized to `audio`, or None: off, the audio fills the full window
        anyway, or the pass looks wrong (no redo: the final pass follows at once)."""
        if not self.quick_pass:
            return None
        audio = np.asarray(audio, dtype=np.float32)
        with self._lock:
            features = self._sized.features(audio)
            frames = self._quick_window.frames(features.shape[-1])
            if frames >= FULL_FRAMES:
                return None
            done = self._sized.decode(features, frames, prefix=None,
                                      max_new_tokens=self._quick_window.max_new_tokens(features.shape[-1]))
            self.window_stats[f"quick {done.doubt or 'sized'}"] += 1
            return done.text if done.doubt is None else None

    @property
    def _sized(self) -> SizedDecoder:
        """The sized-window decoder (its tokenizer and suppression list), only once it is used:
        the default full window never needs it."""
        if self._sized_decoder is None:
            self._sized_decoder = SizedDecoder(self._model, language=self.language,
                                               beam_size=self.beam_size)
        return self._sized_decoder

    def _decode_sized(self, audio: np.ndarray, prefix: str | None,
                      window: Window) -> tuple[str, float] | None:
        """A pass on a window sized to `audio`, or None when the full window should do it: the
        audio fills it anyway, or the sized pass looks wrong (`WindowPass.doubt`)."""
        features = self._sized.features(audio)
        frames = window.frames(features.shape[-1])
        if frames >= FULL_FRAMES:
            return None
        self.last_pass = done = self._sized.decode(
            features, frames, prefix=prefix, max_new_tokens=window.max_new_tokens(features.shape[-1]))
        doubt = done.doubt
        self.window_stats[doubt or "sized"] += 1
        return (done.text, done.avg_logprob) if doubt is None else None

    def _decode_full(self, audio: np.ndarray, prefix: str | None) -> tuple[str, float]:
        segments, _ = self._model.transcribe(
            audio,
            language=self.language,
            beam_size=self.beam_size,
            without_timestamps=True,  # we never use them; saves decoder steps
            condition_on_previous_text=False,  # one short utterance: nothing to condition on
            temperature=0.0,  # no fallback re-decodes: bounded latency
            vad_filter=False,  # our own VAD already cut the turn
            prefix=prefix,  # the output still begins with it
        )
        segments = list(segments)
        text = " ".join(s.text.strip() for s in segments).strip()
        return text, min((s.avg_logprob for s in segments), default=0.0)


WINDOWS = ("full", "sized", "sized-final", "sized-partials")
__all__ = ["WINDOWS", "Partial", "StreamingTranscriber", "WhisperSTT", "agreed_prefix", "same_words",
           "word_errors", "words_within"]

@dataclass
class PartialStats:
    passes: int = 0
    finals_discarded: int = 0  # final passes made stale because the caller resumed
    skipped: int = 0  # partial ticks that found the previous pass still running
    compute_s: float = 0.0
    final_compute_s: float = 0.0
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
                 min_partial_ms: int = 300) -> None:
        """A full-window tiny.en pass over a few seconds takes ~0.45 s on 2 cores (bench/), so a
        pass every 500 ms keeps at most one in flight; a sized one ~0.1 s, so every 250 ms (the
        backend's `partial_interval_ms` says which, 500 ms when it says nothing). Under 300 ms
        of audio Whisper mostly hallucinates."""
        self.backend = backend
        self.clock = clock
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
        self._generation = 0
        self.reset()

    def reset(self) -> None:
        """Forget the turn (cancelling passes in flight) and start a new one."""
        for task in (self._partial_task, self._final_task, self._quick_task):
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
        self.latest_text = ""
        self.logprobs: dict[str, float] = {}  # text -> how sure the pass that wrote it was
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

    async def _timed(self, audio: np.ndarray, *, final: bool, prefix: str = "") -> str:
        t0 = perf_s()
        backend = self.backend
        if prefix and isinstance(backend, PrefixSTT) and backend.prefix_final:
            text = await self.clock.run_in_thread(lambda: backend.transcribe_after(audio, prefix))
        elif isinstance(backend, ScoredSTT):
            text, logprob = await self.clock.run_in_thread(
                lambda: backend.transcribe_scored(audio, final=final))
            self.logprobs[text.strip()] = logprob
        else:
            text = await self.clock.run_in_thread(lambda: backend.transcribe(audio, final=final))
        spent = perf_s() - t0
        if final:
            self.stats.final_compute_s += spent
        else:
            self.stats.passes += 1
            self.stats.compute_s += spent
        return text

    def start_quick_pass(self) -> asyncio.Task[str | None]:
        """At VAD speech-stop, just before `start_final`: the backend's quick pass over the whole
        turn, all its words (the last partial began up to a cadence before the speech ended),
        ready ~0.1 s after speech-stop: a speculation's start while the final pass, the one the
        reply must agree with, still runs. Its text is None where the quick pass declined."""
        if self._quick_task is not None and not self._quick_task.done():
            self._quick_task.cancel()
        backend, audio = self.backend, self.audio.array().copy()
        assert isinstance(backend, QuickSTT)
        self._quick_task = asyncio.ensure_future(
            self.clock.run_in_thread(lambda: backend.transcribe_quick(audio)))
        return self._quick_task

    async def settled_quick(self, task: asyncio.Task[str | None]) -> str | None:
        """The quick pass's text, or None: it declined, the caller resumed, or it failed (the
        final pass, which a failure would fail too, says so; a speculation only waits)."""
        try:
            text = await asyncio.shield(task)
        except (asyncio.CancelledError, Exception):
            return None
        return text if task is self._quick_task else None

    def start_final(self) -> asyncio.Task[str]:
        """At VAD speech-stop: transcribe everything heard so far in the background."""
        if self._final_task is not None and not self._final_task.done():
            self._final_task.cancel()
        # LocalAgreement never revises a stable word, so the final may start from them
        self._final_task = asyncio.ensure_future(self._timed(self.audio.array().copy(), final=True,
                                                             prefix=" ".join(self.stable_words)))
        return self._final_task

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
        """The caller resumed: the pending final no longer covers the turn."""
        if self._quick_task is not None and not self._quick_task.done():
            self._quick_task.cancel()
        self._quick_task = None
        if self._final_task is not None:
            self.stats.finals_discarded += 1
            if not self._final_task.done():
                self._final_task.cancel()
        self._final_task = None

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
        await cancel_and_wait(self._partial_task, self._final_task, self._quick_task)
