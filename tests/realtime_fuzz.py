"""The realtime protocol fuzzer's parts: client events as Hypothesis strategies, a client that
plays a sequence of them against a server, and the oracle that judges what came back.

A sequence is a list of `Step`s. Each step is one message (a client event, valid or not, or raw
text, bytes, JSON that is not an object) or a pause. Ids of items the server made are not known
when the sequence is drawn, so a field may name `@assistant` (the last agent item announced) or
`@item` (the last item of any kind), resolved when the step is sent.

The oracle (`judge`): every message was answered, an `error` carrying its `event_id` or the
effect its type promises (`EFFECTS`), and a message whose id the server cannot read (not JSON,
not an object, a number JSON cannot carry, too large) an `error` without one; no error is a
`server_error` or a code the docs do not list; every response that began ended, none failed; the
socket closed only with a documented code, and only when a step asked for it.
"""

from __future__ import annotations

import asyncio
import base64
import json
import math
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from .test_realtime_server import Client, user_text

# Every code docs/realtime.md lists for an `error` a client can cause (server_error is a bug).
DOCUMENTED_CODES = {
    "invalid_json", "invalid_event", "unknown_event_type", "missing_required_parameter",
    "invalid_value", "invalid_audio", "message_too_large", "input_audio_buffer_commit_empty",
    "response_cancel_not_active", "item_not_found", "item_already_exists", "invalid_audio_end_ms",
    "conversation_already_has_active_response", "unknown_parameter", "input_audio_too_fast",
    "unknown_call_id"}
CLOSE_TOO_BIG = 1009  # a frame over 8 MiB: the socket must close (docs/realtime.md, limits)
SETTLE_S = 20.0  # at most this long for every effect and every response to end, per sequence

# --- steps ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One message (an event to encode, or `raw` text or bytes), or a pause."""

    event: dict[str, Any] | None = None
    raw: str | bytes | None = None
    anonymous: bool = False  # the server cannot read its event_id: not JSON, a poison number...
    poison: str = ""  # text spliced into the encoded event before its closing brace
    huge: bool = False  # a frame over the socket's limit: the connection must close (1009)
    pause_s: float = 0.0

    def kind(self) -> str | None:
        return self.event.get("type") if isinstance(self.event, dict) and isinstance(
            self.event.get("type"), str) else None


def _text(max_size: int = 24) -> st.SearchStrategy[str]:
    """Text of any code point but a lone surrogate (those come from `_mutated`): emoji, CJK,
    combining marks, controls, NUL."""
    return st.text(max_size=max_size)


def _lone(max_size: int = 4) -> st.SearchStrategy[str]:
    """Text with a lone surrogate in it, which JSON can carry as an escape and text cannot."""
    return st.builds(lambda a, s, b: a + s + b, st.text(max_size=max_size),
                     st.text(st.characters(categories=["Cs"]), min_size=1, max_size=2),
                     st.text(max_size=max_size))


# Not 16 kHz PCM: our extension, which the SDK's models (the wire check every realtime test runs
# under) do not know.
FORMATS = [{"type": "audio/pcm", "rate": 24000}, {"type": "audio/pcm"}, {"type": "audio/pcmu"},
           "pcm16", "g711_ulaw"]
BAD_FORMATS = [{"type": "audio/pcm", "rate": 44100}, "mp3", {"type": "audio/pcm", "rate": True}]
_fmt = st.sampled_from(FORMATS)
_vad = st.one_of(st.none(), st.fixed_dictionaries({}, optional={
    "type": st.sampled_from(["server_vad", "semantic_vad"]),
    "threshold": st.floats(0.0, 1.0), "silence_duration_ms": st.integers(0, 1200),
    "prefix_padding_ms": st.integers(0, 1000), "create_response": st.booleans(),
    "interrupt_response": st.booleans()}))
