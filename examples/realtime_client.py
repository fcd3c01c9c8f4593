"""A scripted call against the local realtime-API server, the way a hosted-API client makes one.

Start the server, then run the client:

    python -m pipeline serve
    python examples/realtime_client.py --out agent.wav

It sends `session.update` (instructions and a tool with a spoken parameter), streams a WAV file
as pcm16 at 24 kHz in 20 ms appends at real time, then silence, prints the conversation
(`Caller: ...` / `Agent: ...`), saves the agent's audio if asked, and exits after the first
`response.done`. Only `websockets`, numpy and the standard library: nothing from this package.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import sys
import time
import wave
from pathlib import Path
from typing import Any

import numpy as np
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

RATE_HZ = 24_000  # pcm16 at 24 kHz: the hosted APIs' default format
FRAME_S = 0.020  # 20 ms appends, as a telephony stack or a microphone callback would send

TOOL = {
    "type": "function",
    "name": "lookup_order",
    "description": "Look up the status of a customer's order by its number.",
    "parameters": {
        "type": "object",
        "required": ["order_id", "holding_line"],
        "properties": {
            "order_id": {"type": "string", "description": "The order number."},
            # spoken: the agent says this aloud while the tool runs, so the line is never silent
            "holding_line": {"type": "string", "spoken": True,
                             "description": "A short sentence to say while looking it up."},
        },
    },
}


def read_wav_24k(path: Path) -> np.ndarray:
    """A 16-bit PCM WAV as mono int16 at 24 kHz (linear interpolation: fine for speech)."""
    try:
        with wave.open(str(path), "rb") as w:
            if w.getsampwidth() != 2:
                raise SystemExit(f"{path} is not 16-bit PCM; convert it, e.g. `ffmpeg -i "
                                 f"{path.name} -ar 24000 -ac 1 -sample_fmt s16 caller.wav`")
            rate, channels = w.getframerate(), w.getnchannels()
            pcm = np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32)
    except (OSError, wave.Error, EOFError) as exc:
        raise SystemExit(f"cannot read {path} as a WAV file ({exc}); "
                         "pass a 16-bit PCM WAV with --wav") from None
    mono = pcm.reshape(-1, channels).mean(axis=1)
    n_out = int(len(mono) * RATE_HZ / rate)
    out = np.interp(np.arange(n_out) * rate / RATE_HZ, np.arange(len(mono)), mono)
    return np.clip(out, -32768, 32767).astype("<i2")


async def stream_audio(ws: ClientConnection, pcm: np.ndarray) -> None:
    """The caller's microphone: the file at real time, then silence until the call ends."""
    per_frame = int(RATE_HZ * FRAME_S)
    silence = np.zeros(per_frame, "<i2")
    start, sent = time.monotonic(), 0
    while True:
        chunk = pcm[sent * per_frame:(sent + 1) * per_frame]
        if len(chunk) < per_frame:
            chunk = np.concatenate([chunk, silence[len(chunk):]])
        await ws.send(json.dumps({"type": "input_audio_buffer.append",
                                  "audio": base64.b64encode(chunk.tobytes()).decode("ascii")}))
        sent += 1
        await asyncio.sleep(max(0.0, start + sent * FRAME_S - time.monotonic()))


def agent_text(done: dict[str, Any]) -> str:
    output = done["response"].get("output") or [{}]
    return " ".join(part.get("transcript", "") for part in output[0].get("content", [])).strip()


async def call(args: argparse.Namespace) -> int:
    pcm = read_wav_24k(args.wav)
    headers = {"Authorization": f"Bearer {args.token}"} if args.token else None
    agent_audio: list[bytes] = []
    try:
        async with connect(args.url, additional_headers=headers, proxy=None) as ws:
            await ws.send(json.dumps({"type": "session.update", "session": {
                "instructions": "You are a friendly shop assistant on a phone call. Answer in one "
                                "or two short sentences.",
                "tools": [TOOL],
                "audio": {
                    "input": {"format": {"type": "audio/pcm", "rate": RATE_HZ},
                              "turn_detection": {"type": "server_vad", "silence_duration_ms": 600}},
                    "output": {"format": {"type": "audio/pcm", "rate": RATE_HZ}},
                },
            }}))
            mic = asyncio.ensure_future(stream_audio(ws, pcm))
            try:
                status = await asyncio.wait_for(listen(ws, agent_audio), timeout=args.timeout)
            except TimeoutError:
                print(f"no response.done within {args.timeout:.0f} s; is the server's model slow? "
                      "Try a longer --timeout.", file=sys.stderr)
                status = 1
            finally:
                mic.cancel()
    except InvalidStatus as exc:
        code = exc.response.status_code
        hint = " (pass the server's token with --token)" if code == 401 else ""
        print(f"the server refused the connection: HTTP {code}{hint}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"cannot connect to {args.url} ({exc}); start it with `python -m pipeline serve`",
              file=sys.stderr)
        return 2
    if args.out and agent_audio:
        with wave.open(str(args.out), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(RATE_HZ)
            w.writeframes(b"".join(agent_audio))
        print(f"wrote {args.out} ({sum(map(len, agent_audio)) / 2 / RATE_HZ:.1f} s of agent audio)",
              file=sys.stderr)
    return status


async def listen(ws: ClientConnection, agent_audio: list[bytes]) -> int:
    """Print the conversation; return once the first response is done (0 if it completed)."""
    try:
        async for message in ws:
            event = json.loads(message)
            kind = event["type"]
            if kind == "conversation.item.input_audio_transcription.completed":
                if event["transcript"]:
                    print(f"Caller: {event['transcript']}")
            elif kind == "response.output_audio.delta":
                agent_audio.append(base64.b64decode(event["delta"]))
            elif kind == "error":
                print(f"server error {event['error']['code']}: {event['error']['message']}",
                      file=sys.stderr)
            elif kind == "response.done":
                state = event["response"]["status"]
                note = "" if state == "completed" else f"  [{state}]"
                print(f"Agent: {agent_text(event)}{note}")
                return 0 if state == "completed" else 1
    except ConnectionClosed:
        pass
    print("the server closed the connection before the agent answered", file=sys.stderr)
    return 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="ws://127.0.0.1:8765/v1/realtime", help="server address")
    parser.add_argument("--wav", type=Path, default=Path("models/audio/jfk.wav"),
                        help="the caller's audio, a 16-bit PCM WAV (default models/audio/jfk.wav)")
    parser.add_argument("--out", type=Path, help="save the agent's audio to this WAV file")
    parser.add_argument("--token", help="the server's bearer token, if it was started with one")
    parser.add_argument("--timeout", type=float, default=90.0,
                        help="give up after this many seconds without a response (default 90)")
    return asyncio.run(call(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
