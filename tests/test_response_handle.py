"""A reply as everyone outside it sees it: its handle (id, status, purpose, cancel, wait, what was
heard), and the parts behind it. On fakes (a loudness VAD, scripted STT and LLM, a tone voice):
no models."""

from __future__ import annotations

import ast
from pathlib import Path

from pipeline.base import events as ev
from pipeline.call import response as response_module
from pipeline.call.handle import Purpose, ReplyHandle
from pipeline.call.session import Session
from pipeline.call.states import ResponseStatus
from pipeline.testing import call
from pipeline.transports.scripted import Clip

from .test_listeners import REPLY, caller_tone, fake_stages

ROOT = Path(__file__).resolve().parents[1]


def _watch(session: Session, stage: str, act) -> None:
    """At the first `stage` mark, run `act(session, handle of the active reply)` as a task."""
    seen: list[bool] = []

    def on_event(event: ev.Event) -> None:
        if isinstance(event, ev.StageMark) and event.stage == stage and not seen:
            seen.append(True)
            session.core.spawn(act(session, session.responder.active))

    session.listeners.add(on_event, ev.EventPhase.OBSERVER)


def test_a_reply_heard_to_its_end_says_so_through_its_handle():
    waited: list[bool] = []

    async def wait(session: Session, handle: ReplyHandle) -> None:
        waited.append(await handle.wait_heard())

    record = call(fake_stages(), [Clip(caller_tone(), 0.3)], tail_s=4.0,
                  setup=lambda s: _watch(s, "response_start", wait))
    (response,) = record.session.responses
    handle = response.handle
    assert waited == [True], record.timeline()
    assert handle.done() and handle.status is ResponseStatus.COMPLETED and handle.heard_in_full
    assert handle.purpose is Purpose.TURN and handle.purpose == "turn"  # the string it always was
    assert handle.heard().text == REPLY
    assert handle.heard().played_ms == int(handle.made_ms) > 0
    (done,) = record.done
    assert done.response["id"] == handle.id


def test_a_cancel_through_the_handle_stops_the_reply_and_keeps_what_was_heard():
    outcome: list[object] = []

    async def cut(session: Session, handle: ReplyHandle) -> None:
        await session.core.clock.sleep(1.0)
        handle.cancel("client_cancelled")
        outcome.append(await handle.wait_heard())
        outcome.append(handle.heard())

    record = call(fake_stages(), [Clip(caller_tone(), 0.3)], tail_s=4.0,
                  setup=lambda s: _watch(s, "first_audio_out", cut))
    (response,) = record.session.responses
    handle = response.handle
    assert outcome and outcome[0] is False, record.timeline()
    assert handle.status is ResponseStatus.CANCELLED and handle.reason == "client_cancelled"
    heard = outcome[1]
    assert heard.text and REPLY.startswith(heard.text.rstrip("-")) and len(heard.text) < len(REPLY) / 2
    (truncated,) = record.of("conversation.item.truncated")
    assert (truncated.transcript, truncated.audio_end_ms) == (heard.text, heard.played_ms)
    assert response.item.text == heard.text and not handle.heard_in_full
    handle.cancel("again")  # a no-op once it has ended
    assert handle.reason == "client_cancelled"


def test_purpose_keeps_its_strings():
    assert [p.value for p in Purpose] == ["turn", "tool_result", "reminder", "client", "goodbye"]


def test_a_response_is_a_few_parts_not_one_object_of_everything():
    tree = ast.parse(Path(response_module.__file__).read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Response")
    fields = {n.attr for n in ast.walk(cls) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
              and isinstance(n.value, ast.Name) and n.value.id == "self"}
    assert len(fields) <= 15, sorted(fields)


def test_outside_the_reply_only_its_handle_is_held():
    """The client facade, call control, barge-in and the goodbye never import the reply itself."""
    for path in ("pipeline/call/client.py", "pipeline/call/callctl.py", "pipeline/bargein.py",
                 "pipeline/transports/goodbye.py"):
        tree = ast.parse((ROOT / path).read_text())
        names = {(n.module or "").rpartition(".")[2] + "." + a.name for n in ast.walk(tree)
                 if isinstance(n, ast.ImportFrom) for a in n.names}
        assert "response.Response" not in names, path