WEATHER = {"type": "function", "name": "get_weather", "description": "Today's weather.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}
_modalities = st.sampled_from([["audio"], ["text"], ["audio", "text"]])
_session_fields = {  # values the server takes; `_mutated` and BAD_VALUES make them wrong
    "instructions": _text(), "output_modalities": _modalities, "modalities": _modalities,
    "include_local_events": st.booleans(), "tools": st.sampled_from([[], [WEATHER]]),
    "type": st.just("realtime"), "input_audio_format": _fmt, "output_audio_format": _fmt,
    "turn_detection": _vad, "voice": st.sampled_from(["alloy", "marin"]),
    "temperature": st.floats(0.6, 1.2), "max_response_output_tokens": st.sampled_from([1, 50, "inf"]),
    "max_output_tokens": st.sampled_from([1, 50, "inf"]), "speed": st.floats(0.25, 1.5),
    "tool_choice": st.just("auto"),
    "audio": st.fixed_dictionaries({}, optional={
        "input": st.fixed_dictionaries({}, optional={"format": _fmt, "turn_detection": _vad}),
        "output": st.fixed_dictionaries({}, optional={"format": _fmt, "voice": st.sampled_from(
            ["alloy", "cedar"]), "speed": st.floats(0.25, 1.5)})}),
}
BAD_VALUES = {  # values a client may well send that the server must refuse, by field
    "session": [{"type": "transcription"}, {"output_modalities": []}, {"output_modalities": ["video"]},
                {"tools": [{"x": 1}]}, {"input_audio_format": BAD_FORMATS[0]},
                {"audio": {"output": {"format": BAD_FORMATS[1]}}},
                {"turn_detection": {"type": "push_to_talk"}}, {"turn_detection": {"threshold": 1.5}},
                {"audio": {"input": {"turn_detection": {"silence_duration_ms": -10}}}},
                {"voice": "nobody"}, {"voice": 7}, {"temperature": 5}, {"speed": 9},
                {"max_output_tokens": 0}, {"max_response_output_tokens": "lots"},
                {"tool_choice": "required"}, {"zz_unknown": 1}],
    "response": [{"conversation": "other"}, {"modalitiez": ["text"]}, {"output_modalities": []},
                 {"metadata": {"k": 7}}, {"input": [{"type": "item_reference"}]},
                 {"input": [{"type": "message", "role": "tool", "content": []}]},
                 {"voice": "nobody"}, {"temperature": -1}, {"max_output_tokens": 0}],
}
_session_update = st.fixed_dictionaries({}, optional=_session_fields).map(
    lambda s: {"type": "session.update", "session": s})


def _audio(kind: str, ms: int, odd: bool) -> str:
    n = 24 * ms  # samples at 24 kHz
    if kind == "silence":
        pcm = np.zeros(n, "<i2")
    elif kind == "tone":
        pcm = (8000 * np.sin(np.arange(n) * 2 * math.pi * 220 / 24_000)).astype("<i2")
    else:
        pcm = np.random.default_rng(ms).integers(-20_000, 20_000, n).astype("<i2")
    return base64.b64encode(pcm.tobytes() + (b"\x01" if odd else b"")).decode("ascii")


_append = st.one_of(
    st.builds(_audio, st.sampled_from(["silence", "silence", "tone", "noise"]),
              st.sampled_from([0, 20, 100, 300]), st.just(False)),
    st.builds(_audio, st.just("tone"), st.just(20), st.just(True)),  # half a sample over
    st.sampled_from(["not base64!", "AAA"])).map(
    lambda a: {"type": "input_audio_buffer.append", "audio": a})
_part = st.fixed_dictionaries({"type": st.sampled_from(["input_text", "text", "output_text"]),
                               "text": _text()})
_ids = st.sampled_from(["item_a", "item_b", None, None, None])
_message = st.fixed_dictionaries(
    {"type": st.just("message"), "role": st.sampled_from(["user", "user", "system", "assistant"]),
     "content": st.lists(_part, min_size=1, max_size=3)}, optional={"id": _ids})
_output = st.fixed_dictionaries({"type": st.just("function_call_output"),
                                 "call_id": st.sampled_from(["call_1", "@item"]), "output": _text()})
_item_create = st.one_of(_message, _message, _message, _output).map(
    lambda item: {"type": "conversation.item.create", "item": {k: v for k, v in item.items()
                                                               if v is not None}})
_response = st.fixed_dictionaries({}, optional={
    "instructions": _text(), "output_modalities": _modalities,
    "conversation": st.sampled_from(["auto", "none"]),
    "metadata": st.dictionaries(st.text(max_size=8), _text(8), max_size=3),
    "input": st.lists(st.one_of(st.just({"type": "item_reference", "id": "@item"}),
                                _message.map(lambda m: {k: v for k, v in m.items() if k != "id"})),
                      max_size=2),
    "voice": st.sampled_from(["alloy", "marin"]), "temperature": st.floats(0.6, 1.2),
    "max_output_tokens": st.sampled_from([1, 50, "inf"]), "tool_choice": st.just("auto")})
_response_create = st.one_of(st.just({}), st.just({}), _response.map(lambda r: {"response": r})).map(
    lambda body: {"type": "response.create", **body})
_target = st.one_of(st.sampled_from(["@assistant", "@assistant", "@item", "@item", "item_a"]), _text(8))
VALID_EVENTS = st.one_of(
    _session_update, _append, _append, _append, _item_create, _item_create, _response_create,
    _response_create, st.just({"type": "input_audio_buffer.commit"}),
    st.just({"type": "input_audio_buffer.clear"}), st.just({"type": "response.cancel"}),
    _target.map(lambda t: {"type": "conversation.item.delete", "item_id": t}),
    _target.map(lambda t: {"type": "conversation.item.retrieve", "item_id": t}),
    st.builds(lambda t, ms: {"type": "conversation.item.truncate", "item_id": t, "audio_end_ms": ms},
              _target, st.integers(-10, 3000)))
UNKNOWN_TYPE = st.one_of(st.sampled_from(["session.create", "response.update", "transcription_session.update",
                                          "input_audio_buffer.append ", ""]), _text(30)).map(
    lambda t: {"type": t})

_json = st.recursive(st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1)
                     | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=10),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=8)


