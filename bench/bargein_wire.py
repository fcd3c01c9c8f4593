"""Barge-in at the wire: the caller talks over the agent's reply; when does the caller stop
hearing it, and what do the words decide?

`pipeline serve` as shipped, its own process (`bench.wire.start_server`); one WebSocket client
per item, at real time, as a microphone sends: 20 ms `input_audio_buffer.append`s of 24 kHz
pcm16, each sent once its 20 ms have passed (a microphone cannot send a sound before it is
made), silence between the words. The client asks a question (spoken, the set's caller voice)
under instructions to answer at length, lets the reply sound for `PLAY_BEFORE_S`, then says an
item of the barge-in set (`bench.bargein_words.build_set`: backchannels and interruptions in
Piper and espeak-ng voices) and, as human interruptions, jfk.wav's phrases cut at its pauses.

What the caller hears is modelled, not assumed: the server sends agent audio `lead_ms` (200 ms)
ahead of when it is due, then at real time, so the client plays each delta on arrival or when
the one before it has played, whichever is later (no jitter buffer beyond what the lead builds).
On that heard timeline, from the caller's onset (the first 10 ms of the item above -40 dBFS, at
the time the microphone took it):

- **onset → stopped**: the end of the last agent sound (a 10 ms frame above -45 dBFS) the caller
  hears before the delta stream breaks (no delta for `GAP_S`: the server paused or cancelled);
  0 when the agent was already silent (between words) at the onset.
- **interruption, onset → cancelled**: the arrival of `response.done` with status `cancelled`.
- **backchannel, resumed**: a delta of the same reply after the break, and onset → the first
  sound of it heard; or cancelled (a false cancel), or the reply never broke (not paused at all).

The server's own marks (`include_local_events`: the gate's pause, fire, verdict) are kept per
row. Medians and p90 over the items; the machine and its load before and after head the report.

    python -m bench.bargein_wire [--voices joe-1.0,espeak-us] [--limit N] [--out bench/results/DATE-bargein-wire.md]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import dataclasses
import datetime as dt
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.base.audio import INPUT_RATE_HZ, dbfs, resample, to_int16

from .summary import median, p90
from .wire import server_events

WIRE_RATE_HZ = 24_000
CHUNK_MS = 20  # a WebRTC or phone frame; the microphone's own delay is up to one chunk
PLAY_BEFORE_S = 1.5  # the caller lets the reply sound this long, then talks over it
GAP_S = 0.25  # no agent delta for this long: the stream broke (deltas come every 100 ms)
AFTER_S = 5.0  # the call ends this long after the item's onset at the latest
QUESTION = "Can you tell me about the hotel, its rooms, the pool and the restaurant?"
INSTRUCTIONS = ("You are the front desk of a seaside hotel. Answer every question at length, in "
                "at least five full sentences, with details about the rooms, the pool, the "
                "restaurant and breakfast.")
ONSET_DBFS = -40.0
SOUND_DBFS = -45.0


@dataclasses.dataclass
class Item:
    kind: str  # "backchannel" | "interruption"
    text: str
    voice: str
    audio: np.ndarray  # 16 kHz mono


def onset_s(audio: np.ndarray, floor_dbfs: float = ONSET_DBFS) -> float:
    """Start of the first 10 ms frame above `floor_dbfs`: where the caller begins."""
    hop = INPUT_RATE_HZ // 100
    for i in range(0, len(audio) - hop + 1, hop):
        if dbfs(audio[i:i + hop]) > floor_dbfs:
            return i / INPUT_RATE_HZ
    return 0.0


def sounding_frames(pcm16: bytes, floor_dbfs: float = SOUND_DBFS) -> list[float]:
    """Offsets (s) into a 24 kHz delta of its 10 ms frames above `floor_dbfs`."""
    audio = np.frombuffer(pcm16, "<i2").astype(np.float32) / 32768.0
    frame = WIRE_RATE_HZ // 100
    return [i / WIRE_RATE_HZ for i in range(0, len(audio) - frame + 1, frame)
            if dbfs(audio[i:i + frame]) > floor_dbfs]


@dataclasses.dataclass
class Heard:
    """A client that plays agent audio as it comes: each delta on arrival or after the one
    before it, whichever is later."""

    cursor: float = float("-inf")
    deltas: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    def add(self, arrival: float, response_id: str, pcm16: bytes) -> dict[str, Any]:
        start = max(arrival, self.cursor)
        seconds = len(pcm16) / 2 / WIRE_RATE_HZ
        self.cursor = start + seconds
        delta = {"arrival": arrival, "start": start, "seconds": seconds, "response_id": response_id,
                 "sounds": [start + s for s in sounding_frames(pcm16)]}
        self.deltas.append(delta)
        return delta


def read_heard(deltas: list[dict[str, Any]], response_id: str, onset: float, end: float, *,
               completed: bool = False) -> dict[str, Any]:
    """The reply's audio around the caller's onset, on the heard timeline (client clock, s):
    `broke` (no delta of it for GAP_S after the onset, the call's `end` counting as the next
    arrival unless the reply `completed` on its own), `stopped` (the end of its last sound heard
    before the break, not before the onset), `resumed` (its first sound heard after it)."""
    mine = [d for d in deltas if d["response_id"] == response_id]
    stalls_before = sum(1 for a, b in zip(mine, mine[1:], strict=False) if b["arrival"] < onset
                        and b["arrival"] - a["arrival"] >= GAP_S)
    before = [d for d in mine if d["arrival"] < onset]
    after = [d for d in mine if d["arrival"] >= onset]
    out: dict[str, Any] = {"stalls_before": stalls_before, "broke": False, "stopped": None,
                           "last_sent": None, "resumed": None}
    last = before[-1]["arrival"] if before else onset
    cut = None
    for i, d in enumerate(after):
        if d["arrival"] - last >= GAP_S:
            cut = i
            break
        last = d["arrival"]
    if cut is None:
        if completed or end - last < GAP_S:
            return out  # it played on to its end (or the call ended too soon to tell)
        cut = len(after)
    out["broke"] = True
    heard = before + after[:cut]
    ends = [s + 0.01 for d in heard for s in d["sounds"]]
    out["stopped"] = max([onset, *ends])
    out["last_sent"] = max(onset, heard[-1]["arrival"]) if heard else onset
    again = [s for d in after[cut:] for s in d["sounds"]]
    out["resumed"] = min(again) if again else None
    return out


def _pcm(audio_16k: np.ndarray) -> np.ndarray:
    return to_int16(resample(audio_16k.astype(np.float32), INPUT_RATE_HZ, WIRE_RATE_HZ)).astype("<i2")


class Microphone:
    """Real-time 24 kHz pcm16 in CHUNK_MS appends, each sent once its span has passed; silence
    unless a clip is placed (`say_at`)."""

    def __init__(self, ws: Any, started: float) -> None:
        self.ws = ws
        self.started = started
        self.step = WIRE_RATE_HZ * CHUNK_MS // 1000
        self.sent = 0  # samples sent
        self.clips: list[tuple[int, np.ndarray]] = []

    def say_at(self, at: float, audio_16k: np.ndarray) -> float:
        """Place a clip to start at client time `at` (moved to the next unsent sample if that
        is past); returns the time it starts."""
        first = max(self.sent, round((at - self.started) * WIRE_RATE_HZ))
        self.clips.append((first, _pcm(audio_16k)))
        return self.started + first / WIRE_RATE_HZ

    def _chunk(self) -> bytes:
        out = np.zeros(self.step, "<i2")
        lo, hi = self.sent, self.sent + self.step
        for first, pcm in self.clips:
            a, b = max(lo, first), min(hi, first + len(pcm))
            if a < b:
                out[a - lo:b - lo] = pcm[a - first:b - first]
        return out.tobytes()

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = self.started + (self.sent + self.step) / WIRE_RATE_HZ
            await asyncio.sleep(max(0.0, due - loop.time()))
            chunk = self._chunk()
            self.sent += self.step
            await self.ws.send(json.dumps({"type": "input_audio_buffer.append",
                                           "audio": base64.b64encode(chunk).decode("ascii")}))


async def one_call(url: str, question: np.ndarray, item: Item, *, cap_s: float = 60.0,
                   play_before_s: float = PLAY_BEFORE_S) -> dict[str, Any]:
    """The question, the reply, the item over it; the row, times in ms after the item's onset."""
    from websockets.asyncio.client import connect

    row: dict[str, Any] = {"kind": item.kind, "text": item.text, "voice": item.voice}
    async with connect(url, proxy=None, max_size=None) as ws:
        while json.loads(await ws.recv())["type"] != "session.created":
            pass
        await ws.send(json.dumps({"type": "session.update", "session": {
            "type": "realtime", "include_local_events": True, "instructions": INSTRUCTIONS}}))
        loop = asyncio.get_running_loop()
        mic = Microphone(ws, loop.time())
        mic.say_at(loop.time() + 0.3, question)
        heard = Heard()
        first: dict[str, Any] = {}  # the reply talked over: its id, when its sound is first heard
        onset: list[float] = []
        done: dict[str, tuple[float, str | None, str | None]] = {}  # response id -> arrival, status, reason
        marks: list[dict[str, Any]] = []
        started: list[float] = []  # input_audio_buffer.speech_started after the item began
        offset = [float("inf")]  # client clock - server perf, the smallest seen
        finished = asyncio.Event()

        def settle() -> None:
            """End the call once the item's outcome is in: cancelled, resumed, or the reply done."""
            if not onset or "id" not in first:
                return
            rid = first["id"]
            state = read_heard(heard.deltas, rid, onset[0], loop.time())
            if rid in done and loop.time() > done[rid][0] + 0.3:
                finished.set()
            elif state["resumed"] is not None and loop.time() > state["resumed"] + 0.5:
                finished.set()
            elif loop.time() > onset[0] + AFTER_S:
                finished.set()

        async def read() -> None:
            async for now, event, kind in server_events(ws, loop, offset):
                if kind == "response.output_audio.delta":
                    delta = heard.add(now, event["response_id"], base64.b64decode(event["delta"]))
                    if "id" not in first and delta["sounds"]:
                        first.update(id=event["response_id"], heard=delta["sounds"][0])
                        start = mic.say_at(delta["sounds"][0] + play_before_s, item.audio)
                        onset.append(start + onset_s(item.audio))
                elif kind == "input_audio_buffer.speech_started" and onset and now > onset[0] - 0.5:
                    started.append(now)
                elif kind == "response.done":
                    r = event["response"]
                    done[r["id"]] = (now, r.get("status"),
                                     (r.get("status_details") or {}).get("reason"))
                elif kind == "x.stage" and str(event.get("stage", "")).startswith(
                        ("barge_in", "false_interruption")):
                    marks.append({"stage": event["stage"], "perf": event["perf"], "arrival": now,
                                  "detail": event.get("detail", {})})
                settle()

        async def ticker() -> None:  # settle on time too: a resumed reply may send no event
            while not finished.is_set():
                await asyncio.sleep(0.1)
                settle()

        tasks = [asyncio.ensure_future(t) for t in (read(), mic.run(), ticker())]
        try:
            await asyncio.wait_for(finished.wait(), cap_s)
        except TimeoutError:
            row["error"] = "timed out"
        finally:
            ended_at = loop.time()
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    if not onset or "id" not in first:
        row["error"] = row.get("error") or "no agent audio"
        return row
    rid, t0 = first["id"], onset[0]
    status = done.get(rid)
    state = read_heard(heard.deltas, rid, t0, ended_at,
                       completed=status is not None and status[1] == "completed")
    ms = lambda t: None if t is None else round((t - t0) * 1000, 1)  # noqa: E731
    cancelled = status is not None and status[1] == "cancelled"
    ended_before = status is not None and status[0] < t0
    row.update({
        "reply_ended_before_onset": ended_before,
        "played_before_ms": round((t0 - first["heard"]) * 1000, 1),
        "stalls_before": state["stalls_before"],
        "broke": state["broke"],
        "stopped_ms": None if state["stopped"] is None else max(0.0, ms(state["stopped"]) or 0.0),
        "last_sent_ms": None if state["last_sent"] is None else max(0.0, ms(state["last_sent"]) or 0.0),
        "resumed_ms": ms(state["resumed"]),
        # a client that stops its own playback at speech_started, as the hosted API asks of one
        "speech_started_ms": ms(started[0]) if started else None,
        "cancelled": cancelled,
        "cancelled_ms": ms(status[0]) if cancelled and status is not None else None,
        "reason": status[2] if status is not None else None,
        # the server's marks, on the client's clock (perf + the smallest transit seen)
        "marks": [{"stage": m["stage"], "server_ms": ms(m["perf"] + offset[0]),
                   "arrival_ms": ms(m["arrival"]),
                   **{k: m["detail"][k] for k in ("why", "verdict", "heard") if k in m["detail"]}}
                  for m in marks],
    })
    return row


