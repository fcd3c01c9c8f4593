"""What the recogniser is told about the call (`turn.context`): the agent's tools and argument
names as said aloud, the deployment's hotwords, the instructions and the last turns, as a prompt
of at most `turn.context_tokens` for every pass of the next caller turn
(`pipeline/stages/stt_context.py` writes and bounds it)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..stages.stt_context import CallContext
from ..tools.schema import ToolSpec
from .core import SessionCore


class Hearing:
    def __init__(self, core: SessionCore, tools: Callable[[], Iterable[ToolSpec]]) -> None:
        self.core = core
        self.tools = tools

    def prompt(self) -> str | None:
        """The prompt for the turn opening now, or None when `turn.context` is off."""
        policy = self.core.config.turn
        if not policy.context:
            return None
        context = CallContext.of(
            self.core.config.response.instructions,
            [(spec.name, [name for name in spec.parameters.get("properties", {}) if name not in spec.spoken])
             for spec in self.tools()],
            hotwords=policy.hotwords)
        turns = [i.text for i in self.core.conversation.items if i.type == "message" and i.text]
        return context.prompt(turns[-policy.context_turns:] if policy.context_turns else [],
                              max_tokens=policy.context_tokens) or None
