"""The sound-card transport on a real PortAudio device: a PulseAudio null sink whose monitor is the
default microphone (scripts/null_audio_device.sh). What the transport plays comes back on its own
microphone, so playback, clearing and capture are checked by listening, not by mocks.

Needs the Debian packages libportaudio2 and pulseaudio (which brings pulseaudio-utils and
libasound2-plugins); without them the device tests skip and say so.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from pipeline.base.audio import FRAME_SAMPLES, INPUT_RATE_HZ, resample
from pipeline.base.errors import PipelineError
from pipeline.transports.live import add_live_args, live_main
from pipeline.transports.sound_devices import import_sounddevice
from pipeline.transports.soundcard import Reframer, SoundCardTransport, wait_for_hangup

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "null_audio_device.sh"
SINK = "pipeline_null"
PACKAGES = "libportaudio2 pulseaudio"
FRAME_S = FRAME_SAMPLES / INPUT_RATE_HZ
QUESTION = "What time does the pharmacy open tomorrow?"


def _tone(hz: float, seconds: float, rate_hz: int, amplitude: float = 0.5) -> np.ndarray:
    t = np.arange(int(seconds * rate_hz)) / rate_hz
    return (amplitude * np.sin(2 * np.pi * hz * t)).astype(np.float32)


def _rms(frame: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(frame))))


def _words(text: str) -> set[str]:
    return set(re.sub(r"[^a-z' ]+", " ", text.lower()).split())


def _dominant_hz(x: np.ndarray, rate_hz: int = INPUT_RATE_HZ) -> float:
    spectrum = np.abs(np.fft.rfft(x * np.hanning(len(x))))
    return float(np.argmax(spectrum) * rate_hz / len(x))


class NullDevice:
    """The test's side of the null sink: a second speaker that plays caller audio into it.

    It also keeps the sink awake: an idle null sink renders only every ~2 s, so a microphone
    opened on it would wait that long for its first frame.
    """

    def __init__(self, sd: ModuleType) -> None:
        self._lock = threading.Lock()
        self._queue: deque[np.ndarray] = deque()
        self.stream = sd.OutputStream(samplerate=INPUT_RATE_HZ, channels=1, dtype="float32",
                                      latency="low", callback=self._play)
        self.stream.start()

    def say(self, audio16k: np.ndarray) -> None:
        with self._lock:
            self._queue.append(np.asarray(audio16k, np.float32))

    def _play(self, outdata: np.ndarray, frames: int, time_info: Any, status: Any) -> None:
        out = np.zeros(frames, np.float32)
        filled = 0
        with self._lock:
            while filled < frames and self._queue:
                head = self._queue[0]
                take = min(len(head), frames - filled)
                out[filled:filled + take] = head[:take]
                self._queue[0] = head[take:]
                if take == len(head):
                    self._queue.popleft()
                filled += take
        outdata[:, 0] = out


@pytest.fixture(scope="session")
def null_device() -> Iterator[NullDevice]:
    """A running null sink for this process; the daemon is left running for the next run."""
    try:
        sd = import_sounddevice()
    except PipelineError as exc:
        pytest.skip(f"{exc} (the device tests need the Debian packages {PACKAGES})")
    if not (shutil.which("pulseaudio") and shutil.which("pactl")):
        pytest.skip(f"pulseaudio is not installed: apt-get install {PACKAGES}")
    done = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"{SCRIPT.name} failed:\n{done.stdout}{done.stderr}"
    # Select the null sink even where a desktop server with real devices is running.
    saved = {k: os.environ.get(k) for k in ("PULSE_SINK", "PULSE_SOURCE")}
    os.environ.update(PULSE_SINK=SINK, PULSE_SOURCE=f"{SINK}.monitor")
    # PortAudio lists devices once, at import; the daemon may be newer than that list.
    sd._terminate()
    sd._initialize()
    if sd.default.device[0] < 0 or sd.default.device[1] < 0:
        pytest.skip("PortAudio sees no device although PulseAudio runs: ALSA's pulse plugin is "
                    "missing (apt-get install libasound2-plugins)")
    device = NullDevice(sd)
    yield device
    device.stream.close()
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


class Recorder:
    """A stand-in session that keeps every frame pushed to it, in order."""

    def __init__(self) -> None:
        self.frames: list[np.ndarray] = []

    def push_audio(self, frame: np.ndarray) -> None:
        self.frames.append(frame)

    def levels(self) -> np.ndarray:
        return np.array([_rms(f) for f in self.frames])


async def _until(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        await asyncio.sleep(0.01)


async def _open(transport: SoundCardTransport) -> SoundCardTransport:
    transport.open()
    await _until(lambda: transport.frames_captured > 0, 5.0, "the first microphone frame")
    return transport


# --- no device needed ------------------------------------------------------------------------


def test_reframer_makes_exact_16k_frames_from_any_rate_and_block_size() -> None:
    tone = _tone(440, 1.0, 48_000)
    reframer = Reframer(48_000)
    frames: list[np.ndarray] = []
    for start in range(0, len(tone), 1234):  # odd block sizes, as some devices deliver
        frames += reframer.process(tone[start:start + 1234])
    assert all(len(f) == FRAME_SAMPLES and f.dtype == np.float32 for f in frames)
    assert len(frames) * FRAME_SAMPLES + reframer.pending == pytest.approx(INPUT_RATE_HZ, abs=2)
    assert _dominant_hz(np.concatenate(frames)) == pytest.approx(440, abs=2)


def test_missing_portaudio_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    class NoPortAudio:
        def find_spec(self, name: str, *args: Any) -> None:
            if name == "sounddevice":
                raise OSError("PortAudio library not found")  # what sounddevice itself raises

    monkeypatch.delitem(sys.modules, "sounddevice", raising=False)
    monkeypatch.setattr(sys, "meta_path", [NoPortAudio(), *sys.meta_path])
    with pytest.raises(PipelineError, match="PortAudio library is not installed.*libportaudio2"):
        SoundCardTransport().open()


# --- on the null device ----------------------------------------------------------------------


def test_tone_played_comes_back_on_the_microphone(null_device: NullDevice) -> None:
    """The output callback drains what Playback writes; the monitor hears it at 1 kHz."""
    from pipeline.base.clock import RealClock
    from pipeline.stages.playback import Playback

    references: list[tuple[np.ndarray, int]] = []

    async def body() -> None:
        transport = SoundCardTransport(speakers=True,
                                       on_reference=lambda x, at: references.append((x, at)))
        await _open(transport)
        try:
            assert transport.input_rate_hz == INPUT_RATE_HZ  # no resampling on this device
            recorder = Recorder()
            transport.attach(recorder)
            playback = Playback(RealClock(), transport, 22_050, lead_s=transport.lead_s)
            runner = asyncio.ensure_future(playback.run())
            tone = _tone(1000, 0.6, 22_050)
            await asyncio.sleep(0.2)
            written_at = len(recorder.frames)
            playback.enqueue(tone, item_id="item", response_id="resp")
            await asyncio.sleep(0.05)
            await asyncio.wait_for(playback.drained.wait(), 5)
            await asyncio.sleep(0.4)
            runner.cancel()
        finally:
            transport.close()

        assert transport.samples_played == len(tone)  # every frame went to the device
        assert transport.queued_ms == 0 and transport.underruns == 0
        loud = np.nonzero(recorder.levels() > 0.1)[0]
        assert len(loud), "nothing played came back on the monitor"
        heard = np.concatenate(recorder.frames[loud[0]:loud[-1] + 1])
        assert _dominant_hz(heard) == pytest.approx(1000, abs=10)
        # all of it came back (nothing cut) and not twice over; a loaded PulseAudio stretches
        # the span on the monitor (0.86 s for the 0.6 s tone at load average 7)
        assert 0.52 <= len(heard) / INPUT_RATE_HZ <= 1.0, len(heard) / INPUT_RATE_HZ
        assert (loud[0] - written_at) * FRAME_S < 0.3  # mouth-to-ear on the loopback
        # The echo reference says where the played audio lands in the microphone stream.
        assert sum(len(x) for x, _ in references) == pytest.approx(0.6 * INPUT_RATE_HZ, rel=0.05)
        assert references[0][1] / FRAME_SAMPLES == pytest.approx(loud[0], abs=4)

    asyncio.run(body())


class TappedTransport(SoundCardTransport):
    """Records each frame as the PortAudio thread makes it: the truth to compare against."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.made: list[np.ndarray] = []

    def _deliver(self, frame: np.ndarray) -> None:
        self.made.append(frame)
        super()._deliver(frame)


