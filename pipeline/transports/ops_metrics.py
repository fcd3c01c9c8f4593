"""Prometheus metrics for `pipeline serve` (`--metrics`: `/metrics` on the server's port).

Everything is read from each session's event stream, as an `EventPhase.OBSERVER` listener: the
event log stays the only instrumentation. `prometheus-client` is the `ops` extra; this module
imports it only when a `ServeMetrics` is made, so a server without `--metrics` never loads it.

The latencies are placed as `pipeline.base.metrics.TurnTiming.happened_s` places them: a stage
happened at its `perf` stamp mapped onto the session clock through the turn's commit (a held,
preemptive response's stages count when they really happened), against the caller's last
sound (`speech_stopped.audio_end_ms`).
"""

from __future__ import annotations

import json
from typing import Any

from ..base import events as ev
from ..base.clock import model_jobs_in_flight
from ..call.session import Session
from ..tools.ledger_rows import state_counts

# What a caller waits for, in seconds: a good turn is under 1, a bad one several.
LATENCY_BUCKETS = (0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 13.0, 20.0)
# the stages `pipeline.base.metrics.STAGES` times after the caller's last sound
TIMED_STAGES = ("stt_final", "turn_commit", "llm_first_token", "first_chunk", "tts_first_audio",
                "first_audio_out")
SLOW_CLIENT_STAGE = "slow_client_dropped"  # the StageMark a connection emits when it drops one

END_REASONS = ("caller_left", "agent_hung_up", "slow_client", "drained")


class ServeMetrics:
    """The server's metrics, on a registry of their own (one server per registry)."""

    def __init__(self, registry: Any = None, *, ledger_path: str | None = None) -> None:
        import prometheus_client as prom
        from prometheus_client.core import GaugeMetricFamily

        self._prom = prom
        self.registry = registry if registry is not None else prom.CollectorRegistry()
        r = self.registry
        self.active_calls = prom.Gauge("pipeline_active_calls", "Calls connected now.", registry=r)
        self.calls = prom.Counter("pipeline_calls", "Calls that ended, by why they ended.",
                                  ["reason"], registry=r)
        self.first_audio = prom.Histogram(
            "pipeline_speech_end_to_first_audio_seconds",
            "From the caller's last sound to the reply's first audio handed to the client.",
            buckets=LATENCY_BUCKETS, registry=r)
        self.stage_after = prom.Histogram(
            "pipeline_stage_after_speech_end_seconds",
            "When each stage of a turn happened, after the caller's last sound.",
            ["stage"], buckets=LATENCY_BUCKETS, registry=r)
        self.barge_ins = prom.Counter("pipeline_barge_ins", "Talk over the agent the barge-in "
                                      "gate stopped for: cancelled (an interruption) or resumed "
                                      "(a backchannel or noise).", ["outcome"], registry=r)
        self.tool_calls = prom.Counter("pipeline_tool_calls", "Tool results by their state "
                                       "(the ledger's status for side effects).", ["state"],
                                       registry=r)
        self.errors = prom.Counter("pipeline_errors", "Error events sent to clients, by code.",
                                   ["code"], registry=r)
        self.slow_clients = prom.Counter("pipeline_slow_clients_dropped", "Clients dropped for "
                                         "not reading their events.", registry=r)
        self.responses = prom.Counter("pipeline_responses", "Responses that ended, by status.",
                                      ["status"], registry=r)
        self.model_jobs = prom.Gauge("pipeline_model_jobs_in_flight", "Model jobs (STT passes, "
                                     "token streams, synthesis, ledger writes) running or waiting "
                                     "for a thread or their model's lock.", registry=r)
        self.model_jobs.set_function(model_jobs_in_flight)
        if ledger_path is not None:
            r.register(_LedgerRows(ledger_path, GaugeMetricFamily))
        for reason in END_REASONS:  # every series exists from the start: a rate() needs a zero
            self.calls.labels(reason=reason)
        for outcome in ("cancelled", "resumed"):
            self.barge_ins.labels(outcome=outcome)

    def watch(self, session: Session, session_id: str = "") -> CallMetrics:
        """Count one call: from now (before it starts) until `finish`."""
        call = CallMetrics(self)
        session.listeners.add(call.on_event, ev.EventPhase.OBSERVER)
        self.active_calls.inc()
        return call

    def exposition(self) -> tuple[str, str]:
        """(content type, the text format a Prometheus scrape reads)."""
        return self._prom.CONTENT_TYPE_LATEST, self._prom.generate_latest(self.registry).decode()


