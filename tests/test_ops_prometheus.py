"""A real Prometheus (Debian's `prometheus`, `make system-deps`) scrapes a running server's
/metrics (fake stages) every second; after a spoken call its query API answers with the call
and the latency the server measured."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.testing.server import ServerThread
from pipeline.transports import ops_http

from . import test_realtime_server as rt
from .test_ops_metrics import _stages, tone

PROMETHEUS = shutil.which("prometheus")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    PROMETHEUS is None, reason="needs Debian's prometheus: make system-deps")]
pytest.importorskip("prometheus_client")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def scraped(tmp_path_factory) -> Iterator[tuple[rt.RealtimeServer, int]]:
    folder: Path = tmp_path_factory.mktemp("prometheus")
    with ServerThread(_stages()) as running:
        ops_http.install(running.server)
        ops_http.install_metrics(running.server)
        port = free_port()
        (folder / "prometheus.yml").write_text(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            "scrape_configs:\n  - job_name: voice\n    static_configs:\n"
            f"      - targets: ['127.0.0.1:{running.server.port}']\n", encoding="utf-8")
        proc = subprocess.Popen([PROMETHEUS, f"--config.file={folder / 'prometheus.yml'}",
                                 f"--storage.tsdb.path={folder / 'data'}",
                                 f"--web.listen-address=127.0.0.1:{port}"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            yield running.server, port
        finally:
            proc.terminate()
            proc.wait(timeout=20)


def query(port: int, promql: str) -> list[dict]:
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    try:
        with urllib.request.urlopen(url, timeout=5) as reply:
            body = json.loads(reply.read())
    except OSError:
        return []  # not up yet
    assert body["status"] == "success", body
    return body["data"]["result"]


def wait_value(port: int, promql: str, timeout_s: float = 30.0) -> float:
    deadline = time.monotonic() + timeout_s
    while True:
        result = query(port, promql)
        if result and result[0]["value"][1] not in ("NaN", "0"):
            return float(result[0]["value"][1])
        assert time.monotonic() < deadline, f"Prometheus has no value for {promql}"
        time.sleep(0.25)


def test_prometheus_scrapes_the_calls_and_their_latency(scraped):
    server, port = scraped
    assert wait_value(port, 'up{job="voice"}') == 1  # the scrape parsed: the format is right
    assert wait_value(port, 'scrape_samples_scraped{job="voice"}') > 20

    async def scenario() -> None:
        async with rt.client(server) as c:
            await c.send({"type": "session.update", "session": {"instructions": "Help."}})
            await c.wait_for("session.updated")
            mic = rt.Mic(c)
            mic.say(tone(0.8))
            await c.wait_for("response.done", timeout=20)
            await mic.stop()

    asyncio.run(scenario())
    assert wait_value(port, 'pipeline_calls_total{reason="caller_left"}') == 1
    waited = wait_value(port, "pipeline_speech_end_to_first_audio_seconds_sum")
    median = wait_value(port, "histogram_quantile(0.5, "
                              "pipeline_speech_end_to_first_audio_seconds_bucket)")
    assert 0.5 < waited < 10.0
    # one observation: the median falls inside the bucket that holds it
    assert 0.5 < median <= min(b for b in (0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 13.0) if b >= waited)
