"""A reply's words: what of it is said, and what it still owes the caller after its own.

Every chunk is screened before it is said (`ToolHooks.screen`: a tool named by its identifier, an
id nobody gave, an effect claimed done while it runs; `call.owed` says why). A reply that is
words, not a tool call, reads tool-call markup off them (`CallMarkup`: never said, run as its
call where it is one), and after its last word the desk may owe the caller more
(`ToolHooks.owed`): those words are the session's own, said unscreened.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol

from ..base import events as ev
from ..tools.ask import after_words
from ..tools.stream import CallMarkup


class Sayer(Protocol):
    """What of its response the words need (`response.Response`, which imports this module)."""

    ctx: Any  # its ResponseContext: the tools (ToolHooks) and the log
    asked: Any  # what it was asked (`response.Asked`): its options
    output: Any  # its Output: what the text becomes (chunks to speak, or written text)
    call_out: Any  # its CallOut: a call written after the words is its call
    text_so_far: str

    @property
    def id(self) -> str: ...

    def mark(self, stage: ev.Milestone, **detail: Any) -> None: ...


class Words:
    """The reply as words: screened chunk by chunk, markup read off, owed words added at its end."""

    def __init__(self, owner: Sayer) -> None:
        self.owner = owner
        self.markup = CallMarkup()  # a call written inside a spoken reply is never said
        self.said = ""  # the chunks put out to be spoken
        self._screened = True  # False once the session's own (owed) words are said
        self._first = True  # no chunk put out yet

    def the_sessions_own(self) -> None:
        """These words are the session's own (`Responder.say`: the question back, a goodbye), made
        from the tools' and the config's words: said unscreened, as owed words are. The id screen
        read "books of ten permits" in a question back as a permit number nobody gave, and the
        caller heard nothing."""
        self._screened = False

    def admit(self, chunk: str) -> bool:
        """Whether the chunk is said (True: it is recorded as said)."""
        r = self.owner
        tools = r.ctx.tools
        if self._screened and tools.screens() and (why := tools.screen(r, chunk)) is not None:
            r.ctx.log(f"{r.id}: not said, {why}: {chunk!r}")
            return False
        self.said += (" " if self.said else "") + chunk
        if self._first:
            self._first = False
            r.mark(ev.Milestone.FIRST_CHUNK, text=chunk)
        return True

    def push(self, piece: str) -> list[str]:
        """A piece of the reply's text: the chunks to put now (the output decides when)."""
        r = self.owner
        piece = self.markup.push(piece)
        r.text_so_far += piece
        chunks: list[str] = r.output.on_text(r, piece)
        return chunks

    async def end(self) -> AsyncIterator[str]:
        """After the last token: what the markup held back, a call written after the words, what
        the output still holds (screened before owed), then the words the reply owes."""
        r = self.owner
        r.text_so_far += (tail := self.markup.finish())  # held back, and words after all
        for chunk in r.output.on_text(r, tail):
            yield chunk
        reached = r.call_out.written(self.markup.call)
        tools = r.ctx.tools
        for chunk in r.output.rest(r) if tools.screens() else []:
            yield chunk
        said = self.said  # the chunks admitted, spoken or (screened too) written
        if tools.screens() and (owed := await tools.owed(r, reached, said)):
            owed = after_words(said or r.text_so_far, owed)  # never silence where words are owed
            r.text_so_far += owed
            self._screened = False  # the session's own words
            for chunk in r.output.on_text(r, owed):
                yield chunk
