"""Backchannel or a real interruption, judged from the words the caller said over the agent."""

import pytest

from pipeline.base.config import BargeInPolicy
from pipeline.stages.backchannel import Backchannels

JUDGE = Backchannels(BargeInPolicy().backchannels)


@pytest.mark.parametrize("text", [
    "Mm-hmm.", "Mhm.", "MMM.", "Mmm-hmm.", "Hmmm.", "mm hmm", "Uh-huh.", "Uh huh", "Yeah.", "Yeah, yeah.", "Okay.", "OK",
    "Right.", "I see.", "Sure.", "Got it.", "All right.", "Oh, okay.", "Yes, I see.", "Thank you.",
])
def test_backchannels(text):
    assert JUDGE.judge(text) == "backchannel"


@pytest.mark.parametrize("text", [
    "Wait.", "Stop.", "No.", "Hold on.", "Sorry?", "Yeah, but what about breakfast?",
    "Okay, and the pool?", "Is the pool open?", "I see, can you repeat that?", "Right, cancel it.",
])
def test_real_interruptions(text):
    assert JUDGE.judge(text) == "words"


def test_nothing_said_is_silence():
    assert JUDGE.judge("") == "silence"
    assert JUDGE.judge(" ... ") == "silence"


def test_the_list_is_configurable():
    judge = Backchannels(["da", "genau"])
    assert judge.judge("Genau.") == "backchannel"
    assert judge.judge("Yeah.") == "words"


@pytest.mark.parametrize("text, said, echo", [
    ("Thanks for calling.", "Thanks for calling the front desk. Checkout is at eleven.", True),
    ("checkout is at", "Thanks for calling the front desk. Checkout is at eleven.", True),
    ("Wait, is the pool open?", "Thanks for calling the front desk.", False),
    ("Thanks.", "Thanks for calling the front desk.", False),  # one word: too little to tell
    ("calling thanks", "Thanks for calling.", False),  # not in the agent's order
])
def test_talk_under_the_agent_in_its_own_words_is_its_echo(text, said, echo):
    from pipeline.stt import words_within

    assert words_within(text, said) is echo


def test_a_pass_without_a_score_is_trusted_and_a_doubted_one_is_not():
    from pipeline.base.clock import SimClock
    from pipeline.stages.fakes import ScriptedSTT
    from pipeline.stt import StreamingTranscriber

    stt = StreamingTranscriber(ScriptedSTT(transcripts=["in MMM."]), SimClock())
    assert stt.sure_of("in MMM.", -1.0)  # no score for it: the words count as they are
    stt.logprobs["in MMM."] = -1.16
    assert not stt.sure_of("in MMM.", -1.0) and stt.sure_of("in MMM.", -1.2)
