"""End of speech to first audio at the wire, `pipeline serve` against Pipecat on the same models.

Two servers on one machine, each in its own process, and one client that calls them in turn:

- **ours**: `pipeline serve` as shipped (`bench.wire.start_server`), called over the realtime
  protocol exactly as `python -m bench.wire` calls it (`bench.wire.one_call`).
- **peer**: Pipecat 1.14.0 (`bench/peer_bot.py`): its WebSocket server transport, Silero VAD,
  Smart Turn v3, its local Whisper STT on faster-whisper tiny.en, its OpenAI-compatible LLM
  service against llama-cpp-python's server on the Qwen2.5-Coder-0.5B GGUF (the same
  instructions, temperature and max_tokens as ours), and its Piper TTS on the same voice;
  Pipecat's defaults otherwise. The client streams raw PCM16 at 24 kHz (`PcmSerializer`).

Both get the same clips (`bench.wire.clips`: jfk.wav and six spoken questions), as the same
24 kHz pcm16 in 100 ms pieces at real time, 250 ms of silence before and 4 s after
(`bench.wire._chunks`, `bench.serve_calls.send_at_real_time`), and both are measured the same
way: the clip's last loud 32 ms window to the first agent audio holding a 10 ms frame above
-45 dBFS, on the client's clock (`bench.wire.sounds`). Round by round, clip by clip, one call
to each, ours first in even rounds and the peer first in odd ones, with `--gap` seconds between
calls so one server's leftover work does not fall on the other's call. One warm-up call to each
first, not counted.

The report: per side, how many calls were answered, end → audio median and p90, and each
server's milestones (ours from its events, the peer's from marks its pipeline sends); per clip,
each side's median and their ratio; the median of the per-clip ratios (ours / peer); and every
call. The machine and its load before and after head it.

    python -m bench.peer [--rounds 3] [--clips 7] [--out bench/results/DATE-peer.md] [-- SERVE_ARGS]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import datetime as dt
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.base.audio import INPUT_RATE_HZ
from pipeline.base.config import ResponsePolicy
from pipeline.base.cpu import default_threads
from pipeline.testing.server import LlamaServer

from .machine import describe_machine
from .serve_calls import last_sound_s, send_at_real_time
from .summary import median, p90
from .wire import (
    CALL_CAP_S,
    LEAD_S,
    QUESTIONS,
    ROOT,
    _chunks,
    _free_port,
    _ms,
    clips,
    one_call,
    report_header,
    sounds,
    start_server,
)

SIDES = ("ours", "peer")
LLM_GGUF = ROOT / "models" / "llm" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
# the milestones both sides report, in ms after the end of speech
STAGES = ("speech_stopped", "commit", "stt_final", "llm_first_token", "tts_first_audio",
          "first_audio_out")
PEER_SETUP = (
    "Pipecat 1.14.0 in its own process (`bench/peer_bot.py`): a pipeline per call over "
    "`FastAPIWebsocketTransport` (a FastAPI WebSocket route, as Pipecat's development runner serves "
    "plain WebSocket clients), cancelled when the caller hangs up, the Whisper model and Piper "
    "voice loaded once per process; a raw PCM16 24 kHz serializer; `SileroVADAnalyzer()` on the user aggregator, default "
    "`VADParams` (confidence 0.7, start_secs 0.2, stop_secs 0.2, min_volume 0.6; its bundled "
    "silero_vad.onnx, the same file as ours); default `UserTurnStrategies` (stop: Smart Turn v3.2, "
    "its bundled ONNX, the same file as models/turn/; `SmartTurnParams` stop_secs 3); "
    "`WhisperSTTService` on models/stt/whisper-tiny.en (segmented, faster-whisper's defaults: "
    "beam 5, float32 on CPU for this float16 file); `OpenAILLMService` against `python -m llama_cpp.server` on the Qwen2.5-Coder-0.5B "
    "Q4_K_M GGUF (n_ctx 2048, n_threads as ours gives its LLM, interrupt_requests on, one reply "
    "before the bot starts; our default instructions, temperature 0.3, max_tokens 96; "
    "`supports_developer_role = False`, as Pipecat sets it for such servers); `PiperTTSService` in process on "
    "models/tts/en_US-joe-medium.onnx; output at 24 kHz.")


class PcmSocket:
    """A WebSocket that takes `send_at_real_time`'s `input_audio_buffer.append` messages and
    sends their audio as raw binary PCM, the peer's framing: the same pieces, at the same pace."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws

    async def send(self, message: str) -> None:
        event = json.loads(message)
        await self.ws.send(base64.b64decode(event["audio"]))


