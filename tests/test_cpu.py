"""Threads per model by core count (pipeline.base.cpu), the stages taking the split, Piper warm-up."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.base.cpu import default_threads, limit_blas_threads, usable_cores


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


@pytest.fixture
def blas(monkeypatch):
    """numpy's BLAS pool as threadpoolctl sees it, put back as it was after the test."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    import numpy  # noqa: F401  (loads the BLAS numpy was built with)

    def threads() -> list[int]:
        return [p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]

    before = threads()
    if not before:
        pytest.skip("numpy here has no BLAS threadpoolctl can size")
    for name in ("PIPELINE_BLAS_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                 "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):  # as a 2-core machine has it
        yield threads
    assert threads() == before


def test_numpy_blas_gets_one_thread_where_the_models_load(blas):
    assert limit_blas_threads() == 1
    assert set(blas()) == {1}


def test_pipeline_blas_threads_sets_another_count_or_leaves_it(blas, monkeypatch):
    monkeypatch.setenv("PIPELINE_BLAS_THREADS", "0")
    assert limit_blas_threads() is None and set(blas()) == {2}
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")  # the user's own: left as it is
    monkeypatch.delenv("PIPELINE_BLAS_THREADS")
    assert limit_blas_threads() is None and set(blas()) == {2}
    monkeypatch.setenv("PIPELINE_BLAS_THREADS", "1")  # ours, said outright, wins
    assert limit_blas_threads() == 1 and set(blas()) == {1}


def test_a_blas_thread_count_that_is_no_number_says_so(monkeypatch):
    monkeypatch.setenv("PIPELINE_BLAS_THREADS", "one")
    with pytest.raises(ValueError, match="PIPELINE_BLAS_THREADS must be a whole number"):
        limit_blas_threads()


def test_onnxruntime_workers_do_not_spin_unless_asked(monkeypatch):
    from pipeline.base.onnx import _spinning

    monkeypatch.delenv("PIPELINE_ONNX_SPINNING", raising=False)
    assert _spinning() == "0"
    monkeypatch.setenv("PIPELINE_ONNX_SPINNING", "1")
    assert _spinning() == "1"
    monkeypatch.setenv("PIPELINE_ONNX_SPINNING", "yes")
    with pytest.raises(ValueError, match="PIPELINE_ONNX_SPINNING must be 0 or 1"):
        _spinning()


@pytest.mark.models
def test_a_model_session_takes_the_spinning_setting(monkeypatch):
    from pipeline.base.onnx import cpu_session

    monkeypatch.delenv("PIPELINE_ONNX_SPINNING", raising=False)
    opts = cpu_session("vad/silero_vad.onnx", "Silero VAD model", threads=2).get_session_options()
    assert opts.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert opts.intra_op_num_threads == 2


def test_building_a_stage_keeps_numpy_off_the_models_cores(monkeypatch):
    from pipeline.base import stage_config
    from pipeline.base.stage_config import StageConfig

    calls = []
    monkeypatch.setattr(stage_config, "limit_blas_threads", lambda: calls.append(1))
    stage_config.build_stage("tts", StageConfig("tone", {}))  # Stages.load and a scenario's runner build so
    assert calls == [1]


def test_the_audio_turn_signal_runs_alone_and_takes_the_final_pass_share():
    # between the final pass and the reply nothing else runs: both cores of a small machine
    for cores in (1, 2, 4, 16):
        assert default_threads("turns", cores) == default_threads("stt", cores) == cores


@pytest.mark.models
def test_smart_turn_takes_the_split_unless_told(monkeypatch):
    from pipeline.stages.smart_turn import CombinedCompleteness, SmartTurnCompleteness

    monkeypatch.delenv("PIPELINE_THREADS", raising=False)
    split = default_threads("turns")
    assert SmartTurnCompleteness()._session.get_session_options().intra_op_num_threads == split
    told = CombinedCompleteness(threads=1).audio._session.get_session_options()
    assert told.intra_op_num_threads == 1


def test_whisper_hears_the_same_features_with_numpy_blas_on_one_thread(blas):
    from faster_whisper.feature_extractor import FeatureExtractor
    from threadpoolctl import threadpool_limits

    audio = np.random.default_rng(3).normal(0, 0.1, 16000 * 7).astype(np.float32)  # 7 s: a real matmul
    features = FeatureExtractor(feature_size=80)
    with threadpool_limits(limits=1, user_api="blas"):
        one = features(audio)
    with threadpool_limits(limits=2, user_api="blas"):
        two = features(audio)
    assert np.array_equal(one, two)  # a speed setting only: the words cannot change with it


@pytest.mark.models
def test_smart_turn_scores_alike_on_one_thread_and_two():
    from pipeline.stages.smart_turn import SmartTurnCompleteness
    from pipeline.testing.sounds import jfk

    audio = jfk()
    one, two = SmartTurnCompleteness(threads=1), SmartTurnCompleteness(threads=2)
    for end_s in (2.4, 8.0, 11.0):  # the pause after "ask not", mid-sentence, the end
        part = audio[:int(end_s * 16000)]
        assert one.probability("", part) == pytest.approx(two.probability("", part), abs=1e-6)
