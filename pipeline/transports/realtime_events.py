"""The session's internal events, as one client's wire events: the GA protocol or the beta one.

The session speaks one vocabulary (`pipeline/base/events.py`); this encoder turns it into what a
realtime-API client expects, event for event: the item lifecycle (every `.added` gets its
`.done`), content parts, output indexes counted per response, usage, and the object fields the
SDKs' models require. One encoder per connection; its dialect is chosen at the handshake
(`OpenAI-Beta: realtime=v1` asks for beta, like the hosted API).

Where the internal stream differs from a hosted API on purpose, the wire is still valid:
- `speech_stopped` is sent once per item, just before its `committed` (our VAD may pause and
  resume inside one turn; the turn ends at commit, as with a hosted server VAD).
- A user's audio item is announced at its commit; its words follow in
  `...input_audio_transcription.completed`, as on a hosted API.
- An assistant message is announced at its first word or sound, so a response that only calls a
  function has no empty message before the call; its `.done` events come at `response.done`,
  which here comes once the reply has been heard (see docs/realtime.md).

Which method encodes which event is a table keyed by event class (`@encodes`), and the events
never sent are declared (`INTERNAL`); the objects the events carry are `realtime_shapes.py`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..base import events as ev
from .realtime_shapes import BETA, GA, Wire, WireSettings, WireShapes

_BETA_NAMES = {"response.output_audio.delta": "response.audio.delta",
               "response.output_audio.done": "response.audio.done",
               "response.output_audio_transcript.delta": "response.audio_transcript.delta",
               "response.output_audio_transcript.done": "response.audio_transcript.done",
               "response.output_text.delta": "response.text.delta",
               "response.output_text.done": "response.text.done"}

Encoder = Callable[["WireEncoder", Any], list[Wire]]  # a WireEncoder method: one event -> wire events
# The wire form of each event class, keyed by class: a renamed event keeps its encoder, and
# tests/test_realtime_events.py checks that every event class is here or in INTERNAL.
ENCODERS: dict[type[ev.Event], Encoder] = {}
# Never sent as such: a turn's speech_stopped goes out with its commit (see above), and agent
# audio is sent by the connection's sink, paced and in the client's format (`audio` below).
INTERNAL: frozenset[type[ev.Event]] = frozenset({ev.SpeechStopped, ev.OutputAudioDelta})


def encodes(*classes: type[ev.Event]) -> Callable[[Encoder], Encoder]:
    """Register a WireEncoder method as the wire form of these event classes."""
    def register(method: Encoder) -> Encoder:
        for cls in classes:
            if cls in ENCODERS or cls in INTERNAL:
                raise TypeError(f"{cls.__name__} already has a wire form: give each event one")
            ENCODERS[cls] = method
        return method
    return register


@dataclass
class _Output:
    """One output item of a response, as the client sees it."""

    item_id: str
    index: int
    part: str | None  # "audio" | "text" for a message; None for a function call
    text: str = ""
    done: bool = False


@dataclass
class _Response:
    id: str
    in_conversation: bool
    text_only: bool
    metadata: dict[str, str] | None
    outputs: dict[str, _Output] = field(default_factory=dict)
    message: Wire | None = None  # the message item, announced at its first content


class WireEncoder:
    def __init__(self, dialect: str, settings: WireSettings) -> None:
        self.shapes = WireShapes(dialect, settings)
        self.dialect = dialect
        self.settings = settings
        self._responses: dict[str, _Response] = {}
        self._announced: set[str] = set()  # conversation items the client has been told of
        self._last_item: str | None = None
        self._previous_of: dict[str, str | None] = {}  # for conversation.item.done
        self._speaking: set[str] = set()  # items with a speech_started and no speech_stopped yet
        self._input_s: dict[str, float] = {}  # committed turns' audio seconds, for usage

    # --- one internal event -> wire events -----------------------------------------------------

    def encode(self, event: ev.Event) -> list[Wire]:
        encoder = ENCODERS.get(type(event))
        return encoder(self, event) if encoder is not None else []

    def _wire(self, kind: str, **fields: Any) -> Wire:
        if self.dialect == BETA:
            kind = _BETA_NAMES.get(kind, kind)
        return {"type": kind, "event_id": ev.new_id("event"), **fields}

    @encodes(ev.StageMark, ev.CallLog)
    def _local(self, e: ev.Event) -> list[Wire]:
        return [e.to_dict()]  # local extensions (`x.`) keep our stamps; only opted-in clients

    @encodes(ev.SessionCreated)
    def _session_created(self, e: ev.SessionCreated) -> list[Wire]:
        out = [self._wire("session.created", session=self.shapes.session(e.session))]
        if self.dialect == BETA:
            out.append(self._wire("conversation.created", conversation={
                "id": self.settings.conversation_id, "object": "realtime.conversation"}))
        return out

    @encodes(ev.SessionUpdated)
    def _session_updated(self, e: ev.SessionUpdated) -> list[Wire]:
        return [self._wire("session.updated", session=self.shapes.session(e.session))]

    @encodes(ev.SpeechStarted)
    def _speech_started(self, e: ev.SpeechStarted) -> list[Wire]:
        self._speaking.add(e.item_id)
        return [self._wire(e.type, item_id=e.item_id, audio_start_ms=e.audio_start_ms)]

    @encodes(ev.InputCommitted)
    def _input_committed(self, e: ev.InputCommitted) -> list[Wire]:
        out = []
        if e.item_id in self._speaking:
            self._speaking.discard(e.item_id)
            out.append(self._wire("input_audio_buffer.speech_stopped", item_id=e.item_id,
                                  audio_end_ms=e.audio_end_ms))
        self._input_s[e.item_id] = max(0.0, (e.audio_end_ms - e.audio_start_ms) / 1000)
        out.append(self._wire(e.type, item_id=e.item_id, previous_item_id=self._last_item))
        item = {"id": e.item_id, "type": "message", "role": "user", "status": "completed",
                "content": [{"type": "input_audio", "transcript": None}]}
        return out + self._announce(item)

    @encodes(ev.InputCleared)
    def _input_cleared(self, e: ev.InputCleared) -> list[Wire]:
        return [self._wire(e.type)]

    @encodes(ev.TranscriptionDelta)
    def _transcription_delta(self, e: ev.TranscriptionDelta) -> list[Wire]:
        return [self._wire(e.type, item_id=e.item_id, content_index=e.content_index, delta=e.delta)]

    @encodes(ev.TranscriptionCompleted)
    def _transcription_completed(self, e: ev.TranscriptionCompleted) -> list[Wire]:
        seconds = round(self._input_s.pop(e.item_id, 0.0), 3)
        return [self._wire(e.type, item_id=e.item_id, content_index=e.content_index,
                           transcript=e.transcript, usage={"type": "duration", "seconds": seconds})]

    @encodes(ev.ItemCreated)
    def _item_created(self, e: ev.ItemCreated) -> list[Wire]:
        return self._announce(e.item)

    @encodes(ev.ItemDeleted)
    def _item_deleted(self, e: ev.ItemDeleted) -> list[Wire]:
        self._announced.discard(e.item_id)
        return [self._wire(e.type, item_id=e.item_id)]

    def forget(self, item_id: str) -> list[Wire]:
        """A deleted item the client was told of that the session never kept (an empty turn)."""
        return self._item_deleted(ev.ItemDeleted(item_id=item_id)) if item_id in self._announced else []

    def knows(self, item_id: str) -> bool:
        return item_id in self._announced

    @encodes(ev.ItemTruncated)
    def _item_truncated(self, e: ev.ItemTruncated) -> list[Wire]:
        return [self._wire(e.type, item_id=e.item_id, content_index=e.content_index,
                           audio_end_ms=e.audio_end_ms)]

    @encodes(ev.ItemRetrieved)
    def _item_retrieved(self, e: ev.ItemRetrieved) -> list[Wire]:
        return [self._wire(e.type, item=self.shapes.item(e.item))]

    @encodes(ev.Error)
    def _error(self, e: ev.Error) -> list[Wire]:
        error = {"type": e.error.get("type", "invalid_request_error"), "code": e.error.get("code"),
                 "message": e.error.get("message", ""), "param": e.error.get("param"),
                 "event_id": e.error.get("event_id")}
        return [self._wire("error", error=error)]

    # --- responses -----------------------------------------------------------------------------

    @encodes(ev.ResponseCreated)
    def _response_created(self, e: ev.ResponseCreated) -> list[Wire]:
        body = e.response
        r = _Response(body["id"], body.get("conversation") != "none",
                      body.get("modalities") == ["text"], body.get("metadata"))
        self._responses[r.id] = r
        return [self._wire(e.type, response=self._response(body, r, []))]

    @encodes(ev.OutputItemAdded)
    def _output_item_added(self, e: ev.OutputItemAdded) -> list[Wire]:
        r = self._responses.get(e.response_id)
        if r is None:
            return []
        if e.item["type"] == "message":
            r.message = e.item  # announced at its first word or sound
            return []
        return self._open(r, e.item, None)

    @encodes(ev.OutputItemDone)
    def _output_item_done(self, e: ev.OutputItemDone) -> list[Wire]:
        r = self._responses.get(e.response_id)
        out = r.outputs.get(e.item["id"]) if r is not None else None
        if r is None or out is None or out.done:
            return []
        return self._close(r, out, e.item)

    @encodes(ev.OutputTranscriptDelta)
    def _output_transcript_delta(self, e: ev.OutputTranscriptDelta) -> list[Wire]:
        return self._content(e.response_id, e.item_id, e.delta, "response.output_audio_transcript.delta")

    @encodes(ev.OutputTextDelta)
    def _output_text_delta(self, e: ev.OutputTextDelta) -> list[Wire]:
        return self._content(e.response_id, e.item_id, e.delta, "response.output_text.delta")

    def audio(self, response_id: str, item_id: str, b64: str) -> list[Wire]:
        """A batch of agent audio, already encoded in the client's format."""
        r = self._responses.get(response_id)
        if r is None:
            return []
        out = self._ensure_message(r, item_id)
        return out + [self._wire("response.output_audio.delta", **self._where(r, item_id), delta=b64)]

    def _content(self, response_id: str, item_id: str, delta: str, kind: str) -> list[Wire]:
        r = self._responses.get(response_id)
        if r is None:
            return []
        out = self._ensure_message(r, item_id)
        r.outputs[item_id].text += delta
        return out + [self._wire(kind, **self._where(r, item_id), delta=delta)]

    @encodes(ev.FunctionCallArgumentsDelta)
    def _function_call_arguments_delta(self, e: ev.FunctionCallArgumentsDelta) -> list[Wire]:
        r = self._responses.get(e.response_id)
        if r is None or e.item_id not in r.outputs:
            return []
        where = self._where(r, e.item_id)
        return [self._wire(e.type, response_id=e.response_id, item_id=e.item_id,
                           output_index=where["output_index"], call_id=e.call_id, delta=e.delta)]

    @encodes(ev.FunctionCallArgumentsDone)
    def _function_call_arguments_done(self, e: ev.FunctionCallArgumentsDone) -> list[Wire]:
        r = self._responses.get(e.response_id)
        if r is None or e.item_id not in r.outputs:
            return []
        where = self._where(r, e.item_id)
        named = {"name": e.name} if self.dialect == GA else {}  # beta names it in the item only
        return [self._wire(e.type, response_id=e.response_id, item_id=e.item_id,
                           output_index=where["output_index"], call_id=e.call_id, **named,
                           arguments=e.arguments)]

    @encodes(ev.ResponseDone)
    def _response_done(self, e: ev.ResponseDone) -> list[Wire]:
        body = e.response
        r = self._responses.pop(body["id"], None)
        if r is None:
            return []
        final = {item["id"]: item for item in body.get("output", [])}
        out: list[Wire] = []
        for output in r.outputs.values():
            if not output.done:
                item = final.get(output.item_id) or {"id": output.item_id}
                if item.get("status") == "in_progress":  # a call cut off mid-arguments
                    item = {**item, "status": "incomplete"}
                out += self._close(r, output, item)
        wire_items = [self.shapes.item(final[i]) for i in r.outputs if i in final]
        return out + [self._wire(e.type, response=self._response(body, r, wire_items))]

    # --- the item lifecycle --------------------------------------------------------------------

    def _ensure_message(self, r: _Response, item_id: str) -> list[Wire]:
        if item_id in r.outputs:
            return []
        item = r.message if r.message is not None and r.message["id"] == item_id else {
            "id": item_id, "type": "message", "role": "assistant"}
        return self._open(r, item, "text" if r.text_only else "audio")

    def _open(self, r: _Response, item: Wire, part: str | None) -> list[Wire]:
        output = _Output(item["id"], len(r.outputs), part)
        r.outputs[output.item_id] = output
        opened = {**item, "status": "in_progress"}
        if part is not None:
            opened["content"] = []
        out = [self._wire("response.output_item.added", response_id=r.id, output_index=output.index,
                          item=self.shapes.item(opened))]
        if r.in_conversation:
            out += self._announce(opened, done=False)
        if part is not None:
            out.append(self._wire("response.content_part.added", **self._where(r, output.item_id),
                                  part=self._part(part, "")))
        return out

    def _close(self, r: _Response, output: _Output, item: Wire) -> list[Wire]:
        output.done = True
        where = self._where(r, output.item_id)
        out = []
        if output.part is not None:
            content = (item.get("content") or [{}])[0]
            text = content.get("transcript", content.get("text")) or output.text
            if output.part == "audio":
                out += [self._wire("response.output_audio.done", **where),
                        self._wire("response.output_audio_transcript.done", **where, transcript=text)]
            else:
                out.append(self._wire("response.output_text.done", **where, text=text))
            out.append(self._wire("response.content_part.done", **where, part=self._part(output.part, text)))
        wire_item = self.shapes.item(item)
        out.append(self._wire("response.output_item.done", response_id=r.id,
                              output_index=output.index, item=wire_item))
        if r.in_conversation and self.dialect == GA:
            out.append(self._wire("conversation.item.done", item=wire_item,
                                  previous_item_id=self._previous(output.item_id)))
        return out

    def _announce(self, item: Wire, *, done: bool = True) -> list[Wire]:
        """A conversation item the client has not been told of: GA added (+ done), beta created."""
        if item["id"] in self._announced:
            return []
        previous, self._last_item = self._last_item, item["id"]
        self._announced.add(item["id"])
        self._previous_of[item["id"]] = previous
        wire_item = self.shapes.item(item)
        if self.dialect == BETA:
            return [self._wire("conversation.item.created", item=wire_item, previous_item_id=previous)]
        out = [self._wire("conversation.item.added", item=wire_item, previous_item_id=previous)]
        if done:
            out.append(self._wire("conversation.item.done", item=wire_item, previous_item_id=previous))
        return out

    def _previous(self, item_id: str) -> str | None:
        return self._previous_of.get(item_id)

    def _where(self, r: _Response, item_id: str) -> Wire:
        return {"response_id": r.id, "item_id": item_id, "output_index": r.outputs[item_id].index,
                "content_index": 0}

    def _part(self, part: str, text: str) -> Wire:
        return {"type": "audio", "transcript": text} if part == "audio" else {"type": "text", "text": text}

    def _response(self, body: Wire, r: _Response, output: list[Wire]) -> Wire:
        return self.shapes.response(body, output, in_conversation=r.in_conversation,
                                    text_only=r.text_only, metadata=r.metadata)