@st.composite
def _mutated(draw: st.DrawFn) -> Step:
    """A valid-looking event with one thing wrong: a field gone, retyped, poisoned, or deep."""
    event = dict(draw(VALID_EVENTS))
    how = draw(st.sampled_from(["drop", "retype", "nest", "bad", "bad", "lone", "poison", "deep",
                                "id"]))
    keys = sorted(event)
    if how == "drop" and keys:
        event.pop(draw(st.sampled_from(keys)))
    elif how == "retype" and keys:
        event[draw(st.sampled_from(keys))] = draw(_json)
    elif how == "nest":  # a wrong value one level down, where the body is an object
        body = next((k for k in ("session", "item", "response") if isinstance(event.get(k), dict)), None)
        if body is not None:
            event[body] = {**event[body], draw(st.sampled_from(
                ["instructions", "content", "role", "audio", "metadata", "input", "zz"])): draw(_json)}
    elif how == "bad" and event["type"] in ("session.update", "response.create"):
        body = "session" if event["type"] == "session.update" else "response"
        event[body] = {**(event.get(body) or {}), **draw(st.sampled_from(BAD_VALUES[body]))}
    elif how == "lone":  # a lone surrogate in a string the event carries, or in a key
        event = _with_lone(event, draw(_lone()), draw(st.integers(0, 64)))
    elif how == "poison":  # numbers JSON holds but a call cannot: the server cannot read the id
        bad = draw(st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "9007199254740993",
                                    "9" * 5001]))
        return Step(event=event, poison=f'"x": {bad}', anonymous=True)
    elif how == "deep":
        depth = draw(st.sampled_from([65, 300, 100_000]))
        return Step(event=event, poison=f'"x": {"[" * depth}{"]" * depth}', anonymous=depth > 900)
    elif how == "id":  # an id the server cannot use: not a string, or not text
        event["event_id"] = draw(st.sampled_from([7, None, "evt_\udc80", ["e"]]))
    return Step(event=event)


def _with_lone(value: Any, lone: str, pick: int) -> Any:
    """The event with its `pick`-th string (in a walk of it) replaced by `lone`; a key if the
    event has no strings but its type."""
    strings: list[tuple[Any, Any]] = []

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                if isinstance(x, str) and k != "type":
                    strings.append((v, k))
                walk(x)
        elif isinstance(v, list):
            for i, x in enumerate(v):
                if isinstance(x, str):
                    strings.append((v, i))
                walk(x)

    copy = json.loads(json.dumps(value))
    walk(copy)
    if not strings:
        copy[lone] = 1
        return copy
    where, key = strings[pick % len(strings)]
    where[key] = lone
    return copy


_raw = st.one_of(
    st.text(max_size=40).map(lambda t: Step(raw=t, anonymous=True)),
    _json.filter(lambda v: not isinstance(v, dict)).map(lambda v: Step(raw=json.dumps(v), anonymous=True)),
    st.binary(max_size=40).map(lambda b: Step(raw=b, anonymous=True)),
    st.just(Step(raw='{"type": "input_audio_buffer.append", "audio": "' + "A" * (1 << 20) + '"}',
                 anonymous=True)),
    st.just(Step(raw="[" * 100_000 + "]" * 100_000, anonymous=True)))
STEPS = st.one_of(VALID_EVENTS.map(lambda e: Step(event=e)), VALID_EVENTS.map(lambda e: Step(event=e)),
                  VALID_EVENTS.map(lambda e: Step(event=e)), _mutated(), _mutated(), _raw,
                  UNKNOWN_TYPE.map(lambda e: Step(event=e)), st.sampled_from([0.05, 0.3]).map(lambda s: Step(pause_s=s)))
HUGE = Step(raw="x" * (9 << 20), anonymous=True, huge=True)  # past the 8 MiB frame limit


