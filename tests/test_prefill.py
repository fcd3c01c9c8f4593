"""The reply's prompt evaluated before the reply: each partial's words while the caller speaks
(`response.prefill`), the last partial's in the caller's pause (`response.prefill_pause`), as the
prompt a reply to them reads; never while a reply runs, never the final's words (the reply itself
reads those). Real VAD, Whisper and Piper on the simulated clock; a
scripted model that notes its prefills. `test_llm_cache.py` has the real model's side."""

from __future__ import annotations

from typing import Any

import pytest

from pipeline.stages.fakes import ScriptedLLM
from pipeline.testing import call, make_config, silence, with_stages

pytestmark = pytest.mark.models

ON = make_config(response={"prefill": True})
TEXT = "I would like to book a table for two people tonight at the Italian place."


class PrefillSpy(ScriptedLLM):
    """A scripted model that notes each prompt it is asked to prefill, and how many replies it
    had been asked for by then."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.prefills: list[tuple[list[dict[str, Any]], int]] = []
        self.ahead: list[list[dict[str, Any]]] = []  # the conversation, up to the caller's next words
        # the caller's words in their pause: (messages, replies by then, in the trailing windows, go on)
        self.paused: list[tuple[list[dict[str, Any]], int, bool, bool]] = []
        self.session: Any = None
        self.while_busy = 0  # prefills asked for while a reply ran or the agent spoke

    def watch(self, session: Any) -> None:
        self.session = session

    def prefill(self, messages: list[dict[str, Any]], *, go_on: Any = None, upto_words: bool = False,
                through_words: bool = False) -> int:
        if upto_words:
            self.ahead.append(messages)
            return 1
        # (the simulated clock stands still while this runs: no frame, no reply, comes between)
        if self.session is not None and (self.session.playback.speaking
                                         or self.session.responder.active is not None):
            self.while_busy += 1
        if through_words:  # in the caller's pause: was it, and may it go on?
            detector = self.session.turns.detector
            self.paused.append((messages, len(self.requests), detector.in_speech and detector.trailing_ms > 0,
                                go_on is not None and go_on()))
            self.go_on = go_on
            return 1
        self.prefills.append((messages, len(self.requests)))
        return 1


def _after_a_reply(llm: PrefillSpy) -> list[list[dict[str, Any]]]:
    """The conversations evaluated ahead once a reply was in them."""
    return [m for m in llm.ahead if any(x["role"] == "assistant" for x in m)]


def _words(text: str) -> list[str]:
    return [w.strip(".,?!").lower() for w in text.split()]


def test_the_callers_words_so_far_are_prefilled_as_the_replys_prompt(real_stages, say):
    llm = PrefillSpy(replies=["Booked for two."])
    rec = call(with_stages(real_stages, llm=llm), [say(TEXT), silence(1500)], config=ON, setup=llm.watch)
    assert rec.agent_lines == ["Booked for two."]
    assert len(llm.prefills) >= 2, rec.timeline()  # a 4 s sentence has several partials
    reply_prompt = llm.requests[0]
    partials = {f"{e.stable} {e.tentative}".strip()
                for e in rec.of("conversation.item.input_audio_transcription.delta")}
    for messages, replies_before in llm.prefills:
        assert replies_before == 0  # all before the reply was begun
        # the reply's own prompt, its last message the caller's words as a partial had them
        assert messages[:-1] == reply_prompt[:-1]
        assert messages[-1]["role"] == "user" and messages[-1]["content"] in partials
    said = [messages[-1]["content"] for messages, _ in llm.prefills]
    assert len(set(said)) == len(said)  # each words once
    assert llm.while_busy == 0


def test_by_default_the_words_are_evaluated_only_in_the_callers_pause(real_stages, say):
    # `response.prefill_pause`: the last partial's words once the VAD's trailing windows begin,
    # none while the voice goes on (`response.prefill` is off), none after speech-stop
    llm = PrefillSpy(replies=["Booked for two."])
    rec = call(with_stages(real_stages, llm=llm), [say(TEXT), silence(1500)], setup=llm.watch)
    assert rec.agent_lines == ["Booked for two."] and llm.prefills == []
    assert llm.paused, rec.timeline()
    partials = {f"{e.stable} {e.tentative}".strip()
                for e in rec.of("conversation.item.input_audio_transcription.delta")}
    for messages, replies_before, pausing, go_on in llm.paused:
        assert replies_before == 0 and pausing and go_on
        assert messages[:-1] == llm.requests[0][:-1]  # the reply's prompt, up to the caller's words
        assert messages[-1]["role"] == "user" and messages[-1]["content"] in partials
    assert llm.while_busy == 0
    # it may go on through the trailing windows until the fourth of five (a step then would run
    # into speech-stop, the final pass's), and not once the voice goes on
    detector, at = rec.session.turns.detector, 100_000.0
    detector.reset()
    rec.session.prefill.closed = False  # (the call is over: the windows alone, then the close)
    for prob in (0.9, 0.9, 0.9, 0.9):
        at += 32
        detector.on_window(prob, at)
    assert detector.in_speech and not llm.go_on()
    may = []
    for _ in range(4):
        at += 32
        detector.on_window(0.05, at)
        may.append(llm.go_on())
    assert may == [True, True, True, False]  # 32, 64, 96 ms of trailing windows; not 128
    detector.on_window(0.9, at + 32)
    assert not llm.go_on()  # the voice went on
    detector.on_window(0.05, at + 64)
    assert llm.go_on()
    rec.session.prefill.close()
    assert not llm.go_on()  # the call ended


def test_the_same_words_in_a_later_turn_are_evaluated_in_its_pause_too(real_stages, say):
    # the prompt differs (the first turn and its reply are in it), so the words are no repeat
    llm = PrefillSpy(replies=["Booked for two.", "Booked again."])
    rec = call(with_stages(real_stages, llm=llm), [say(TEXT), silence(2500), say(TEXT), silence(1500)],
               setup=llm.watch)
    assert rec.agent_lines == ["Booked for two.", "Booked again."], rec.timeline()
    assert {before for _, before, _, _ in llm.paused} == {0, 1}, rec.timeline()
    assert llm.while_busy == 0


def test_no_words_evaluated_in_the_pause_when_it_is_off(real_stages, say):
    llm = PrefillSpy(replies=["Booked for two."])
    rec = call(with_stages(real_stages, llm=llm), [say(TEXT), silence(1500)],
               config=make_config(response={"prefill_pause": False}), setup=llm.watch)
    assert rec.agent_lines == ["Booked for two."] and llm.prefills == [] and llm.paused == []


def test_a_reply_heard_to_its_end_has_the_conversation_evaluated_up_to_the_callers_next_words(real_stages, say):
    llm = PrefillSpy(replies=["Booked for two.", "You're welcome."])
    rec = call(with_stages(real_stages, llm=llm), [say(TEXT), silence(2500), say("Thank you."), silence(1500)])
    assert rec.agent_lines == ["Booked for two.", "You're welcome."], rec.timeline()
    assert llm.ahead[0] == [llm.requests[0][0], {"role": "user", "content": ""}]  # as the call began
    after = _after_a_reply(llm)
    assert len(after) == 2, rec.timeline()  # after each reply heard in full
    first = after[0]
    assert first[-2] == {"role": "assistant", "content": "Booked for two."}
    assert first[-1] == {"role": "user", "content": ""}  # where the words go; not evaluated
    assert llm.requests[1][:-1] == first[:-1]  # the next turn's prompt shares all of it
    assert len(rec.stages("heard_in_full")) == 2


def test_a_reply_cut_off_has_nothing_evaluated_ahead(real_stages, say):
    # the caller talks over a long reply: it is not heard to its end, and the conversation it
    # leaves (the reply as far as it was heard) is the next request's to evaluate
    menu = ("We have soups, salads and sandwiches at lunch. In the evening there are three kinds "
            "of pasta, a fish of the day and a steak. The desserts change every week.")
    llm = PrefillSpy(rules=[["menu", menu], ["dessert", "Sure."]])
    rec = call(with_stages(real_stages, llm=llm), [say("Tell me about your menu, please."), silence(2500),
                                                   say("Wait, I only want the desserts."), silence(1500)])
    assert rec.stages("barge_in") and rec.agent_lines[0] != menu, rec.timeline()
    assert len(_after_a_reply(llm)) == len(rec.stages("heard_in_full")) == 1  # the second reply's only


def test_no_prefill_while_a_reply_runs(real_stages, say):
    # the caller talks over a long reply: the model and the voice are the reply's, and the
    # caller's words may be a backchannel
    llm = PrefillSpy(replies=[("Let me tell you about our menu. " * 6).strip(), "Sure."])
    rec = call(with_stages(real_stages, llm=llm), [say("Tell me about your menu, please."), silence(2500),
                                                   say(TEXT), silence(1500)], config=ON, setup=llm.watch)
    assert rec.stages("first_audio_out"), rec.timeline()
    assert any(before == 0 for _, before in llm.prefills)  # the question, while it was asked
    assert llm.while_busy == 0


class _BeforePause(ScriptedLLM):
    """A plugin's prefill written before `through_words`: the conversation ahead only."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.asked: list[bool] = []

    def prefill(self, messages: list[dict[str, Any]], *, go_on: Any = None, upto_words: bool = False) -> int:
        self.asked.append(upto_words)
        return 1


def test_a_prefill_without_through_words_gets_no_words_in_the_pause_and_no_error(real_stages, say):
    llm = _BeforePause(replies=["Booked for two."])
    rec = call(with_stages(real_stages, llm=llm), [say(TEXT), silence(1500)])
    assert rec.agent_lines == ["Booked for two."]
    assert llm.asked and all(llm.asked)  # the conversation ahead, never the words
    assert not rec.of("error"), [e.error for e in rec.of("error")]
