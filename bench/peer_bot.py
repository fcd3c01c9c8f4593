"""The peer `bench.peer` measures: a Pipecat 1.14 voice bot on the models `pipeline serve` ships.

    python -m bench.peer_bot --port 8765 --llm-url http://127.0.0.1:PORT/v1

What it runs, in its own process (`bench.peer` starts it, and llama-cpp-python's server beside it):

- transport: Pipecat's `SingleClientWebsocketServerTransport` (one caller at a time, as a call),
  with `PcmSerializer` below for the framing;
- VAD: `SileroVADAnalyzer()` with Pipecat's default `VADParams` (confidence 0.7, start_secs 0.2,
  stop_secs 0.2, min_volume 0.6), on the user aggregator as Pipecat's examples place it. Pipecat
  takes no model path: it loads the `silero_vad.onnx` in its wheel, the same file (sha256
  1a153a22...) as `models/vad/silero_vad.onnx`;
- turns: Pipecat's default `UserTurnStrategies` (start: VAD, then transcription; stop: Smart
  Turn v3 on its bundled `smart-turn-v3.2-cpu.onnx`, the file `models/turn/` holds, with
  `SmartTurnParams` stop_secs 3), `user_turn_stop_timeout` 5 s;
- STT: `WhisperSTTService` (faster-whisper, segmented: the whole utterance at the VAD's stop) on
  `models/stt/whisper-tiny.en`, its defaults otherwise (device auto, compute_type default,
  faster-whisper's beam_size 5, no_speech_prob 0.4);
- LLM: `OpenAILLMService` pointed at llama-cpp-python's OpenAI-compatible server on the Qwen GGUF,
  with the instructions, temperature and max_tokens `pipeline serve` uses by default, and
  `supports_developer_role = False`, as Pipecat's own services for such servers set it (the
  server rejects a "developer" message, which Pipecat writes for a turn with no transcript);
- TTS: `PiperTTSService`, in process (piper-tts), on `models/tts/en_US-joe-medium.onnx`;
- output at 24 kHz (Pipecat's default `audio_out_sample_rate`, the rate our wire speaks).

One pipeline serves every call, as `pipeline serve` does: the models stay loaded and warm. A
caller who connects starts from an empty context; one who hangs up interrupts what the bot was
still saying, so the next caller hears nothing of it.

Each call also gets marks: when the pipeline saw the VAD's stop, the end of the user's turn,
the transcript, the LLM's first token, the TTS's first audio and the bot starting to speak, as
JSON text messages stamped on CLOCK_MONOTONIC (`time.monotonic()`), the clock the client's
asyncio loop reads on the same machine. An observer takes them, off the frames' path.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from loguru import logger
from pipecat.audio.utils import create_stream_resampler
from pipecat.frames.frames import (
    AudioRawFrame,
    BotStartedSpeakingFrame,
    Frame,
    InputAudioRawFrame,
    InterruptionFrame,
    LLMTextFrame,
    OutputTransportMessageFrame,
    OutputTransportMessageUrgentFrame,
    TranscriptionFrame,
    TTSAudioRawFrame,
    UserStoppedSpeakingFrame,
    VADUserStartedSpeakingFrame,
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


class MarksObserver(BaseObserver):
    """Sends the client each milestone once per stretch of the caller's speech (from the VAD's
    start of speech on), stamped on the monotonic clock when the frame was pushed."""

    def __init__(self, send: Any) -> None:
        super().__init__(observe_every_push=False)
        self._send = send
        self._sent: set[str] = set()

    async def on_push_frame(self, data: FramePushed) -> None:
        frame = data.frame
        if isinstance(frame, VADUserStartedSpeakingFrame):
            self._sent.clear()
            return
        stage = next((name for kind, name in MARKS if isinstance(frame, kind)), None)
        if stage is None or (stage in self._sent and stage != "commit"):
            return
        self._sent.add(stage)
        # observers run off the frames' path, a little later: back-date to the push
        lag_s = max(0, data.source.get_clock().get_time() - data.timestamp) / 1e9
        await self._send({"type": "mark", "stage": stage, "t": time.monotonic() - lag_s})


async def serve(port: int, llm_url: str, instructions: str, temperature: float,
                max_tokens: int) -> None:
    from pipecat.audio.vad.silero import SileroVADAnalyzer
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.pipeline.worker import PipelineParams, PipelineWorker
    from pipecat.processors.aggregators.llm_context import LLMContext
    from pipecat.processors.aggregators.llm_response_universal import (
        LLMContextAggregatorPair,
        LLMUserAggregatorParams,
    )
    from pipecat.services.openai.llm import OpenAILLMService
    from pipecat.services.piper.tts import PiperTTSService
    from pipecat.services.whisper.stt import WhisperSTTService
    from pipecat.transports.websocket.server import (
        SingleClientWebsocketServerParams,
        SingleClientWebsocketServerTransport,
    )
    from pipecat.workers.runner import WorkerRunner

    transport = SingleClientWebsocketServerTransport(
        params=SingleClientWebsocketServerParams(
            audio_in_enabled=True, audio_out_enabled=True, serializer=PcmSerializer()),
        host="127.0.0.1", port=port)
    stt = WhisperSTTService(settings=WhisperSTTService.Settings(
        model=str(MODELS / "stt" / "whisper-tiny.en")))
    class LlamaCppLLMService(OpenAILLMService):
        # llama-cpp-python's server takes no "developer" role (its request model rejects it);
        # Pipecat's services for such OpenAI-compatible servers (Ollama's, Cerebras') say so
        # this way, and its adapter then sends such messages as "user"
        supports_developer_role = False

    llm = LlamaCppLLMService(api_key="none", base_url=llm_url, settings=OpenAILLMService.Settings(
        model="qwen2.5-coder-0.5b", system_instruction=instructions, temperature=temperature,
        max_tokens=max_tokens))
    tts = PiperTTSService(download_dir=MODELS / "tts",
                          settings=PiperTTSService.Settings(voice=VOICE))
    context = LLMContext()
    user_aggregator, assistant_aggregator = LLMContextAggregatorPair(
        context, user_params=LLMUserAggregatorParams(vad_analyzer=SileroVADAnalyzer()))
    pipeline = Pipeline([transport.input(), stt, user_aggregator, llm, tts, transport.output(),
                         assistant_aggregator])

    async def send(message: dict[str, Any]) -> None:
        await transport.output().send_message(OutputTransportMessageUrgentFrame(message=message))

    worker = PipelineWorker(pipeline, params=PipelineParams(audio_out_sample_rate=WIRE_RATE_HZ),
                            idle_timeout_secs=None, observers=[MarksObserver(send)])

    @transport.event_handler("on_client_connected")
    async def on_client_connected(_transport: Any, _client: Any) -> None:
        context.set_messages([])  # a new call: nothing of the last one

    @transport.event_handler("on_client_disconnected")
    async def on_client_disconnected(_transport: Any, _client: Any) -> None:
        await worker.queue_frame(InterruptionFrame())  # the hung-up call's reply stops

    @transport.event_handler("on_websocket_ready")
    async def on_websocket_ready(_transport: Any) -> None:
        print("ready", flush=True)

    runner = WorkerRunner(handle_sigint=True, handle_sigterm=True)
    await runner.add_workers(worker)
    await runner.run()


def main() -> None:
    from pipeline.base.config import ResponsePolicy

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--llm-url", required=True, help="llama-cpp-python's server, .../v1")
    parser.add_argument("--log-level", default="INFO")
    args = parser.parse_args()
    logger.remove()
    logger.add(sys.stderr, level=args.log_level)
    # what `pipeline serve` uses by default: its instructions, and its llama-cpp stage's
    # temperature and max_tokens (pipeline/stages/llm.py)
    from pipeline.stages.llm import LlamaLLM

    defaults = LlamaLLM.__init__.__kwdefaults__ or {}
    asyncio.run(serve(args.port, args.llm_url, ResponsePolicy().instructions,
                      defaults.get("temperature", 0.3), defaults.get("max_tokens", 96)))


if __name__ == "__main__":
    main()
