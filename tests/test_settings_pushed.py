"""A session.update pushes the new settings to the owners that hold them (no owner re-reads the
session's config on every window), and each default is written in one place."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest

from pipeline.base.clock import SimClock
from pipeline.base.config import (
    BargeInPolicy,
    CallPolicy,
    ChunkerPolicy,
    Config,
    ResponsePolicy,
    TurnPolicy,
)
from pipeline.call.session import Session, Stages
from pipeline.stages.fakes import ScriptedLLM, ScriptedSTT, ToneTTS
from pipeline.transports.scripted import ScriptedCaller
from pipeline.transports.soundcard import SoundCardTransport
from pipeline.turns import HeuristicCompleteness


class QuietVAD:
    def probability(self, window: np.ndarray) -> float:
        return 0.0


def _session() -> Session:
    stages = Stages(vad=QuietVAD(), stt=ScriptedSTT(transcripts=["Hello."]),
                    completeness=HeuristicCompleteness(), llm=ScriptedLLM(replies=["Hi."]),
                    tts=ToneTTS(ms_per_char=30.0))
    return Session(Config.default(), stages, clock=SimClock(), sink=ScriptedCaller([]))


def test_session_update_pushes_the_policies_to_their_owners():
    session = _session()
    bargein, turns = session.bargein, session.turns
    assert bargein.policy.enabled and bargein.prefix_padding_ms == Config.default().turn.prefix_padding_ms
    session.client.update(interrupt_response=False, turn={"prefix_padding_ms": 120, "vad_threshold": 0.7})
    assert bargein.policy is session.core.config.bargein and not bargein.policy.enabled
    assert bargein.gate.policy is bargein.policy  # the gate reads the same settings
    assert bargein.prefix_padding_ms == 120
    assert turns.policy is session.core.config.turn and turns.policy.vad_threshold == 0.7
    assert turns.detector.policy is turns.policy
    session.client.update(instructions="Be brief.")  # no barge-in or turn keys: nothing to push
    assert bargein.policy is session.core.config.bargein and not bargein.policy.enabled


@pytest.mark.parametrize("policy", [TurnPolicy(), BargeInPolicy(), ChunkerPolicy(), ResponsePolicy(),
                                    CallPolicy()], ids=lambda p: type(p).__name__)
def test_policies_are_frozen_values(policy):
    name = dataclasses.fields(policy)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(policy, name, getattr(policy, name))


def test_an_update_replaces_the_policy_and_leaves_the_one_an_owner_held_unchanged():
    session = _session()
    old_turn, old_bargein = session.turns.policy, session.bargein.policy
    old_response = session.core.config.response
    session.client.update(interrupt_response=False, turn={"vad_threshold": 0.7},
                          instructions="Be brief.", generation={"temperature": 0.2})
    assert session.turns.policy is not old_turn and session.turns.policy.vad_threshold == 0.7
    assert old_turn.vad_threshold == TurnPolicy().vad_threshold  # the value it held is unchanged
    assert session.bargein.policy is not old_bargein and old_bargein.enabled
    assert session.core.config.response.instructions == "Be brief."
    assert old_response == ResponsePolicy()  # replaced, not changed in place
    assert Config.default().turn == TurnPolicy()  # the caller's config is not the session's


def test_the_turn_defaults_are_the_default_preset():
    from pipeline.base.config import TURN_PRESETS, TurnPolicy

    policy = TurnPolicy()
    assert policy.preset == "default"
    assert (policy.min_silence_ms, policy.max_silence_ms) == TURN_PRESETS["default"] == (600, 1500)


def test_the_pickup_cap_has_one_default():
    assert CallPolicy.pickup_cap_ms == 5000
    assert (inspect.signature(SoundCardTransport).parameters["pickup_cap_ms"].default
            == CallPolicy.pickup_cap_ms)
    assert _session().input.pickup.cap_ms == CallPolicy.pickup_cap_ms