def jfk_items() -> list[Item]:
    """jfk.wav's phrases, cut at its pauses (`bench.eot_set.jfk_phrases`): a human voice
    interrupting."""
    from pipeline.testing import jfk

    from .eot_set import JFK_WORDS, jfk_phrases

    x = jfk()
    ends = jfk_phrases()
    out, begin = [], 0.0
    for words, end in zip(JFK_WORDS, ends[:len(JFK_WORDS)], strict=True):
        piece = x[int(begin * INPUT_RATE_HZ):int(end * INPUT_RATE_HZ)]
        start = max(0.0, onset_s(piece, -35.0) - 0.05)  # its room noise is ~-40 dBFS
        out.append(Item("interruption", words, "jfk", piece[int(start * INPUT_RATE_HZ):]))
        begin = end
    return out


def build_items(voices: list[str], *, with_jfk: bool = True) -> tuple[list[Item], list[str]]:
    from .bargein_words import build_set

    items, skipped = build_set(voices)
    out = [Item(i.kind, i.text, i.voice, i.audio) for i in items]
    return (out + jfk_items() if with_jfk else out), skipped


def _paused(r: dict[str, Any]) -> float | None:
    """Onset -> the server's first `barge_in_pause` mark, on the client's clock."""
    return next((m["server_ms"] for m in r.get("marks", []) if m["stage"] == "barge_in_pause"), None)


