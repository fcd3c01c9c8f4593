"""The realtime protocol, fuzzed: random sequences of client events, valid and not, against one
real server (fakes for the models) in a thread of its own, as `pipeline serve` runs it.

After each sequence the connection answered every event (an `error` with its `event_id`, or its
effect), or closed with a documented code; and an ordinary turn, a text item and
response.create, then completes. The strategies and the oracle: `tests/realtime_fuzz.py`.

The quick tier draws a fixed, derandomized budget (the same sequences on every run, so CI is
repeatable); the slow tier draws more, longer ones.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.call.session import Stages
from pipeline.stages.fakes import ScriptedLLM, ScriptedSTT, ToneTTS
from pipeline.testing import ServerThread
from pipeline.turns import HeuristicCompleteness

from .realtime_fuzz import Outcome, Step, judge, play, sequences
from .test_realtime_server import EnergyVAD

_tags = itertools.count()


def fuzz_stages() -> Stages:
    # a short reply in a quick voice: a response sounds for a few tens of milliseconds; the
    # examples below ask for a long one by name
    llm = ScriptedLLM(replies=["Okay."], rules=[[r"a long story", " ".join(f"Once upon a time, part {i}." for i in range(30))]])
    return Stages(vad=EnergyVAD(), stt=ScriptedSTT(transcripts=["Hello there."]),
                  completeness=HeuristicCompleteness(), llm=llm,
                  tts=ToneTTS(ms_per_char=10.0))


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    with ServerThread(fuzz_stages()) as running:
        yield running


def _waits_at(task: asyncio.Future[object]) -> str:
    """A pending step's innermost frame: its function and line."""
    stack = task.get_stack() if isinstance(task, asyncio.Task) else []
    return f"{stack[-1].f_code.co_name}:{stack[-1].f_lineno}" if stack else repr(task)[:80]


def server_state(server: ServerThread) -> list[dict[str, object]]:
    """Each open session's playback, barge-in and active response, and the model queue: read
    from the test's thread, racily, for a failure's message only."""
    from pipeline.base.clock import model_jobs_in_flight

    rows: list[dict[str, object]] = [{"model_jobs": model_jobs_in_flight()}]
    for connection in list(server.server.connections):
        if (s := connection.session) is None:
            continue
        active = next((r for r in s.responder.responses if r.handle is s.responder.active), None)
        rows.append({"bargein": s.bargein.phase.value, "paused": s.playback.paused,
                     "speaking": s.playback.speaking, "drained": s.playback.drained.is_set(),
                     "active": None if active is None else (active.id, active.status.value),
                     "tasks": len(s.core.tasks),
                     # where each unfinished step of the active response waits (a stall's place)
                     "waiting": [] if active is None else [_waits_at(t) for t in active._tasks if not t.done()]})
    return rows


def run(server: ServerThread, dialect: str, steps: list[Step]) -> Outcome:
    outcome = asyncio.run(play(server.url, dialect, steps, f"f{next(_tags)}",
                               state=lambda: server_state(server)))
    problems = judge(outcome)
    assert not problems, (problems, [e for e in outcome.events if e["type"] == "error"])
    assert outcome.turn is not None and outcome.turn["response"]["status"] == "completed", outcome.turn
    return outcome


FUZZ = dict(deadline=None, database=None, derandomize=True,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                   HealthCheck.function_scoped_fixture])


@settings(max_examples=60, **FUZZ)
@given(dialect=st.sampled_from(["ga", "beta"]), steps=sequences(max_size=8))
def test_any_sequence_is_answered_and_the_call_goes_on(server, dialect, steps):
    run(server, dialect, steps)


# In the slow tier (`make test-fuzz` runs it alone). Under load it found replies that never
# ended: a pause on talk that no more audio came to decide, a pause the reply outlived that
# silenced the next one, and a client's response held behind a held reply on an open turn (all
# fixed, kept below as regular tests). The sequences are the same every run (derandomized):
# what one run finds and the next does not is timing, so a failure names what the server held
# (`server_state`) rather than waiting on Hypothesis to replay it.
@pytest.mark.slow
@pytest.mark.fuzz_long
@settings(max_examples=400, **FUZZ)
@given(dialect=st.sampled_from(["ga", "beta"]), steps=sequences(max_size=24))
def test_longer_sequences_are_answered_and_the_call_goes_on(server, dialect, steps):
    run(server, dialect, steps)


