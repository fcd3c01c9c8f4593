"""Call recordings (`serve --record DIR`): a running server (fake stages) records a spoken turn
and a reply cut off mid-way; the WAV's two channels line up with what the event log says, and
retention removes old and excess recordings but never a call in progress."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from pipeline.base.audio import read_wav
from pipeline.testing.server import ServerThread
from pipeline.transports import ops_http
from pipeline.transports.recording import SUMMARY, Recorder

from . import test_realtime_server as rt
from .test_ops_metrics import _stages, tone

LONG = ("Our store opens at nine in the morning. We close at six in the evening. On Sundays we "
        "are closed all day.")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Iterator[tuple[rt.RealtimeServer, Path]]:
    folder = tmp_path_factory.mktemp("recordings")
    args = argparse.Namespace(metrics=False, traces=False, record=folder,
                              record_max_age_days=30.0, record_max_gb=10.0)
    with ServerThread(_stages()) as running:
        ops_http.install(running.server, args)  # as `serve --record DIR` does
        yield running.server, folder


def finished(folder: Path, session_id: str, timeout_s: float = 15.0) -> Path:
    """The call's folder once its summary is written (the recording is whole)."""
    deadline = time.monotonic() + timeout_s
    while True:
        found = [p for p in folder.glob(f"*-{session_id}") if (p / SUMMARY).is_file()]
        if found:
            return found[0]
        assert time.monotonic() < deadline, f"no finished recording of {session_id}"
        time.sleep(0.05)


def loud(channel: np.ndarray, rate_hz: int) -> tuple[float, float]:
    """(first, last) second where the channel is not silent."""
    idx = np.flatnonzero(np.abs(channel) > 0.05)
    return idx[0] / rate_hz, idx[-1] / rate_hz


def test_a_spoken_turn_is_recorded_on_one_timeline(recorded):
    server, folder = recorded

    async def scenario() -> str:
        async with rt.client(server) as c:
            created = await c.wait_for("session.created")
            await c.send({"type": "session.update", "session": {"instructions": "Help."}})
            mic = rt.Mic(c)
            await asyncio.sleep(0.5)
            mic.say(tone(0.8))
            await c.wait_for("response.done", timeout=20)
            await asyncio.sleep(0.3)
            await mic.stop()
            sid = created["session"]["id"]  # while the call goes on: come back later
            assert get(f"http://127.0.0.1:{server.port}/recordings/{sid}/call.wav")[0] == 202
            return sid

    session_id = asyncio.run(scenario())
    path = finished(folder, session_id)
    assert sorted(p.name for p in path.iterdir()) == ["call.wav", "events.jsonl", SUMMARY]
    summary = json.loads((path / SUMMARY).read_text())
    assert summary["session_id"] == session_id and summary["end_reason"] == "caller_left"
    (turn,) = summary["turns"]
    assert turn["transcript"] == "Hello there." and turn["status"] == "completed"
    assert summary["responses"][0]["said"] == "Sure. I can help with that."
    wav = read_wav(path / "call.wav")
    assert wav.samples.shape[1] == 2 and wav.sample_rate_hz == summary["audio"]["rate_hz"]
    caller, agent = wav.samples[:, 0], wav.samples[:, 1]
    caller_from, caller_to = loud(caller, wav.sample_rate_hz)
    agent_from, agent_to = loud(agent, wav.sample_rate_hz)
    assert caller_to - caller_from == pytest.approx(0.8, abs=0.05)
    # the agent sounds when the event log says it did, after the caller's last sound
    waited_s = turn["ms_after_speech_end"]["first_audio_out"] / 1000
    assert agent_from - caller_to == pytest.approx(waited_s, abs=0.1)
    assert agent_to - agent_from == pytest.approx(len("Sure. I can help with that.") * 0.030,
                                                  abs=0.15)  # the tone voice: 30 ms a character
    logged = [json.loads(line)["type"] for line in (path / "events.jsonl").open()]
    assert "response.done" in logged and "input_audio_buffer.committed" in logged

    # the page fetches a finished call's recording from the server, with its token if it has one
    base = f"http://127.0.0.1:{server.port}/recordings/{session_id}"
    assert get(f"{base}/call.wav") == (200, "audio/wav", (path / "call.wav").read_bytes())
    assert json.loads(get(f"{base}/summary.json")[2]) == summary
    for wrong in (f"{base}/caller.raw", f"{base}/../../etc/passwd", f"{base}x/call.wav"):
        assert get(wrong)[0] == 404, wrong
    server.token = "s3cret"
    try:
        assert get(f"{base}/summary.json")[0] == 401
        assert get(f"{base}/summary.json", token="s3cret")[0] == 200
    finally:
        server.token = None