def _at_started(r: dict[str, Any]) -> float | None:
    """Onset -> stopped for a client that also stops playing at `speech_started`."""
    if r["stopped_ms"] is None:
        return None
    return r["stopped_ms"] if r.get("speech_started_ms") is None else min(r["stopped_ms"], r["speech_started_ms"])


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in rows if "error" not in r and not r.get("reply_ended_before_onset")]
    inter = [r for r in ok if r["kind"] == "interruption"]
    back = [r for r in ok if r["kind"] == "backchannel"]
    stopped = [r["stopped_ms"] for r in inter if r["broke"]]
    resumed = [r for r in back if not r["cancelled"] and r["resumed_ms"] is not None]

    def m(xs: list[Any]) -> float | None:
        v = median(xs)
        return None if v is None else round(v, 1)

    def q(xs: list[Any]) -> float | None:
        v = p90(xs)
        return None if v is None else round(v, 1)

    return {
        "items": len(rows), "measured": len(ok), "left_out": len(rows) - len(ok),
        "interruptions": len(inter), "backchannels": len(back),
        "interruptions_stopped": len(stopped),
        "stopped_ms_median": m(stopped), "stopped_ms_p90": q(stopped),
        "started_ms_median": m([_at_started(r) for r in inter if r["broke"]]),
        "started_ms_p90": q([_at_started(r) for r in inter if r["broke"]]),
        "paused_ms_median": m([_paused(r) for r in inter if r["broke"]]),
        "paused_ms_p90": q([_paused(r) for r in inter if r["broke"]]),
        "last_sent_ms_median": m([r["last_sent_ms"] for r in inter if r["broke"]]),
        "last_sent_ms_p90": q([r["last_sent_ms"] for r in inter if r["broke"]]),
        "stopped_ms_all_median": m([r["stopped_ms"] for r in ok if r["broke"]]),
        "stopped_ms_all_p90": q([r["stopped_ms"] for r in ok if r["broke"]]),
        "interruptions_cancelled": sum(r["cancelled"] for r in inter),
        "missed_rate": round(sum(not r["cancelled"] for r in inter) / max(1, len(inter)), 3),
        "cancelled_ms_median": m([r["cancelled_ms"] for r in inter]),
        "cancelled_ms_p90": q([r["cancelled_ms"] for r in inter]),
        "backchannels_cancelled": sum(r["cancelled"] for r in back),
        "false_cancel_rate": round(sum(r["cancelled"] for r in back) / max(1, len(back)), 3),
        "backchannels_resumed": len(resumed),
        "backchannels_never_paused": sum(not r["broke"] and not r["cancelled"] for r in back),
        "resumed_ms_median": m([r["resumed_ms"] for r in resumed]),
        "resumed_ms_p90": q([r["resumed_ms"] for r in resumed]),
        "stalls_before": sum(r["stalls_before"] for r in ok),
    }


