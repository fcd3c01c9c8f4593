"""A response's function call: its argument deltas as the model writes them, its item, a call
written after words, and a call the turn already made (not run again).

The call's spoken arguments (the holding line) are said as soon as each string is complete,
through the response's chunker, while the rest of the call is still being written.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, Protocol

from ..base import events as ev
from ..base.conversation import Item
from ..base.errors import CallCutError
from ..chunker import SentenceChunker
from ..tools.schema import ToolCall
from ..tools.stream import ToolCallStream, called_name


class CallOwner(Protocol):
    """What of its response a call needs (`response.Response`, which imports this module)."""

    ctx: Any  # the response's ResponseContext: its tools (ToolHooks) and log
    placement: Any  # its Placement: where a finished call goes (`call_made`)
    generating: Any  # its Generating: whether the model stopped at its token limit
    text_so_far: str

    @property
    def id(self) -> str: ...

    def emit(self, event: ev.Event) -> None: ...


class CallOut:
    """The one function call a response may make (`made` once it is final)."""

    def __init__(self, response: CallOwner, chunker: SentenceChunker) -> None:
        self.response = response
        self.chunker = chunker  # the response's: a spoken argument is said through it
        tools = response.ctx.tools
        self.stream = ToolCallStream(tools.spec, say_param=tools.say_param)
        self.call_id = ev.new_id("call")
        self.item_id = ev.new_id("item")
        self.opened: Item | None = None  # announced at its first argument delta
        self.made: Item | None = None  # the call, once its arguments are final and it is not a repeat

    def push(self, piece: str) -> list[str]:
        """A piece of a reply that is a call: argument deltas, and a spoken argument's chunks."""
        r = self.response
        r.text_so_far += piece
        return self.progress(r.text_so_far)

    async def end(self) -> AsyncIterator[str]:
        """After the last token: the last spoken argument, then the call starts (or is dropped)."""
        r = self.response
        for chunk in self.progress(r.text_so_far):
            yield chunk
        try:
            call = ToolCallStream.finish(r.text_so_far, r.ctx.tools.specs())
        except ValueError as exc:
            if not r.generating.cut:
                raise
            limit = r.generating.result.output_tokens
            raise CallCutError(f"The model's tool call was cut at the token limit ({limit} tokens) "
                               "before its JSON closed, so nothing ran; raise response.tool_call_tokens "
                               f"or the session's max_output_tokens ({exc})") from exc
        self.finish(call)
        if (back := r.ctx.tools.said_back(r)) is not None:  # the call waits for the caller's yes
            for chunk in self.chunker.push(back + " ") + self.chunker.flush():
                yield chunk

    def progress(self, text: str) -> list[str]:
        """Streams argument deltas; a spoken argument is said as soon as its string is complete."""
        delta, said = self.stream.progress(text)
        if delta and self.stream.name:
            self._open(self.stream.name)
            self._delta(delta)
        out: list[str] = []
        for line in said:
            out += self.chunker.push(line + " ") + self.chunker.flush()
        return out

    def written(self, text: str | None) -> str | None:
        """A call the model wrote after its words (`CallMarkup`): this reply's call, its words
        the holding line; markup that is no call is logged and dropped, never said. Returns the
        tool it reached for where it was not made (its name, as far as the markup got), else None."""
        if not text:
            return None
        r = self.response
        try:
            call = ToolCallStream.finish(text, r.ctx.tools.specs())
        except ValueError as exc:
            r.ctx.log(f"{r.id}: tool-call markup in the reply, neither said nor run: {exc}")
            return called_name(text)  # cut off mid-call: its name, if written
        if not r.ctx.tools.offers(r, call.name):
            r.ctx.log(f"{r.id}: {call.name} written in the reply, not offered to it; neither said nor run")
            return call.name
        self._open(call.name)
        self._delta(json.dumps(call.arguments))
        self.finish(call)
        return None

    def finish(self, call: ToolCall) -> None:
        """The call's arguments are final: it starts now, unless this turn made it already."""
        r = self.response
        item = self._open(call.name)
        if r.ctx.tools.repeats(r, call):  # written again after its result: that result stands
            r.ctx.log(f"{r.id}: {call.name} repeats this turn's call with the same arguments; not run")
            item.status = "incomplete"
            r.emit(ev.OutputItemDone(response_id=r.id, item=item.to_dict(), output_index=1))
            return
        call = r.ctx.tools.prepare(r, self.call_id, call)  # optional arguments nobody gave: out
        arguments = json.dumps(call.arguments)
        item.name, item.arguments, item.status = call.name, arguments, "completed"
        self.made = item
        if r.ctx.tools.handed(self.call_id):
            r.emit(ev.FunctionCallArgumentsDone(response_id=r.id, item_id=item.id, call_id=self.call_id,
                                                name=call.name, arguments=arguments))
        else:  # a client's call on values nobody gave: the client never runs it; the model is told
            item.status = "incomplete"
        r.emit(ev.OutputItemDone(response_id=r.id, item=item.to_dict(), output_index=1))
        r.placement.call_made(r, call)

    def _open(self, name: str) -> Item:
        """The call's item, announced once, before its first argument delta."""
        r = self.response
        if self.opened is None:
            self.opened = Item(type="function_call", id=self.item_id, call_id=self.call_id,
                               name=name, arguments="", status="in_progress")
            r.emit(ev.OutputItemAdded(response_id=r.id, item=self.opened.to_dict(), output_index=1))
        return self.opened

    def _delta(self, delta: str) -> None:
        r = self.response
        r.emit(ev.FunctionCallArgumentsDelta(response_id=r.id, item_id=self.item_id, call_id=self.call_id,
                                             delta=delta))
