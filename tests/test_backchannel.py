"""Backchannel or a real interruption, judged from the words the caller said over the agent."""

import pytest

from pipeline.backchannel import Backchannels
from pipeline.config import BargeInPolicy

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
