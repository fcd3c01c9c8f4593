"""Test your agent the way this project tests its own: whole calls on the simulated clock, real
models, a caller who speaks, noise over the agent, and the realtime server for a client.

A scripted call runs in simulated time (as fast as the models compute) and returns its record:
what the caller was heard to say, what the agent said, every event in order::

    from pipeline.base.config import Config
    from pipeline.call.session import Stages
    from pipeline.stages.fakes import ScriptedLLM
    from pipeline.testing import Speaker, call, silence, with_stages

    stages = Stages.load(Config.default())  # the real models (scripts/download_models.sh)
    say = Speaker()  # a Piper voice without sampling noise: the same audio every run
    record = call(with_stages(stages, llm=ScriptedLLM(replies=["Checkout is at eleven."])),
                  [silence(300), say("What time is checkout?"), silence(2000)])
    assert record.transcripts == ["What time is checkout?"]
    assert record.agent_lines == ["Checkout is at eleven."]
    print(record.timeline())  # a readable account, for assertion messages

Script your own LLM (or load it as a stage) to test what the agent says; keep the real VAD, STT
and TTS to test what the caller hears. To talk over the agent, give `call` clips that start on an
event: `Clip(noise("pink", 2.0), None, after=after_stage("first_audio_out"), delay_s=1.0)` plays
pink noise 1 s into the agent's first audio (`LONG_REPLY` is a reply long enough for it); the
record then says whether it barged in (`record.stages("barge_in")`) and what was heard.

A realtime client (the OpenAI SDK, Pipecat, LiveKit Agents, a browser) talks to a real server
running in a thread: `with ServerThread(stages) as server:` and connect to `server.url`;
`pcm16_24k` and `chunks_b64` turn 16 kHz audio into what such a client sends.
A phone call reaches the same server through `pipeline.testing.carrier.Carrier`, a carrier's end
of a Twilio, Telnyx or Plivo media stream (8 kHz G.711 at real time, marks echoed as it plays).

`pipeline.testing.voices` says a text in other voices (Piper at three speeds, espeak-ng) and
finds where a phrase said alone ends inside a sentence, to cut a pause into the middle of it.
`commit_after_ms` says when the turn detector, fed window by window, commits a turn.
"""

from __future__ import annotations

from pipeline.transports.scripted import Clip, after_stage

from .calls import LONG_REPLY, QUESTION, CallRecord, call, make_config, wer, with_stages
from .detector import commit_after_ms
from .server import LlamaServer, ServerThread, chunks_b64, pcm16_24k
from .sounds import (
    CALLER_VOICE,
    JFK_TEXT,
    NOISE_KINDS,
    Speaker,
    at_level,
    caller_tts,
    jfk,
    mm_hmm,
    noise,
    paused_speech,
    silence,
)

__all__ = [
    "CALLER_VOICE", "JFK_TEXT", "LONG_REPLY", "NOISE_KINDS", "QUESTION", "CallRecord", "Clip",
    "LlamaServer", "ServerThread", "Speaker", "after_stage", "at_level", "call", "caller_tts",
    "chunks_b64", "commit_after_ms", "jfk", "make_config", "mm_hmm", "noise", "paused_speech", "pcm16_24k", "silence", "wer",
    "with_stages",
]
