"""A hotel front desk on the phone: look up a booking (with a spoken holding line), end the call.

Shows the call edges: a caller who speaks before the line is ready loses no words; the goodbye is
said in the same response as `end_call`, and the line closes only after it has been heard to the
end; talking over the goodbye keeps the line open; "okay, bye!" is let finish; a new request after
the goodbye cancels the close; the pre-hangup audit is asked once per call, however many
times the call is closed; and a question after an "okay" said over the agent is answered.

    python examples/front_desk.py                    # every scenario, printed as a transcript
    python examples/front_desk.py --llm llama-cpp    # the same calls on the embedded Qwen model
    pipeline serve --desk examples/front_desk.py     # the desk for phone callers
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np

from pipeline.base.clock import Clock
from pipeline.stages.fakes import ScriptedLLM
from pipeline.tools import ToolRegistry, tool

GOODBYE = "Thanks for calling the Harbor Hotel. Have a wonderful stay, goodbye!"
BOOKINGS = {"garcia": {"guest": "Garcia", "room": "a sea-view double", "nights": 3, "from": "Friday"}}


def build_tools(clock: Clock, *, lookup_latency_s: float = 0.8) -> ToolRegistry:
    @tool(spoken=("holding_line",))
    async def look_up_booking(holding_line: str, last_name: str) -> dict[str, Any]:
        """Find a guest's booking by last name.

        Args:
            holding_line: What to say while looking, e.g. "Let me pull up your booking."
            last_name: The guest's last name.
        """
        await clock.sleep(lookup_latency_s)
        return BOOKINGS.get(last_name.strip().lower(), {"error": f"no booking under {last_name}"})

    return ToolRegistry(specs=[look_up_booking])


CONFIG = {"call": {"end_call": True}}  # `pipeline serve --desk`: the agent may hang up


def desk(clock: Clock) -> ToolRegistry:
    """Each phone call's tools on `pipeline serve --desk examples/front_desk.py`."""
    return build_tools(clock)


def scripted_llm(goodbye: str = GOODBYE) -> ScriptedLLM:
    end = {"name": "end_call", "arguments": {"goodbye": goodbye, "reason": "the caller is done"}}
    return ScriptedLLM(rules=[
        [r"result of look_up_booking", "I found it: {room} for {nights} nights from {from}."],
        [r"still to do", "Before you go, may I have an email for the receipt?"],
        [r"require an action before hanging up", "NONE"],  # the pre-hangup audit: nothing is owed
        [r"result of end_call.*\"hung_up\": false", "Of course, I am still here."],
        [r"breakfast", "Yes, breakfast is included, from seven to ten."],
        [r"late check", "Late checkout until one is free for members."],
        [r"\bdogs?\b", "Yes, dogs are welcome, for ten dollars a night."],
        [r"that's all|that is all|nothing else|bye", end],
        [r"booking|reservation", {"name": "look_up_booking", "arguments": {
            "holding_line": "Let me pull up your booking.", "last_name": "Garcia"}}],
    ], replies=["How can I help?"])


class StallingVoice:
    """Wraps a TTS: the nth chunk arrives `stall_s` late (a GPU hiccup, a slow network voice)."""

    def __init__(self, inner: Any, *, stall_at_chunk: int, stall_s: float, match: str = "") -> None:
        self.inner = inner
        self.sample_rate_hz = inner.sample_rate_hz
        self.stall_at_chunk, self.stall_s, self.match = stall_at_chunk, stall_s, match
        self._seen = 0

    async def synthesize_async(self, text: str, *, clock: Clock) -> np.ndarray:
        if self.match and self.match in text or self._seen:
            self._seen += 1
            if self._seen == self.stall_at_chunk:
                await clock.sleep(self.stall_s)
        return await clock.run_in_thread(self.inner.synthesize, text)


def main(argv: list[str] | None = None) -> None:  # pragma: no cover - a demonstration on the real models
    import argparse

    from pipeline.base.audio import INPUT_RATE_HZ, resample
    from pipeline.base.config import apply, load
    from pipeline.call.session import Stages
    from pipeline.transports.runtime import run_call
    from pipeline.transports.scripted import Clip, ScriptedCaller, after_stage

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llm", choices=("scripted", "llama-cpp"), default="scripted",
                        help="scripted: the desk's rules (deterministic); llama-cpp: the "
                             "configuration's embedded model (Qwen by default)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="a configuration override, e.g. llm.max_tokens=64")
    args = parser.parse_args(argv)
    config = load(overrides=["call.end_call=true", *args.set])
    audited = apply(config, {"call": {"pre_hangup_check": True}})
    stages = Stages.load(config)
    if args.llm == "scripted":
        stages.llm = scripted_llm()

    def say(text: str) -> np.ndarray:
        return resample(stages.tts.synthesize(text), stages.tts.sample_rate_hz, INPUT_RATE_HZ)

    def scenario(title: str, clips: list[Clip], *, audit: bool = False) -> None:
        print(f"--- {title}")
        asked: list[float] = []

        def setup(session: Any) -> None:
            session.use_tools(build_tools(session.clock))
            ask = session.control.audit  # the default audit: one call to the model

            async def counted(items: Any, instructions: str) -> str | None:
                asked.append(session.clock.now())
                return await ask(items, instructions)

            session.control.audit = counted

        caller = ScriptedCaller(clips, ready_after_s=1.0)
        asyncio.run(run_call(audited if audit else config, stages, caller, printer=print, setup=setup))
        if audit:
            print(f"(the pre-hangup audit was asked {len(asked)} time(s), at {asked} s)")

    ask = Clip(say("Hi, can you check my booking under Garcia?"), 0.0)
    done = Clip(say("Great, that's all, thanks!"), None, after=after_stage("heard_in_full", 2), delay_s=0.5)
    scenario("a normal call; the caller speaks before the line is ready", [ask, done])
    scenario("the caller talks over the goodbye, then closes again: the audit is asked once", [
        Clip(ask.audio, 0.0), Clip(done.audio, None, after=after_stage("heard_in_full", 2), delay_s=0.5),
        Clip(say("Wait, one more thing. Is breakfast included?"), None,
             after=after_stage("first_audio_out", 3), delay_s=0.8),
        Clip(say("Okay, that's all. Bye!"), None, after=after_stage("heard_in_full", 3), delay_s=0.5)],
        audit=True)
    scenario("'okay, okay' over the answer, then a question: the question interrupts and is "
             "answered", [
        Clip(ask.audio, 0.0),
        Clip(say("Okay, okay. And is breakfast included?"), None,
             after=after_stage("first_audio_out", 2), delay_s=0.6)])
    scenario("the caller answers the farewell", [
        Clip(ask.audio, 0.0), Clip(done.audio, None, after=after_stage("heard_in_full", 2), delay_s=0.5),
        Clip(say("Okay, bye!"), None, after=after_stage("heard_in_full", 3), delay_s=0.2)])


if __name__ == "__main__":
    main()
