"""An LLM-played caller: a persona and a goal given to a model, which says the caller's next
line each time the agent has finished speaking, until it says the goal is met or a turn limit.

    [caller]
    persona = "You are Ms Garcia, a guest of the Harbor Hotel."
    goal = "Find out which room you booked, then say goodbye."
    opening = "Hi, can you check my booking under Garcia?"
    max_turns = 4
    # llm = "module:function"  (default: the configured model, the embedded instruct model)

Its lines are voiced like scripted ones (the tone caller or Piper) and judged by the same
expectations; the timeline shows each as `persona: ...`.
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from pipeline.base import events as ev
from pipeline.base.clock import Clock
from pipeline.transports.scripted import Clip

from .scenario import Persona

DONE = "[done]"
MAX_TOKENS = 48  # a caller's line; a small model left alone repeats itself for a minute
PROMPT = ("{persona}\nYour goal: {goal}\nYou are the caller on a phone call; the other side is the "
          "agent. Reply with the one short sentence you say next, nothing else. Once your goal is "
          "met, say goodbye and end with " + DONE + ".")


class PersonaCaller:
    """Adds the persona's lines to the scripted caller's clips as the call goes."""

    def __init__(self, persona: Persona, llm: Any, voice: Callable[[str], np.ndarray],
                 clips: list[Clip]) -> None:
        self.persona, self.llm, self.voice, self.clips = persona, llm, voice, clips
        self.spoken: list[tuple[float, str]] = []  # (when, words) of each line it said
        self.heard: list[tuple[str, str]] = []  # (who, words): the call as the persona knows it
        self.done = False
        self.clock: Clock | None = None
        self._latest = 0  # responses begun: a newer one means the agent is not finished
        self._tasks: set[asyncio.Task[None]] = set()
        self.error: BaseException | None = None  # the persona's model failed: the run's error

    def attach(self, session: Any) -> None:
        self.clock = session.clock
        session.listeners.add(self.on_event, ev.EventPhase.OBSERVER)
        if self.persona.opening:
            self._say(self.persona.opening, 0.3)
        else:
            self._next(delay_s=0.3)

    def on_event(self, e: ev.Event) -> None:
        if isinstance(e, ev.ResponseCreated):
            self._latest += 1
        elif isinstance(e, ev.StageMark) and e.stage == "heard_in_full" and not self.done:
            self._next(delay_s=self.persona.reply_delay_s)
        elif isinstance(e, ev.ResponseDone):
            out = e.response.get("output") or []
            said = " ".join(c.get("transcript", "") for o in out for c in o.get("content", [])).strip()
            if said:
                self.heard.append(("agent", said))

    def _next(self, *, delay_s: float) -> None:
        placeholder = Clip(np.zeros(0, np.float32), None, label="persona (deciding)")
        self.clips.append(placeholder)  # keeps the line open while the persona thinks
        task = asyncio.ensure_future(self._decide(placeholder, delay_s, self._latest))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _decide(self, placeholder: Clip, delay_s: float, latest: int) -> None:
        assert self.clock is not None
        try:
            await self.clock.sleep(delay_s)
            if self._latest != latest or self.done:
                return  # the agent went on talking: its next heard_in_full asks again
            turns = sum(who == "caller" for who, _ in self.heard)
            if turns >= self.persona.max_turns:
                self.done = True
                return
            try:
                text = await self.clock.run_in_thread(
                    functools.partial(self.llm.complete, self._messages(), max_tokens=MAX_TOKENS))
            except Exception as exc:
                self.error, self.done = exc, True
                return
            finished = DONE in text.lower()
            text = _first_sentences(text)
            self.done = finished
            if text:
                self._say(text, self.clock.now(), clip=placeholder)
        finally:
            if placeholder.at_s is None:
                self.clips[:] = [c for c in self.clips if c is not placeholder]

    def _say(self, text: str, at_s: float, *, clip: Clip | None = None) -> None:
        clip = clip or Clip(np.zeros(0, np.float32), None)
        if not any(c is clip for c in self.clips):
            self.clips.append(clip)
        clip.audio, clip.label = self.voice(text), f"persona: {text}"
        clip.at_s = at_s
        self.spoken.append((at_s, text))
        self.heard.append(("caller", text))

    def _messages(self) -> list[dict[str, str]]:
        """The persona's side of the call: the agent's words come to it as the user's."""
        p = self.persona
        messages = [{"role": "system", "content": PROMPT.format(persona=p.persona, goal=p.goal)}]
        for who, words in self.heard:
            messages.append({"role": "user" if who == "agent" else "assistant", "content": words})
        if messages[-1]["role"] != "user":
            messages.append({"role": "user", "content": "(the agent is silent)"})
        return messages


def _first_sentences(text: str, n: int = 2) -> str:
    """The line as a caller would say it: its first line, at most `n` sentences, no marker."""
    text = re.sub(re.escape(DONE), "", text, flags=re.IGNORECASE).strip()
    first = text.splitlines()[0] if text else ""
    return " ".join(re.split(r"(?<=[.!?])\s+", first)[:n]).strip()
