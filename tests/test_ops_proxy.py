"""Two `pipeline serve` workers behind HAProxy (Debian's `haproxy`, `make system-deps`), configured
as docs/deploy.md shows: WebSocket upgrades passed through, least connections, health checks on
`/readyz`. Concurrent calls spread over both; a worker drained with SIGTERM finishes its call
while new calls go to the other; a worker killed hard is marked down, and calls are served again
once it is back."""

from __future__ import annotations

import asyncio
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from .test_ops_drain import http_status, serve, wait_exit
from .test_realtime_server import Client, user_text

pytestmark = [pytest.mark.models, pytest.mark.slow,
              pytest.mark.skipif(shutil.which("haproxy") is None,
                                 reason="needs Debian's haproxy: make system-deps")]

HAPROXY_CFG = """\
global
    maxconn 256

defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    timeout tunnel 1h            # a call is one long WebSocket: the tunnel timeout governs it

frontend voice
    bind 127.0.0.1:{proxy_port}
    default_backend voice_workers

backend voice_workers
    balance leastconn            # a call is one long connection: balance by calls in progress
    option httpchk               # 503 while a worker drains: no new calls go to it
    http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host localhost  # HTTP/1.1: websockets reads no 1.0
    http-check expect status 200
    default-server inter {inter_ms}ms fall 1 rise 1
    server w1 127.0.0.1:{port_1} check
    server w2 127.0.0.1:{port_2} check
"""
INTER_MS = 200


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def haproxy(tmp_path: Path, proxy_port: int, ports: tuple[int, int]) -> Iterator[None]:
    cfg = tmp_path / "haproxy.cfg"
    cfg.write_text(HAPROXY_CFG.format(proxy_port=proxy_port, inter_ms=INTER_MS, port_1=ports[0],
                                      port_2=ports[1]), encoding="utf-8")
    check = subprocess.run(["haproxy", "-c", "-f", str(cfg)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    proc = subprocess.Popen(["haproxy", "-db", "-f", str(cfg)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def active_calls(port: int) -> float:
    status, text = http_status(port, "/metrics")
    assert status == 200
    line = next(x for x in text.splitlines() if x.startswith("pipeline_active_calls "))
    return float(line.split()[1])


async def until(check, timeout_s: float = 10.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, f"timed out: {what}"
        await asyncio.sleep(0.05)


async def call(url: str) -> Client:
    ws = await connect(url, proxy=None)
    c = Client(ws)
    await c.wait_for("session.created")
    return c


def test_two_workers_behind_haproxy_drain_and_recover(tmp_path):
    ports = (free_port(), free_port())
    proxy_port = free_port()
    url = f"ws://127.0.0.1:{proxy_port}/v1/realtime"
    with ExitStack() as stack:
        workers = []
        for port in ports:
            folder = tmp_path / str(port)
            folder.mkdir()
            workers.append(stack.enter_context(
                serve(folder, "--port", str(port), "--metrics", "--drain-s", "30"))[0])
        stack.enter_context(haproxy(tmp_path, proxy_port, ports))

        async def scenario() -> None:
            await asyncio.sleep(3 * INTER_MS / 1000)  # the first checks mark both up
            first = await call(url)
            await until(lambda: sum(active_calls(p) for p in ports) == 1, what="first call")
            a = 0 if active_calls(ports[0]) == 1 else 1  # the worker that took the first call
            b = 1 - a
            second = await call(url)  # least connections: the idle worker takes it
            await until(lambda: active_calls(ports[b]) == 1, what="second call on the other")
            assert active_calls(ports[a]) == 1

            # drain worker a mid-reply: its call goes on, new calls go to b
            await first.send(user_text("When do you open?"))
            await first.send({"type": "response.create"})
            await first.wait_for("response.output_audio.delta", timeout=20)
            workers[a].send_signal(signal.SIGTERM)
            await until(lambda: http_status(ports[a], "/readyz")[0] == 503, what="a draining")
            await asyncio.sleep(3 * INTER_MS / 1000)  # the proxy's next check sees it
            third = await call(url)
            await until(lambda: active_calls(ports[b]) == 2, what="third call on b")
            assert active_calls(ports[a]) == 1
            done = await first.wait_for("response.done", timeout=30)
            assert done["response"]["status"] == "completed"
            await first.close()
            assert await wait_exit(workers[a], 15) == 0

            # kill b hard: its calls drop, the proxy marks it down and has no worker left
            workers[b].kill()
            await asyncio.wait_for(second._reader, 10)
            await asyncio.wait_for(third._reader, 10)
            await asyncio.sleep(3 * INTER_MS / 1000)
            with pytest.raises((InvalidStatus, OSError)) as refused:
                await call(url)
            if isinstance(refused.value, InvalidStatus):
                assert refused.value.response.status_code == 503

            # b comes back on its port: once a check passes, a new call is served
            folder = tmp_path / f"{ports[b]}-again"
            folder.mkdir()
            stack.enter_context(serve(folder, "--port", str(ports[b]), "--metrics"))
            deadline = time.monotonic() + 15
            while True:
                try:
                    again = await call(url)
                    break
                except (InvalidStatus, OSError):
                    assert time.monotonic() < deadline, "no call served after the worker came back"
                    await asyncio.sleep(0.1)
            assert active_calls(ports[b]) == 1
            await again.close()

        asyncio.run(scenario())