def test_frames_before_attach_come_first_in_order(null_device: NullDevice) -> None:
    """Frames captured while models load reach the session first: no gap, no duplicate."""

    async def body() -> None:
        transport = TappedTransport()
        await _open(transport)
        recorder = Recorder()
        try:
            time.sleep(0.4)  # the loop is blocked, as while models load; capture goes on
            transport.attach(recorder)
            assert transport.frames_held >= 15
            await asyncio.sleep(0.4)
        finally:
            transport.close()
        await asyncio.sleep(0.05)  # let the last scheduled frames arrive

        assert len(transport.made) == transport.frames_captured
        assert len(recorder.frames) == len(transport.made) > transport.frames_held
        assert all(got is made for got, made in zip(recorder.frames, transport.made, strict=True))
        assert all(len(f) == FRAME_SAMPLES for f in recorder.frames)

    asyncio.run(body())


def test_pickup_keeps_the_newest_audio_when_the_session_is_late(null_device: NullDevice) -> None:
    async def body() -> None:
        transport = TappedTransport(pickup_cap_ms=200)
        await _open(transport)
        recorder = Recorder()
        try:
            time.sleep(0.5)
            transport.attach(recorder)
            await asyncio.sleep(0.1)
        finally:
            transport.close()
        await asyncio.sleep(0.05)

        dropped = transport.dropped_samples // FRAME_SAMPLES
        assert dropped > 0 and transport.frames_held * FRAME_S == pytest.approx(0.2, abs=0.021)
        assert all(got is made for got, made in
                   zip(recorder.frames, transport.made[dropped:], strict=True))

    asyncio.run(body())