def decided_by(row: dict[str, Any]) -> str:
    """The server's first deciding mark: why it cancelled, or the verdict it resumed on."""
    for m in row.get("marks", []):
        if m["stage"] == "barge_in" or (m["stage"] == "false_interruption" and m.get("verdict")):
            return str(m.get("why") or m.get("verdict"))
    return "-"


def _decided(rows: list[dict[str, Any]]) -> str:
    parts = []
    for kind in ("interruption", "backchannel"):
        counts: dict[str, int] = {}
        for r in rows:
            if r["kind"] == kind and "error" not in r:
                counts[decided_by(r)] = counts.get(decided_by(r), 0) + 1
        parts.append(f"{kind}s " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items(), key=lambda kv: -kv[1])))
    return "; ".join(parts)


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x:.0f}"


def report(result: dict[str, Any], header: str, command: str) -> str:
    s = summarise(result["rows"])
    lines = [
        "# Barge-in at the wire: the agent stops, the words decide", "", header, "",
        f"Command: `{command}`", "",
        "`pipeline serve` as shipped (its own process, default config and models); one realtime "
        f"client per item at real time ({CHUNK_MS} ms appends, each sent once its span has passed). "
        f"The client asks a question, lets the reply sound {PLAY_BEFORE_S:g} s, then says the item "
        "over it. Times are ms after the item's onset (its first 10 ms above -40 dBFS, as the "
        "microphone took it), on the heard timeline: each agent delta plays on arrival or after "
        "the one before it, whichever is later (the server sends 200 ms ahead, then at real "
        "time). `stopped`: the end of the last agent sound heard before the delta stream broke "
        f"(no delta for {GAP_S * 1000:.0f} ms).", "",
        "| | items | median | p90 |", "|---|---:|---:|---:|",
        f"| interruption: onset → agent audio stopped (heard) | {s['interruptions_stopped']} | "
        f"{_ms(s['stopped_ms_median'])} | {_ms(s['stopped_ms_p90'])} |",
        f"| interruption: onset → the server paused playback (its `barge_in_pause` mark) | "
        f"{s['interruptions_stopped']} | {_ms(s['paused_ms_median'])} | {_ms(s['paused_ms_p90'])} |",
        f"| interruption: onset → the last agent delta before the break arrived | "
        f"{s['interruptions_stopped']} | {_ms(s['last_sent_ms_median'])} | {_ms(s['last_sent_ms_p90'])} |",
        f"| interruption: heard by a client that also stops playing at "
        f"`input_audio_buffer.speech_started` (sent once the words decide) | {s['interruptions_stopped']} | "
        f"{_ms(s['started_ms_median'])} | {_ms(s['started_ms_p90'])} |",
        f"| every item: onset → agent audio stopped (heard) | "
        f"{sum(1 for r in result['rows'] if r.get('broke'))} | {_ms(s['stopped_ms_all_median'])} | "
        f"{_ms(s['stopped_ms_all_p90'])} |",
        f"| interruption: onset → `response.done` cancelled | {s['interruptions_cancelled']} | "
        f"{_ms(s['cancelled_ms_median'])} | {_ms(s['cancelled_ms_p90'])} |",
        f"| backchannel: onset → the reply heard again | {s['backchannels_resumed']} | "
        f"{_ms(s['resumed_ms_median'])} | {_ms(s['resumed_ms_p90'])} |", "",
        f"{s['interruptions']} interruptions: {s['interruptions_cancelled']} cancelled, missed "
        f"{s['missed_rate']:.0%}. {s['backchannels']} backchannels: {s['backchannels_resumed']} "
        f"resumed, {s['backchannels_cancelled']} cancelled ({s['false_cancel_rate']:.0%}), "
        f"{s['backchannels_never_paused']} never paused. {s['left_out']} of {s['items']} items "
        "left out (no agent audio, a time-out, or the reply over before the onset). "
        f"{s['stalls_before']} breaks in the delta stream before any onset (the server not "
        "keeping up: a loaded machine).", "",
        "What decided, by the server's marks (`words`: the words heard; `still_talking`: the caller "
        "still talking 1 s after the gate fired; `undecided`: no words 2 s after it, so the reply "
        "is stopped; `backchannel` / `silence`: resumed; `-`: no decision mark, a candidate that "
        "never fired resumed): " + _decided(result["rows"]) + ".", "",
        "| kind | text | voice | stopped | resumed | cancelled | server marks (ms at the server) |",
        "|---|---|---|---:|---:|---:|---|"]
    for r in result["rows"]:
        if "error" in r:
            lines.append(f"| {r['kind']} | {r['text']} | {r['voice']} | {r['error']} | | | |")
            continue
        marks = "; ".join(f"{m['stage']} {_ms(m['server_ms'])}"
                          + (f" ({m.get('why') or m.get('verdict')}{': ' + repr(m['heard']) if m.get('heard') else ''})"
                             if m.get("why") or m.get("verdict") else "")
                          for m in r["marks"])
        lines.append(f"| {r['kind']} | {r['text']} | {r['voice']} | "
                     f"{_ms(r['stopped_ms']) if r['broke'] else 'not paused'} | {_ms(r['resumed_ms'])} | "
                     f"{_ms(r['cancelled_ms']) if r['cancelled'] else '-'} | {marks} |")
    if result.get("skipped"):
        lines += ["", "Left out of the set (voiced length outside 300-800 ms): "
                  + "; ".join(result["skipped"])]
    return "\n".join(lines) + "\n"