async def peer_call(url: str, audio: np.ndarray) -> dict[str, Any]:
    """One call to the Pipecat bot: the clip at real time as raw PCM16; what arrived when, in ms
    after the end of speech (the same row as `bench.wire.one_call`'s, where the peer has it)."""
    from websockets.asyncio.client import connect

    chunks = _chunks(audio)
    async with connect(url, proxy=None, max_size=None) as ws:
        loop = asyncio.get_running_loop()
        started = loop.time()
        end_s = started + LEAD_S + last_sound_s(audio)
        marks: list[tuple[str, float]] = []  # stage, when (the bot stamps CLOCK_MONOTONIC)
        seen: dict[str, float] = {}

        async def read() -> None:
            async for message in ws:
                now = loop.time()
                if isinstance(message, bytes):
                    if now > end_s and sounds(message):
                        seen["audio"] = now
                        return
                else:
                    event = json.loads(message)
                    if event.get("type") == "mark":
                        marks.append((event["stage"], float(event["t"])))

        reader = asyncio.ensure_future(read())
        await send_at_real_time(PcmSocket(ws), chunks, reader, started, cap_s=CALL_CAP_S)
        reader.cancel()
    return peer_row(marks, seen.get("audio"), end_s)


def peer_row(marks: list[tuple[str, float]], audio_s: float | None, end_s: float) -> dict[str, Any]:
    """The peer's marks and first sound, as ms after the end of speech at `end_s`: each stage's
    first mark from a second before the end on (the turn that ends the clip), like ours."""
    row: dict[str, Any] = {"turns_committed": sum(stage == "commit" for stage, _ in marks)}
    for stage in STAGES:
        after = [t for s, t in marks if s == stage and t > end_s - 1.0]
        row[stage] = (after[0] - end_s) * 1000 if after else None
    row["first_chunk"] = None  # Pipecat marks no first chunk of its own
    row["end_to_audio"] = (audio_s - end_s) * 1000 if audio_s is not None else None
    return row


def _warm_llm(url: str) -> None:
    """One short reply from the LLM server before the bot starts: its first request pages the
    model in and can take tens of seconds on a busy machine (ours loads and warms its own LLM
    before `pipeline serve` listens)."""
    from urllib.request import ProxyHandler, Request, build_opener

    body = json.dumps({"model": "qwen2.5-coder-0.5b", "max_tokens": 8, "messages": [
        {"role": "system", "content": ResponsePolicy().instructions},
        {"role": "user", "content": "Hello?"}]}).encode()
    opener = build_opener(ProxyHandler({}))  # loopback: never through a proxy
    with opener.open(Request(f"{url}/chat/completions", body,
                             {"Content-Type": "application/json"}), timeout=300) as response:
        response.read()


