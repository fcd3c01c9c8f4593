"""OpenTelemetry traces of `pipeline serve` calls (`--traces`; the `ops` extra).

One trace per call, built from the call's event stream alone (an `EventPhase.OBSERVER`
listener): each span starts and ends at the `perf` stamps of the events that bound it, mapped
onto wall-clock time, so a trace viewer draws the waterfall the page draws. Nothing of
OpenTelemetry is imported until a `CallTracer` is made.

    call                          session.created .. the client left (pipeline.end_reason)
    ├─ turn                       speech started .. its reply done (transcript, commit reason)
    │  ├─ vad.speech              speech started .. its last stop (audio ms, pauses in it)
    │  ├─ stt.final               the final pass: its compute time, ending at its transcript
    │  ├─ turn.decision           the last stop .. committed (min_silence, max_silence, client)
    │  └─ response                response_start .. response.done (status, reason)
    │     ├─ llm                  request .. last token; event `first_token`
    │     ├─ tts.chunk            the voice free .. the chunk's audio made (text, samples)
    │     ├─ tool                 arguments done .. its output (name, call id, state)
    │     └─ bargein.decision     the gate fired .. cancelled or resumed (what was heard)
    └─ response                   a client's response.create, outside any turn

`CallTracer.from_environment()` exports over OTLP/HTTP as the standard variables say
(`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `..._HEADERS`,
`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER`, ...).
"""

from __future__ import annotations

import time
from typing import Any

from ..base import events as ev
from ..base.clock import perf_s
from ..base.events import Milestone
from ..call.session import Session
from .ops_metrics import EndReason, tool_state

SERVICE_NAME = "pipeline-serve"  # unless OTEL_SERVICE_NAME says otherwise


class CallTracer:
    """Makes one `CallTrace` per call on a tracer provider."""

    def __init__(self, provider: Any) -> None:
        self.provider = provider
        self.tracer = provider.get_tracer("pipeline")

    @classmethod
    def from_environment(cls) -> CallTracer:
        """An SDK provider that batches spans to the OTLP/HTTP exporter the OTEL_* variables
        configure (by default http://localhost:4318/v1/traces)."""
        import os

        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", SERVICE_NAME)})
        provider = TracerProvider(resource=resource)
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        return cls(provider)

    def watch(self, session: Session, session_id: str = "") -> CallTrace:
        trace = CallTrace(self.tracer, session_id)
        session.listeners.add(trace.on_event, ev.EventPhase.OBSERVER)
        return trace

    def shutdown(self) -> None:
        """Export what is batched (the server stops)."""
        self.provider.shutdown()


