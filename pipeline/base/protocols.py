"""The stage interfaces: what each plugin must provide, and the optional capabilities it may declare.

Every entry-point group has one protocol here (`pipeline.vad` -> `VAD`, ... `pipeline.transport`
-> `Transport`). An optional capability is a protocol of its own, checked with `isinstance`, so a
stage says what it can do by having the method, and the code that uses it says what it looks for
in one named place instead of a scattered `hasattr`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from .clock import Clock
    from .listeners import Ordered

Messages = list[dict[str, Any]]


def takes_keyword(method: Callable[..., Any], name: str) -> bool:
    """Does a stage's method take this keyword: an optional per-call setting (an LLM's
    `temperature`, a voice's `speed`) that a stage has by accepting it, like a capability."""
    import inspect

    try:
        parameters = inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False
    return name in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())


# --- pipeline.vad ----------------------------------------------------------------------------


class VAD(Protocol):
    def probability(self, window: np.ndarray) -> float:
        """Speech probability of one 512-sample 16 kHz window (called inline, on the loop)."""


@runtime_checkable
class ForkableVAD(Protocol):
    """A recurrent VAD: each session gets its own state over the shared weights."""

    def fork(self) -> VAD: ...


# --- pipeline.stt ----------------------------------------------------------------------------


class STT(Protocol):
    def transcribe(self, audio: np.ndarray, *, final: bool) -> str:
        """One blocking pass over 16 kHz mono float32 audio (run in a thread).

        A backend may also take `prompt` (`takes_keyword` tells) on this and its other passes:
        the call's context as text that came before (`stages/stt_context.py`)."""


@runtime_checkable
class PrefixSTT(Protocol):
    """An STT whose final pass can take the words already confirmed as a forced prefix, so it
    decodes only the unconfirmed tail (`prefix_final` False: it declines)."""

    prefix_final: bool

    def transcribe_after(self, audio: np.ndarray, prefix: str) -> str:
        """The whole transcript of `audio`, beginning with `prefix` (forced, not decoded)."""


@runtime_checkable
class QuickSTT(Protocol):
    """An STT with a cheap pass over a whole turn (Whisper on a window sized to the audio), for a
    speculation to start from at speech-stop while the final pass runs (`quick_pass` False: it
    declines)."""

    quick_pass: bool

    def transcribe_quick(self, audio: np.ndarray) -> str | None:
        """The transcript of `audio`, or None where this pass looks wrong (the final decides)."""


@runtime_checkable
class ScoredSTT(Protocol):
    """An STT that says how sure it is of a pass: the decoder's mean log-probability per token
    (Whisper's `avg_logprob`; below -1.0 Whisper itself treats a decode as failed)."""

    def transcribe_scored(self, audio: np.ndarray, *, final: bool) -> tuple[str, float]:
        """(text, mean token log-probability) of one blocking pass."""


@dataclass(frozen=True)
class SpeechConfidence:
    """How sure a pass is that its words were spoken, over its segments (the worst of each):
    Whisper's segment no-speech probability, mean token log-probability and the text's gzip
    compression ratio (past 2.4 Whisper treats a decode as a repetition loop)."""

    avg_logprob: float = 0.0
    no_speech_prob: float = 0.0
    compression_ratio: float = 0.0
    # how many of the last words have no voice under them, where the pass timed its words
    # (Whisper writes them into the silence after the speech: `stages/unvoiced.py`)
    unvoiced_words: int = 0


@runtime_checkable
class ConfidentSTT(Protocol):
    """An STT that reports a pass's `SpeechConfidence` with its text."""

    def transcribe_confident(self, audio: np.ndarray, *, final: bool) -> tuple[str, SpeechConfidence]:
        """(text, confidence) of one blocking pass."""


# --- pipeline.turns --------------------------------------------------------------------------


class Completeness(Protocol):
    def probability(self, text: str, audio: np.ndarray | None = None) -> float:
        """How likely the caller has finished (0..1), from the latest transcript and, for
        signals that listen, the turn's 16 kHz audio so far (None when only text is known).
        Blocking: run in a thread."""


@runtime_checkable
class ContextCompleteness(Protocol):
    """A signal that reads the conversation before the open turn (a text end-of-turn model:
    "for two" ends a reply to "How many people?" and leaves "a table for two" open)."""

    def probability_in(self, text: str, audio: np.ndarray | None,
                       context: Sequence[tuple[str, str]]) -> float:
        """`probability`, after the last turns as (role, text) pairs, oldest first."""


# --- pipeline.llm ----------------------------------------------------------------------------


@dataclass
class Generation:
    """What a finished stream reports: why it stopped and what it cost."""

    finish_reason: str = "stop"  # "stop" | "length" | "cancelled"
    prompt_tokens: int = 0
    output_tokens: int = 0
    # of the prompt tokens, those the model already held evaluated from the last request (its
    # prefix cache: the instructions and earlier turns); None where the stage cannot tell
    cached_tokens: int | None = None


class LLM(Protocol):
    def stream(self, messages: Messages, *, cancel: threading.Event, grammar: str | None = None,
               max_tokens: int | None = None, result: Generation | None = None) -> Iterator[str]:
        """Yield text pieces; stop within one token once `cancel` is set. Blocking: run in a thread.
        A stage may also take `temperature` (a session's own, `takes_keyword` tells)."""

    def complete(self, messages: Messages, *, cancel: threading.Event | None = None,
                 **kwargs: Any) -> str:
        """The whole reply at once; stops early once `cancel` is set."""


