"""Threads per model by core count (pipeline.base.cpu), the stages taking the split, Piper warm-up."""

from __future__ import annotations

import pytest

from pipeline.base.cpu import default_threads, usable_cores


@pytest.mark.parametrize("cores, stt, llm, tts", [
    (1, 1, 1, 1),
    (2, 2, 2, 2),  # the 2-core reference results' setting
    (4, 4, 3, 1),
    (8, 8, 6, 2),
    (16, 16, 12, 4),
])
def test_threads_by_core_count(cores, stt, llm, tts):
    assert [default_threads(s, cores) for s in ("stt", "llm", "tts")] == [stt, llm, tts]


def test_pipeline_threads_gives_every_model_that_many(monkeypatch):
    monkeypatch.setenv("PIPELINE_THREADS", "1")
    assert [default_threads(s) for s in ("stt", "llm", "tts")] == [1, 1, 1]
    assert default_threads("llm", 8) == 6  # an explicit core count is a question about the split
    monkeypatch.setenv("PIPELINE_THREADS", "two")
    with pytest.raises(ValueError, match="PIPELINE_THREADS must be a whole number"):
        default_threads("stt")


def test_the_overlapping_models_never_ask_for_more_cores_than_there_are():
    for cores in range(3, 65):
        assert default_threads("llm", cores) + default_threads("tts", cores) == cores


def test_the_detected_cores_are_used_when_none_are_given(monkeypatch):
    monkeypatch.delenv("PIPELINE_THREADS", raising=False)
    n = usable_cores()
    assert n >= 1 and default_threads("stt") == default_threads("stt", n)


@pytest.mark.models
def test_piper_runs_on_the_thread_count_it_is_given():
    from pipeline.stages.tts import PiperTTS

    tts = PiperTTS(threads=1)
    assert tts.threads == 1 and len(tts.synthesize("Hello.")) > 0


@pytest.mark.models
@pytest.mark.parametrize("warm_up, runs", [(True, 1), (False, 0)])
def test_piper_warms_up_at_load_when_asked(monkeypatch, warm_up, runs):
    from piper import PiperVoice

    from pipeline.stages.tts import PiperTTS

    calls: list[str] = []
    real = PiperVoice.synthesize
    monkeypatch.setattr(PiperVoice, "synthesize", lambda self, text, **kw: calls.append(text) or real(
        self, text, **kw))
    tts = PiperTTS(warm_up=warm_up)
    assert len(calls) == runs
    assert len(tts.synthesize("Hello.")) > 0 and len(calls) == runs + 1


def test_an_urgent_pass_takes_the_model_before_waiting_partials():
    """`UrgentFirst`: while one pass holds the model, a partial queues, then a final; the final
    gets the model next, though the partial asked first."""
    import threading
    import time

    from pipeline.base.cpu import UrgentFirst

    lock, order, holding = UrgentFirst(), [], threading.Event()
    release = threading.Event()

    def first() -> None:
        with lock.hold(urgent=False):
            holding.set()
            release.wait(5)

    def take(name: str, urgent: bool) -> None:
        with lock.hold(urgent=urgent):
            order.append(name)

    threads = [threading.Thread(target=first)]
    threads[0].start()
    holding.wait(5)
    for name, urgent in (("partial", False), ("final", True)):
        threads.append(threading.Thread(target=take, args=(name, urgent)))
        threads[-1].start()
        time.sleep(0.05)  # the partial asks first
    deadline = time.monotonic() + 5
    while not lock._urgent_waiting and time.monotonic() < deadline:  # the final waits too
        time.sleep(0.01)
    release.set()
    for t in threads:
        t.join(5)
    assert order == ["final", "partial"]