class CallTrace:
    """One call's spans, opened and closed as its events arrive."""

    def __init__(self, tracer: Any, session_id: str = "") -> None:
        from opentelemetry import trace

        self._trace = trace
        self.tracer = tracer
        self._wall_minus_perf_ns = time.time_ns() - int(perf_s() * 1e9)
        self.call = tracer.start_span("call", start_time=self._ns(perf_s()),
                                      attributes={"pipeline.session_id": session_id})
        self._turns: dict[str, Any] = {}  # turn id -> open turn span
        self._speech: dict[str, float] = {}  # turn id -> speech started (perf)
        self._stopped: dict[str, float] = {}  # turn id -> speech stopped (perf)
        self._committed: dict[str, float] = {}  # turn id -> committed (perf)
        self._pauses: dict[str, int] = {}  # turn id -> speech stops heard (a pause, then more)
        self.end = EndReason()
        self._responses: dict[str, Any] = {}  # response id -> open response span
        self._response_turn: dict[str, str] = {}
        self._ended: dict[str, Any] = {}  # response id -> its ended span (a late tool output's parent)
        self._llm: dict[str, Any] = {}  # response id -> open llm span
        self._voice_free: dict[str, float] = {}  # response id -> when its next chunk could start
        self._tools: dict[str, tuple[float, str, str | None]] = {}  # call id -> (perf, name, response)
        self._gate_fired: float | None = None
        self._last_perf = perf_s()
        self.finished = False

    def _ns(self, perf: float) -> int:
        return int(perf * 1e9) + self._wall_minus_perf_ns

    def _child(self, name: str, parent: Any, start: float, attributes: dict[str, Any]) -> Any:
        context = self._trace.set_span_in_context(parent)
        return self.tracer.start_span(name, context=context, start_time=self._ns(start),
                                      attributes={k: v for k, v in attributes.items()
                                                  if v is not None})

    def _span(self, name: str, parent: Any, start: float, end: float, **attributes: Any) -> None:
        self._child(name, parent, min(start, end), attributes).end(end_time=self._ns(end))

    def _parent_of_response(self, response_id: str | None) -> Any:
        turn = self._response_turn.get(response_id or "")
        return self._turns.get(turn or "", self.call)

    def on_event(self, e: ev.Event) -> None:
        if self.finished:
            return
        self._last_perf = max(self._last_perf, e.perf)
        self.end.see(e)
        if isinstance(e, ev.SpeechStarted) and e.item_id not in self._turns:
            self._speech[e.item_id] = e.perf
            self._turns[e.item_id] = self._child("turn", self.call, e.perf, {
                "pipeline.turn_id": e.item_id, "pipeline.audio_start_ms": e.audio_start_ms})
        elif isinstance(e, ev.SpeechStopped) and e.item_id in self._turns:
            self._stopped[e.item_id] = e.perf  # the caller may go on: the last stop counts
            self._pauses[e.item_id] = self._pauses.get(e.item_id, 0) + 1
        elif isinstance(e, ev.InputCommitted) and e.item_id in self._turns:
            turn = self._turns[e.item_id]
            self._committed[e.item_id] = e.perf
            stopped = self._stopped.get(e.item_id, e.perf)
            self._span("vad.speech", turn, self._speech[e.item_id], stopped, **{
                "pipeline.turn_id": e.item_id, "pipeline.audio_end_ms": e.audio_end_ms,
                "pipeline.pauses": max(0, self._pauses.get(e.item_id, 1) - 1)})
            turn.set_attribute("pipeline.commit_reason", e.reason)
            turn.set_attribute("pipeline.audio_end_ms", e.audio_end_ms)
            self._span("turn.decision", turn, stopped, e.perf,
                       **{"pipeline.turn_id": e.item_id, "pipeline.commit_reason": e.reason})
        elif isinstance(e, ev.TranscriptionCompleted) and e.item_id in self._turns:
            self._turns[e.item_id].set_attribute("pipeline.transcript", e.transcript)
        elif isinstance(e, ev.StageMark):
            self._mark(e)
        elif isinstance(e, ev.OutputTranscriptDelta) and e.response_id in self._responses:
            start = self._voice_free.get(e.response_id, e.perf)
            self._span("tts.chunk", self._responses[e.response_id], start, e.perf,
                       **{"pipeline.response_id": e.response_id, "pipeline.text": e.delta.strip()})
            self._voice_free[e.response_id] = e.perf
        elif isinstance(e, ev.FunctionCallArgumentsDone):
            self._tools[e.call_id] = (e.perf, e.name, e.response_id)
        elif isinstance(e, ev.ItemCreated) and e.item.get("type") == "function_call_output":
            self._tool_done(e)
        elif isinstance(e, ev.ResponseDone):
            self._response_done(e)
        elif isinstance(e, ev.Error):
            self.call.add_event("error", {"pipeline.code": str(e.error.get("code"))},
                                timestamp=self._ns(e.perf))

    def _mark(self, e: ev.StageMark) -> None:
        rid = e.response_id
        if e.stage is Milestone.STT_FINAL and e.turn_id in self._turns:
            compute_s = float(e.detail.get("final_compute_ms", 0.0)) / 1000
            attrs = {f"pipeline.{k}": v for k, v in e.detail.items()
                     if isinstance(v, int | float | str | bool)}
            self._span("stt.final", self._turns[e.turn_id], e.perf - compute_s, e.perf,
                       **{"pipeline.turn_id": e.turn_id, **attrs})
        elif e.stage is Milestone.RESPONSE_START and rid is not None and rid not in self._responses:
            if e.turn_id is not None and e.turn_id in self._turns:
                self._response_turn[rid] = e.turn_id
            preemptive = e.perf < self._committed.get(e.turn_id or "", float("inf"))
            span = self._child("response", self._parent_of_response(rid), e.perf, {
                "pipeline.response_id": rid, "pipeline.turn_id": e.turn_id,
                "pipeline.preemptive": preemptive})
            self._responses[rid] = span
            self._llm[rid] = self._child("llm", span, e.perf, {"pipeline.response_id": rid})
        elif e.stage is Milestone.LLM_FIRST_TOKEN and rid in self._llm:
            self._llm[rid].add_event("first_token", timestamp=self._ns(e.perf))
        elif e.stage is Milestone.FIRST_CHUNK and rid in self._responses:
            self._voice_free[rid] = e.perf
        elif e.stage is Milestone.LLM_DONE and rid in self._llm:
            self._llm.pop(rid).end(end_time=self._ns(e.perf))
        elif e.stage is Milestone.FIRST_AUDIO_OUT and rid in self._responses:
            self._responses[rid].add_event("first_audio_out", timestamp=self._ns(e.perf))
        elif e.stage is Milestone.BARGE_IN_GATE:
            self._gate_fired = e.perf
        elif e.stage in (Milestone.BARGE_IN, Milestone.FALSE_INTERRUPTION):
            self._barge_in(e)

    def _barge_in(self, e: ev.StageMark) -> None:
        decision_s = float(e.detail.get("decision_ms", 0.0)) / 1000
        start = self._gate_fired if self._gate_fired is not None else e.perf - decision_s
        self._gate_fired = None
        outcome = "cancelled" if e.stage is Milestone.BARGE_IN else "resumed"
        parent = self._responses.get(e.response_id or "", self.call)
        attrs = {f"pipeline.{k}": v for k, v in e.detail.items()
                 if isinstance(v, int | float | str | bool)}
        self._span("bargein.decision", parent, start, e.perf,
                   **{"pipeline.outcome": outcome, "pipeline.response_id": e.response_id, **attrs})

    def _tool_done(self, e: ev.ItemCreated) -> None:
        call_id = str(e.item.get("call_id"))
        started = self._tools.pop(call_id, None)
        if started is None:
            return
        perf, name, rid = started
        # a client's tool answers after its response ended: still that response's child
        parent = self._responses.get(rid or "") or self._ended.get(rid or "", self.call)
        self._span("tool", parent, perf, e.perf, **{
            "pipeline.tool": name, "pipeline.call_id": call_id, "pipeline.response_id": rid,
            "pipeline.state": tool_state(e.item.get("output"))})

    def _response_done(self, e: ev.ResponseDone) -> None:
        rid = str(e.response.get("id"))
        llm = self._llm.pop(rid, None)
        if llm is not None:  # cancelled before its last token
            llm.end(end_time=self._ns(e.perf))
        span = self._responses.pop(rid, None)
        if span is None:
            return
        details = e.response.get("status_details") or {}
        span.set_attribute("pipeline.status", str(e.response.get("status")))
        if details.get("reason"):
            span.set_attribute("pipeline.reason", str(details["reason"]))
        span.end(end_time=self._ns(e.perf))
        self._ended[rid] = span
        self._voice_free.pop(rid, None)
        turn_id = self._response_turn.pop(rid, None)
        if turn_id is not None and turn_id in self._turns:
            self._turns.pop(turn_id).end(end_time=self._ns(e.perf))

    def finish(self, reason: str | None = None) -> None:
        """The call is over: close what is open at its last event, then the call span."""
        if self.finished:
            return
        self.finished = True
        now = perf_s()
        for spans in (self._llm, self._responses, self._turns):
            for span in spans.values():
                span.end(end_time=self._ns(self._last_perf))
            spans.clear()
        self.call.set_attribute("pipeline.end_reason", self.end.reason(reason))
        self.call.end(end_time=self._ns(now))
