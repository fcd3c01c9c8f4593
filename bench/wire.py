"""End of speech to first audio at the wire: `pipeline serve` as shipped, a client at real time.

The server is started exactly as a user starts it (`python -m pipeline serve`, default config and
models, its own process); one WebSocket client per call streams a spoken question at real time
(100 ms appends of 24 kHz pcm16 after 250 ms of silence, then silence, as a phone would) and
reads what comes back. Per call:

- **end → audio**: the caller's last loud 32 ms window (the clip's end of speech, above -40 dBFS)
  to the arrival of the first agent audio delta that is not silence (a 10 ms frame above
  -45 dBFS), on the client's clock: what a caller waits.
- the server's milestones after the end of speech: the commit and the final transcript when their
  events arrive, and the `x.stage` marks the server stamps (LLM first token, first chunk, TTS
  first audio, first audio out), mapped onto the client's clock by the smallest transit seen.

Clips are interleaved round by round, so drift on a shared machine spreads over all of them.
Medians and p90 over every call; the machine and its load before and after head the report.

`--via twilio` (or `telnyx`, `plivo`; `realtime,twilio` for both, call by call on one server)
calls the same server the way a carrier does: `pipeline.testing.carrier`, written from the
carrier's documentation, opens `/telephony/twilio` and streams the clip as 20 ms frames of 8 kHz
mu-law at real time (250 ms of silence first, silence after). **end → audio** is then the
clip's end of speech (the send time of the utterance's first frame plus the clip's last loud
window) to the arrival of the first agent media frame holding 10 ms above -45 dBFS. The carrier's
protocol carries no events, so a phone call has no server milestones.

A lever is measured A/B in one run: each `--variant 'NAME=ARGS'` starts its own server (its
`pipeline serve` arguments after the shared ones) and the variants take turns call by call, their
order alternating round by round, so a loaded machine's drift falls on all of them alike.
Leading `VAR=VALUE` words of ARGS set the server's environment instead ('blas=PIPELINE_BLAS_THREADS=0'). Per
variant the report adds commit → first audio out (what a reply ready at commit should make a
hand-over) and the speculation's outcomes (adopted, or dropped and made again after the commit).

    python -m bench.wire [--rounds 3] [--via realtime,twilio] [--out bench/results/DATE-wire.md]
    python -m bench.wire --variant 'full=' --variant 'sized=--set stt.window=sized'
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import datetime as dt
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.base.audio import INPUT_RATE_HZ, alaw_decode, dbfs, mulaw_decode
from pipeline.testing.carrier import Carrier
from pipeline.testing.server import chunks_b64, pcm16_24k

from .clips import jfk, speech
from .machine import describe_machine, machine_line
from .serve_calls import CHUNK_MS, last_sound_s, send_at_real_time
from .summary import median, p90

ROOT = Path(__file__).resolve().parents[1]
WIRE_RATE_HZ = 24_000
LEAD_S = 0.25
# a call's first turn when the clip is its second (`--second-turn`): a greeting, and time for
# the reply to it to be said and heard out (a reply of one or two short sentences)
OPENER, OPENER_GAP_S = "Hi, I have a quick question for you.", 7.0
TRAILING_SILENCE_S = 4.0
CALL_CAP_S = 45.0

QUESTIONS = (
    "What time do you close today?",
    "I'd like a refund for my last order, please.",
    "Can I book a table for two at seven tonight?",
    "Tell me about that famous speech.",
    "My package never arrived. What can I do about it?",
    "Do you have any rooms left for Friday night?",
)
MARKS = ("final_pass", "llm_first_token", "first_chunk", "tts_first_audio", "first_audio_out")
# The stage budget (issue: half a second), in ms after the end of speech, each stage by the time
# it must be done. "at commit": the 600 ms silence policy, the reply's sound ready by the commit,
# so the first audio leaves at once; "early commit": the turn ended before min_silence_ms where
# the end-of-turn signals agree. The speech-stop is the VAD's (turn.speech_stop_ms, 160 ms); the
# final pass is the sized one begun there (tiny.en, 2 cores), with no partial pass in its way; the
# first token has the instructions and tools held from the last request, so only the turn's words
# are evaluated (with response.prefill, only what the final pass changed); the first chunk is a
# short first phrase; Piper's first audio is that phrase's.
BUDGETS: dict[str, dict[str, int]] = {
    "at commit": {"speech_stopped": 160, "final_pass": 300, "stt_final": 700, "llm_first_token": 460, "first_chunk": 580,
                  "tts_first_audio": 660, "commit": 700, "first_audio_out": 700, "end_to_audio": 700},
    "early commit": {"speech_stopped": 160, "final_pass": 260, "stt_final": 500, "llm_first_token": 360, "first_chunk": 420,
                     "tts_first_audio": 480, "commit": 500, "first_audio_out": 500, "end_to_audio": 500},
}
BUDGET_STAGES = ("speech_stopped", "final_pass", "llm_first_token", "first_chunk", "tts_first_audio", "commit",
                 "stt_final", "first_audio_out", "end_to_audio")
VIAS = ("realtime", "twilio", "telnyx", "plivo")
AS_SHIPPED = "as shipped"


def sounds(pcm16: bytes, floor_dbfs: float = -45.0) -> bool:
    """Whether a delta of agent audio holds a 10 ms frame above `floor_dbfs`."""
    audio = np.frombuffer(pcm16, "<i2").astype(np.float32) / 32768.0
    frame = WIRE_RATE_HZ // 100
    return any(dbfs(audio[i:i + frame]) > floor_dbfs for i in range(0, len(audio) - frame + 1, frame))


def clips() -> dict[str, np.ndarray]:
    out = {"jfk.wav": jfk()}
    for q in QUESTIONS:
        out[q] = speech(q)
    return out


def _chunks(audio: np.ndarray) -> list[str]:
    pcm = pcm16_24k(audio, lead_s=LEAD_S, trailing_silence_s=TRAILING_SILENCE_S)
    return list(chunks_b64(pcm, chunk_ms=CHUNK_MS))


async def one_call(url: str, audio: np.ndarray, instructions: str | None = None) -> dict[str, Any]:
    """One call: the clip at real time; what arrived when, in ms after the end of speech.
    `instructions`: the client's own, sent in its session.update (None: the server's)."""
    from websockets.asyncio.client import connect

    chunks = _chunks(audio)
    async with connect(url, proxy=None, max_size=None) as ws:
        while json.loads(await ws.recv())["type"] != "session.created":
            pass
        session: dict[str, Any] = {"type": "realtime", "include_local_events": True}
        await ws.send(json.dumps({"type": "session.update", "session": session | (
            {} if instructions is None else {"instructions": instructions})}))
        loop = asyncio.get_running_loop()
        started = loop.time()
        end_s = started + LEAD_S + last_sound_s(audio)
        seen: dict[str, float] = {}
        marks: list[tuple[str, float, float]] = []  # stage, server perf, arrival
        offset = [float("inf")]  # client clock - server perf, smallest seen
        commits: list[float] = []
        speculations: list[dict[str, Any]] = []  # the server's `speculation` marks' details
        prefills: list[tuple[float, dict[str, Any]]] = []  # first-token marks' prompt and held tokens
        stops: list[float] = []  # the server's speech-stop marks (its perf clock)
        said: list[tuple[float, str]] = []  # the first-chunk marks' text: what the voice got first

        async def read() -> None:
            async for now, event, kind in server_events(ws, loop, offset):
                if kind == "input_audio_buffer.committed":
                    commits.append(now)
                elif kind == "x.stage" and event.get("stage") == "speech_stopped":
                    # when the server's VAD stopped (the event of that name comes with the
                    # commit, its audio_end_ms where the voice ended, ~100 ms before the VAD's end)
                    stops.append(event["perf"])
                elif kind == "conversation.item.input_audio_transcription.completed" and now > end_s - 1.0:
                    seen.setdefault("stt_final", now)  # the clip's last turn's (not a turn before it)
                elif kind == "x.stage" and event.get("stage") in MARKS:
                    marks.append((event["stage"], event["perf"], now))
                    if event["stage"] == "llm_first_token" and "prompt_tokens" in event.get("detail", {}):
                        prefills.append((event["perf"], event["detail"]))
                    if event["stage"] == "first_chunk":
                        said.append((event["perf"], str(event.get("detail", {}).get("text", ""))))
                elif kind == "x.stage" and event.get("stage") == "speculation":
                    speculations.append(event.get("detail", {}))
                elif kind == "response.output_audio.delta" and now > end_s and "audio" not in seen:
                    if sounds(base64.b64decode(event["delta"])):
                        seen["audio"] = now
                        return

        reader = asyncio.ensure_future(read())
        await send_at_real_time(ws, chunks, reader, started, cap_s=CALL_CAP_S)
    row: dict[str, Any] = {"turns_committed": len(commits)}
    after = [c for c in commits if c > end_s - 1.0]  # the commit of the turn that ends the clip
    row["commit"] = (after[0] - end_s) * 1000 if after else None
    stopped = [perf + offset[0] for perf in stops if perf + offset[0] > end_s - 1.0]
    if stopped:
        seen["speech_stopped"] = stopped[0]
    for event in ("stt_final", "speech_stopped"):
        row[event] = (seen[event] - end_s) * 1000 if event in seen else None
    for stage in MARKS:
        stamped = [perf + offset[0] for s, perf, _ in marks if s == stage and perf + offset[0] > end_s - 1.0]
        row[stage] = (stamped[0] - end_s) * 1000 if stamped else None
    row["end_to_audio"] = (seen["audio"] - end_s) * 1000 if "audio" in seen else None
    # the prefill of the reply to the clip's turn: its prompt, and the tokens the model held
    ours = [d for perf, d in prefills if perf + offset[0] > end_s - 1.0]
    row["prompt_tokens"] = ours[0]["prompt_tokens"] if ours else None
    row["cached_tokens"] = ours[0]["cached_tokens"] if ours else None
    first = [text for perf, text in said if perf + offset[0] > end_s - 1.0]
    row["first_chunk_text"] = first[0] if first else None
    row["commit_to_audio_out"] = (row["first_audio_out"] - row["commit"]
                                  if row["first_audio_out"] is not None and row["commit"] is not None
                                  else None)
    # the speculation on the turn that ends the clip: its last mark (an earlier turn's come first)
    last = speculations[-1] if speculations else {}
    row["speculation"] = (f"{last.get('outcome')} ({last.get('source')})" if last else "none")
    return row


def phone_sounds(frame: bytes, *, alaw: bool = False, floor_dbfs: float = -45.0) -> bool:
    """Whether a 20 ms frame of 8 kHz G.711 holds a 10 ms half above `floor_dbfs`."""
    audio = (alaw_decode if alaw else mulaw_decode)(frame)
    return any(dbfs(audio[i:i + 80]) > floor_dbfs for i in range(0, len(audio) - 79, 80))


async def phone_call(port: int, audio: np.ndarray, kind: str = "twilio") -> dict[str, Any]:
    """One call as a carrier places it: the clip down the line at real time; ms from its end
    of speech to the first agent frame that sounds."""
    row: dict[str, Any] = {"turns_committed": None, "commit": None, "stt_final": None,
                           **dict.fromkeys(MARKS), "end_to_audio": None}
    async with Carrier(kind, port) as c:
        await asyncio.sleep(LEAD_S)
        await c.speak(audio)
        assert c.said_from is not None
        end_s = c.said_from + last_sound_s(audio)

        def answered() -> float | None:
            return next((t for t, frame in c.arrivals if t > end_s and phone_sounds(frame)), None)

        try:
            await c.until(lambda: answered() is not None or c.closed_at is not None, CALL_CAP_S,
                          "agent audio")
        except AssertionError:
            return row
        heard = answered()
        row["end_to_audio"] = (heard - end_s) * 1000 if heard is not None else None
    return row


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def server_events(ws: Any, loop: asyncio.AbstractEventLoop,
                  offset: list[float]) -> AsyncIterator[tuple[float, dict[str, Any], str]]:
    """Each server event with its arrival time on `loop`'s clock and its type; `offset[0]` keeps
    the smallest client clock - server `perf` seen (the clocks' offset, to read server marks)."""
    async for message in ws:
        now = loop.time()
        event = json.loads(message)
        if "perf" in event:
            offset[0] = min(offset[0], now - event["perf"])
        yield now, event, event["type"]


def _environment(args: list[str]) -> tuple[dict[str, str], list[str]]:
    """A variant's leading `VAR=VALUE` words as environment variables, and the arguments after."""
    env: dict[str, str] = {}
    while args and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", args[0]):
        key, value = args[0].split("=", 1)
        env[key], args = value, args[1:]
    return env, args


def start_server(extra: list[str], env: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """`pipeline serve` on a free port with these arguments, and these environment variables
    besides this process's."""
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "pipeline", "serve", "--port", str(port), *extra],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, **(env or {})})
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"pipeline serve exited: {proc.stderr.read().decode()[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc, f"ws://127.0.0.1:{port}/v1/realtime"
        time.sleep(0.2)
    proc.kill()
    raise SystemExit("pipeline serve did not listen within 180 s")


