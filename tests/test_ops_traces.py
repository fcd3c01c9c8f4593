"""OpenTelemetry traces of served calls: a running server (fake stages) traced into the SDK's
in-memory exporter, one export over OTLP/HTTP to a receiver this test starts, and nothing of
OpenTelemetry or prometheus-client imported when the switches are off."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from pipeline.base import events as ev
from pipeline.testing.server import ServerThread

from . import test_realtime_server as rt
from .conftest import ROOT
from .realtime_clients import WEATHER_TOOL
from .test_ops_metrics import _stages, tone

sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)

from pipeline.transports.telemetry import CallTrace, CallTracer  # noqa: E402

REPLY = "Sure. I can help with that."


@pytest.fixture(scope="module")
def traced() -> Iterator[tuple[rt.RealtimeServer, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with ServerThread(_stages()) as running:
        running.server.call_watchers.append(CallTracer(provider).watch)
        yield running.server, exporter


def call_spans(exporter: InMemorySpanExporter, timeout_s: float = 10.0) -> list:
    """The spans of the one call traced since the exporter was cleared, once its span ended."""
    import time

    deadline = time.monotonic() + timeout_s
    while not any(s.name == "call" for s in exporter.get_finished_spans()):
        assert time.monotonic() < deadline, "the call's span never ended"
        time.sleep(0.02)
    spans = list(exporter.get_finished_spans())
    assert len({s.context.trace_id for s in spans}) == 1, "one call, one trace"
    return spans


def by_name(spans: list, name: str) -> list:
    return sorted((s for s in spans if s.name == name), key=lambda s: s.start_time)


def parent(spans: list, span) -> object:
    return next(s for s in spans if s.context.span_id == span.parent.span_id)


def test_a_spoken_turn_is_one_trace_with_the_stage_waterfall(traced):
    server, exporter = traced
    exporter.clear()

    async def scenario() -> dict:
        async with rt.client(server) as c:
            await c.send({"type": "session.update", "session": {
                "instructions": "Help.", "include_local_events": True}})
            await c.wait_for("session.updated")
            mic = rt.Mic(c)
            mic.say(tone(0.8))
            done = await c.wait_for("response.done", timeout=20)
            await mic.stop()
            return {"done": done, "committed": c.of("input_audio_buffer.committed")[0],
                    "session": c.of("session.created")[0]}

    seen = asyncio.run(scenario())
    spans = call_spans(exporter)
    (call,) = by_name(spans, "call")
    (turn,) = by_name(spans, "turn")
    (response,) = by_name(spans, "response")
    assert call.parent is None
    assert call.attributes["pipeline.session_id"] == seen["session"]["session"]["id"]
    assert call.attributes["pipeline.end_reason"] == "caller_left"
    assert parent(spans, turn) is call and parent(spans, response) is turn
    assert turn.attributes["pipeline.turn_id"] == seen["committed"]["item_id"]
    assert turn.attributes["pipeline.transcript"] == "Hello there."
    assert turn.attributes["pipeline.commit_reason"] == "min_silence"
    assert response.attributes["pipeline.response_id"] == seen["done"]["response"]["id"]
    assert response.attributes["pipeline.status"] == "completed"
    for name in ("vad.speech", "stt.final", "turn.decision"):
        (span,) = by_name(spans, name)
        assert parent(spans, span) is turn, name
    (llm,) = by_name(spans, "llm")
    assert parent(spans, llm) is response
    assert [e.name for e in llm.events] == ["first_token"]
    assert llm.start_time <= llm.events[0].timestamp <= llm.end_time
    chunks = by_name(spans, "tts.chunk")
    assert all(parent(spans, s) is response for s in chunks)
    assert " ".join(s.attributes["pipeline.text"] for s in chunks) == REPLY
    # the waterfall: the caller stops, the turn is decided after the silence, audio follows
    (speech,) = by_name(spans, "vad.speech")
    (decision,) = by_name(spans, "turn.decision")
    assert speech.end_time == decision.start_time
    # 600 ms of silence after the last sound, part of it already gone when VAD called the stop
    assert 0.2e9 < decision.end_time - decision.start_time < 5e9
    first_audio = next(e for e in response.events if e.name == "first_audio_out")
    assert decision.end_time <= first_audio.timestamp <= response.end_time
    for span in spans:
        assert span.start_time <= span.end_time, span.name
        assert call.start_time <= span.start_time and span.end_time <= call.end_time, span.name


def test_a_tool_call_is_a_span_with_its_state(traced):
    server, exporter = traced
    exporter.clear()

    async def scenario() -> None:
        async with rt.client(server) as c:
            await c.send({"type": "session.update", "session": {"tools": [WEATHER_TOOL]}})
            await c.wait_for("session.updated")
            await rt.text_reply(c, "What is the weather in Paris?")
            call = next(o for o in c.of("response.done")[-1]["response"]["output"]
                        if o["type"] == "function_call")
            await c.send({"type": "conversation.item.create", "item": {
                "type": "function_call_output", "call_id": call["call_id"],
                "output": json.dumps({"status": "committed", "result": "sunny"})}})
            await c.wait_for("conversation.item.done",
                             lambda e: e["item"]["type"] == "function_call_output")

    asyncio.run(scenario())
    spans = call_spans(exporter)
    (tool,) = by_name(spans, "tool")
    assert tool.attributes["pipeline.tool"] == "get_weather"
    assert tool.attributes["pipeline.state"] == "committed"
    response = parent(spans, tool)
    assert response.name == "response" and parent(spans, response).name == "call"  # no turn


def test_a_barge_in_decision_is_a_span_under_the_reply_it_cut():
    exporter = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace = CallTrace(provider.get_tracer("test"))
    t0 = ev.StageMark(stage="response_start", response_id="resp_1").perf
    for e in (ev.StageMark(stage="response_start", response_id="resp_1", perf=t0),
              ev.StageMark(stage="barge_in_gate", perf=t0 + 1.0),
              ev.StageMark(stage="barge_in", response_id="resp_1", perf=t0 + 1.4,
                           detail={"why": "words", "heard": "wait", "decision_ms": 400.0}),
              ev.ResponseDone(response={"id": "resp_1", "status": "cancelled",
                                        "status_details": {"reason": "turn_detected"}},
                              perf=t0 + 1.5)):
        trace.on_event(e)
    trace.finish()
    spans = list(exporter.get_finished_spans())
    (decision,) = by_name(spans, "bargein.decision")
    assert decision.attributes["pipeline.outcome"] == "cancelled"
    assert decision.attributes["pipeline.heard"] == "wait"
    assert decision.end_time - decision.start_time == pytest.approx(0.4e9, rel=1e-3)
    response = parent(spans, decision)
    assert response.name == "response" and response.attributes["pipeline.reason"] == "turn_detected"


class _Receiver(BaseHTTPRequestHandler):
    bodies: list[tuple[str, bytes]] = []

    def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        _Receiver.bodies.append((self.path, body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_traces_go_out_over_otlp_http_as_the_otel_variables_say(traced, monkeypatch):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    server, _ = traced
    receiver = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{receiver.server_port}")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "voice-test")
    tracer = CallTracer.from_environment()
    server.call_watchers.append(tracer.watch)
    try:
        async def scenario() -> None:
            async with rt.client(server) as c:
                await rt.text_reply(c, "Hi")

        asyncio.run(scenario())
        import time

        deadline = time.monotonic() + 10
        while server.active_calls:
            assert time.monotonic() < deadline
            time.sleep(0.02)
    finally:
        server.call_watchers.remove(tracer.watch)
        tracer.shutdown()  # flushes the batch
        receiver.shutdown()
    assert _Receiver.bodies and all(path == "/v1/traces" for path, _ in _Receiver.bodies)
    names, services = [], set()
    for _, body in _Receiver.bodies:
        request = ExportTraceServiceRequest.FromString(body)
        for resource_spans in request.resource_spans:
            services |= {a.value.string_value for a in resource_spans.resource.attributes
                         if a.key == "service.name"}
            for scope in resource_spans.scope_spans:
                names += [s.name for s in scope.spans]
    assert services == {"voice-test"}
    assert {"call", "response", "llm", "tts.chunk"} <= set(names), names


def test_nothing_of_otel_or_prometheus_is_imported_when_off():
    code = ("import sys\n"
            "from pipeline.call.session import Stages\n"
            "from pipeline.base.config import Config\n"
            "from pipeline.transports import ops_http\n"
            "from pipeline.transports.realtime_server import RealtimeServer\n"
            "server = RealtimeServer(stages=None, config=Config.default())\n"
            "ops_http.install(server)\n"
            "print(sorted(m for m in sys.modules if m.startswith(('opentelemetry', 'prometheus'))))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
