"""Typed events, named after the realtime-API events they mirror.

Every stage, the session, the WebSocket server, the logs and the benchmark speak this one
vocabulary. Each event carries `ts` (session clock seconds: simulated in scripted calls, real
otherwise) and `perf` (real monotonic seconds, for compute timings). Audio events also carry
audio-time milliseconds. `to_dict()` gives the realtime-API JSON shape (audio left out unless asked).
"""

from __future__ import annotations

import base64
import itertools
import json
from collections import deque
from dataclasses import dataclass, field, fields
from enum import IntEnum, StrEnum
from pathlib import Path
from typing import IO, Any, ClassVar

import numpy as np

from .clock import perf_s

_ids = itertools.count(1)


def new_id(prefix: str) -> str:
    """Short, process-unique ids in the realtime-API style (`item_001`, `resp_002`)."""
    return f"{prefix}_{next(_ids):04d}"


@dataclass(kw_only=True)
class Event:
    type: ClassVar[str] = "event"
    ts: float = 0.0
    perf: float = field(default_factory=perf_s)
    event_id: str = field(default_factory=lambda: new_id("event"))

    def to_dict(self, *, include_audio: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray):
                if include_audio:
                    pcm = (np.clip(value, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()
                    out[f.name] = base64.b64encode(pcm).decode("ascii")
                else:
                    out[f.name + "_samples"] = int(value.size)
                continue
            out[f.name] = value
        return out


# --- session ---------------------------------------------------------------------------------


@dataclass(kw_only=True)
class SessionCreated(Event):
    type: ClassVar[str] = "session.created"
    session: dict[str, Any]


@dataclass(kw_only=True)
class SessionUpdated(Event):
    type: ClassVar[str] = "session.updated"
    session: dict[str, Any]


# --- input audio -----------------------------------------------------------------------------


@dataclass(kw_only=True)
class SpeechStarted(Event):
    type: ClassVar[str] = "input_audio_buffer.speech_started"
    item_id: str
    audio_start_ms: int


@dataclass(kw_only=True)
class SpeechStopped(Event):
    type: ClassVar[str] = "input_audio_buffer.speech_stopped"
    item_id: str
    audio_end_ms: int


@dataclass(kw_only=True)
class InputCommitted(Event):
    type: ClassVar[str] = "input_audio_buffer.committed"
    item_id: str
    previous_item_id: str | None = None
    audio_start_ms: int = 0
    audio_end_ms: int = 0
    reason: str = "max_silence"  # "min_silence" (looked complete) | "early_silence" (sure) | "max_silence" | "client"


@dataclass(kw_only=True)
class InputCleared(Event):
    type: ClassVar[str] = "input_audio_buffer.cleared"


@dataclass(kw_only=True)
class TranscriptionDelta(Event):
    """A partial transcript: `stable` never changes again, `tentative` may."""

    type: ClassVar[str] = "conversation.item.input_audio_transcription.delta"
    item_id: str
    delta: str
    stable: str = ""
    tentative: str = ""
    content_index: int = 0


@dataclass(kw_only=True)
class TranscriptionCompleted(Event):
    type: ClassVar[str] = "conversation.item.input_audio_transcription.completed"
    item_id: str
    transcript: str
    content_index: int = 0


# --- conversation ----------------------------------------------------------------------------


@dataclass(kw_only=True)
class ItemCreated(Event):
    type: ClassVar[str] = "conversation.item.created"
    item: dict[str, Any]
    previous_item_id: str | None = None


@dataclass(kw_only=True)
class ItemDeleted(Event):
    type: ClassVar[str] = "conversation.item.deleted"
    item_id: str


@dataclass(kw_only=True)
class ItemTruncated(Event):
    type: ClassVar[str] = "conversation.item.truncated"
    item_id: str
    audio_end_ms: int
    content_index: int = 0
    transcript: str = ""


@dataclass(kw_only=True)
class ItemRetrieved(Event):
    type: ClassVar[str] = "conversation.item.retrieved"
    item: dict[str, Any]


# --- responses -------------------------------------------------------------------------------


@dataclass(kw_only=True)
class ResponseCreated(Event):
    type: ClassVar[str] = "response.created"
    response: dict[str, Any]


@dataclass(kw_only=True)
class OutputItemAdded(Event):
    type: ClassVar[str] = "response.output_item.added"
    response_id: str
    item: dict[str, Any]
    output_index: int = 0


@dataclass(kw_only=True)
class OutputItemDone(Event):
    """An output item is complete (a function call once its arguments are whole)."""

    type: ClassVar[str] = "response.output_item.done"
    response_id: str
    item: dict[str, Any]
    output_index: int = 0


@dataclass(kw_only=True)
class OutputTextDelta(Event):
    """Reply text of a text-only response (no voice), token by token."""

    type: ClassVar[str] = "response.output_text.delta"
    response_id: str
    item_id: str
    delta: str
    output_index: int = 0
    content_index: int = 0


@dataclass(kw_only=True)
class OutputAudioDelta(Event):
    """Agent audio, at most 100 ms a piece; `audio_ms` is its start within the item."""

    type: ClassVar[str] = "response.output_audio.delta"
    response_id: str
    item_id: str
    delta: np.ndarray
    sample_rate_hz: int
    audio_ms: float
    output_index: int = 0
    content_index: int = 0


@dataclass(kw_only=True)
class OutputTranscriptDelta(Event):
    type: ClassVar[str] = "response.output_audio_transcript.delta"
    response_id: str
    item_id: str
    delta: str
    output_index: int = 0
    content_index: int = 0


@dataclass(kw_only=True)
class FunctionCallArgumentsDelta(Event):
    type: ClassVar[str] = "response.function_call_arguments.delta"
    response_id: str
    item_id: str
    call_id: str
    delta: str
    output_index: int = 0


@dataclass(kw_only=True)
class FunctionCallArgumentsDone(Event):
    type: ClassVar[str] = "response.function_call_arguments.done"
    response_id: str
    item_id: str
    call_id: str
    name: str
    arguments: str
    output_index: int = 0


@dataclass(kw_only=True)
class ResponseDone(Event):
    """`response.status`: completed | cancelled | incomplete | failed."""

    type: ClassVar[str] = "response.done"
    response: dict[str, Any]


@dataclass(kw_only=True)
class Error(Event):
    type: ClassVar[str] = "error"
    error: dict[str, Any]


# --- local extensions (not in the hosted API; prefixed so clients can ignore them) ------------


class Milestone(StrEnum):
    """What an `x.stage` mark says happened. A member is its string on the wire and in logs."""

    # the VAD heard a caller's speech stop (detail: its end and where the voice ended, ms of input)
    SPEECH_STOPPED = "speech_stopped"
    STT_FINAL = "stt_final"  # a turn's final transcript (detail: passes, cadence)
    FINAL_PASS = "final_pass"  # the final pass begun at speech-stop finished, before any commit
    RESPONSE_START = "response_start"
    LLM_FIRST_TOKEN = "llm_first_token"
    LLM_DONE = "llm_done"  # the reply's last token
    FIRST_CHUNK = "first_chunk"  # the first text sent to the voice
    TTS_FIRST_AUDIO = "tts_first_audio"
    FIRST_AUDIO_OUT = "first_audio_out"  # the reply's first frame handed to the transport
    HEARD_IN_FULL = "heard_in_full"
    CONTEXT_FIT = "context_fit"  # older turns dropped to fit the model's context
    SPECULATION = "speculation"  # a held reply adopted or dropped (detail: source, outcome)
    BARGE_IN_PAUSE = "barge_in_pause"  # playback paused on a candidate
    BARGE_IN_LISTEN = "barge_in_listen"  # a candidate's verdict: not yet an interruption
    BARGE_IN_GATE = "barge_in_gate"  # the gate fired
    BARGE_IN = "barge_in"  # the reply was interrupted
    FALSE_INTERRUPTION = "false_interruption"  # the candidate was not one: playback resumed
    SLOW_CLIENT_DROPPED = "slow_client_dropped"  # a connection dropped a client that read too slowly


@dataclass(kw_only=True)
class StageMark(Event):
    """A pipeline milestone for timing: llm first token, first chunk, TTS first audio, played."""

    type: ClassVar[str] = "x.stage"
    stage: Milestone  # a string naming one (a plugin's, a test's) is taken as it and checked
    response_id: str | None = None
    turn_id: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        try:
            self.stage = Milestone(self.stage)
        except ValueError:  # a misspelt mark would go unread by every reader: fail where it is made
            raise ValueError(f"{self.stage!r} is no stage mark anyone reads: use a member of "
                             "Milestone (pipeline/base/events.py), adding it there if it is new") from None


@dataclass(kw_only=True)
class CallLog(Event):
    """A human-readable line for the call log (held audio, hang-ups, warnings)."""

    type: ClassVar[str] = "x.log"
    message: str
    level: str = "info"


def error_event(code: str, message: str, *, event_id: str | None = None,
                param: str | None = None) -> Error:
    kind = "invalid_request_error" if code != "server_error" else "server_error"
    error = {"type": kind, "code": code, "message": message, "event_id": event_id}
    if param is not None:
        error["param"] = param
    return Error(error=error)


class EventPhase(IntEnum):
    """When a session's event listener hears each event: phase by phase (`pipeline.base.listeners`)."""

    SESSION = 0  # the session's own bookkeeping (client control follows committed turns)
    OBSERVER = 1  # transports, printers, benchmarks, tests: after the session has seen it


class EventLog:
    """Collects a call's events; optionally writes them as JSON lines as they happen."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.events: list[Event] = []
        self._fh: IO[str] | None = open(path, "w", encoding="utf-8") if path else None  # noqa: SIM115

    def append(self, event: Event) -> None:
        self.events.append(event)
        if self._fh is not None:
            self._fh.write(json.dumps(event.to_dict(), default=str) + "\n")

    def of_type(self, *types: str) -> list[Event]:
        return [e for e in self.events if e.type in types]

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


EVENT_LOG_KEEP = 2000  # events kept per connection: a long call must not hold all its audio
EVENT_LOG_BYTES = 4 << 20  # and at most this much of them: 2000 audio deltas would be ~18 MB


class RecentEvents(EventLog):
    """The session's event log, keeping only the latest events, at most `keep` of them and
    `max_bytes` of them (an event's audio counts in full): a long call or a flood of long
    messages cannot grow it."""

    def __init__(self, keep: int = EVENT_LOG_KEEP, *, max_bytes: int = EVENT_LOG_BYTES) -> None:
        super().__init__()
        self.events = deque()  # type: ignore[assignment]
        self.keep = keep
        self.max_bytes = max_bytes
        self.bytes = 0
        self._sizes: deque[int] = deque()

    def append(self, event: Event) -> None:
        size = _size_of(event)
        self.events.append(event)
        self._sizes.append(size)
        self.bytes += size
        while len(self.events) > self.keep or (self.bytes > self.max_bytes and len(self.events) > 1):
            self.events.popleft()  # type: ignore[attr-defined]
            self.bytes -= self._sizes.popleft()

    def clear(self) -> None:
        self.events.clear()
        self._sizes.clear()
        self.bytes = 0


def _size_of(event: Event) -> int:
    """About what an event holds: its arrays' bytes and its strings' characters."""
    total = 200  # the object and its small fields
    for value in vars(event).values():
        if isinstance(value, np.ndarray):
            total += value.nbytes
        elif isinstance(value, str):
            total += len(value)
        elif isinstance(value, dict | list):
            total += len(str(value))
    return total
