"""Client events that act on the conversation: response.create, item create, truncate, retrieve.

Each reads its event strictly (`realtime_protocol`), acts through the session's `ClientControl`
and answers a client mistake with `ClientError`, carrying the hosted API's code.
"""

from __future__ import annotations

from typing import Any

from ..call.client import ClientControl, ResponseInProgress
from ..call.response import ResponseOptions
from ..call.session import Stages
from . import realtime_settings
from .realtime_protocol import ClientError, message_text, parse_response_create, require


def response_create(client: ClientControl, event: dict[str, Any], *, stages: Stages,
                    voice: str) -> None:
    """`voice`: the server's voice name, which a response may name (as a session may)."""
    request = parse_response_create(event)
    body = event.get("response") or {}  # an object, or parse_response_create refused it
    # temperature, max_output_tokens, speed for this response only, checked as session.update's
    generation = realtime_settings.generation(body, stages, voice=voice, where="response")
    items = None
    if request.input is not None:
        items = []
        for entry in request.input:
            item = client.item(entry) if isinstance(entry, str) else entry
            if item is None:
                raise ClientError("item_not_found", f"response.create: `response.input` refers to "
                                                    f"item {str(entry)[:60]!r}, which is not in this "
                                                    "conversation.")
            items.append(item)
    text_only = request.text_only if request.text_only is not None else client.text_only
    options = ResponseOptions(instructions=request.instructions, text_only=text_only,
                              out_of_band=request.out_of_band, metadata=request.metadata,
                              input=tuple(items) if items is not None else None,
                              generation=generation)
    try:
        client.request_response(options)
    except ResponseInProgress as busy:
        raise ClientError("conversation_already_has_active_response",
                          f"Conversation already has an active response in progress: "
                          f"{busy.response_id}. Wait until the response is finished before "
                          "creating a new one.") from None


def item_create(client: ClientControl, event: dict[str, Any]) -> None:
    where = "conversation.item.create"
    body = require(event, "item", dict, where)
    kind = body.get("type", "message")
    item_id = body.get("id")
    if item_id is not None and (not isinstance(item_id, str) or not item_id):
        raise ClientError("invalid_value", f"{where}: `item.id` must be a non-empty string.")
    if item_id is not None and client.item(item_id) is not None:
        raise ClientError("item_already_exists", f"{where}: item {item_id!r} already exists; "
                                                  "leave `id` out to get a fresh one.")
    if kind == "message":
        role = require(body, "role", str, where)
        if role not in ("user", "system", "assistant"):
            raise ClientError("invalid_value", f"{where}: `item.role` must be user, system or "
                                                f"assistant, got {role!r}.")
        client.add_message(role, message_text(body, where), item_id=item_id)
    elif kind == "function_call_output":
        call_id = require(body, "call_id", str, where)
        output = require(body, "output", str, where)
        try:  # bound to the call it answers; the session adds and announces it, under its id
            accepted = client.deliver_function_output(call_id, output, item_id)
        except KeyError:
            raise ClientError("unknown_call_id", f"{where}: no function call {call_id!r} was "
                                                  "made in this session.") from None
        if not accepted:
            raise ClientError("invalid_value", f"{where}: the output for {call_id!r} was "
                                                "rejected (see the error before this one).")
        return
    else:
        raise ClientError("invalid_value", f"{where}: item type {kind!r} is not supported; "
                                            "use \"message\" or \"function_call_output\".")


def truncate(client: ClientControl, event: dict[str, Any]) -> None:
    where = "conversation.item.truncate"
    item_id = require(event, "item_id", str, where)
    audio_end_ms = require(event, "audio_end_ms", int, where)
    try:
        client.truncate(item_id, audio_end_ms)  # emits conversation.item.truncated
    except KeyError:
        raise ClientError("item_not_found", f"{where}: there is no agent audio item "
                                             f"{item_id!r} in this conversation.") from None
    except ValueError as exc:
        raise ClientError("invalid_audio_end_ms", f"{where}: {exc}; pass the milliseconds the "
                                                   "client actually played.") from None


def retrieve(client: ClientControl, event: dict[str, Any]) -> None:
    item_id = require(event, "item_id", str, "conversation.item.retrieve")
    try:
        client.retrieve(item_id)  # emits conversation.item.retrieved
    except KeyError:
        raise ClientError("item_not_found", f"conversation.item.retrieve: there is no item "
                                             f"{item_id!r} in this conversation.") from None
