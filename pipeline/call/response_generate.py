"""A reply's generation: the LLM streams its tokens from a model thread, and stops within one."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from ..base.clock import Clock
from ..base.config import ResponsePolicy
from ..base.errors import SpokenError
from ..base.protocols import LLM, Generation
from ..tools.stream import starts_tool_call


class Generating:
    """Step 1 of a response: its tokens, from the model's thread into a queue (None ends it)."""

    def __init__(self, llm: LLM, clock: Clock) -> None:
        self.llm = llm
        self.clock = clock
        self.cancel = threading.Event()  # set: the model thread stops within one token
        self.going = threading.Event()  # clear: the model thread waits before its next token
        self.going.set()
        self.result = Generation()  # why it stopped and what it cost, once it has
        self.failure: SpokenError | None = None  # apologised for: the reply fails once heard
        self._words_cut = False  # spoken words stopped at their cap, below a call's

    def start(self, messages: list[dict[str, Any]], tokens: asyncio.Queue[str | None], *,
              grammar: str | None, policy: ResponsePolicy) -> asyncio.Future[None]:
        """The model streams into `tokens` (at most the policy's token limit, at its temperature
        where it sets one); the future re-raises a failure of its thread."""
        loop = asyncio.get_running_loop()
        own = {"temperature": policy.temperature} if policy.temperature is not None else {}
        max_tokens, spoken = self._limits(grammar, policy)

        def produce() -> None:
            text, pieces, words = "", 0, None  # words: the reply is speech (None: not yet known)
            try:
                for piece in self.llm.stream(messages, cancel=self.cancel, result=self.result,
                                             grammar=grammar, max_tokens=max_tokens, **own):
                    loop.call_soon_threadsafe(tokens.put_nowait, piece)
                    while not self.going.wait(0.02) and not self.cancel.is_set():
                        pass  # paused (`paused`): the voice has the cores
                    pieces += 1
                    if spoken is not None and words is None:
                        text += piece
                        words = None if (call := starts_tool_call(text)) is None else not call
                    if words and spoken is not None and pieces >= spoken:
                        self._words_cut = True  # words stop at the spoken cap; only a call runs on
                        break
            finally:
                if self._words_cut:
                    self.result.finish_reason = "length"
                loop.call_soon_threadsafe(tokens.put_nowait, None)

        return asyncio.ensure_future(self.clock.run_in_thread(produce))

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """The model thread waits between tokens meanwhile: on 2 cores the reply's first chunk is
        synthesized in about half the time with the LLM stopped (`bench.tts_contention`)."""
        self.going.clear()
        try:
            yield
        finally:
            self.going.set()

    def _limits(self, grammar: str | None, policy: ResponsePolicy) -> tuple[int | None, int | None]:
        """The generation's token limit, and the spoken reply's where it is lower (else None).
        With tools offered and no limit of the session's own, a call may run to the policy's
        tool_call_tokens (its JSON must close) while words stop at the stage's max_tokens."""
        stage = getattr(self.llm, "max_tokens", None)
        if grammar is None or policy.max_output_tokens is not None or not isinstance(stage, int):
            return policy.max_output_tokens, None
        if policy.tool_call_tokens <= stage:
            return None, None
        return policy.tool_call_tokens, stage

    @property
    def cut(self) -> bool:
        """The model hit its token limit: the reply is incomplete."""
        return self.result.finish_reason == "length"
