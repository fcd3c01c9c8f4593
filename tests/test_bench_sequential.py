"""The benchmark's sequential baseline (bench/sequential.py): the final pass starts at commit and
the whole reply is spoken in one piece, while the pipeline's own session overlaps them. On fakes
(a loudness VAD, scripted STT and LLM, a tone voice): no models."""

from __future__ import annotations

import asyncio

import numpy as np

from bench.calls import MODE_SESSIONS, mode_config, session_for
from bench.sequential import SequentialSession
from pipeline.base import config as cfg
from pipeline.base import events as ev
from pipeline.call.session import Session, Stages
from pipeline.stages.fakes import ScriptedSTT
from pipeline.transports.runtime import run_call
from pipeline.transports.scripted import Clip, ScriptedCaller

from .test_listeners import REPLY, caller_tone, fake_stages


class NotingSTT(ScriptedSTT):
    """Notes, for each final pass, whether the turn had been committed when it started."""

    def __init__(self) -> None:
        super().__init__(transcripts=["What time is checkout?"])
        self.committed = False
        self.finals_after_commit: list[bool] = []

    def transcribe(self, audio: np.ndarray, *, final: bool) -> str:
        if final:
            self.finals_after_commit.append(self.committed)
        return super().transcribe(audio, final=final)


def _call(mode: str) -> tuple[list[ev.Event], NotingSTT]:
    stt = NotingSTT()
    base = fake_stages()
    stages = Stages(vad=base.vad, stt=stt, completeness=base.completeness, llm=base.llm, tts=base.tts)

    def watch(session: Session) -> None:
        def on_event(e: ev.Event) -> None:
            if isinstance(e, ev.InputCommitted):
                stt.committed = True
        session.listeners.add(on_event, ev.EventPhase.OBSERVER)

    caller = ScriptedCaller([Clip(caller_tone(), 0.3)], tail_s=4.0)
    result = asyncio.run(run_call(mode_config(cfg.Config.default(), mode), stages, caller, setup=watch,
                                  session_class=session_for(mode)))
    return result.events.events, stt


def test_the_baseline_runs_in_its_own_session_and_the_pipeline_has_no_such_mode():
    assert session_for("sequential") is SequentialSession and MODE_SESSIONS == {"sequential": SequentialSession}
    assert session_for("streaming") is Session and session_for("streaming+preemptive") is Session
    assert not hasattr(cfg.ResponsePolicy(), "mode")


def test_the_baseline_transcribes_at_commit_and_speaks_the_whole_reply_at_once():
    events, stt = _call("sequential")
    assert stt.finals_after_commit == [True]
    said = [e.delta for e in events if isinstance(e, ev.OutputTranscriptDelta)]
    assert said == [REPLY]  # one chunk, made after the last token
    (done,) = [e for e in events if isinstance(e, ev.ResponseDone)]
    assert done.response["status"] == "completed"


def test_the_pipeline_transcribes_at_speech_stop_and_speaks_as_sentences_complete():
    events, stt = _call("streaming")
    assert stt.finals_after_commit[0] is False
    said = [e.delta for e in events if isinstance(e, ev.OutputTranscriptDelta)]
    assert len(said) > 1 and " ".join(d.strip() for d in said) == REPLY