def run(voices: list[str], limit: int, extra: list[str], with_jfk: bool = True) -> dict[str, Any]:
    from .clips import speech
    from .wire import start_server

    items, skipped = build_items(voices, with_jfk=with_jfk)
    if limit and limit < len(items):
        items = items[::-(-len(items) // limit)]
    question = speech(QUESTION)
    proc, url = start_server(extra)
    rows = []
    try:
        asyncio.run(one_call(url, question, items[0]))  # warm: the first call's one-off costs
        for i, item in enumerate(items):
            row = asyncio.run(one_call(url, question, item))
            rows.append(row)
            print(f"[{i + 1}/{len(items)}] {item.kind} {item.text!r} ({item.voice}): stopped "
                  f"{row.get('stopped_ms')} resumed {row.get('resumed_ms')} cancelled "
                  f"{row.get('cancelled_ms')} {row.get('error', '')}", file=sys.stderr, flush=True)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return {"rows": rows, "skipped": skipped, "voices": voices}


def main(argv: list[str] | None = None) -> int:
    from .machine import describe_machine, machine_line

    parser = argparse.ArgumentParser(prog="python -m bench.bargein_wire", description=__doc__)
    parser.add_argument("--voices", default="joe-1.0,espeak-us",
                        help="the set's voices, comma-separated (bench.bargein_words)")
    parser.add_argument("--no-jfk", action="store_true", help="leave out jfk.wav's phrases")
    parser.add_argument("--limit", type=int, default=0, help="only every k-th item, k = n/limit")
    parser.add_argument("--out", type=Path, default=None, help="the report (.md; a .json beside it)")
    parser.add_argument("--report", metavar="JSON", help="rewrite the report of an earlier run "
                        "from its JSON, without running anything")
    parser.add_argument("serve_args", nargs="*", help="extra `pipeline serve` arguments (after --)")
    args = parser.parse_args(argv)
    if args.report:
        path = Path(args.report)
        saved = json.loads(path.read_text())
        saved["summary"] = summarise(saved["rows"])
        path.write_text(json.dumps(saved, indent=1))
        path.with_suffix(".md").write_text(report(saved, saved["header"], saved["command"]))
        return 0
    from pipeline.testing.voices import ESPEAK_VOICES, PIPER_VOICES

    voices = [v.strip() for v in args.voices.split(",") if v.strip()]
    unknown = [v for v in voices if v not in PIPER_VOICES and v not in ESPEAK_VOICES]
    if unknown or not voices:
        parser.error(f"--voices {args.voices}: choose from "
                     f"{', '.join([*PIPER_VOICES, *ESPEAK_VOICES])} (comma-separated)")
    before = os.getloadavg()
    result = run(voices, args.limit, args.serve_args, with_jfk=not args.no_jfk)
    load = " ".join(f"{x:.2f}" for x in before + os.getloadavg())
    header = (f"Machine: {machine_line(describe_machine())}; load average (1, 5, 15 min) before, "
              f"after: {load}")
    command = "python -m bench.bargein_wire " + " ".join(argv if argv is not None else sys.argv[1:])
    text = report(result, header, command)
    print(text)
    if args.out:
        args.out.write_text(text)
        args.out.with_suffix(".json").write_text(json.dumps(
            {"date": dt.date.today().isoformat(), "header": header, "command": command,
             "summary": summarise(result["rows"]), **result}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
