"""Concurrent calls through one `pipeline serve` worker: time to first audio and memory per call.

N realtime clients connect to one in-process `RealtimeServer` (on its own event loop, in a
thread, as `pipeline serve` runs it: `pipeline.testing.ServerThread`) and each says the same caller clip at real time, 100 ms
appends of 24 kHz pcm16, then silence, as a phone would. Per call: the caller's last sound
(the clip's last 32 ms window above -40 dBFS) → the first `response.output_audio.delta`, in ms.
Memory: the worker's RSS sampled every 50 ms while the calls run; its peak over the idle worker,
divided by N, is what one more call costs (models are shared and loaded before).

Used by `bench.endpoint`, with the LLM behind the OpenAI-compatible server (the deploy story:
the worker holds VAD, STT and TTS; the LLM lives on the GPU box).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.base.audio import INPUT_RATE_HZ, dbfs
from pipeline.base.config import Config
from pipeline.testing import ServerThread, chunks_b64, pcm16_24k

# a microphone's frame (WebRTC, a phone line), each sent once its span has passed: a 100 ms
# append sent as its span began put the speech's end up to 100 ms (50 on average) earlier at the
# server than the client's clock said, so every figure after the end of speech read that much
# short (bench/README.md, "Where the silence starts")
CHUNK_MS = 20
LEAD_S = 0.25  # silence before the clip
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


async def send_at_real_time(ws: Any, chunks: list[str], reader: asyncio.Future[Any], started: float,
                            *, cap_s: float = CALL_CAP_S) -> bool:
    """Append `chunks` (CHUNK_MS each) at real time from `started` (the loop's clock), as a
    microphone sends: each once its span has passed, until `reader` is done; then wait for it,
    at most `cap_s`. False on time-out."""
    loop = asyncio.get_running_loop()
    for i, chunk in enumerate(chunks):
        await asyncio.sleep(max(0.0, started + (i + 1) * CHUNK_MS / 1000 - loop.time()))
        if reader.done():
            break
        await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": chunk}))
    try:
        await asyncio.wait_for(reader, cap_s)
    except TimeoutError:
        return False
    return True


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
        if not await send_at_real_time(ws, chunks, reader, started):
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
    pcm = pcm16_24k(clip_audio, lead_s=LEAD_S, trailing_silence_s=TRAILING_SILENCE_S)
    speech_end_s = LEAD_S + last_sound_s(clip_audio)
    chunks = list(chunks_b64(pcm, chunk_ms=CHUNK_MS))
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