def test_clear_output_silences_the_speaker_at_once(null_device: NullDevice) -> None:
    async def body() -> None:
        transport = await _open(SoundCardTransport())
        recorder = Recorder()
        transport.attach(recorder)
        try:
            transport.write_output(_tone(700, 3.0, 22_050), 22_050, 0.0)  # 3 s queued at once
            await _until(lambda: any(recorder.levels() > 0.1), 2.0, "the tone on the monitor")
            await asyncio.sleep(0.3)
            cleared_at = transport.frames_captured
            dropped = transport.clear_output()
            await asyncio.sleep(0.5)
            quiet_from = len(recorder.frames)
            transport.write_output(_tone(700, 0.2, 22_050), 22_050, 10.0)  # still plays after
            await asyncio.sleep(0.5)
        finally:
            transport.close()

        assert dropped > 2 * 22_050  # most of the tone never reached the device
        levels = recorder.levels()
        loud = np.nonzero(levels[:quiet_from] > 0.01)[0]
        # What was already in the device's buffers still plays: about the loopback latency.
        assert (loud[-1] + 1 - cleared_at) * FRAME_S <= 0.16
        assert (levels[quiet_from:] > 0.1).sum() * FRAME_S == pytest.approx(0.2, abs=0.06)

    asyncio.run(body())


def test_devices_are_chosen_by_name_and_unknown_ones_are_clear_errors(
        null_device: NullDevice) -> None:
    with SoundCardTransport(input_device="pulse", output_device="pulse") as transport:
        assert transport.input_info["name"] == transport.output_info["name"] == "pulse"
    with pytest.raises(PipelineError, match=r"no input device matches 'no-such-mic'.*--input-device"):
        SoundCardTransport(input_device="no-such-mic").open()
    with pytest.raises(PipelineError, match=r"no output device matches 99.*--output-device"):
        SoundCardTransport(output_device=99).open()


def test_no_sound_device_at_all_is_a_clear_error() -> None:
    """With no server reachable and no sound card, PortAudio lists nothing."""
    try:
        import_sounddevice()
    except PipelineError as exc:
        pytest.skip(f"{exc} (the device tests need the Debian packages {PACKAGES})")
    probe = (
        "import sounddevice as sd\n"
        "from pipeline.transports.soundcard import SoundCardTransport\n"
        "if len(sd.query_devices()): print('HAS-DEVICES'); raise SystemExit\n"
        "SoundCardTransport().open()\n"
    )
    env = dict(os.environ, PULSE_SERVER="unix:/nonexistent/pulse")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env,
                          timeout=60, cwd=ROOT)
    if "HAS-DEVICES" in done.stdout:
        pytest.skip("this machine has a sound card, so 'no device at all' cannot be staged")
    assert "PipelineError: no microphone found: connect one or pass --input-device" in done.stderr


