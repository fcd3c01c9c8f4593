"""Call recordings for `pipeline serve` (`--record DIR`; nothing is recorded without it).

Each call gets a folder `DIR/<UTC start>-<session id>/`:

- `call.wav`: stereo at the agent's rate, the caller on the left (what the session heard, after
  the echo guard), the agent on the right, placed when each frame sounded; a reply cut off by a
  barge-in stops where the caller heard it stop (`conversation.item.truncated`).
- `events.jsonl`: the call's event log as it happened (audio left out, as `--events` writes it).
- `summary.json`: written last, so its presence means the recording is whole: the session id,
  start, duration, end reason, turns with their stage latencies (`pipeline.base.metrics`),
  responses and tool calls with their state.

The audio goes to two raw files while the call runs (memory stays flat in a long call) and is
mixed into the WAV in a thread when it ends. Retention: at start and after each call, folders
older than `max_age_days` go, then the oldest until all fit in `max_bytes`; a call in progress
is never removed.

Agent frames are rebuilt from the events: Playback sounds each `response.output_audio.delta` as
one piece, in 20 ms frames, the last one short, so the n-th frame a frame listener hears of an
item is the n-th 20 ms slice of that item's deltas in order.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import shutil
import struct
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

from ..base import events as ev
from ..base.audio import INPUT_RATE_HZ, StreamResampler, to_int16
from ..base.metrics import turn_timings
from ..call.input_path import CallerFramePhase
from ..call.session import Session
from ..stages.playback import FRAME_MS
from .ops_metrics import EndReason, tool_state

log = logging.getLogger(__name__)

MAX_AGE_DAYS = 30.0
MAX_BYTES = 10 << 30  # 10 GiB: about 34 hours of call.wav at 22.05 kHz, 16-bit stereo
SUMMARY = "summary.json"
_BLOCK = 1 << 16
_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")  # samples per block when mixing the WAV


class Recorder:
    """Records every call it watches into `folder`, keeping the folder within its limits."""

    def __init__(self, folder: str | Path, *, max_age_days: float = MAX_AGE_DAYS,
                 max_bytes: int = MAX_BYTES) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.max_age_days = max_age_days
        self.max_bytes = max_bytes
        self.active: set[Path] = set()
        self._writers: list[threading.Thread] = []
        self.enforce_retention()

    def watch(self, session: Session, session_id: str = "") -> CallRecording:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        path = self.folder / f"{stamp}-{session_id or ev.new_id('call')}"
        self.active.add(path)
        return CallRecording(self, session, path, session_id)

    def finished(self, session_id: str) -> Path | None:
        """The newest whole recording of this session id (ids restart with the process)."""
        if not _SESSION_ID.fullmatch(session_id):
            return None
        found = [p for p in self.folder.glob(f"*-{session_id}") if (p / SUMMARY).is_file()]
        return max(found, key=lambda p: p.name) if found else None

    def in_progress(self, session_id: str) -> bool:
        """A call of this session id is being recorded, or its files written."""
        return any(p.name.endswith(f"-{session_id}") for p in list(self.active))

    def ended(self, recording: CallRecording) -> None:
        """Mix the call's WAV and summary off the event loop, then apply retention."""
        def write() -> None:
            try:
                recording.write()
            except Exception:  # a bad disk costs this recording, never the server
                log.exception("could not finish the recording in %s", recording.path)
            finally:
                self.active.discard(recording.path)
                self.enforce_retention()

        writer = threading.Thread(target=write, name="call-recording", daemon=False)
        self._writers = [w for w in self._writers if w.is_alive()] + [writer]
        writer.start()

    def shutdown(self) -> None:
        """Wait for recordings still being written (the server stops)."""
        for writer in self._writers:
            writer.join()

    def enforce_retention(self, now: float | None = None) -> list[Path]:
        """Remove recordings past the age limit, then the oldest until the rest fit the size."""
        now = time.time() if now is None else now
        calls = []
        for path in self.folder.iterdir():
            if path.is_dir() and path not in self.active:
                files = [f for f in path.rglob("*") if f.is_file()]
                size = sum(f.stat().st_size for f in files)
                calls.append((path.stat().st_mtime, path, size))
        calls.sort()
        removed = []
        total = sum(size for _, _, size in calls)
        for mtime, path, size in calls:
            if now - mtime > self.max_age_days * 86400 or total > self.max_bytes:
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
                total -= size
        return removed