def sequences(max_size: int) -> st.SearchStrategy[list[Step]]:
    return st.lists(st.one_of(STEPS, STEPS, STEPS, STEPS, STEPS, STEPS, STEPS, STEPS, STEPS,
                              st.just(HUGE)), min_size=1, max_size=max_size)


# --- playing a sequence --------------------------------------------------------------------


@dataclass
class Sent:
    step: Step
    event_id: str | None  # the id the server can read, if any
    wire: dict[str, Any] | None  # the event as sent (references resolved), if it is one


@dataclass
class Outcome:
    dialect: str
    sent: list[Sent] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)  # up to the ordinary turn
    close_code: int | None = None
    turn: dict[str, Any] | None = None  # the ordinary turn's response.done


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and not any(0xD800 <= ord(c) <= 0xDFFF for c in value)


def _resolve(value: Any, events: list[dict[str, Any]]) -> Any:
    """`@assistant` / `@item` -> the id of the last such item announced so far."""
    if isinstance(value, dict):
        return {k: _resolve(v, events) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, events) for v in value]
    if value in ("@assistant", "@item"):
        items = [e["item"] for e in events if e["type"] in ("conversation.item.added",
                                                           "conversation.item.created")]
        if value == "@assistant":
            items = [i for i in items if i.get("role") == "assistant"]
        return items[-1]["id"] if items else "item_none"
    return value


def _encode(step: Step, wire: dict[str, Any]) -> str:
    text = json.dumps(wire)  # ensure_ascii: a lone surrogate goes as its JSON escape
    if step.poison:
        text = text[:-1] + (", " if len(wire) else "") + step.poison + "}"
    return text


async def play(url: str, dialect: str, steps: list[Step], tag: str,
               state: Callable[[], Any] | None = None) -> Outcome:
    """Send the steps on one connection, then a marker; wait for every effect to settle; then
    an ordinary turn, on the same connection if it is still open (else on a fresh one).
    `state`: what the server holds, added to the failure when the ordinary turn never ends."""
    headers = {"OpenAI-Beta": "realtime=v1"} if dialect == "beta" else {}
    out = Outcome(dialect)
    async with connect(url, proxy=None, additional_headers=headers, max_size=None) as ws:
        c = Client(ws)
        await c.wait_for("session.created", timeout=10)
        try:
            for i, step in enumerate(steps):
                if step.pause_s:
                    await asyncio.sleep(step.pause_s)
                    continue
                if step.raw is not None:
                    out.sent.append(Sent(step, None, None))
                    await c.send(step.raw)
                    if step.huge:
                        await asyncio.wait_for(asyncio.shield(c._reader), 10)  # it must close
                        break
                    continue
                wire = _resolve({"event_id": f"{tag}_{i}", **(step.event or {})}, c.events)
                readable = wire.get("event_id") if _is_text(wire.get("event_id")) else None
                out.sent.append(Sent(step, readable, wire))
                await c.send(_encode(step, wire))
            else:  # everything before the marker has been read once its answer is back
                await c.send({"type": "conversation.item.retrieve", "item_id": "item_marker",
                              "event_id": f"{tag}_marker"})
                await c.wait_for("error", lambda e: e["error"]["event_id"] == f"{tag}_marker",
                                 timeout=SETTLE_S)
                deadline = time.monotonic() + SETTLE_S
                while time.monotonic() < deadline:
                    out.events = list(c.events)
                    if not judge(out, settled=False):
                        break
                    await asyncio.sleep(0.02)
        except ConnectionClosed:
            pass
        out.events = list(c.events)
        if c._reader.done():
            out.close_code = ws.close_code
        else:
            out.turn = await _turn(c, state)
            await c.close()
    if out.close_code is not None:
        out.turn = await ordinary_turn(url, dialect)
    return out


async def _turn(c: Client, state: Callable[[], Any] | None = None) -> dict[str, Any]:
    """A client picking up the line: settings as they are (session.update marks it ready),
    the input buffer cleared, then a text item and response.create; its response.done."""
    await c.send({"type": "session.update", "session": {}, "event_id": "settle_update"})
    await c.send({"type": "input_audio_buffer.clear", "event_id": "settle_clear"})
    await c.wait_for("input_audio_buffer.cleared", count=len(c.of("input_audio_buffer.cleared")) + 1,
                     timeout=SETTLE_S)
    deadline = time.monotonic() + SETTLE_S  # what the clear's audio started ends first
    while time.monotonic() < deadline and len(c.of("response.created")) > len(c.of("response.done")):
        await asyncio.sleep(0.02)
    start = len(c.events)
    await c.send(user_text("Hello"))
    await c.send({"type": "response.create", "event_id": "turn_create"})
    created = await c.wait_for("response.created", lambda e: c.events.index(e) >= start,
                               timeout=SETTLE_S)
    try:
        return await c.wait_for("response.done",
                                lambda e: e["response"]["id"] == created["response"]["id"],
                                timeout=SETTLE_S)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; the server: {state() if state else '?'}") from None