def own_instructions(n: int) -> str:
    """A client's instructions for its n-th call: the caller's account first, as an app puts what
    it knows of the caller into them, so no two calls' instructions share more than a few tokens."""
    from pipeline.base.config import DEFAULT_INSTRUCTIONS

    return f"The caller on this line holds account {n:06d}. {DEFAULT_INSTRUCTIONS}"


def _call(via: str, url: str, clip: np.ndarray, instructions: str | None = None) -> dict[str, Any]:
    if via == "realtime":
        return asyncio.run(one_call(url, clip, instructions))
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    return asyncio.run(phone_call(port, clip, via))


def after_a_turn(clip: np.ndarray, opener: np.ndarray) -> np.ndarray:
    """The clip as a call's second turn: the opener, OPENER_GAP_S for its reply to be heard out,
    then the clip (every mark is read after the clip's end, so the second turn's are)."""
    return np.concatenate([opener, np.zeros(int(OPENER_GAP_S * INPUT_RATE_HZ), np.float32), clip])


def run(rounds: int, extra: list[str], vias: tuple[str, ...] = ("realtime",),
        variants: dict[str, list[str]] | None = None, own: bool = False,
        second: bool = False) -> dict[str, Any]:
    """Every clip `rounds` times on each variant's server (one server when `variants` is None),
    by each path, the variants alternating call by call. `own`: each call's client sends its own
    instructions (`own_instructions`), the same to every variant. `second`: each clip is the
    call's second turn, after OPENER and its reply (`after_a_turn`)."""
    audio = clips()
    if second:
        opener = speech(OPENER)
        audio = {name: after_a_turn(clip, opener) for name, clip in audio.items()}
    variants = variants or {AS_SHIPPED: []}
    servers: dict[str, tuple[subprocess.Popen[bytes], str]] = {}
    try:
        for variant, args in variants.items():
            env, rest = _environment(args)
            servers[variant] = start_server([*extra, *rest], env)
            for via in vias:  # warm: the first call's one-off costs, each path's
                _call(via, servers[variant][1], audio[QUESTIONS[0]])
        rows: list[dict[str, Any]] = []
        order = list(variants)
        for r in range(rounds):
            for k, (name, clip) in enumerate(audio.items()):
                said = own_instructions(r * len(audio) + k) if own else None
                for variant in order:
                    for via in vias:
                        row = _call(via, servers[variant][1], clip, said)
                        rows.append({"clip": name, "round": r, "variant": variant, "via": via, **row})
                        print(f"round {r} {variant} {via} {name[:40]!r}: {row['end_to_audio']}",
                              file=sys.stderr)
                order.reverse()  # neither variant always goes first
    finally:
        for proc, _url in servers.values():
            proc.terminate()
            proc.wait(timeout=30)
    return {"rows": rows, "variants": variants,
            "clips": {n: round(len(a) / INPUT_RATE_HZ, 2) for n, a in audio.items()}}


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x:.0f}"