@runtime_checkable
class CountingLLM(Protocol):
    """An LLM whose prompt can be measured: the conversation is fitted to its context window."""

    context_window: int  # tokens the model reads and writes in one request
    max_tokens: int  # the longest reply it will be asked for

    def count_tokens(self, messages: Messages) -> int: ...


@runtime_checkable
class PrefillLLM(Protocol):
    """An LLM that can evaluate a prompt ahead of the request for it (the caller's words so far,
    while the caller still speaks): the request then evaluates only what changed."""

    def prefill(self, messages: Messages, *, go_on: Callable[[], bool] | None = None,
                upto_words: bool = False, through_words: bool = False) -> int:
        """Evaluate this prompt now; the tokens evaluated (0: busy, or held already). Blocking:
        run in a thread. It stops soon after a request wants the model or `go_on` says no.
        `upto_words`: only up to where the last message's words begin; `through_words`: up to
        where they end (the final's words may go on after them)."""


@runtime_checkable
class ScoringLLM(Protocol):
    """An LLM that can score candidate first tokens (the `llm` completeness signal)."""

    def next_token_logprobs(self, messages: Messages, candidates: list[str]) -> dict[str, float]: ...


# --- pipeline.tts ----------------------------------------------------------------------------


class TTS(Protocol):
    sample_rate_hz: int

    def synthesize(self, text: str) -> np.ndarray:
        """One chunk of text to float32 audio at `sample_rate_hz`. Blocking: run in a thread.
        A voice may also take `speed` (1.0 its own rate; `takes_keyword` tells)."""


@runtime_checkable
class AsyncTTS(Protocol):
    """A voice that waits rather than computes (a network voice): awaited on the session clock."""

    async def synthesize_async(self, text: str, *, clock: Clock) -> np.ndarray: ...


# --- the output side of a transport ------------------------------------------------------------


class AudioSink(Protocol):
    def write_output(self, samples: np.ndarray, rate_hz: int, at_s: float) -> None:
        """Hand one frame of agent audio to the speaker (or file, or socket), due at `at_s`."""


@runtime_checkable
class BufferedSink(Protocol):
    """A sink with its own buffer (a socket, a sound card): frames may be handed out `lead_s`
    before they sound; those are sent but not yet heard."""

    lead_s: float


@runtime_checkable
class ClearableSink(Protocol):
    """A sink that can drop what it holds but has not yet sounded (barge-in)."""

    def clear_output(self) -> int: ...


@runtime_checkable
class HangUpSink(Protocol):
    """A line that can be hung up (end_call)."""

    def hang_up(self) -> None: ...


@runtime_checkable
class ConfirmedSink(Protocol):
    """A line whose far end says what has sounded (a carrier echoing marks): what the caller
    heard of an item is what it confirmed, and audio sent but not yet confirmed still sounds.
    The sink calls `on_confirmed()` (set by playback) whenever a confirmation arrives."""

    on_confirmed: Callable[[], None] | None

    def confirmed(self, item_id: str) -> int:
        """Samples of the item (at the agent's rate) that the far end says it played."""
        ...

    def unconfirmed(self, item_id: str | None = None) -> bool:
        """Audio of this item (of any, for None) was sent and is neither confirmed nor dropped."""
        ...


class PlayedAudioPhase(IntEnum):
    """Who hears agent audio as it sounds (`EchoReferenceSink.on_reference`, `Playback.on_audio`)."""

    ECHO_GUARD = 0  # the echo guard's reference: what to take out of the microphone


@runtime_checkable
class EchoReferenceSink(Protocol):
    """A speaker that knows when each block really sounds (a sound card's DAC time) and reports
    the echo guard's reference itself: `on_reference(samples16k, at_input_sample)`, called in
    `PlayedAudioPhase` order."""

    on_reference: Ordered[Callable[[np.ndarray, int], None]]


# --- pipeline.transport ----------------------------------------------------------------------


class CallInput(Protocol):
    """What a transport sees of a session."""

    @property
    def ready(self) -> bool:
        """The session takes caller audio now (before, it holds it: `mark_ready` ends that)."""
        ...

    @property
    def listeners(self) -> Ordered[Callable[[Any], None]]:
        """Its event listeners: a transport adds its own with `ev.EventPhase.OBSERVER`."""
        ...

    @property
    def idle(self) -> bool: ...

    def push_audio(self, frame: np.ndarray) -> None: ...

    def mark_ready(self) -> None: ...

    def log(self, message: str, *, level: str = "info") -> None: ...


class Transport(AudioSink, Protocol):
    """A call's two ends: `run` feeds caller audio into the session until the call is over;
    agent audio comes back through `write_output` (and the sink capabilities above)."""

    async def run(self, session: CallInput, clock: Clock) -> None: ...


@runtime_checkable
class RecordingTransport(Protocol):
    """A transport that can write the call it carried (caller left, agent right)."""

    def save(self, path: str | Path, *, rate_hz: int = 22_050) -> None: ...


__all__ = [
    "VAD", "ForkableVAD", "STT", "Completeness", "Generation", "LLM", "CountingLLM", "ScoringLLM", "TTS",
    "AsyncTTS", "AudioSink", "BufferedSink", "ClearableSink",
    "ConfirmedSink", "HangUpSink", "EchoReferenceSink", "PlayedAudioPhase",
    "CallInput", "Transport", "RecordingTransport", "Messages",
]
