"""The wire encoder's table: every event class has exactly one wire form, or is declared internal.

An encoder found by a method's name (`_` + the class name) dropped a renamed event from the wire
without a word; the table is keyed by class, and these tests hold it complete. No models."""

from __future__ import annotations

import dataclasses
import inspect
import json

import pytest

from pipeline.base import events as ev
from pipeline.transports.realtime_events import (
    ENCODERS,
    GA,
    INTERNAL,
    WireEncoder,
    WireSettings,
    encodes,
)


def event_classes() -> list[type[ev.Event]]:
    """Every event dataclass pipeline/base/events.py defines (the base class aside)."""
    return [cls for _, cls in inspect.getmembers(ev, inspect.isclass)
            if issubclass(cls, ev.Event) and cls is not ev.Event and dataclasses.is_dataclass(cls)
            and cls.__module__ == ev.__name__]


def test_every_event_class_is_encoded_or_declared_internal():
    classes = event_classes()
    assert len(classes) > 20  # the module was read, not an empty list
    missing = [cls.__name__ for cls in classes if cls not in ENCODERS and cls not in INTERNAL]
    assert not missing, f"give these a wire form (@encodes) or declare them INTERNAL: {missing}"
    both = [cls.__name__ for cls in classes if cls in ENCODERS and cls in INTERNAL]
    assert not both, f"both encoded and internal: {both}"
    unknown = [cls for cls in [*ENCODERS, *INTERNAL] if cls not in classes]
    assert not unknown, f"the table names classes that are not events of pipeline/base/events.py: {unknown}"


def test_the_table_names_no_class_twice():
    with pytest.raises(TypeError, match="SessionCreated already has a wire form"):
        encodes(ev.SessionCreated)(lambda encoder, event: [])
    with pytest.raises(TypeError, match="OutputAudioDelta already has a wire form"):
        encodes(ev.OutputAudioDelta)(lambda encoder, event: [])
    assert ENCODERS[ev.SessionCreated].__name__ == "_session_created"  # the refusals changed nothing


def test_an_internal_event_sends_nothing_and_a_stage_mark_keeps_its_bytes():
    encoder = WireEncoder(GA, WireSettings())
    assert encoder.encode(ev.SpeechStopped(item_id="item_1", audio_end_ms=900)) == []
    mark = ev.StageMark(stage="barge_in", response_id="resp_1", detail={"decision_ms": 260})
    assert mark.stage is ev.Milestone.BARGE_IN  # the string is taken as the member
    (wire,) = encoder.encode(mark)
    text = json.dumps(wire)
    assert '"type": "x.stage"' in text and '"stage": "barge_in"' in text  # the value, not the enum's name
    assert json.loads(text)["stage"] == "barge_in"


def test_a_stage_mark_nobody_reads_is_refused_where_it_is_made():
    with pytest.raises(ValueError, match="'barge_inn' is no stage mark anyone reads: use a member of Milestone"):
        ev.StageMark(stage="barge_inn")