class CallRecording:
    """One call: its events to a log, its two channels to raw files, then the WAV and summary."""

    def __init__(self, recorder: Recorder, session: Session, path: Path, session_id: str) -> None:
        self.recorder = recorder
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.session_id = session_id
        self.started = time.time()
        self.duration_s = 0.0
        self.clock = session.clock
        self.rate_hz = session.client.agent_rate_hz
        self.frame_samples = self.rate_hz * FRAME_MS // 1000
        self.log = ev.EventLog(path / "events.jsonl")
        self.end = EndReason()
        self.kept: list[ev.Event] = []  # the events the summary reads (no audio)
        self._caller = open(path / "caller.raw", "wb")  # noqa: SIM115 (closed in write)
        self._agent = open(path / "agent.raw", "wb")  # noqa: SIM115
        self._caller_samples = 0
        self._offset_s: float | None = None  # session clock minus caller audio time (smallest seen)
        self._pending: dict[str, deque[np.ndarray]] = {}  # item -> its deltas not yet sounded
        self._played: dict[str, int] = {}  # item -> samples sounded so far
        # (sounded at, session clock; item; sample offset in the item; samples; offset in agent.raw)
        self._frames: list[tuple[float, str, int, int, int]] = []
        self._agent_bytes = 0
        self._heard_ms: dict[str, int] = {}  # item -> where a truncation cut it
        self._reason = "caller_left"
        self.finished = False
        self.failed = False
        session.listeners.add(self.on_event, ev.EventPhase.OBSERVER)
        session.input.on_frame.add(self._caller_frame, CallerFramePhase.OBSERVER)
        session.client.on_agent_frame(self._agent_frame)

    # --- while the call runs (on the event loop: appends only) --------------------------------

    def on_event(self, e: ev.Event) -> None:
        if self.finished or self.failed:
            return
        try:
            self.log.append(e)
        except OSError as exc:
            self._fail(exc)
            return
        self.end.see(e)
        if isinstance(e, ev.OutputAudioDelta):
            if len(e.delta):
                self._pending.setdefault(e.item_id, deque()).append(e.delta)
            return
        if isinstance(e, ev.ItemTruncated):
            self._heard_ms[e.item_id] = e.audio_end_ms
        self.kept.append(e)

    def _caller_frame(self, frame: np.ndarray) -> None:
        if self.finished or self.failed:
            return
        try:  # a full disk ends the recording (marked failed), not only this frame
            self._caller.write(to_int16(frame).astype("<i2").tobytes())
        except OSError as exc:
            self._fail(exc)
            return
        self._caller_samples += len(frame)
        offset = self.clock.now() - self._caller_samples / INPUT_RATE_HZ
        self._offset_s = offset if self._offset_s is None else min(self._offset_s, offset)

    def _agent_frame(self, response_id: str, item_id: str, at_s: float) -> None:
        pieces = self._pending.get(item_id)
        if self.finished or self.failed or not pieces:
            return
        frame = pieces[0][: self.frame_samples]
        pieces[0] = pieces[0][len(frame):]
        if not len(pieces[0]):
            pieces.popleft()
        start = self._played.get(item_id, 0)
        self._played[item_id] = start + len(frame)
        try:  # as for the caller's frames: playback must go on whatever the disk does
            self._agent.write(to_int16(frame).astype("<i2").tobytes())
        except OSError as exc:
            self._fail(exc)
            return
        self._frames.append((at_s, item_id, start, len(frame), self._agent_bytes))
        self._agent_bytes += 2 * len(frame)

    def _fail(self, exc: OSError) -> None:
        """Stop recording this call (the call goes on); what was written stays, unmixed."""
        self.failed = True
        log.error("recording %s stopped: %s", self.path, exc)

    def finish(self, reason: str | None = None) -> None:
        if self.finished:
            return
        self.finished = True
        self._reason = self.end.reason(reason)
        self.duration_s = time.time() - self.started
        self.log.close()
        self._caller.close()
        self._agent.close()
        self._pending.clear()
        if self.failed:
            self.recorder.active.discard(self.path)
            return
        self.recorder.ended(self)

    # --- after the call (in a thread) -----------------------------------------------------------

    def write(self) -> None:
        self._write_wav()
        for raw in ("caller.raw", "agent.raw"):
            with contextlib.suppress(OSError):
                (self.path / raw).unlink()
        summary = self.summary()
        tmp = self.path / (SUMMARY + ".tmp")
        tmp.write_text(json.dumps(summary, indent=2, default=str), encoding="utf-8")
        tmp.replace(self.path / SUMMARY)

    def _write_wav(self) -> None:
        rate = self.rate_hz
        offset = self._offset_s or 0.0
        caller_s = self._caller_samples / INPUT_RATE_HZ
        frames = [f for f in self._frames if self._heard(f)]
        agent_end_s = max((at - offset + n / rate for at, _, _, n, _ in frames), default=0.0)
        total = int(max(caller_s, agent_end_s) * rate) + 1
        right = np.lib.format.open_memmap(self.path / "agent.npy", mode="w+", dtype=np.int16,
                                          shape=(total,))
        with open(self.path / "agent.raw", "rb") as agent:
            for at, item, start, n, pos in frames:
                agent.seek(pos)
                samples = np.frombuffer(agent.read(2 * n), "<i2")
                heard = self._heard_ms.get(item)
                if heard is not None:  # the caller heard up to here: the rest was cut
                    samples = samples[: max(0, int(heard * rate / 1000) - start)]
                first = max(0, int(round((at - offset) * rate)))
                end = min(total, first + len(samples))
                right[first:end] = samples[: end - first]
        resampler = StreamResampler(INPUT_RATE_HZ, rate)
        with open(self.path / "caller.raw", "rb") as caller, \
                open(self.path / "call.wav", "wb") as out:
            out.write(_wav_header(total, rate, channels=2))
            written = 0
            while written < total:
                block = caller.read(2 * _BLOCK)
                if block:
                    left = resampler.process(np.frombuffer(block, "<i2") / 32768.0)
                else:  # the caller's audio is over: silence to the end of the agent's
                    left = np.zeros(min(_BLOCK, total - written), np.float32)
                n = min(len(left), total - written)
                pair = np.empty((n, 2), "<i2")
                pair[:, 0] = to_int16(left[:n])
                pair[:, 1] = right[written:written + n]
                out.write(pair.tobytes())
                written += n
        del right
        (self.path / "agent.npy").unlink()

    def _heard(self, frame: tuple[float, str, int, int, int]) -> bool:
        heard = self._heard_ms.get(frame[1])
        return heard is None or frame[2] * 1000 / self.rate_hz < heard

    def summary(self) -> dict[str, Any]:
        turns = []
        for t in turn_timings(self.kept):
            end = t.clock_s.get("speech_end")
            after = {stage: round((t.happened_s(stage) - end) * 1000)  # type: ignore[operator]
                     for stage in t.clock_s if stage != "speech_end" and end is not None
                     and t.happened_s(stage) is not None}
            turns.append({"turn_id": t.turn_id, "transcript": t.transcript, "status": t.status,
                          "preemptive": t.preemptive, "response_id": t.response_id,
                          "ms_after_speech_end": after})
        responses = [{"id": e.response["id"], "status": e.response["status"],
                      "reason": (e.response.get("status_details") or {}).get("reason"),
                      "said": " ".join(c.get("transcript", "") for o in e.response.get("output", [])
                                       for c in o.get("content", []) if isinstance(c, dict))}
                     for e in self.kept if isinstance(e, ev.ResponseDone)]
        calls: dict[str, dict[str, Any]] = {
            e.call_id: {"call_id": e.call_id, "name": e.name, "arguments": e.arguments}
                 for e in self.kept if isinstance(e, ev.FunctionCallArgumentsDone)}
        for e in self.kept:
            if isinstance(e, ev.ItemCreated) and e.item.get("type") == "function_call_output":
                call = calls.setdefault(str(e.item.get("call_id")), {"call_id": e.item.get("call_id")})
                call["state"] = tool_state(e.item.get("output"))
        return {"session_id": self.session_id,
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
                "duration_s": round(self.duration_s, 3), "end_reason": self._reason,
                "audio": {"file": "call.wav", "rate_hz": self.rate_hz,
                          "channels": ["caller", "agent"]},
                "turns": turns, "responses": responses, "tools": list(calls.values()),
                "errors": [e.error for e in self.kept if isinstance(e, ev.Error)]}


def _wav_header(frames: int, rate_hz: int, *, channels: int) -> bytes:
    data = frames * channels * 2
    return (b"RIFF" + struct.pack("<I", 36 + data) + b"WAVE" + b"fmt "
            + struct.pack("<IHHIIHH", 16, 1, channels, rate_hz, rate_hz * channels * 2,
                          channels * 2, 16) + b"data" + struct.pack("<I", data))