class _LedgerRows:
    """`pipeline_ledger_rows{state}`: the side-effect ledger's rows by state, read per scrape
    (read-only; an `unknown` row is an effect nobody knows the outcome of yet)."""

    STATES = ("pending", "committed", "failed", "unknown")

    def __init__(self, path: str, family: Any) -> None:
        self.path = path
        self.family = family

    def collect(self) -> Any:
        counts = state_counts(self.path)
        gauge = self.family("pipeline_ledger_rows", "Side-effect ledger rows by state "
                            "(call.db_path).", labels=["state"])
        for state in sorted(set(self.STATES) | set(counts)):
            gauge.add_metric([state], counts.get(state, 0))
        yield gauge


class CallMetrics:
    """One call's event listener: turns its events into the server's metrics."""

    def __init__(self, metrics: ServeMetrics) -> None:
        self.m = metrics
        self.end = EndReason()
        self.finished = False
        self._speech_end_s: dict[str, float] = {}  # turn -> caller's last sound, session clock
        self._offset_s: dict[str, float] = {}  # turn -> session clock minus perf, at commit
        self._turn_of: dict[str, str] = {}  # response -> the turn it answers
        self._timed: set[tuple[str, str]] = set()  # (turn, stage) already observed

    def on_event(self, e: ev.Event) -> None:
        self.end.see(e)
        if isinstance(e, ev.SpeechStopped):
            self._speech_end_s[e.item_id] = e.audio_end_ms / 1000.0
        elif isinstance(e, ev.InputCommitted):
            self._speech_end_s.setdefault(e.item_id, e.audio_end_ms / 1000.0)
            self._offset_s[e.item_id] = e.ts - e.perf
            self._stage(e.item_id, "turn_commit", e.perf)
        elif isinstance(e, ev.TranscriptionCompleted):
            self._stage(e.item_id, "stt_final", e.perf)
        elif isinstance(e, ev.StageMark):
            self._mark(e)
        elif isinstance(e, ev.ItemCreated) and e.item.get("type") == "function_call_output":
            self.m.tool_calls.labels(state=tool_state(e.item.get("output"))).inc()
        elif isinstance(e, ev.Error):
            self.m.errors.labels(code=str(e.error.get("code") or "unknown")).inc()
        elif isinstance(e, ev.ResponseDone):
            self.m.responses.labels(status=str(e.response.get("status"))).inc()

    def _mark(self, e: ev.StageMark) -> None:
        if e.stage == "response_start" and e.response_id and e.turn_id:
            self._turn_of.setdefault(e.response_id, e.turn_id)
        elif e.stage == "barge_in":
            self.m.barge_ins.labels(outcome="cancelled").inc()
        elif e.stage == "false_interruption":
            self.m.barge_ins.labels(outcome="resumed").inc()
        elif e.stage == SLOW_CLIENT_STAGE:
            self.m.slow_clients.inc()
        elif e.stage in TIMED_STAGES and e.response_id in self._turn_of:
            self._stage(self._turn_of[e.response_id], e.stage, e.perf)

    def _stage(self, turn: str, stage: str, perf: float) -> None:
        """Observe when `stage` of `turn` happened after the caller's last sound, once a turn."""
        end = self._speech_end_s.get(turn)
        offset = self._offset_s.get(turn)
        if end is None or offset is None or (turn, stage) in self._timed:
            return
        self._timed.add((turn, stage))
        after = max(0.0, perf + offset - end)
        self.m.stage_after.labels(stage=stage).observe(after)
        if stage == "first_audio_out":
            self.m.first_audio.observe(after)

    def finish(self, reason: str | None = None) -> None:
        """The call is over: `reason` when the server knows it (drained), else from its events."""
        if self.finished:
            return
        self.finished = True
        self.m.calls.labels(reason=self.end.reason(reason)).inc()
        self.m.active_calls.dec()


class EndReason:
    """Why a call ended, from its events: the agent hung up (end_call), the client was dropped
    for not reading, or else the caller left; the server's own reason ("drained") wins."""

    def __init__(self) -> None:
        self.hung_up = False
        self.slow_client = False

    def see(self, e: ev.Event) -> None:
        if isinstance(e, ev.CallLog) and e.message.startswith("(hangs up"):
            self.hung_up = True
        elif isinstance(e, ev.StageMark) and e.stage == SLOW_CLIENT_STAGE:
            self.slow_client = True

    def reason(self, given: str | None = None) -> str:
        if given is not None:
            return given
        return "slow_client" if self.slow_client else "agent_hung_up" if self.hung_up else "caller_left"


def tool_state(output: Any) -> str:
    """A tool result's state: the ledger's `status` ("committed", "unknown", "failed", ...) for a
    side effect, "error" for a tool that raised, "ok" for any other result."""
    try:
        parsed = json.loads(output) if isinstance(output, str) else output
    except ValueError:
        return "ok"
    if isinstance(parsed, dict):
        status = parsed.get("status")
        if isinstance(status, str) and status.isidentifier() and len(status) <= 40:
            return status
        if "error" in parsed:
            return "error"
    return "ok"