async def ordinary_turn(url: str, dialect: str) -> dict[str, Any]:
    """A text item and response.create on a fresh connection: its response.done."""
    headers = {"OpenAI-Beta": "realtime=v1"} if dialect == "beta" else {}
    async with connect(url, proxy=None, additional_headers=headers) as ws:
        c = Client(ws)
        await c.wait_for("session.created", timeout=10)
        done = await _turn(c)
        await c.close()
        return done


# --- the oracle ----------------------------------------------------------------------------

EFFECTS = {  # a client event -> the server event that shows it was done
    "session.update": "session.updated", "input_audio_buffer.commit": "input_audio_buffer.committed",
    "input_audio_buffer.clear": "input_audio_buffer.cleared", "response.create": "response.created",
    "response.cancel": "response.done", "conversation.item.create": "conversation.item.added",
    "conversation.item.delete": "conversation.item.deleted",
    "conversation.item.truncate": "conversation.item.truncated",
    "conversation.item.retrieve": "conversation.item.retrieved",
    "input_audio_buffer.append": None,  # taken in silence, as on the hosted API
}


def _effect(kind: str, dialect: str) -> str | None:
    effect = EFFECTS[kind]
    return "conversation.item.created" if effect == "conversation.item.added" and dialect == "beta" \
        else effect


def judge(out: Outcome, *, settled: bool = True) -> list[str]:
    """What is wrong with the outcome (nothing: []). Unsettled: what is still awaited."""
    problems: list[str] = []
    errors = [e["error"] for e in out.events if e["type"] == "error"]
    by_id = Counter(e.get("event_id") for e in errors)
    ours = {s.event_id for s in out.sent if s.event_id}
    anonymous_errors = sum(n for i, n in by_id.items() if i not in ours)
    need_anonymous = 0
    owed: Counter[str] = Counter()
    for s in out.sent:
        if s.event_id is not None and by_id[s.event_id]:
            continue  # refused, and the refusal names it
        kind = s.step.kind()
        if s.event_id is None or s.step.anonymous or s.step.poison and "[" in s.step.poison:
            need_anonymous += 1  # an error that cannot name it, or (deep) one that does
        elif kind not in EFFECTS:
            problems.append(f"{kind!r} ({s.event_id}) was neither refused nor understood")
        elif (effect := _effect(kind, out.dialect)) is not None:
            owed[effect] += 1
    seen = Counter(e["type"] for e in out.events)
    # A cancel ends the active response cancelled; one already ending takes more cancels (a
    # second one, or one after a truncate stopped it, as the Agents SDK sends) in silence.
    cancelled = sum(1 for e in out.events if e["type"] == "response.done"
                    and e["response"]["status"] == "cancelled")
    seen["response.done"] = owed["response.done"] if cancelled else 0
    closed = out.close_code is not None  # what had not happened by the close never comes
    for effect, n in owed.items():
        if seen[effect] < n and not (closed and effect in ("response.created", "response.done")):
            problems.append(f"{n} events owed {effect}, {seen[effect]} came")
    if anonymous_errors < need_anonymous:
        problems.append(f"{need_anonymous} messages owed an error, {anonymous_errors} came")
    created = {e["response"]["id"] for e in out.events if e["type"] == "response.created"}
    done = {e["response"]["id"]: e["response"] for e in out.events if e["type"] == "response.done"}
    if created - set(done) and not closed:
        problems.append(f"responses never done: {sorted(created - set(done))}")
    if not settled:
        return problems
    for e in errors:
        if e.get("code") not in DOCUMENTED_CODES or e.get("type") != "invalid_request_error":
            problems.append(f"error {e.get('type')}/{e.get('code')}: {e.get('message')}")
    for r in done.values():
        if r["status"] == "failed":
            problems.append(f"response failed: {r.get('status_details')}")
    huge = any(s.step.huge for s in out.sent)
    if out.close_code is not None and not (huge and out.close_code == CLOSE_TOO_BIG):
        problems.append(f"the socket closed with {out.close_code}")
    if huge and out.close_code != CLOSE_TOO_BIG:
        problems.append(f"a frame over 8 MiB left the socket open ({out.close_code})")
    return problems