# --- python -m pipeline live -----------------------------------------------------------------


def _live_args(*argv: str) -> argparse.Namespace:
    from pipeline.transports.runtime import add_config_args

    parser = argparse.ArgumentParser()
    add_live_args(parser)
    add_config_args(parser)
    return parser.parse_args(list(argv))


class EnergyVAD:
    """Loud enough counts as speech: stands in for Silero when the models are not needed."""

    def probability(self, window: np.ndarray) -> float:
        return 1.0 if _rms(window) > 0.25 else 0.0


def test_ctrl_c_hangs_up_cleanly() -> None:
    async def body() -> float:
        asyncio.get_running_loop().call_later(0.1, os.kill, os.getpid(), signal.SIGINT)
        started = time.monotonic()
        await wait_for_hangup(None)
        return time.monotonic() - started

    assert asyncio.run(body()) < 2.0
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # handler removed


@pytest.mark.slow
def test_live_main_with_fake_stages(null_device: NullDevice, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The wiring: microphone first, pickup through loading, transcript and reply printed."""
    from pipeline.call.session import Stages
    from pipeline.stages.fakes import ScriptedLLM, ScriptedSTT, ToneTTS
    from pipeline.turns import HeuristicCompleteness

    def slow_load(config: Any, *, progress: Any = None) -> Stages:
        null_device.say(_tone(300, 1.0, INPUT_RATE_HZ, amplitude=0.6))  # the caller speaks now
        time.sleep(1.5)  # ... while the models load
        return Stages(vad=EnergyVAD(), stt=ScriptedSTT(transcripts=["Is the pharmacy open?"]),
                      completeness=HeuristicCompleteness(), llm=ScriptedLLM(replies=["Yes."]),
                      tts=ToneTTS(frequency_hz=500.0))

    monkeypatch.setattr(Stages, "load", staticmethod(slow_load))
    assert asyncio.run(live_main(_live_args("--seconds", "3"))) == 0
    out, err = capsys.readouterr()
    assert err.index("microphone: ") < err.index("listening for 3 s")
    assert "Caller: Is the pharmacy open?" in out.splitlines()
    assert any(line.startswith("Agent: Yes.") for line in out.splitlines())


@pytest.mark.models
@pytest.mark.slow
def test_live_session_with_real_models(null_device: NullDevice,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A Piper-spoken question through the null device is transcribed by the live session."""
    from pipeline.base import config as cfg

    piper = cfg.build_stage("tts", cfg.Config.default().tts)
    question = resample(piper.synthesize(QUESTION), piper.sample_rate_hz, INPUT_RATE_HZ)
    null_device.say(np.concatenate([np.zeros(INPUT_RATE_HZ // 2, np.float32), question]))
    code = asyncio.run(live_main(_live_args("--llm", "scripted", "--seconds", "8")))
    out = capsys.readouterr().out
    assert code == 0
    callers = [line.removeprefix("Caller: ") for line in out.splitlines() if line.startswith("Caller:")]
    assert callers, out
    # tiny.en mishears a word or two, more so when a busy machine drops audio on the loopback
    heard, asked = _words(callers[0]), _words(QUESTION)
    assert len(heard & asked) >= len(asked) / 2, out
    assert any(line.startswith("Agent:") for line in out.splitlines()), out


def test_hang_up_from_the_session_ends_live_listening():
    """end_call's teardown calls the sink's hang_up; `live` waits on it (no device needed)."""
    import asyncio

    from pipeline.transports.soundcard import SoundCardTransport, wait_for_hangup

    transport = SoundCardTransport()

    async def scenario() -> float:
        stop = asyncio.Event()
        transport.on_hang_up = stop.set
        asyncio.get_running_loop().call_later(0.05, transport.hang_up)
        started = asyncio.get_running_loop().time()
        await wait_for_hangup(30.0, stop)
        return asyncio.get_running_loop().time() - started

    assert asyncio.run(scenario()) < 5.0 and transport.hung_up
