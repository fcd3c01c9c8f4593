"""Servers a test talks to as a client would: the realtime server in a thread, an LLM server."""

from __future__ import annotations

import asyncio
import base64
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.base.audio import INPUT_RATE_HZ, resample, to_int16
from pipeline.base.config import Config
from pipeline.transports.realtime_server import RealtimeServer

WIRE_RATE_HZ = 24_000  # the realtime API's pcm16


class ServerThread:
    """A RealtimeServer on 127.0.0.1 (a free port), on its own event loop in a daemon thread, as
    `pipeline serve` runs it in its process, so a client with a loop (or a browser) of its own can
    call it. `with ServerThread(stages) as server:` connect to `server.url`."""

    def __init__(self, stages: Any, config: Config | None = None, **kwargs: Any) -> None:
        self.loop = asyncio.new_event_loop()
        self.server = RealtimeServer(stages=stages, config=config or Config.default(), port=0, **kwargs)
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def start(self) -> ServerThread:
        """Returns once the port listens."""
        self._thread.start()
        self.call(self.server.start(), timeout=10)
        return self

    def call(self, coro: Any, timeout: float = 30) -> Any:
        """Run a coroutine on the server's loop (e.g. `server.call(server.server.stop())`)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        self.call(self.server.stop())
        self.call(_cancel_the_rest())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def url(self) -> str:
        """The realtime WebSocket (ws://127.0.0.1:PORT/v1/realtime)."""
        return self.server.url

    @property
    def page_url(self) -> str:
        """The browser page the server serves."""
        return f"http://127.0.0.1:{self.port}/"


async def _cancel_the_rest() -> None:
    """Tasks a closed session left behind (a transcription pass) end before the loop does."""
    rest = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in rest:
        task.cancel()
    await asyncio.gather(*rest, return_exceptions=True)


def pcm16_24k(audio_16k: np.ndarray, *, lead_s: float = 0.25, trailing_silence_s: float = 2.0) -> bytes:
    """Speech at 16 kHz as a realtime client sends it: 24 kHz pcm16 bytes, after `lead_s` of
    silence and followed by silence that ends the turn."""
    padded = np.concatenate([np.zeros(int(INPUT_RATE_HZ * lead_s), np.float32), audio_16k,
                             np.zeros(int(INPUT_RATE_HZ * trailing_silence_s), np.float32)])
    return to_int16(resample(padded, INPUT_RATE_HZ, WIRE_RATE_HZ)).astype("<i2").tobytes()


def chunks_b64(pcm: bytes, *, chunk_ms: int = 100) -> Iterator[str]:
    """pcm16 at 24 kHz in `input_audio_buffer.append` pieces of `chunk_ms`, base64."""
    step = WIRE_RATE_HZ * 2 * chunk_ms // 1000
    for start in range(0, len(pcm), step):
        yield base64.b64encode(pcm[start:start + step]).decode("ascii")


@dataclass
class LlamaServer:
    """llama-cpp-python's OpenAI-compatible server (`llama_cpp.server`, the `server` extra) on a
    free loopback port, in a process of its own: `url` is the base URL for `openai-compatible`."""

    url: str
    process: subprocess.Popen
    log: Path

    @classmethod
    def start(cls, model: Path, *, log: Path, extra: tuple[str, ...] = (),
              ready_s: float = 60.0) -> LlamaServer:
        """Returns once the port accepts connections (importing FastAPI and loading the model
        take a few seconds on 2 idle cores); raises with the server's log if it never does."""
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        # interrupt_requests off: otherwise any second request (a token count, a completeness
        # check, another call) ends the reply being streamed, early and without a word
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model),
               "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", "2",
               "--seed", "7", "--interrupt_requests", "false", *extra]
        with log.open("wb") as out:
            process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        server = cls(f"http://127.0.0.1:{port}/v1", process, log)
        deadline = time.monotonic() + ready_s
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"the LLM server exited ({process.returncode}):\n"
                                   f"{log.read_text(errors='replace')[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    return server
            except OSError:
                time.sleep(0.2)
        server.stop()
        raise RuntimeError(f"the LLM server did not listen within {ready_s:g} s:\n"
                           f"{log.read_text(errors='replace')[-2000:]}")

    def disconnects(self) -> int:
        """How many closed streams the server has noticed so far (its own log line)."""
        return self.log.read_text(errors="replace").count("Disconnected from client")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)  # uvicorn waits out a request still running
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