def report(result: dict[str, Any], header: str, command: str) -> str:
    every = result["rows"]
    variants: dict[str, list[str]] = result.get("variants") or {AS_SHIPPED: []}
    vias = list(dict.fromkeys(r.get("via", "realtime") for r in every))
    lines = ["# End of speech to first audio at the wire", "", header, "", f"Command: `{command}`", "",
             "`pipeline serve` as shipped (its own process, default config and models); one "
             "WebSocket client per call at real time. Milliseconds after the caller's end of "
             "speech; `end → audio` is the first non-silent agent audio at the client; "
             "`commit → out` is the server's first audio out after its commit."]
    if vias != ["realtime"]:
        lines += ["", "A phone call (`via` a carrier) is the clip as 20 ms frames of 8 kHz mu-law "
                  "from a client in that carrier's dialect (`pipeline.testing.carrier`), its "
                  "`end → audio` the first agent media frame that sounds; the carrier's protocol "
                  "carries no events, so it has no milestones (`-`). Calls alternate path by "
                  "path, clip by clip, on the one server."]
    for variant, args in variants.items():
        if len(variants) > 1:
            lines += ["", f"## {variant}" + (f": `{' '.join(args)}`" if args else ": as shipped")]
        for via in vias:
            rows = [r for r in every if r.get("variant", AS_SHIPPED) == variant
                    and r.get("via", "realtime") == via]
            if len(vias) > 1:
                lines += ["", f"{'###' if len(variants) > 1 else '##'} via {via}"]
            lines += ["", _stage_table(rows), "", _clip_table(rows, result["clips"])]
            if via == "realtime":
                lines += ["", _budget_table(rows)]
            if via == "realtime":
                lines += ["", _speculation_line(rows), _prefill_line(rows)]
            missing = sum(r["end_to_audio"] is None for r in rows)
            lines += ["", f"{len(rows)} calls, {missing} without agent audio after the end of speech."]
    if len(variants) > 1:
        lines += ["", _paired_table(every, list(variants))]
    return "\n".join(lines) + "\n"


