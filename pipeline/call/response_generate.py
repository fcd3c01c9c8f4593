"""A reply's generation: the LLM streams its tokens from a model thread, and stops within one."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from ..base.clock import Clock
from ..base.config import ResponsePolicy
from ..base.errors import SpokenError
from ..base.protocols import LLM, Generation


class Generating:
    """Step 1 of a response: its tokens, from the model's thread into a queue (None ends it)."""

    def __init__(self, llm: LLM, clock: Clock) -> None:
        self.llm = llm
        self.clock = clock
        self.cancel = threading.Event()  # set: the model thread stops within one token
        self.result = Generation()  # why it stopped and what it cost, once it has
        self.failure: SpokenError | None = None  # apologised for: the reply fails once heard

    def start(self, messages: list[dict[str, Any]], tokens: asyncio.Queue[str | None], *,
              grammar: str | None, policy: ResponsePolicy) -> asyncio.Future[None]:
        """The model streams into `tokens` (at most the policy's token limit, at its temperature
        where it sets one); the future re-raises a failure of its thread."""
        loop = asyncio.get_running_loop()
        own = {"temperature": policy.temperature} if policy.temperature is not None else {}
        max_tokens = policy.max_output_tokens

        def produce() -> None:
            try:
                for piece in self.llm.stream(messages, cancel=self.cancel, result=self.result,
                                             grammar=grammar, max_tokens=max_tokens, **own):
                    loop.call_soon_threadsafe(tokens.put_nowait, piece)
            finally:
                loop.call_soon_threadsafe(tokens.put_nowait, None)

        return asyncio.ensure_future(self.clock.run_in_thread(produce))

    @property
    def cut(self) -> bool:
        """The model hit its token limit: the reply is incomplete."""
        return self.result.finish_reason == "length"