def start_peer(logs: Path, whisper_compute_type: str = "default", log_level: str = "INFO"
               ) -> tuple[LlamaServer, subprocess.Popen[bytes], str]:
    """llama-cpp-python's server, then the Pipecat bot against it; returns once the bot listens."""
    llama = LlamaServer.start(LLM_GGUF, log=logs / "llama-server.log", ready_s=120, extra=(
        "--n_threads", str(default_threads("llm")), "--interrupt_requests", "true"))
    _warm_llm(llama.url)
    port = _free_port()
    with (logs / "pipecat-bot.log").open("wb") as log:
        bot = subprocess.Popen([sys.executable, "-m", "bench.peer_bot", "--port", str(port),
                                "--llm-url", llama.url, "--log-level",
                                log_level,
                                "--whisper-compute-type", whisper_compute_type],
                               cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and bot.poll() is None:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return llama, bot, f"ws://127.0.0.1:{port}/"
        time.sleep(0.2)
    bot.kill()
    llama.stop()
    raise SystemExit(f"the Pipecat bot did not start: {(logs / 'pipecat-bot.log').read_text()[-2000:]}")


def _call(side: str, url: str, clip: np.ndarray) -> dict[str, Any]:
    return asyncio.run(one_call(url, clip) if side == "ours" else peer_call(url, clip))


def run(rounds: int, n_clips: int | None, serve_args: list[str], gap_s: float = 1.0,
        logs: Path | None = None, whisper_compute_type: str = "default",
        log_level: str = "INFO") -> dict[str, Any]:
    audio = clips()
    names = list(audio)[:n_clips] if n_clips else list(audio)
    logs = logs or Path(tempfile.mkdtemp(prefix="bench-peer-"))
    print(f"server logs: {logs}", file=sys.stderr)
    ours, ours_url = start_server(serve_args)
    llama = bot = None
    rows: list[dict[str, Any]] = []
    try:
        llama, bot, peer_url = start_peer(logs, whisper_compute_type, log_level)
        urls = {"ours": ours_url, "peer": peer_url}
        for side in SIDES:  # warm: each server's first-call costs, not counted
            _call(side, urls[side], audio[QUESTIONS[0]])
            time.sleep(gap_s)
        for r in range(rounds):
            order = SIDES if r % 2 == 0 else SIDES[::-1]
            for name in names:
                for side in order:
                    try:
                        row = _call(side, urls[side], audio[name])
                    except Exception as e:  # a call that failed is a call not answered
                        row = {"turns_committed": None, **dict.fromkeys(STAGES),
                               "end_to_audio": None, "error": f"{type(e).__name__}: {e}"}
                    rows.append({"clip": name, "round": r, "side": side, **row})
                    print(f"round {r} {side} {name[:40]!r}: {_ms(row['end_to_audio'])}",
                          file=sys.stderr)
                    time.sleep(gap_s)
    finally:
        ours.terminate()
        ours.wait(timeout=30)
        if bot is not None:
            bot.terminate()
            try:
                bot.wait(timeout=30)
            except subprocess.TimeoutExpired:
                bot.kill()
        if llama is not None:
            llama.stop()
    return {"rows": rows, "rounds": rounds, "gap_s": gap_s, "serve_args": serve_args,
            "peer_whisper_compute_type": whisper_compute_type,
            "clips": {n: round(len(audio[n]) / INPUT_RATE_HZ, 2) for n in names}}


def clip_ratios(rows: list[dict[str, Any]]) -> dict[str, float | None]:
    """Per clip, in order of first appearance: our median end → audio over the peer's (answered
    calls only); None where either side never answered it."""
    out: dict[str, float | None] = {}
    for clip in dict.fromkeys(r["clip"] for r in rows):
        ours = median(r["end_to_audio"] for r in rows if r["clip"] == clip and r["side"] == "ours")
        peer = median(r["end_to_audio"] for r in rows if r["clip"] == clip and r["side"] == "peer")
        out[clip] = ours / peer if ours is not None and peer is not None and peer > 0 else None
    return out


def median_ratio(ratios: dict[str, float | None]) -> float | None:
    """The median of the per-clip ratios (clips both sides answered)."""
    return median(ratios.values())


def _versions() -> str:
    out = []
    for name in ("pipecat-ai", "llama-cpp-python", "faster-whisper", "piper-tts", "onnxruntime"):
        try:
            out.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            continue
    return ", ".join(out)


def report(result: dict[str, Any], header: str, command: str) -> str:
    rows = result["rows"]
    ratios = clip_ratios(rows)
    overall = median_ratio(ratios)
    lines = ["# End of speech to first audio: `pipeline serve` and Pipecat on the same models", "",
             header, "", f"Command: `{command}`", "",
             f"Packages: {_versions()}.", "",
             "**ours**: `pipeline serve` as shipped (its own process, default config and models"
             + (f", plus `{' '.join(result['serve_args'])}`" if result["serve_args"] else "")
             + "), over the realtime protocol.", "",
             f"**peer**: {PEER_SETUP}"
             + ("" if result.get("peer_whisper_compute_type", "default") == "default" else
                f" Whisper's compute_type set to {result['peer_whisper_compute_type']}."), "",
             f"One client, {result['rounds']} round(s), each clip once per side per round, the "
             "order of the sides alternating round by round, "
             f"{result['gap_s']:g} s between calls. Milliseconds after the caller's end of speech; "
             "`end → audio` is the first agent audio at the client holding 10 ms above -45 dBFS.",
             "", "| side | answered | end → audio median | p90 | "
             + " | ".join(s.replace("_", " ") for s in STAGES) + " |",
             "|---" * (4 + len(STAGES)) + "|"]
    for side in SIDES:
        mine = [r for r in rows if r["side"] == side]
        answered = sum(r["end_to_audio"] is not None for r in mine)
        lines.append(f"| {side} | {answered}/{len(mine)} | "
                     f"{_ms(median(r['end_to_audio'] for r in mine))} | "
                     f"{_ms(p90(r['end_to_audio'] for r in mine))} | "
                     + " | ".join(_ms(median(r.get(s) for r in mine)) for s in STAGES) + " |")
    lines += ["", "Milestones are medians of each server's own marks (ours: its events and "
              "`x.stage` marks, as `bench.wire` reads them; the peer's: the frames its pipeline "
              "pushed, as an observer saw them); `commit` is the end of the caller's turn.", "",
              "| clip | seconds | ours median | peer median | ours / peer |", "|---|---|---|---|---|"]
    for clip, seconds in result["clips"].items():
        o = median(r["end_to_audio"] for r in rows if r["clip"] == clip and r["side"] == "ours")
        p = median(r["end_to_audio"] for r in rows if r["clip"] == clip and r["side"] == "peer")
        ratio = ratios.get(clip)
        lines.append(f"| {clip} | {seconds} | {_ms(o)} | {_ms(p)} | "
                     f"{'-' if ratio is None else f'{ratio:.2f}'} |")
    lines += ["", "Median per-clip ratio, ours / peer: "
              + ("-" if overall is None else f"**{overall:.2f}**")
              + f" (over {sum(v is not None for v in ratios.values())} clips).", "",
              "Every call:", "", "| round | clip | side | end → audio | turns committed |",
              "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['round']} | {r['clip']} | {r['side']} | "
                     f"{'no answer' if r['end_to_audio'] is None else _ms(r['end_to_audio'])} | "
                     f"{r['turns_committed']} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clips", type=int, default=None,
                        help="only the first N clips (default: all 7)")
    parser.add_argument("--gap", type=float, default=1.0, help="seconds between calls")
    parser.add_argument("--out", type=Path, default=None,
                        help="the Markdown report; the JSON goes beside it (.json)")
    parser.add_argument("--logs", type=Path, default=None,
                        help="a folder for the peer's server logs (default: a temporary one)")
    parser.add_argument("--peer-log-level", default="INFO",
                        help="the Pipecat bot's log level (DEBUG shows each turn's decisions)")
    parser.add_argument("--peer-whisper-compute-type", default="default",
                        help="the peer's WhisperSTTService compute_type (default: Pipecat's own, "
                             "float32 on a CPU for this model file; ours runs int8)")
    parser.add_argument("serve_args", nargs="*", help="extra `pipeline serve` arguments (after --)")
    args = parser.parse_args()
    if args.logs:
        args.logs.mkdir(parents=True, exist_ok=True)
    machine = describe_machine()
    before = os.getloadavg()
    result = run(args.rounds, args.clips, args.serve_args, args.gap, args.logs,
                 args.peer_whisper_compute_type, args.peer_log_level)
    after = os.getloadavg()
    header = report_header(machine, before, after)
    command = "python -m bench.peer " + " ".join(sys.argv[1:])
    text = report(result, header, command)
    print(text)
    if args.out:
        ratios = clip_ratios(result["rows"])
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        args.out.with_suffix(".json").write_text(json.dumps(
            {"date": dt.date.today().isoformat(), "header": header, "command": command,
             "machine": machine, "load_before": before, "load_after": after,
             "peer_setup": PEER_SETUP, "packages": _versions(), **result,
             "clip_ratios": ratios, "median_ratio": median_ratio(ratios)}, indent=1))


if __name__ == "__main__":
    main()
