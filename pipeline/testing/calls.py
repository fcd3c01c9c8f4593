"""Run a scripted call in simulated time and read what happened, like a call transcript."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.base import config as cfg
from pipeline.base import events as ev
from pipeline.call.session import Session, Stages
from pipeline.stt import word_errors
from pipeline.transports.runtime import run_call
from pipeline.transports.scripted import Clip, ScriptedCaller

# A reply long enough to talk over 1 s into it, the same words every run: script the LLM with it
# (`ScriptedLLM(replies=[LONG_REPLY])`) to test what interrupting the agent does.
LONG_REPLY = ("Thanks for calling the front desk. Checkout is at eleven in the morning, and late "
              "checkout until one is free for members. Breakfast is served from seven to ten in the "
              "garden room. Let me know if you need anything else at all.")
QUESTION = "What time is checkout?"  # what the caller asks before LONG_REPLY


@dataclass
class CallRecord:
    """One finished call: the session (its conversation, responses), the caller (the agent audio
    it heard, when) and every event, in order."""

    session: Session
    caller: ScriptedCaller
    events: list[ev.Event]

    def of(self, *types: str) -> list[ev.Event]:
        return [e for e in self.events if e.type in types]

    def stages(self, name: str) -> list[ev.StageMark]:
        return [e for e in self.events if isinstance(e, ev.StageMark) and e.stage == name]

    @property
    def transcripts(self) -> list[str]:
        return [e.transcript for e in self.events if isinstance(e, ev.TranscriptionCompleted)]

    @property
    def commits(self) -> list[ev.InputCommitted]:
        return self.of("input_audio_buffer.committed")  # type: ignore[return-value]

    @property
    def done(self) -> list[ev.ResponseDone]:
        return self.of("response.done")  # type: ignore[return-value]

    @property
    def agent_lines(self) -> list[str]:
        """What the agent said, per response, as heard (truncated where cut off)."""
        return [i.text for i in self.session.conversation.items
                if i.type == "message" and i.role == "assistant" and i.text]

    def timeline(self) -> str:
        """A readable account of the call, for assertion messages."""
        out = []
        e: Any  # events of every kind, told apart by their type
        for e in self.events:
            t = f"{e.ts:7.2f}s "
            if e.type == "conversation.item.input_audio_transcription.completed":
                out.append(t + f"caller: {e.transcript}")
            elif e.type == "response.function_call_arguments.done":
                out.append(t + f"call {e.name}({e.arguments})")
            elif e.type == "response.done":
                r = e.response
                said = " ".join(c.get("transcript", "") for o in r["output"] for c in o.get("content", []))
                out.append(t + f"{r['id']} {r['status']} {r.get('status_details') or ''}: {said}")
            elif e.type == "conversation.item.created" and e.item["type"] == "function_call_output":
                out.append(t + f"result {e.item['call_id']}: {e.item['output']}")
            elif e.type in ("x.log", "error", "conversation.item.truncated"):
                out.append(t + f"{e.type}: {getattr(e, 'message', None) or getattr(e, 'error', None) or getattr(e, 'transcript', '')}")
            elif e.type == "x.stage" and e.stage in ("barge_in", "heard_in_full", "first_audio_out"):
                out.append(t + f"{e.stage} {e.response_id}")
        return "\n".join(out)

    def agent_audio_between(self, t0_s: float, t1_s: float) -> float:
        """Seconds of agent audio handed to the speaker in [t0_s, t1_s) of clock time."""
        return self.caller.agent_seconds_between(t0_s, t1_s)


def make_config(**sections: dict[str, Any]) -> cfg.Config:
    """The default configuration with some sections changed: `make_config(turn={"preset": "fast"})`."""
    return cfg.apply(cfg.Config.default(), sections) if sections else cfg.Config.default()


def with_stages(base: Stages, **replace: Any) -> Stages:
    """The loaded real stages with some swapped for fakes."""
    fields: dict[str, Any] = dict(vad=base.vad, stt=base.stt, completeness=base.completeness,
                                  llm=base.llm, tts=base.tts)
    fields.update(replace)
    return Stages(**fields)


def call(stages: Stages, clips: list[Clip] | list[np.ndarray], *, config: cfg.Config | None = None,
         realtime: bool = False, setup: Any = None, **caller_kwargs: Any) -> CallRecord:
    """Clips (or arrays played back to back from t=0) through a session; returns the record."""
    if clips and isinstance(clips[0], np.ndarray):
        clips = [Clip(np.concatenate(clips), at_s=0.0)]  # type: ignore[arg-type]
    caller = ScriptedCaller(list(clips), **caller_kwargs)  # type: ignore[arg-type]
    result = asyncio.run(run_call(config or cfg.Config.default(), stages, caller, realtime=realtime,
                                  setup=setup))
    return CallRecord(result.session, caller, result.events.events)


def wer(reference: str, hypothesis: str) -> float:
    """Word error rate: word-level edit distance over the reference length."""
    edits, words = word_errors(reference, hypothesis)
    return edits / max(1, words)