# --- what the fuzzer found, kept as examples -------------------------------------------------


def _cancelled_twice(server: ServerThread, pause_s: float) -> tuple[list[dict], list[dict]]:
    """A long reply begun, then two response.cancel `pause_s` apart: the errors and the cancelled
    response.done events the client got."""
    steps = [Step(event={"type": "conversation.item.create", "item": {
                 "type": "message", "role": "user",
                 "content": [{"type": "input_text", "text": "Tell a long story"}]}}),
             Step(event={"type": "response.create"}), Step(pause_s=0.05),
             Step(event={"type": "response.cancel"}), *([Step(pause_s=pause_s)] if pause_s else []),
             Step(event={"type": "response.cancel"})]
    outcome = run(server, "ga", steps)
    marker = outcome.sent[0].event_id.rsplit("_", 1)[0] + "_marker"
    errors = [e["error"] for e in outcome.events if e["type"] == "error" and e["error"]["event_id"] != marker]
    cancelled = [e for e in outcome.events if e["type"] == "response.done"
                 and e["response"]["status"] == "cancelled"]
    return errors, cancelled


def test_a_second_cancel_of_one_response_acts_on_it_in_silence(server):
    """Found: two response.cancel in a row both succeed, one response ends. The oracle first
    took that for an event left unanswered; but a response already cancelled and ending is still
    the active one, and a client may cancel it again: the Agents SDK's interrupt truncates the
    item (which stops the response here) and then cancels, and must not get an error."""
    errors, cancelled = _cancelled_twice(server, 0.0)
    assert errors == [] and len(cancelled) == 1, (errors, cancelled)


def test_a_cancel_repeated_after_the_cancelled_response_ended_is_still_silent(server):
    """The same pair with the first cancel's response.done already sent (the race the example
    above lost on a fast machine): nothing new began, so the repeat still acts on it, quietly;
    a cancel after a response that completed is still refused (test_realtime_server)."""
    errors, cancelled = _cancelled_twice(server, 0.5)
    assert errors == [] and len(cancelled) == 1, (errors, cancelled)


def _loud_audio(seconds: float) -> str:
    """Noise a caller's microphone could send (24 kHz pcm16, base64): speech to the energy VAD."""
    import base64

    import numpy as np

    rng = np.random.default_rng(5)
    pcm = (rng.standard_normal(int(24_000 * seconds)) * 8000).clip(-32768, 32767).astype("<i2")
    return base64.b64encode(pcm.tobytes()).decode("ascii")


def test_an_out_of_band_reply_cut_off_by_the_caller_ends_cancelled(server):
    """Found: a reply with `conversation: "none"` that the caller talked over failed with a
    server_error (KeyError on its item) and never sent response.done: cutting it back to what was
    heard looked its item up in the conversation, where an out-of-band item never is."""
    story = [{"type": "message", "role": "user",
              "content": [{"type": "input_text", "text": "Tell a long story"}]}]
    steps = [Step(event={"type": "response.create",
                         "response": {"conversation": "none", "input": story}}),
             Step(pause_s=0.3), Step(event={"type": "input_audio_buffer.append",
                                            "audio": _loud_audio(1.0)}),
             Step(pause_s=1.0)]
    outcome = run(server, "ga", steps)
    assert not [e for e in outcome.events if e["type"] == "error"
                and e["error"]["code"] == "server_error"]


def test_a_reply_whose_item_the_client_deleted_still_ends(server):
    """The same cut for an in-band reply whose item the client deleted while it played (the
    server got this one right before the fix; kept so the two stay covered together)."""
    story = {"type": "message", "role": "user",
             "content": [{"type": "input_text", "text": "Tell a long story"}]}
    steps = [Step(event={"type": "conversation.item.create", "item": story}),
             Step(event={"type": "response.create"}), Step(pause_s=0.3)]
    outcome = asyncio.run(play(server.url, "ga", steps, f"f{next(_tags)}"))
    added = [e for e in outcome.events if e["type"] == "response.output_item.added"]
    assert added, [e["type"] for e in outcome.events]
    steps += [Step(event={"type": "conversation.item.delete", "item_id": added[0]["item"]["id"]}),
              Step(event={"type": "response.cancel"}), Step(pause_s=0.3)]
    outcome = run(server, "ga", steps)
    assert not [e for e in outcome.events if e["type"] == "error"
                and e["error"]["code"] == "server_error"]


