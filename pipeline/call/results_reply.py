"""The one reply about a turn's results: which words answer them (`desk.ToolDesk._ask_for_reply`).

- Only refusals for want of a value the caller never gave: the question back, in the session's
  words (a small model kept from guessing again wrote "I can't help with that", or Chinese).
- Only refusals of calls nobody asked for (`tools.unasked`): the reply answers the caller's words
  as if the calls had not been written, with them and their refusals out of its view and no tool
  offered. Shown the refusal, Qwen2.5-0.5B wrote the same call again, or the call and its refusal
  as text after a ">", and the caller, who had asked when a balance was due, heard nothing.
- Otherwise the model's reply about what is new, owing the question of a refusal among them.
"""

from __future__ import annotations

from typing import Any

from ..tools.ask import question
from ..tools.runner import ToolResult
from .handle import Purpose
from .responder import Responder
from .response import Response, ResponseOptions


def reply_about(desk: Any, responder: Responder, results: list[ToolResult], keys: tuple[str, ...]) -> None:
    """Begin the reply about these results: the session's question back, or the model's reply.
    `desk`: the session's ToolDesk (its registry, conversation, owed words, words-only replies)."""
    conversation = desk.core.conversation
    turn_id, *others = dict.fromkeys(r.turn_id for r in results)
    refused = [r for r in results if "ungrounded" in r.extra and r.name in desk.registry]
    ask = question(desk.registry[refused[0].name], refused[0].extra["ungrounded"]) if refused else None
    if ask is not None and len(refused) == len(results):
        responder.say(ask, purpose=Purpose.TOOL_RESULT, options=ResponseOptions(text_only=responder.text_only))
        return
    unasked = {r.call_id for r in results if "unasked" in r.extra}
    options = ResponseOptions(text_only=responder.text_only, input=tuple(
        i for i in conversation.items if i.call_id not in unasked)) if unasked and len(unasked) == len(results) else None
    # it says what is new: nothing its calls' turns said, nor what was said since the caller last
    # spoke (another call's holding line, which Qwen repeated)
    latest = conversation.last_user_id()
    reply: Response = responder.new(turn_id, purpose=Purpose.TOOL_RESULT, about_keys=keys, options=options,
                                    also_turns=tuple(t for t in (*others, latest) if t is not None))
    desk.words.questions[reply.id] = ask  # a refusal among results: its question owed
    if options is not None:
        desk.words_only.add(reply.id)
    responder.begin(reply)
