"""The peer `bench.peer` measures: a Pipecat 1.14 voice bot on the models `pipeline serve` ships.

    python -m bench.peer_bot --port 8765 --llm-url http://127.0.0.1:PORT/v1   # ws://127.0.0.1:8765/

What it runs, in its own process (`bench.peer` starts it, and llama-cpp-python's server beside it):

- transport: a FastAPI WebSocket route that gives each connection a pipeline of its own over
  Pipecat's `FastAPIWebsocketTransport`, as Pipecat's development runner serves its plain
  WebSocket clients, with `PcmSerializer` below for the framing. A call's pipeline is cancelled
  when the caller hangs up, so nothing of it (a transcript still being made, a reply still being
  spoken) reaches the next call. The Whisper model and the Piper voice are loaded once per
  process and shared by the calls, as `pipeline serve` shares its models; the rest is per call;
- VAD: `SileroVADAnalyzer()` with Pipecat's default `VADParams` (confidence 0.7, start_secs 0.2,
  stop_secs 0.2, min_volume 0.6), on the user aggregator as Pipecat's examples place it. Pipecat
  takes no model path: it loads the `silero_vad.onnx` in its wheel, the same file (sha256
  1a153a22...) as `models/vad/silero_vad.onnx`;
- turns: Pipecat's default `UserTurnStrategies` (start: VAD, then transcription; stop: Smart
  Turn v3 on its bundled `smart-turn-v3.2-cpu.onnx`, the file `models/turn/` holds, with
  `SmartTurnParams` stop_secs 3), `user_turn_stop_timeout` 5 s;
- STT: `WhisperSTTService` (faster-whisper, segmented: the whole utterance at the VAD's stop) on
  `models/stt/whisper-tiny.en`, its defaults otherwise (device auto, compute_type default, which
  is float32 on a CPU for this float16 model file; faster-whisper's beam_size 5; no_speech_prob
  0.4);
- LLM: `OpenAILLMService` pointed at llama-cpp-python's OpenAI-compatible server on the Qwen GGUF,
  with the instructions, temperature and max_tokens `pipeline serve` uses by default, and
  `supports_developer_role = False`, as Pipecat's own services for such servers set it (the
  server rejects a "developer" message, which Pipecat writes for a turn with no transcript);
- TTS: `PiperTTSService`, in process (piper-tts), on `models/tts/en_US-joe-medium.onnx`;
- output at 24 kHz (Pipecat's default `audio_out_sample_rate`, the rate our wire speaks).

Each call also gets marks: when the pipeline saw a VAD stop, an end of the user's turn, a
transcript, the bot starting to speak, and the LLM's first token and the TTS's first audio after
each end of turn, as JSON text messages stamped on CLOCK_MONOTONIC (`time.monotonic()`), the
clock the client's asyncio loop reads on the same machine. An observer takes them, off the
frames' path.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI, WebSocket  # at the top: FastAPI reads the route's annotations by name
from loguru import logger
from pipecat.audio.utils import create_stream_resampler
from pipecat.frames.frames import (
    AudioRawFrame,
    BotStartedSpeakingFrame,
    Frame,
    InputAudioRawFrame,
    LLMTextFrame,
    OutputTransportMessageFrame,
    OutputTransportMessageUrgentFrame,
    TranscriptionFrame,
    TTSAudioRawFrame,
    UserStoppedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.observers.base_observer import BaseObserver, FramePushed
from pipecat.processors.frame_processor import FrameProcessorSetup
from pipecat.serializers.base_serializer import FrameSerializer

WIRE_RATE_HZ = 24_000
ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "models"
VOICE = "en_US-joe-medium"


class PcmSerializer(FrameSerializer):
    """Raw audio over the WebSocket, as a phone line carries it.

    Framing: every binary message is mono PCM16, little-endian, at `wire_rate` Hz (24 kHz), in
    both directions, of any length (the client sends 100 ms, the bot's transport 40 ms). Caller
    audio is resampled to the pipeline's input rate with Pipecat's stream resampler, as its
    telephony serializers do; bot audio is sent at the wire rate (resampled if the pipeline's
    output rate differs). Text messages from the client are ignored; a transport message frame
    from the bot (the marks) goes out as one JSON text message. Nothing else is sent."""

    def __init__(self, wire_rate: int = WIRE_RATE_HZ, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.wire_rate = wire_rate
        self._in_rate = 0  # the pipeline's, known at setup
        self._in_resampler = create_stream_resampler(
            clear_after_secs=self._params.resampler_clear_after_secs)
        self._out_resampler = create_stream_resampler(
            clear_after_secs=self._params.resampler_clear_after_secs)

    async def setup(self, setup: FrameProcessorSetup) -> None:
        self._in_rate = setup.audio_in_sample_rate

    async def serialize(self, frame: Frame) -> str | bytes | None:
        if isinstance(frame, AudioRawFrame):
            if frame.sample_rate == self.wire_rate:
                return frame.audio or None
            audio = await self._out_resampler.resample(frame.audio, frame.sample_rate, self.wire_rate)
            return audio or None
        if isinstance(frame, (OutputTransportMessageFrame, OutputTransportMessageUrgentFrame)):
            return None if self.should_ignore_frame(frame) else json.dumps(frame.message)
        return None

    async def deserialize(self, data: str | bytes) -> Frame | None:
        if not isinstance(data, bytes) or not data:
            return None
        rate = self._in_rate or self.wire_rate
        audio = data if rate == self.wire_rate else await self._in_resampler.resample(
            data, self.wire_rate, rate)
        if not audio:
            return None
        return InputAudioRawFrame(audio=audio, sample_rate=rate, num_channels=1)


# frame type -> the mark's name, the names `bench.wire` gives our server's milestones
MARKS: tuple[tuple[type[Frame], str], ...] = (
    (VADUserStoppedSpeakingFrame, "speech_stopped"),
    (UserStoppedSpeakingFrame, "commit"),
    (TranscriptionFrame, "stt_final"),
    (LLMTextFrame, "llm_first_token"),
    (TTSAudioRawFrame, "tts_first_audio"),
    (BotStartedSpeakingFrame, "first_audio_out"),
)


# marked once per turn (from its end on): every token and every piece of audio is a frame
ONCE_PER_TURN = frozenset({"llm_first_token", "tts_first_audio"})


class MarksObserver(BaseObserver):
    """Sends the client each milestone, stamped on the monotonic clock when the frame was pushed:
    every VAD stop, end of turn, transcript and start of the bot's speech, and the first LLM token
    and first TTS audio after each end of turn."""

    def __init__(self, send: Any) -> None:
        super().__init__(observe_every_push=False)
        self._send = send
        self._sent: set[str] = set()

    async def on_push_frame(self, data: FramePushed) -> None:
        stage = next((name for kind, name in MARKS if isinstance(data.frame, kind)), None)
        if stage is None:
            return
        if stage == "commit":
            self._sent.clear()  # a new turn: its reply's first token and audio get marks
        elif stage in ONCE_PER_TURN:
            if stage in self._sent:
                return
            self._sent.add(stage)
        # observers run off the frames' path, a little later: back-date to the push
        lag_s = max(0, data.source.get_clock().get_time() - data.timestamp) / 1e9
        await self._send({"type": "mark", "stage": stage, "t": time.monotonic() - lag_s})


_WHISPER: dict[tuple[Any, ...], Any] = {}  # loaded once per process, shared by every call
_VOICES: dict[str, Any] = {}


@dataclass(frozen=True)
class BotSettings:
    llm_url: str  # llama-cpp-python's server, .../v1
    instructions: str  # the system prompt
    temperature: float
    max_tokens: int
    whisper_compute_type: str = "default"  # WhisperSTTService's own default


def _services(settings: BotSettings) -> tuple[Any, Any, Any]:
    """A call's STT, LLM and TTS services, on the process's loaded Whisper model and Piper voice."""
    from pipecat.services.openai.llm import OpenAILLMService
    from pipecat.services.piper.tts import PiperTTSService
    from pipecat.services.tts_service import TTSService
    from pipecat.services.whisper.stt import WhisperSTTService
    from piper import PiperVoice

    class SharedWhisperSTTService(WhisperSTTService):
        """Pipecat's WhisperSTTService, loading its model once per process, not once per call."""

        def _load(self) -> None:
            key = (self._settings.model, self._device, self._compute_type)
            if key not in _WHISPER:
                super()._load()
                _WHISPER[key] = self._model
            self._model = _WHISPER[key]

    class SharedPiperTTSService(PiperTTSService):
        """Pipecat's PiperTTSService on a voice loaded once per process: its __init__ less the
        load, which it does from `download_dir/<voice>.onnx` as below."""

        def __init__(self, *, voice_path: Path, **kwargs: Any) -> None:
            TTSService.__init__(self, push_start_frame=True, push_stop_frames=True,
                                settings=self.Settings(model=None, voice=voice_path.stem,
                                                       language=None), **kwargs)
            if str(voice_path) not in _VOICES:
                _VOICES[str(voice_path)] = PiperVoice.load(voice_path, use_cuda=False)
            self._voice = _VOICES[str(voice_path)]

    class LlamaCppLLMService(OpenAILLMService):
        # llama-cpp-python's server takes no "developer" role (its request model rejects it);
        # Pipecat's services for such OpenAI-compatible servers (Ollama's, Cerebras') say so
        # this way, and its adapter then sends such messages as "user"
        supports_developer_role = False

    stt = SharedWhisperSTTService(
        compute_type=settings.whisper_compute_type,
        settings=WhisperSTTService.Settings(model=str(MODELS / "stt" / "whisper-tiny.en")))
    llm = LlamaCppLLMService(
        api_key="none", base_url=settings.llm_url, settings=OpenAILLMService.Settings(
            model="qwen2.5-coder-0.5b", system_instruction=settings.instructions,
            temperature=settings.temperature, max_tokens=settings.max_tokens))
    tts = SharedPiperTTSService(voice_path=MODELS / "tts" / f"{VOICE}.onnx")
    return stt, llm, tts


async def one_call(websocket: Any, settings: BotSettings) -> None:
    """One caller: a pipeline of its own, built as Pipecat's examples build a voice bot, run until
    the caller hangs up (then cancelled: nothing it was still doing reaches the next call)."""
    from pipecat.audio.vad.silero import SileroVADAnalyzer
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.pipeline.worker import PipelineParams, PipelineWorker
    from pipecat.processors.aggregators.llm_context import LLMContext
    from pipecat.processors.aggregators.llm_response_universal import (
        LLMContextAggregatorPair,
        LLMUserAggregatorParams,
    )
    from pipecat.transports.websocket.fastapi import (
        FastAPIWebsocketParams,
        FastAPIWebsocketTransport,
    )
    from pipecat.workers.runner import WorkerRunner

    transport = FastAPIWebsocketTransport(websocket, FastAPIWebsocketParams(
        audio_in_enabled=True, audio_out_enabled=True, serializer=PcmSerializer()))
    stt, llm, tts = _services(settings)
    context = LLMContext()
    user_aggregator, assistant_aggregator = LLMContextAggregatorPair(
        context, user_params=LLMUserAggregatorParams(vad_analyzer=SileroVADAnalyzer()))
    pipeline = Pipeline([transport.input(), stt, user_aggregator, llm, tts, transport.output(),
                         assistant_aggregator])

    async def send(message: dict[str, Any]) -> None:
        await transport.output().send_message(OutputTransportMessageUrgentFrame(message=message))

    worker = PipelineWorker(pipeline, params=PipelineParams(audio_out_sample_rate=WIRE_RATE_HZ),
                            idle_timeout_secs=None, observers=[MarksObserver(send)])

    @transport.event_handler("on_client_disconnected")
    async def on_client_disconnected(_transport: Any, _client: Any) -> None:
        await worker.cancel()

    runner = WorkerRunner(handle_sigint=False)
    await runner.add_workers(worker)
    await runner.run()


def serve(port: int, settings: BotSettings) -> None:
    """The calls' server: a WebSocket route that runs `one_call` per connection, as Pipecat's
    development runner does for its plain WebSocket clients."""
    import uvicorn

    _services(settings)  # load the shared models now
    app = FastAPI()

    @app.websocket("/")
    async def call(websocket: WebSocket) -> None:
        await websocket.accept()
        await one_call(websocket, settings)

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", ws_max_size=2**24)


def main() -> None:
    from pipeline.base.config import ResponsePolicy

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--llm-url", required=True, help="llama-cpp-python's server, .../v1")
    parser.add_argument("--log-level", default="INFO")
    parser.add_argument("--whisper-compute-type", default="default",
                        help="WhisperSTTService's compute_type (default: its own, 'default', "
                             "float32 on a CPU for this model file; 'int8' is what ours runs)")
    args = parser.parse_args()
    logger.remove()
    logger.add(sys.stderr, level=args.log_level)
    # what `pipeline serve` uses by default: its instructions, and its llama-cpp stage's
    # temperature and max_tokens (pipeline/stages/llm.py)
    from pipeline.stages.llm import LlamaLLM

    defaults = LlamaLLM.__init__.__kwdefaults__ or {}
    serve(args.port, BotSettings(args.llm_url, ResponsePolicy().instructions,
                                 defaults.get("temperature", 0.3), defaults.get("max_tokens", 96),
                                 args.whisper_compute_type))


if __name__ == "__main__":
    main()