def test_a_reply_paused_for_talk_the_client_then_cleared_goes_on(server):
    """The shape of what the long fuzz found: talk over a reply paused it while its words were
    heard; the client then cleared the input buffer and sent text only, so no audio window came
    to decide, and later replies stayed silent. (This sequence alone did not stall before the
    change either: the timing it needs is not pinned down.)"""
    story = {"type": "message", "role": "user",
             "content": [{"type": "input_text", "text": "Tell a long story"}]}
    steps = [Step(event={"type": "conversation.item.create", "item": story}),
             Step(event={"type": "response.create"}), Step(pause_s=0.3),
             Step(event={"type": "input_audio_buffer.append", "audio": _loud_audio(1.0)}),
             Step(pause_s=0.5), Step(event={"type": "input_audio_buffer.clear"})]
    outcome = run(server, "ga", steps)
    assert not [e for e in outcome.events if e["type"] == "error"
                and e["error"]["code"] == "server_error"]


def test_playback_ending_while_it_waits_leaves_no_task_behind():
    """Found: a call that ended while its playback waited for the last frame to sound left two
    helper tasks pending, destroyed later by the collector ("Task was destroyed but it is
    pending!"), once per fuzzed connection."""
    import numpy as np

    from pipeline.base.clock import RealClock, cancel_and_wait
    from pipeline.stages.playback import Playback

    class Sink:
        def write_output(self, samples, rate_hz, at_s):
            pass

    async def scenario() -> set[asyncio.Task]:
        playback = Playback(RealClock(), Sink(), 16_000, lead_s=0.2)
        # 100 ms, handed out 200 ms ahead: then playback waits for its last frame to sound
        playback.enqueue(np.zeros(1600, np.float32), item_id="item_1", response_id="resp_1")
        task = asyncio.ensure_future(playback.run())
        await asyncio.sleep(0.05)
        await cancel_and_wait(task)
        await asyncio.sleep(0)
        return {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}

    assert asyncio.run(scenario()) == set()


@pytest.mark.parametrize("blip_s", [0.04, 0.1])
def test_a_reply_paused_on_a_blip_no_more_audio_decides_goes_on(server, blip_s):
    """The shape of the reply that never ended under the long fuzz on a loaded machine (loud
    audio landing while a reply sounds depends on timing): a loud blip over a reply (one 32 ms
    window, too short to open a turn; or 100 ms, a turn) paused playback until later windows
    judged it, and a client that sent no more audio left the reply paused and unfinished for
    good (its response.done never came, every later response.create was refused as one in
    progress). Both failed before input that stops counted as silence (BargeIn._when_input_stops)."""
    story = {"type": "message", "role": "user",
             "content": [{"type": "input_text", "text": "Tell a long story"}]}
    steps = [Step(event={"type": "conversation.item.create", "item": story}),
             Step(event={"type": "response.create"}), Step(pause_s=0.3),
             Step(event={"type": "input_audio_buffer.append", "audio": _loud_audio(blip_s)}),
             Step(pause_s=0.3)]
    run(server, "ga", steps)


