"""Graceful drain: a real `python -m pipeline serve` (scripted LLM and STT, a tone voice; Silero
VAD is the one real model) gets SIGTERM mid-call. It stops accepting at once (readiness 503,
new connections refused with a reason), lets the call in progress finish, and closes what is
still connected at the deadline with a spoken goodbye, then 1001 and a reason."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from pipeline.transports.goodbye import GOODBYE

from .conftest import ROOT
from .test_realtime_server import Client

pytestmark = [pytest.mark.models, pytest.mark.slow]

REPLY = ("Our store opens at nine in the morning and closes at six in the evening, every day "
         "of the week except Sunday.")  # about 7 s of tone at 65 ms a character


@contextmanager
def serve(tmp_path: Path, *extra: str) -> Iterator[tuple[subprocess.Popen[str], int]]:
    config = tmp_path / "serve.toml"
    config.write_text(f'[llm]\nname = "scripted"\nreplies = {json.dumps([REPLY])}\n'
                      '[stt]\nname = "scripted"\n[tts]\nname = "tone"\n', encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "pipeline", "serve", "--port", "0",
                             "--config", str(config), *extra], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        found = re.search(r":(\d+)/v1/realtime", line)
        assert found, f"no 'listening on' line: {line!r} {proc.stderr.read() if proc.stderr else ''}"
        yield proc, int(found.group(1))
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)


def http_status(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


async def wait_exit(proc: subprocess.Popen[str], timeout_s: float) -> int:
    deadline = time.monotonic() + timeout_s
    while proc.poll() is None:
        assert time.monotonic() < deadline, "the server did not exit after draining"
        await asyncio.sleep(0.05)
    return proc.returncode


def test_sigterm_mid_reply_lets_the_call_finish_and_refuses_new_ones(tmp_path):
    with serve(tmp_path, "--drain-s", "30", "--metrics") as (proc, port):
        assert http_status(port, "/readyz")[0] == 200
        url = f"ws://127.0.0.1:{port}/v1/realtime"

        async def scenario() -> None:
            async with connect(url, proxy=None) as ws:
                c = Client(ws)
                await c.wait_for("session.created")
                await c.send({"type": "conversation.item.create", "item": {
                    "type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": "When do you open?"}]}})
                await c.send({"type": "response.create"})
                await c.wait_for("response.output_audio.delta")
                scraped = http_status(port, "/metrics")
                assert scraped[0] == 200 and "\npipeline_active_calls 1.0\n" in scraped[1]
                proc.send_signal(signal.SIGTERM)  # mid-reply
                deadline = time.monotonic() + 5
                while http_status(port, "/readyz")[0] != 503:
                    assert time.monotonic() < deadline, "readiness stayed true after SIGTERM"
                    await asyncio.sleep(0.05)
                assert http_status(port, "/healthz")[0] == 200  # alive while it drains
                with pytest.raises(InvalidStatus) as refused:
                    async with connect(url, proxy=None):
                        pass
                assert refused.value.response.status_code == 503
                assert b"shutting down" in refused.value.response.body
                done = await c.wait_for("response.done", timeout=20)
                assert done["response"]["status"] == "completed"  # the reply was heard in full
                assert proc.poll() is None  # the call is still connected: the server waits
                await c.close()
            assert await wait_exit(proc, 10) == 0

        asyncio.run(scenario())


def test_calls_still_connected_at_the_deadline_are_closed_with_a_reason(tmp_path):
    recordings = tmp_path / "recordings"
    with serve(tmp_path, "--drain-s", "1.5", "--record", str(recordings)) as (proc, port):
        url = f"ws://127.0.0.1:{port}/v1/realtime"

        async def scenario() -> None:
            async with connect(url, proxy=None) as ws:
                c = Client(ws)
                await c.wait_for("session.created")
                proc.send_signal(signal.SIGTERM)
                sent = time.monotonic()
                await asyncio.wait_for(c._reader, timeout=25)
                # the deadline, then a spoken goodbye (about 5 s of tone), then the close
                goodbye = c.of("response.done")[-1]
                assert goodbye["_at"] - sent >= 1.4
                assert goodbye["response"]["status"] == "completed"
                said = goodbye["response"]["output"][0]["content"][0]["transcript"]
                assert said == GOODBYE
                audio = [e for e in c.of("response.output_audio.delta")
                         if e["response_id"] == goodbye["response"]["id"]]
                assert audio and audio[-1]["_at"] <= goodbye["_at"]
                assert time.monotonic() - sent <= 15
                assert ws.close_code == 1001
                assert "shutting down" in (ws.close_reason or "")
            assert await wait_exit(proc, 10) == 0

        asyncio.run(scenario())
    # the server waited for the recording before it exited; the call says why it ended
    (summary,) = recordings.glob("*/summary.json")
    assert json.loads(summary.read_text())["end_reason"] == "drained"