def get(url: str, token: str | None = None) -> tuple[int, str, bytes]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=5) as reply:
            return reply.status, reply.headers["Content-Type"], reply.read()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.headers["Content-Type"], refused.read()


def test_a_reply_cut_off_is_recorded_up_to_where_it_was_heard(recorded):
    server, folder = recorded
    server.stages.llm.replies = [LONG]

    async def scenario() -> tuple[str, dict]:
        async with rt.client(server) as c:
            created = await c.wait_for("session.created")
            await c.send(rt.user_text("When are you open?"))
            await c.wait_for("conversation.item.done")
            await c.send({"type": "response.create"})
            await c.wait_for("response.output_audio.delta")
            await asyncio.sleep(1.0)
            await c.send({"type": "response.cancel"})
            truncated = await c.wait_for("conversation.item.truncated")
            await c.wait_for("response.done")
            return created["session"]["id"], truncated

    try:
        session_id, truncated = asyncio.run(scenario())
    finally:
        server.stages.llm.replies = ["Sure. I can help with that."]
    path = finished(folder, session_id)
    wav = read_wav(path / "call.wav")
    agent_from, agent_to = loud(wav.samples[:, 1], wav.sample_rate_hz)
    heard_s = truncated["audio_end_ms"] / 1000
    assert 0.6 < heard_s < 2.0, heard_s
    assert agent_to - agent_from == pytest.approx(heard_s, abs=0.05)  # nothing past the cut
    summary = json.loads((path / SUMMARY).read_text())
    assert summary["responses"][0]["status"] == "cancelled"


def test_retention_removes_old_then_oldest_but_never_a_call_in_progress(tmp_path):
    now = time.time()
    ages_days = {"a-old": 40, "b": 3, "c": 2, "d-live": 5, "e": 1}
    for name, age in ages_days.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "call.wav").write_bytes(b"\0" * 1000)
        os.utime(tmp_path / name, (now - age * 86400, now - age * 86400))
    recorder = Recorder(tmp_path, max_age_days=30, max_bytes=10_000)  # all fit but the old one
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b", "c", "d-live", "e"]
    recorder.max_bytes = 1_500  # the finished ones: b, c and e (a live call is not counted)
    recorder.active.add(tmp_path / "d-live")
    removed = recorder.enforce_retention(now)
    assert [p.name for p in removed] == ["b", "c"]  # oldest first, the live call skipped
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d-live", "e"]


def test_a_disk_that_fails_stops_the_recording_not_the_call(recorded, monkeypatch):
    from pipeline.transports import recording

    server, folder = recorded
    broken: list[recording.CallRecording] = []

    def failing_watch(session, session_id=""):
        call = Recorder.watch(recorder, session, session_id)

        class Full:
            def write(self, data: bytes) -> int:
                raise OSError(28, "No space left on device")

            def close(self) -> None:
                pass

        call._agent.close()
        call._agent = Full()  # the agent channel's file fails on its first frame
        broken.append(call)
        return call

    recorder = Recorder(folder)
    server.call_watchers.append(failing_watch)
    try:
        async def scenario() -> dict:
            async with rt.client(server) as c:
                return await rt.text_reply(c, "Hi")

        done = asyncio.run(scenario())
    finally:
        server.call_watchers.remove(failing_watch)
    assert done["response"]["status"] == "completed"  # the reply played to its end
    assert broken and broken[0].failed