def _paired_table(rows: list[dict[str, Any]], variants: list[str]) -> str:
    """Each variant against the first, call by call (the same clip in the same round): the
    median difference and ratio, over every pair and over the pairs whose replies began with the
    same first chunk. Two servers' replies to one question can differ (their timing moves the
    transcript and the prompt's batches), and a longer first chunk takes longer whatever the
    lever; the second column compares the same work."""
    calls: dict[tuple[str, int, str], dict[str, dict[str, Any]]] = {}
    for r in rows:
        calls.setdefault((r["clip"], r["round"], r.get("via", "realtime")), {})[r.get("variant", AS_SHIPPED)] = r
    base = variants[0]
    lines = ["## Call by call, against the first variant", "",
             f"Median difference in ms (ratio) to `{base}` on the same call; sooner: the calls where it "
             "came sooner.", "",
             "| variant | stage | every call | n | sooner | same first chunk | n | sooner |",
             "|---|---|---|---|---|---|---|---|"]
    for other in variants[1:]:
        pairs = [(c[other], c[base]) for c in calls.values() if other in c and base in c]
        same = [(a, b) for a, b in pairs if a.get("first_chunk_text") == b.get("first_chunk_text")]
        for stage in ("llm_first_token", "end_to_audio"):
            cells = []
            for chosen in (pairs, same):
                both = [(a[stage], b[stage]) for a, b in chosen if a.get(stage) and b.get(stage)]
                if not both:
                    cells += ["-", "0", "-"]
                    continue
                diff = median([a - b for a, b in both])
                ratio = median([a / b for a, b in both])
                cells += [f"{diff:+.0f} ({ratio:.3f})", str(len(both)), str(sum(a < b for a, b in both))]
            lines.append(f"| {other} | {stage} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _stage_table(rows: list[dict[str, Any]]) -> str:
    stages = ("commit", "stt_final", *MARKS, "end_to_audio", "commit_to_audio_out")
    heads = [s.replace("end_to_audio", "end → audio").replace("commit_to_audio_out", "commit → out")
             for s in stages]
    lines = ["| | " + " | ".join(heads) + " |", "|---" * (len(stages) + 1) + "|"]
    for label, fn in (("median", median), ("p90", p90)):
        lines.append(f"| {label} | " + " | ".join(_ms(fn(r.get(s) for r in rows)) for s in stages) + " |")
    return "\n".join(lines)


def _budget_table(rows: list[dict[str, Any]]) -> str:
    """Each stage's measured median beside its budget (`BUDGETS`), in ms after the end of speech:
    the stage is within it where the median is no later than the target."""
    names = list(BUDGETS)
    lines = ["| stage | " + " | ".join(f"budget, {n}" for n in names) + " | median | p90 | within |",
             "|---" * (len(names) + 4) + "|"]
    for stage in BUDGET_STAGES:
        got = median(r.get(stage) for r in rows)
        within = " / ".join("-" if got is None else ("yes" if got <= BUDGETS[n][stage] else "no") for n in names)
        lines.append(f"| {stage.replace('_', ' ')} | " + " | ".join(str(BUDGETS[n][stage]) for n in names)
                     + f" | {_ms(got)} | {_ms(p90(r.get(stage) for r in rows))} | {within} |")
    return "\n".join(lines)


def _clip_table(rows: list[dict[str, Any]], seconds: dict[str, float]) -> str:
    lines = ["| clip | seconds | end → audio median | p90 | commit median | turns committed |",
             "|---|---|---|---|---|---|"]
    for name, length in seconds.items():
        mine = [r for r in rows if r["clip"] == name]
        turns = "/".join(str(r["turns_committed"]) if r["turns_committed"] is not None else "-"
                         for r in mine)
        lines.append(f"| {name} | {length} | {_ms(median(r['end_to_audio'] for r in mine))} | "
                     f"{_ms(p90(r['end_to_audio'] for r in mine))} | "
                     f"{_ms(median(r['commit'] for r in mine))} | {turns} |")
    return "\n".join(lines)


def _speculation_line(rows: list[dict[str, Any]]) -> str:
    """How each call's last speculation ended: adopted at the commit, or dropped and the reply
    made again after it (from a partial the final did not confirm, or no speculation at all)."""
    outcomes = Counter(r.get("speculation", "none") for r in rows)
    adopted = sum(n for o, n in outcomes.items() if o.startswith("adopted"))
    parts = ", ".join(f"{o} {n}" for o, n in outcomes.most_common())
    return f"Speculation adopted on {adopted} of {len(rows)} calls ({parts})."


def _prefill_line(rows: list[dict[str, Any]]) -> str:
    """What the first token waited for: the reply's prompt, and how much of it the model still
    held evaluated from the call before (its prefix cache), so only the rest was prefilled."""
    told = [r for r in rows if r.get("prompt_tokens") is not None]
    if not told:
        return "The server told no prefill (an LLM stage that does not count its prompt)."
    fresh = [r["prompt_tokens"] - r["cached_tokens"] for r in told]
    return (f"Prefill, over {len(told)} replies: prompt median {median(r['prompt_tokens'] for r in told):.0f} "
            f"tokens, {median(r['cached_tokens'] for r in told):.0f} of them held from before, "
            f"{median(fresh):.0f} evaluated (p90 {p90(fresh):.0f}).")


def report_header(machine: dict[str, Any], before: tuple[float, float, float],
                  after: tuple[float, float, float] | None = None) -> str:
    """A report's first line: the machine, and its load average before the run and after (now)."""
    load = " ".join(f"{x:.2f}" for x in before + (after or os.getloadavg()))
    return f"Machine: {machine_line(machine)}; load average (1, 5, 15 min) before, after: {load}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--via", default="realtime", help="how calls reach the server: "
                        f"{', '.join(VIAS)}, or several, comma-separated (default realtime)")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=ARGS",
                        help="a server with these extra `pipeline serve` arguments, A/B against "
                             "the other variants call by call (repeat it; 'NAME=' is as shipped)")
    parser.add_argument("--own-instructions", action="store_true",
                        help="each call's client sends its own instructions, the caller's account first")
    parser.add_argument("--second-turn", action="store_true",
                        help="each clip is its call's second turn, after a greeting and its reply")
    parser.add_argument("serve_args", nargs="*", help="extra `pipeline serve` arguments (after --)")
    args = parser.parse_args()
    vias = tuple(v.strip() for v in args.via.split(",") if v.strip())
    unknown = [v for v in vias if v not in VIAS]
    if unknown or not vias:
        parser.error(f"--via {args.via}: choose from {', '.join(VIAS)} (comma-separated)")
    variants = {}
    for spec in args.variant:
        name, sep, rest = spec.partition("=")
        if not sep or not name:
            parser.error(f"--variant {spec!r}: write NAME=ARGS (ARGS may be empty: as shipped)")
        variants[name] = shlex.split(rest)
    before = os.getloadavg()
    result = run(args.rounds, args.serve_args, vias, variants or None, own=args.own_instructions,
                 second=args.second_turn)
    header = report_header(describe_machine(), before)
    command = "python -m bench.wire " + " ".join(sys.argv[1:])
    text = report(result, header, command)
    print(text)
    if args.out:
        args.out.write_text(text)
        args.out.with_suffix(".json").write_text(json.dumps(
            {"date": dt.date.today().isoformat(), "header": header, **result}, indent=1))


if __name__ == "__main__":
    main()