def test_a_pause_the_reply_outlived_does_not_silence_the_next_reply():
    """Found by the long fuzz under load (the ordinary turn after a sequence never ended): talk
    landed while a short reply's last frames were already out (200 ms ahead), so playback paused
    with nothing left to hold; the reply ended, the next window found the agent quiet and the
    barge-in went back to listening without resuming playback, and every later reply was queued
    behind a pause nothing would lift."""
    from websockets.asyncio.client import connect

    from .test_realtime_server import Client, user_text

    stages = fuzz_stages()
    stages.llm = ScriptedLLM(replies=["One two three."])  # 130 ms of tone: all of it sent at once

    async def scenario(url: str) -> list[str]:
        async with connect(url, proxy=None) as ws:
            c = Client(ws)
            await c.wait_for("session.created")
            await c.send({"type": "session.update", "session": {}})  # audio is taken from now on
            await c.wait_for("session.updated")
            await c.send(user_text("Hi"))
            await c.send({"type": "response.create"})
            await c.wait_for("response.output_audio.delta")
            await c.send({"type": "input_audio_buffer.append", "audio": _loud_audio(0.07)})
            await c.wait_for("response.done")
            await c.send({"type": "input_audio_buffer.append", "audio": _audio_silence(0.2)})
            await c.send({"type": "input_audio_buffer.clear"})  # the talk was nothing
            await c.wait_for("input_audio_buffer.cleared")
            await c.send(user_text("Hi again"))
            await c.send({"type": "response.create"})
            await c.wait_for("response.done", count=2, timeout=10)
            await c.close()
            return [r["response"]["status"] for r in c.of("response.done")]

    with ServerThread(stages) as running:
        assert asyncio.run(scenario(running.url)) == ["completed", "completed"]


def _audio_silence(seconds: float) -> str:
    import base64

    return base64.b64encode(bytes(2 * int(24_000 * seconds))).decode("ascii")


@pytest.mark.parametrize("pause_s", [0.3, 0.45])
def test_a_response_asked_for_while_a_turn_is_open_is_made(server, pause_s):
    """Found by the long fuzz: loud audio opened a turn, a pause in it (shorter than the turn's
    end) started a held reply on its words, and the client sent no more audio and asked for a
    response: the client's response waited for the held one, which waited for a commit no audio
    came to bring, and nothing was made. As on the hosted API, a response.create answers from the
    conversation as it stands and the open turn stays open."""
    steps = [Step(event={"type": "session.update", "session": {}}),
             Step(event={"type": "input_audio_buffer.append", "audio": _loud_audio(0.5)}),
             Step(event={"type": "input_audio_buffer.append", "audio": _audio_silence(pause_s)}),
             Step(pause_s=0.5), Step(event={"type": "response.create"})]
    outcome = run(server, "ga", steps)
    types = [e["type"] for e in outcome.events]
    assert "input_audio_buffer.speech_started" in types and "input_audio_buffer.committed" not in types, types
    created = [e for e in outcome.events if e["type"] == "response.created"]
    done = [e["response"]["status"] for e in outcome.events if e["type"] == "response.done"]
    assert len(created) == 1 and done == ["completed"], types


def _as_the_reply_ends(act):
    """A call of one turn where `act(session)` runs as the reply's response.done goes out (it is
    still the active response then): what act returned, and the call's record."""
    import numpy as np

    from pipeline.base import events as ev
    from pipeline.testing import call
    from pipeline.transports.scripted import Clip

    answers: list[tuple[str, object]] = []

    def setup(session) -> None:
        def on_done(event: ev.Event) -> None:
            if isinstance(event, ev.ResponseDone) and not answers:
                answers.append((event.response["status"], act(session)))
        session.listeners.add(on_done, ev.EventPhase.OBSERVER)

    t = np.arange(16_000) / 16_000
    tone = (0.3 * np.sin(2 * np.pi * 300 * t)).astype(np.float32)
    return answers, call(fuzz_stages(), [Clip(tone, 0.3)], setup=setup)


def test_a_cancel_landing_as_a_reply_ends_on_its_own_is_refused():
    """Found by the long fuzz under load (a response.cancel that was neither refused nor acted
    on): a reply that completed stays the active one for one pass of the loop after its
    response.done went out, and a cancel read in that pass was taken in silence with nothing
    cancelled. It is refused (response_cancel_not_active), as it is a moment later."""
    answers, record = _as_the_reply_ends(lambda session: session.client.cancel_response())
    assert answers == [("completed", False)], answers
    assert [d.response["status"] for d in record.done] == ["completed"]


def test_a_response_asked_for_as_a_reply_ends_is_made_after_it():
    """The same pass of the loop: a client that sends response.create the moment it reads
    response.done is not told a response is still in progress; the new one follows."""
    answers, record = _as_the_reply_ends(lambda session: session.client.request_response())
    assert answers == [("completed", None)], answers
    assert [d.response["status"] for d in record.done] == ["completed", "completed"]
