"""Prometheus metrics on `serve`: a running server (fake stages) scraped over HTTP at /metrics and
read with prometheus-client's own parser; and the event-to-metric mapping on events alone."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import numpy as np
import pytest

from pipeline.base import events as ev
from pipeline.base.audio import INPUT_RATE_HZ
from pipeline.call.session import Stages
from pipeline.stages.fakes import ScriptedLLM, ScriptedSTT, ToneTTS
from pipeline.testing.server import ServerThread
from pipeline.transports import ops_http
from pipeline.turns import HeuristicCompleteness

from . import test_realtime_server as rt
from .realtime_clients import WEATHER_TOOL

prom_parser = pytest.importorskip("prometheus_client.parser")


def _stages() -> Stages:
    llm = ScriptedLLM(replies=["Sure. I can help with that."], rules=[
        [r"weather", {"name": "get_weather", "arguments": {"city": "Paris"}}]])
    return Stages(vad=rt.EnergyVAD(), stt=ScriptedSTT(transcripts=["Hello there."]),
                  completeness=HeuristicCompleteness(), llm=llm, tts=ToneTTS(ms_per_char=30.0))


@pytest.fixture(scope="module")
def server() -> Iterator[rt.RealtimeServer]:
    with ServerThread(_stages()) as running:
        ops_http.install(running.server)
        ops_http.install_metrics(running.server)
        yield running.server


def scrape(server: rt.RealtimeServer) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of /metrics: (name, sorted labels) -> value."""
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics", timeout=5) as reply:
        assert reply.status == 200
        assert reply.headers["Content-Type"].startswith("text/plain; version=")
        text = reply.read().decode()
    samples = {}
    for family in prom_parser.text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples


def scrape_when_idle(server: rt.RealtimeServer, before: dict) -> dict:
    """A scrape once the server has let the test's call go (it ends a moment after the client)."""
    deadline = time.monotonic() + 10
    while True:
        samples = scrape(server)
        if value(samples, "pipeline_active_calls") == value(before, "pipeline_active_calls"):
            return samples
        assert time.monotonic() < deadline, "the call never ended on the server"
        time.sleep(0.02)


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def tone(seconds: float) -> np.ndarray:
    t = np.arange(int(INPUT_RATE_HZ * seconds)) / INPUT_RATE_HZ
    return (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)


def test_a_spoken_turn_shows_in_the_latency_histograms_and_the_call_counts(server):
    before = scrape(server)

    async def scenario() -> None:
        async with rt.client(server) as c:
            await c.send({"type": "session.update", "session": {"instructions": "Help."}})
            await c.wait_for("session.updated")
            during = scrape(server)
            assert value(during, "pipeline_active_calls") == value(before, "pipeline_active_calls") + 1
            mic = rt.Mic(c)
            mic.say(tone(0.8))
            done = await c.wait_for("response.done", timeout=20)
            await mic.stop()
            assert rt.status(done) == ("completed", None)

    asyncio.run(scenario())
    after = scrape_when_idle(server, before)
    name = "pipeline_speech_end_to_first_audio_seconds"
    assert value(after, name + "_count") == value(before, name + "_count") + 1
    waited = value(after, name + "_sum") - value(before, name + "_sum")
    # the turn waits out the silence policy (600 ms on "looks complete") before anything is said
    assert 0.5 < waited < 10.0, waited
    stage = "pipeline_stage_after_speech_end_seconds"
    sums = {s: value(after, stage + "_sum", stage=s) - value(before, stage + "_sum", stage=s)
            for s in ("stt_final", "turn_commit", "llm_first_token", "first_audio_out")}
    # a preemptive reply starts at speech-stop, so its first token may come before the commit;
    # nothing comes after the first audio, and the commit waits out the silence
    assert all(0 <= t <= sums["first_audio_out"] + 1e-6 for t in sums.values()), sums
    assert sums["turn_commit"] > 0.5, sums
    assert sums["first_audio_out"] == pytest.approx(waited)
    # the call ended when the client left; the gauge is back
    assert value(after, "pipeline_calls_total", reason="caller_left") == \
        value(before, "pipeline_calls_total", reason="caller_left") + 1
    assert value(after, "pipeline_active_calls") == value(before, "pipeline_active_calls")
    assert value(after, "pipeline_responses_total", status="completed") >= 1


def test_errors_by_code_and_tool_calls_by_state(server):
    before = scrape(server)

    async def scenario() -> None:
        async with rt.client(server) as c:
            await c.send({"type": "session.update", "session": {"tools": [WEATHER_TOOL]}})
            await c.wait_for("session.updated")
            await c.send("{not json")
            await c.wait_for("error")
            await rt.text_reply(c, "What is the weather in Paris?")
            call = next(o for o in c.of("response.done")[-1]["response"]["output"]
                        if o["type"] == "function_call")
            await c.send({"type": "conversation.item.create", "item": {
                "type": "function_call_output", "call_id": call["call_id"],
                "output": json.dumps({"status": "committed", "result": "sunny"})}})
            await c.wait_for("conversation.item.done",
                             lambda e: e["item"]["type"] == "function_call_output")

    asyncio.run(scenario())
    after = scrape_when_idle(server, before)
    for name, labels in (("pipeline_errors_total", {"code": "invalid_json"}),
                         ("pipeline_tool_calls_total", {"state": "committed"})):
        assert value(after, name, **labels) == value(before, name, **labels) + 1, (name, labels)


