"""Live audio: a microphone and speakers through PortAudio (sounddevice).

The microphone opens before the models load. Frames captured until a session is attached are
held (in order, up to `pickup_cap_ms`) and handed over first, so a caller who speaks at once is
not cut off. Agent audio goes to the speaker through a small jitter buffer that the output
callback drains, so event-loop stalls (model threads contend for the GIL) do not reach the ear.

PortAudio calls the callbacks on its own threads: they only copy, count and hand frames to the
event loop with `call_soon_threadsafe`; all session work stays on the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np

from ..base.audio import FRAME_SAMPLES, INPUT_RATE_HZ, PickupBuffer, StreamResampler
from ..base.clock import Clock
from ..base.config import CallPolicy
from ..base.errors import PipelineError
from ..base.listeners import Ordered
from ..base.protocols import CallInput, PlayedAudioPhase
from .sound_devices import LIST_HINT, Device, import_sounddevice, pick_format, resolve_device

ReferenceCallback = Callable[[np.ndarray, int], None]

_CONTIGUOUS_S = 0.005  # a frame starting this close to the previous one's end continues it


class Reframer:
    """Device blocks at any rate -> 20 ms frames at 16 kHz, with no sample lost or repeated."""

    def __init__(self, src_hz: int) -> None:
        self._resampler = StreamResampler(src_hz, INPUT_RATE_HZ) if src_hz != INPUT_RATE_HZ else None
        self._carry = np.zeros(0, np.float32)

    def process(self, block: np.ndarray) -> list[np.ndarray]:
        x = np.asarray(block, dtype=np.float32).reshape(-1)
        x = self._resampler.process(x) if self._resampler else x
        buf = np.concatenate([self._carry, x])  # always a fresh array: PortAudio reuses `block`
        n = len(buf) // FRAME_SAMPLES
        self._carry = buf[n * FRAME_SAMPLES:]
        return [buf[i * FRAME_SAMPLES:(i + 1) * FRAME_SAMPLES] for i in range(n)]

    @property
    def pending(self) -> int:
        """Samples (16 kHz) waiting for the rest of their frame."""
        return len(self._carry)


class SoundCardTransport:
    """Microphone in, speaker out, for one live session on this machine.

    input_device / output_device: a PortAudio device number or name (part of it is enough);
        None (default) takes the system default.
    block_ms: PortAudio block size (default 20 ms, one pipeline frame per callback).
    speakers: False (default) for headphones. True when the agent's audio can reach the
        microphone: every block played is then also passed to `on_reference` (the echo guard's
        reference) on the event loop thread.
    output_rate_hz: the rate agent audio is played at (default 22,050 Hz, the Piper voices');
        the device's default rate when it refuses this one. Other rates are resampled.
    buffer_ms: how far ahead of time the session may hand audio to the speaker (default 80 ms):
        the cushion against event-loop stalls, and the most `clear_output` ever has to drop.
    pickup_cap_ms: microphone audio held until a session is attached (default 5 s, the
        session's own pickup cap); beyond it the oldest frames are dropped.
    device_latency: PortAudio's suggested latency for both streams: "low" (default) for the
        quickest reply, or seconds (e.g. 0.1) where a busy machine makes the sound crackle.
    on_reference: `(samples16k, at_sample)` for every played block when `speakers` is set;
        `at_sample` is where that audio is due at the microphone, as an index into the 16 kHz
        input handed to the session (its input audio clock). Given here, it is the first of
        the `on_reference` listeners; a session with the echo guard on adds its own (this
        transport is an `EchoReferenceSink`).
    max_s: as a `Transport`, how long `run` listens (None: until the agent hangs up or Ctrl-C).
    """

    def __init__(self, *, input_device: Device = None, output_device: Device = None,
                 block_ms: int = 20, speakers: bool = False, output_rate_hz: int = 22_050,
                 buffer_ms: int = 80, pickup_cap_ms: float = CallPolicy.pickup_cap_ms,
                 device_latency: float | str = "low",
                 on_reference: ReferenceCallback | None = None, max_s: float | None = None) -> None:
        if block_ms <= 0 or buffer_ms <= 0:
            raise PipelineError(f"block_ms and buffer_ms must be positive, got {block_ms} and {buffer_ms}")
        self.input_device = input_device
        self.output_device = output_device
        self.block_ms = block_ms
        self.speakers = speakers
        self.output_rate_hz = output_rate_hz
        self.buffer_ms = buffer_ms
        self.device_latency = device_latency
        self.on_reference: Ordered[ReferenceCallback] = Ordered(PlayedAudioPhase)
        if on_reference is not None:
            self.on_reference.add(on_reference, PlayedAudioPhase.ECHO_GUARD)
        self.max_s = max_s
        self.hung_up = False
        self.on_hang_up: Callable[[], None] | None = None
        self.input_info: dict[str, Any] = {}
        self.output_info: dict[str, Any] = {}
        self.input_rate_hz = 0  # the rates the streams actually run at, once open
        self.stream_rate_hz = 0
        self._lock = threading.Lock()  # input: pickup vs attach; output: the jitter buffer
        self._loop: asyncio.AbstractEventLoop | None = None
        self._session: CallInput | None = None
        self._pickup = PickupBuffer(cap_ms=pickup_cap_ms)
        self._streams: list[Any] = []
        # input side (PortAudio input thread)
        self._reframer: Reframer | None = None
        self._in_channels = 1
        self._anchor: tuple[float, int] | None = None  # (capture time, 16 kHz index) of a sample
        self._in_latency_s = self._out_latency_s = 0.0
        self.frames_captured = 0
        self.frames_held = 0  # frames handed over by attach()
        self.input_overflows = 0
        # output side (jitter buffer shared by the loop thread and the PortAudio output thread)
        self._queue: deque[np.ndarray] = deque()
        self._queued = 0
        self._primed = False
        self._first_queued_t = 0.0
        self._ran_dry = False
        self._next_at: float | None = None
        self._resamplers: dict[int, StreamResampler] = {}
        self._ref_resampler: StreamResampler | None = None
        self._out_channels = 1
        self.samples_played = 0  # agent samples (at stream_rate_hz) handed to the device
        self.underruns = 0  # the buffer ran dry in the middle of continuous agent audio
        self.output_underflows = 0  # PortAudio's own count: the device was starved

    # --- lifecycle ------------------------------------------------------------------------------

    def open(self) -> None:
        """Open and start the microphone, then the speaker. Call before loading models."""
        if self._streams:
            return
        sd = import_sounddevice()
        with contextlib.suppress(RuntimeError):
            self._loop = asyncio.get_running_loop()
        self.input_info = resolve_device(sd, self.input_device, "input")
        self.input_rate_hz, self._in_channels = pick_format(sd, self.input_info, "input", INPUT_RATE_HZ)
        self._reframer = Reframer(self.input_rate_hz)
        self.output_info = resolve_device(sd, self.output_device, "output")
        self.stream_rate_hz, self._out_channels = pick_format(
            sd, self.output_info, "output", self.output_rate_hz)
        self._ref_resampler = StreamResampler(self.stream_rate_hz, INPUT_RATE_HZ)
        opening = "microphone"
        try:
            mic = self._add(sd.InputStream(
                device=self.input_info["index"], samplerate=self.input_rate_hz,
                channels=self._in_channels, dtype="float32", latency=self.device_latency,
                blocksize=self.input_rate_hz * self.block_ms // 1000, callback=self._on_input))
            self._in_latency_s = mic.latency
            mic.start()
            opening = "speaker"
            speaker = self._add(sd.OutputStream(
                device=self.output_info["index"], samplerate=self.stream_rate_hz,
                channels=self._out_channels, dtype="float32", latency=self.device_latency,
                blocksize=self.stream_rate_hz * self.block_ms // 1000, callback=self._on_output))
            self._out_latency_s = speaker.latency
            speaker.start()
        except sd.PortAudioError as exc:
            self.close()
            raise PipelineError(
                f"cannot open the {opening} ({exc}): close programs that hold it, or pick another "
                f"device with --input-device / --output-device ({LIST_HINT})") from exc

    def _add(self, stream: Any) -> Any:
        self._streams.append(stream)
        return stream

    def close(self) -> None:
        """Stop and close both streams; safe to call more than once."""
        streams, self._streams = self._streams, []
        for stream in streams:
            with contextlib.suppress(Exception):  # a device unplugged mid-call must not mask the exit
                stream.stop()
            with contextlib.suppress(Exception):
                stream.close()

    def __enter__(self) -> SoundCardTransport:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def describe(self) -> str:
        return (f"microphone: {self.input_info.get('name')} ({self.input_rate_hz} Hz); "
                f"speaker: {self.output_info.get('name')} ({self.stream_rate_hz} Hz)")

    @property
    def lead_s(self) -> float:
        """Give this to Playback as `lead_s`: frames then arrive ahead and back to back.

        Without a lead, Playback writes each frame when it is due and wakes a little late every
        time: slower than the device plays, which drains the cushion.
        """
        return self.buffer_ms / 1000.0

    # --- input ----------------------------------------------------------------------------------

    async def run(self, session: CallInput, clock: Clock) -> None:
        """Transport: hand the microphone to the session until the agent hangs up (end_call),
        `max_s` passes, or Ctrl-C."""
        self.open()
        self.attach(session)
        session.mark_ready()
        hung_up = asyncio.Event()
        self.on_hang_up = hung_up.set
        if self.hung_up:
            return
        await wait_for_hangup(self.max_s, hung_up)

    def attach(self, session: CallInput) -> None:
        """Hand the held frames to `session` in order, then live ones. Call on the loop thread."""
        loop = asyncio.get_running_loop()
        with self._lock:
            held = self._pickup.drain()
            self._loop, self._session = loop, session
        # Frames captured from here on are scheduled with call_soon_threadsafe, so they run
        # after this method returns: the held ones always go first, none twice.
        for frame in held:
            session.push_audio(frame)
        self.frames_held = len(held)

    @property
    def dropped_samples(self) -> int:
        """Held audio dropped (the oldest) because the session came after `pickup_cap_ms`."""
        return self._pickup.dropped_samples

    def _on_input(self, indata: np.ndarray, frames: int, time_info: Any, status: Any) -> None:
        if status.input_overflow:
            self.input_overflows += 1
        assert self._reframer is not None
        block = indata[:, 0] if self._in_channels == 1 else indata.mean(axis=1)
        for frame in self._reframer.process(block):
            self._deliver(frame)
        # The newest sample left the converter about one input latency ago. (The driver's own
        # ADC time is no better: through PulseAudio's ALSA plugin it is far off.)
        newest = self.frames_captured * FRAME_SAMPLES + self._reframer.pending
        self._anchor = (time_info.currentTime - self._in_latency_s, newest)

    def _deliver(self, frame: np.ndarray) -> None:
        with self._lock:
            self.frames_captured += 1
            session, loop = self._session, self._loop
            if session is None:
                self._pickup.hold(frame)
                return
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop closed before the stream stopped
                loop.call_soon_threadsafe(session.push_audio, frame)

    # --- output ---------------------------------------------------------------------------------

    def write_output(self, samples: np.ndarray, rate_hz: int, at_s: float) -> None:
        """AudioSink: queue one frame of agent audio for the speaker (due at clock time `at_s`)."""
        x = np.asarray(samples, dtype=np.float32).reshape(-1)
        contiguous = self._next_at is not None and abs(at_s - self._next_at) < _CONTIGUOUS_S
        self._next_at = at_s + len(x) / rate_hz
        if rate_hz != self.stream_rate_hz:
            if not contiguous or rate_hz not in self._resamplers:
                self._resamplers[rate_hz] = StreamResampler(rate_hz, self.stream_rate_hz)
            x = self._resamplers[rate_hz].process(x)
        with self._lock:
            if contiguous and self._ran_dry:
                self.underruns += 1  # the device went silent in the middle of a sentence
            self._ran_dry = False
            if not self._queued:
                self._first_queued_t = time.monotonic()
            self._queue.append(x)
            self._queued += len(x)

    def hang_up(self) -> None:
        """The session ended the call (end_call): `live` stops listening."""
        self.hung_up = True
        if self.on_hang_up is not None:
            self.on_hang_up()

    def clear_output(self) -> int:
        """Drop all agent audio not yet handed to the device; returns the samples dropped."""
        with self._lock:
            dropped = self._queued
            self._queue.clear()
            self._queued = 0
            self._primed = self._ran_dry = False
        self._next_at = None
        return dropped

    @property
    def queued_ms(self) -> float:
        """Agent audio waiting in the jitter buffer."""
        return self._queued * 1000.0 / self.stream_rate_hz if self.stream_rate_hz else 0.0

    def _on_output(self, outdata: np.ndarray, frames: int, time_info: Any, status: Any) -> None:
        if status.output_underflow:
            self.output_underflows += 1
        out = np.zeros(frames, np.float32)
        with self._lock:
            played = self._pull(out)
        outdata[:] = out[:, None]
        if played and self.speakers and self.on_reference:
            self._reference(out, time_info.currentTime + self._out_latency_s)

    def _pull(self, out: np.ndarray) -> int:
        """Fill `out` from the jitter buffer (lock held); returns the agent samples written."""
        if not self._primed:
            # Start once a cushion is queued, or once the first audio has waited as long as a
            # cushion takes to fill (a short last piece must not wait for audio that never comes).
            waited_ms = (time.monotonic() - self._first_queued_t) * 1000.0
            cushion = self.stream_rate_hz * self.buffer_ms // 2000
            if not self._queued or (self._queued < cushion and waited_ms < self.buffer_ms / 2):
                return 0
            self._primed = True
        filled = 0
        while filled < len(out) and self._queue:
            head = self._queue[0]
            take = min(len(head), len(out) - filled)
            out[filled:filled + take] = head[:take]
            if take == len(head):
                self._queue.popleft()
            else:
                self._queue[0] = head[take:]
            filled += take
        self._queued -= filled
        self.samples_played += filled
        if filled < len(out):  # ran dry: rebuild the cushion before playing again
            self._primed = False
            self._ran_dry = True
        return filled

    def _reference(self, out: np.ndarray, dac_time: float) -> None:
        assert self._ref_resampler is not None
        x16 = self._ref_resampler.process(out)
        anchor, loop = self._anchor, self._loop
        if anchor is None or loop is None:
            return
        # Both streams' times come from PortAudio's one clock: map the time this block sounds
        # onto the microphone's sample index, then onto the session's (minus dropped pickup).
        captured_at, index = anchor
        at_sample = index + round((dac_time - captured_at) * INPUT_RATE_HZ) - self.dropped_samples
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(self.on_reference, x16, at_sample)


async def wait_for_hangup(seconds: float | None, stop: asyncio.Event | None = None) -> None:
    """Return after `seconds`, when `stop` is set, or at Ctrl-C (a clean hang-up, no traceback)."""
    loop = asyncio.get_running_loop()
    stop = stop or asyncio.Event()
    try:
        loop.add_signal_handler(signal.SIGINT, stop.set)
        handled = True
    except (NotImplementedError, RuntimeError):  # not the main thread, or no signals here
        handled = False
    try:
        await asyncio.wait_for(stop.wait(), timeout=seconds)
    except TimeoutError:
        pass
    finally:
        if handled:
            loop.remove_signal_handler(signal.SIGINT)
