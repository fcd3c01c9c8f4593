"""The call's states: each moves only as its table allows, and an illegal move raises."""

from __future__ import annotations

import asyncio
import json
from enum import StrEnum

import pytest

from pipeline.call.states import (
    BARGE_IN_MOVES,
    CALL_MOVES,
    RESPONSE_MOVES,
    TURN_MOVES,
    BargeInPhase,
    CallState,
    GuardedState,
    IllegalMove,
    Moves,
    ResponseStatus,
    TurnStanding,
)
from pipeline.call.turn import Turn


def test_response_status_keeps_its_wire_strings():
    assert [s.value for s in ResponseStatus] == [
        "in_progress", "completed", "cancelled", "incomplete", "failed"]
    assert ResponseStatus.CANCELLED == "cancelled"  # a test's or a client's string still matches
    assert json.dumps({"status": ResponseStatus.FAILED}) == '{"status": "failed"}'


@pytest.mark.parametrize("moves", [RESPONSE_MOVES, CALL_MOVES, TURN_MOVES, BARGE_IN_MOVES])
def test_every_move_not_in_the_table_raises(moves: Moves):
    for old in moves.states:
        for new in moves.states:
            if new in moves.allowed[old]:
                assert moves(old, new) is new
            else:
                with pytest.raises(IllegalMove, match=f"{old.value} -> {new.value}"):
                    moves(old, new)


def test_an_event_leads_only_where_its_table_says():
    assert TURN_MOVES.after("outlasts_agent", TurnStanding.UNDER_AGENT) is TurnStanding.CALLER
    for standing in (TurnStanding.CALLER, TurnStanding.INTERRUPTION):  # not over the agent
        with pytest.raises(IllegalMove, match=f"outlasts_agent from {standing.value}"):
            TURN_MOVES.after("outlasts_agent", standing)
    with pytest.raises(IllegalMove):
        TURN_MOVES.after("no_such_event", TurnStanding.CALLER)


def test_the_tables_say_what_ends_and_what_reopens():
    assert [s for s in ResponseStatus if RESPONSE_MOVES.terminal(s)] == [
        ResponseStatus.COMPLETED, ResponseStatus.INCOMPLETE, ResponseStatus.FAILED]
    assert CALL_MOVES.terminal(CallState.CLOSED)  # a hung-up line never reopens
    assert CallState.OPEN in CALL_MOVES.allowed[CallState.CLOSING]  # a new request reopens it
    assert not any(TURN_MOVES.terminal(s) for s in TurnStanding)
    assert BARGE_IN_MOVES.allowed[BargeInPhase.HEARING] == {BargeInPhase.LISTENING}


def test_a_table_must_name_every_state():
    class Light(StrEnum):
        RED = "red"
        GREEN = "green"

    with pytest.raises(ValueError, match="GREEN"):
        Moves(Light, {Light.RED: (Light.GREEN,)})


def test_a_guarded_state_checks_every_assignment():
    class Holder:
        status = GuardedState(RESPONSE_MOVES, ResponseStatus.IN_PROGRESS)

    first, second = Holder(), Holder()
    assert first.status is ResponseStatus.IN_PROGRESS
    first.status = ResponseStatus.CANCELLED
    first.status = ResponseStatus.FAILED  # an error while the cancel stops it is still reported
    assert second.status is ResponseStatus.IN_PROGRESS  # per instance
    with pytest.raises(IllegalMove):
        first.status = ResponseStatus.COMPLETED
    assert first.status is ResponseStatus.FAILED  # a refused move changes nothing


def test_a_finished_response_cannot_be_restarted():
    from pipeline.call.handle import ReplyHandle

    assert isinstance(ReplyHandle.__dict__["status"], GuardedState)
    response = ReplyHandle.__new__(ReplyHandle)  # the status needs no models to exercise
    response.status = ResponseStatus.COMPLETED
    with pytest.raises(IllegalMove):
        response.status = ResponseStatus.CANCELLED


def _turn(standing: TurnStanding = TurnStanding.CALLER) -> Turn:
    return Turn(item_id="item_x", audio_start_ms=0.0, stt=None, standing=standing)


def test_turn_standing_replaces_the_two_flags():
    under = _turn(TurnStanding.UNDER_AGENT)
    assert (under.over_agent, under.barged_in, under.under_agent) == (True, False, True)
    under.barges_in()  # the gate fired while the agent spoke
    assert under.standing is TurnStanding.INTERRUPTING
    assert (under.over_agent, under.barged_in, under.under_agent) == (True, True, False)
    under.barges_in()  # a second fire changes nothing
    under.outlasts_agent()  # the agent went quiet before the caller stopped
    assert under.standing is TurnStanding.INTERRUPTION
    assert (under.over_agent, under.barged_in) == (False, True)

    backchannel = _turn(TurnStanding.UNDER_AGENT)
    backchannel.outlasts_agent()  # talk under the agent that went on: the caller's turn
    assert backchannel.standing is TurnStanding.CALLER

    own = _turn()
    assert (own.over_agent, own.barged_in, own.under_agent) == (False, False, False)
    with pytest.raises(IllegalMove):  # a turn that began with the floor outlasts nothing
        own.outlasts_agent()
    own.barges_in()
    assert own.standing is TurnStanding.INTERRUPTION


def test_call_control_refuses_to_reopen_a_closed_line():
    from pipeline.base.config import Config
    from pipeline.base.events import EventPhase
    from pipeline.base.listeners import Ordered
    from pipeline.call.callctl import CallControl

    class Core:  # the few parts of a session call control touches here
        config = Config.default()
        listeners = Ordered(EventPhase)  # call control follows committed turns on the event stream

        class floor:
            @staticmethod
            def pulse() -> None:
                pass

        @staticmethod
        def log(message: str, *, level: str = "info") -> None:
            pass

    control = CallControl(Core(), playback=None, sink=None, llm=None,
                          find_response=lambda _id: None, caller_speaking=lambda: False)
    assert control.state == "open" and not control.closed
    control.teardown("done")
    assert control.state is CallState.CLOSED and control.closed
    assert control.on_caller_turn("one more thing") is False  # only a closing line reopens
    assert asyncio.run(control.end_call(response_id="resp_x", reason="again"))["hung_up"] is True