def test_health_and_readiness_answer_without_the_token(server):
    for path in ("/healthz", "/readyz"):
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}{path}", timeout=5) as reply:
            assert reply.status == 200, path
    server.accepting = False
    try:
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"http://127.0.0.1:{server.port}/readyz", timeout=5)
        assert refused.value.code == 503
        assert b"draining" in refused.value.read()
    finally:
        server.accepting = True


def test_events_map_onto_barge_ins_end_reasons_and_slow_clients():
    from pipeline.transports.ops_metrics import CallMetrics, ServeMetrics

    metrics = ServeMetrics()
    calls = []
    for events in ([ev.StageMark(stage="barge_in"), ev.StageMark(stage="false_interruption"),
                    ev.StageMark(stage="barge_in"), ev.CallLog(message="(hangs up: done)")],
                   [ev.StageMark(stage="slow_client_dropped", detail={"why": "stalled"})],
                   [ev.ItemCreated(item={"type": "function_call_output",
                                         "output": json.dumps({"status": "unknown"})}),
                    ev.ItemCreated(item={"type": "function_call_output",
                                         "output": json.dumps({"error": "ValueError: no"})})]):
        call = CallMetrics(metrics)
        for e in events:
            call.on_event(e)
        calls.append(call)
    calls[0].finish()
    calls[1].finish()
    calls[2].finish("drained")
    calls[2].finish("drained")  # once only
    text = metrics.exposition()[1]
    got = {(s.name, tuple(sorted(s.labels.items()))): s.value
           for f in prom_parser.text_string_to_metric_families(text) for s in f.samples}
    assert value(got, "pipeline_barge_ins_total", outcome="cancelled") == 2
    assert value(got, "pipeline_barge_ins_total", outcome="resumed") == 1
    assert value(got, "pipeline_calls_total", reason="agent_hung_up") == 1
    assert value(got, "pipeline_calls_total", reason="slow_client") == 1
    assert value(got, "pipeline_calls_total", reason="drained") == 1
    assert value(got, "pipeline_slow_clients_dropped_total") == 1
    assert value(got, "pipeline_tool_calls_total", state="unknown") == 1
    assert value(got, "pipeline_tool_calls_total", state="error") == 1
    assert value(got, "pipeline_active_calls") == -3  # made without watch(): only finished here



def test_model_jobs_in_flight_counts_work_waiting_on_the_models():
    import threading

    from pipeline.base.clock import in_model_thread
    from pipeline.transports.ops_metrics import ServeMetrics

    metrics = ServeMetrics()
    release = threading.Event()

    def depth() -> float:
        text = metrics.exposition()[1]
        return next(s.value for f in prom_parser.text_string_to_metric_families(text)
                    for s in f.samples if s.name == "pipeline_model_jobs_in_flight")

    async def scenario() -> None:
        idle = depth()
        jobs = [asyncio.ensure_future(in_model_thread(release.wait, 10)) for _ in range(3)]
        await asyncio.sleep(0.05)
        assert depth() == idle + 3
        jobs[0].cancel()  # a cancelled wait does not end the job: it still holds its thread
        await asyncio.sleep(0.05)
        assert depth() == idle + 3
        release.set()
        await asyncio.gather(*jobs[1:])
        for _ in range(100):  # the last one's done-callback runs on its thread
            if depth() == idle:
                break
            await asyncio.sleep(0.01)
        assert depth() == idle

    asyncio.run(scenario())


def test_a_watcher_that_fails_costs_its_own_record_not_the_call(server):
    def broken(session, session_id=""):
        raise OSError(28, "No space left on device")

    server.call_watchers.insert(0, broken)
    try:
        async def scenario() -> dict:
            async with rt.client(server) as c:
                return await rt.text_reply(c, "Hi")

        assert asyncio.run(scenario())["response"]["status"] == "completed"
    finally:
        server.call_watchers.remove(broken)


def test_the_ledgers_rows_by_state_are_read_per_scrape(tmp_path):
    from pipeline.tools.ledger import Ledger
    from pipeline.transports.ops_metrics import ServeMetrics

    path = tmp_path / "calls.sqlite3"
    metrics = ServeMetrics(ledger_path=str(path))

    def rows() -> dict[str, float]:
        text = metrics.exposition()[1]
        return {s.labels["state"]: s.value for f in prom_parser.text_string_to_metric_families(text)
                for s in f.samples if s.name == "pipeline_ledger_rows"}

    assert rows() == {"pending": 0, "committed": 0, "failed": 0, "unknown": 0}
    assert not path.exists()  # a scrape creates nothing
    with Ledger(path) as ledger:
        for key in ("refund:1", "refund:2", "refund:3"):
            ledger.intend(business_key=key, tool="refund", arguments={"amount": 5},
                          target="card", call_id=f"call_{key}")
        ledger.commit("refund:1", {"ok": True})
        ledger.mark_unknown("refund:2", "timed out")
        assert rows() == {"pending": 1, "committed": 1, "failed": 0, "unknown": 1}
