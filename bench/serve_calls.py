"""Concurrent calls through one `pipeline serve` worker: time to first audio and memory per call.

N realtime clients connect to one in-process `RealtimeServer` (on its own event loop, in a
thread, as `pipeline serve` runs it) and each says the same caller clip at real time, 100 ms
appends of 24 kHz pcm16, then silence, as a phone would. Per call: the caller's last sound
(the clip's last 32 ms window above -40 dBFS) → the first `response.output_audio.delta`, in ms.
Memory: the worker's RSS sampled every 50 ms while the calls run; its peak over the idle worker,
divided by N, is what one more call costs (models are shared and loaded before).

Used by `bench.endpoint`, with the LLM behind the OpenAI-compatible server (the deploy story:
the worker holds VAD, STT and TTS; the LLM lives on the GPU box).
"""

from __future__ import annotations

import asyncio
import base64
import json
import statistics
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.base.audio import INPUT_RATE_HZ, dbfs, resample, to_int16
from pipeline.base.config import Config
from pipeline.transports.realtime_server import RealtimeServer

CHUNK_MS = 100
TRAILING_SILENCE_S = 3.0
CALL_CAP_S = 60.0  # a call that has not answered by then counts as failed
WINDOW = 512


def rss_mib(pid: int | str = "self") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def last_sound_s(audio: np.ndarray, floor_dbfs: float = -40.0) -> float:
    """End of the last 32 ms window above `floor_dbfs`: where the caller stops talking."""
    loud = [i for i in range(0, len(audio) - WINDOW + 1, WINDOW) if dbfs(audio[i:i + WINDOW]) > floor_dbfs]
    return (loud[-1] + WINDOW) / INPUT_RATE_HZ if loud else 0.0


class ServerThread:
    """A RealtimeServer on 127.0.0.1 (a free port), on its own event loop in a daemon thread,
    as `pipeline serve` runs it in its process; the tests' clients use it too."""

    def __init__(self, stages: Any, config: Config | None = None, **kwargs: Any) -> None:
        self.loop = asyncio.new_event_loop()
        self.server = RealtimeServer(stages=stages, config=config or Config.default(), port=0, **kwargs)
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> ServerThread:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(timeout=10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def url(self) -> str:
        return self.server.url


async def _one_call(url: str, chunks: list[str], speech_end_s: float) -> float | None:
    from websockets.asyncio.client import connect

    async with connect(url, proxy=None, max_size=None) as ws:
        while json.loads(await ws.recv())["type"] != "session.created":
            pass
        loop = asyncio.get_running_loop()
        started = loop.time()
        first_audio: list[float] = []

        async def read() -> None:
            async for message in ws:
                if '"response.output_audio.delta"' in message and not first_audio:
                    first_audio.append(loop.time())
                    return

        reader = asyncio.ensure_future(read())
        for i, chunk in enumerate(chunks):  # at real time, as a microphone sends
            if reader.done():
                break
            await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": chunk}))
            await asyncio.sleep(max(0.0, started + (i + 1) * CHUNK_MS / 1000 - loop.time()))
        try:
            await asyncio.wait_for(reader, CALL_CAP_S)
        except TimeoutError:
            return None
        return (first_audio[0] - started - speech_end_s) * 1000 if first_audio else None


async def _calls(url: str, chunks: list[str], speech_end_s: float, n: int) -> list[float | None]:
    return await asyncio.gather(*(_one_call(url, chunks, speech_end_s) for _ in range(n)))


class _PeakRss:
    """This process's peak resident size while the block runs, sampled every 50 ms."""

    def __enter__(self) -> _PeakRss:
        self.mib = rss_mib()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.05):
            self.mib = max(self.mib, rss_mib())

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.mib = max(self.mib, rss_mib())


def concurrent_calls(stages: Any, config: Config, clip_audio: np.ndarray, counts: tuple[int, ...]
                     ) -> list[dict[str, Any]]:
    """For each N in `counts`: N calls at once on one worker; first audio and memory per call."""
    padded = np.concatenate([np.zeros(INPUT_RATE_HZ // 4, np.float32), clip_audio,
                             np.zeros(int(TRAILING_SILENCE_S * INPUT_RATE_HZ), np.float32)])
    speech_end_s = INPUT_RATE_HZ // 4 / INPUT_RATE_HZ + last_sound_s(clip_audio)
    pcm = to_int16(resample(padded, INPUT_RATE_HZ, 24_000)).astype("<i2").tobytes()
    step = 24_000 * 2 * CHUNK_MS // 1000
    chunks = [base64.b64encode(pcm[i:i + step]).decode("ascii") for i in range(0, len(pcm), step)]
    rows = []
    with ServerThread(stages, config) as worker:
        asyncio.run(_one_call(worker.url, chunks, speech_end_s))  # warm: first-call costs
        for n in counts:
            idle = rss_mib()
            t0 = time.perf_counter()
            with _PeakRss() as peak:
                firsts = asyncio.run(_calls(worker.url, chunks, speech_end_s, n))
            ok = [f for f in firsts if f is not None]
            rows.append({"n": n, "answered": len(ok),
                         "first_audio_median_ms": statistics.median(ok) if ok else None,
                         "first_audio_max_ms": max(ok) if ok else None,
                         "mib_over_idle": peak.mib - idle, "mib_per_call": (peak.mib - idle) / n,
                         "seconds": time.perf_counter() - t0})
    return rows
