"""Whisper's encoder window sized to the audio (`stt.window = "sized"`): the window's arithmetic,
the checks that send a doubtful pass to the full window, and the real model on jfk.wav."""

from __future__ import annotations

import pytest

from pipeline.base import config as cfg
from pipeline.base.audio import INPUT_RATE_HZ
from pipeline.base.errors import ConfigError
from pipeline.stages.stt_window import FULL_FRAMES, Window, WindowPass, repeats
from pipeline.testing import JFK_TEXT, wer

FIRST_PHRASE = "And so my fellow Americans"


def test_the_window_is_the_audio_plus_the_margin_at_least_the_floor_even_and_capped() -> None:
    w = Window(margin_ms=200, floor_ms=1000)
    assert w.frames(300) == 320  # 3 s of audio + 200 ms
    assert w.frames(301) == 322  # two frames per encoder position
    assert w.frames(40) == 100  # the floor
    assert w.frames(2990) == FULL_FRAMES
    assert Window(margin_ms=15, floor_ms=0).frames(100) == 102  # a part of a frame is a frame
    assert Window(margin_ms=1000, floor_ms=0).frames(300) == 400


def test_the_decode_bound_grows_with_the_audio() -> None:
    w = Window(margin_ms=200, floor_ms=1000)
    assert w.max_new_tokens(300) == 3 * w.tokens_per_s + w.tokens_extra
    assert w.max_new_tokens(1100) > w.max_new_tokens(300)


def test_a_negative_margin_is_refused() -> None:
    with pytest.raises(ValueError):
        Window(margin_ms=-100, floor_ms=1000)


def _pass(text: str, *, tokens: int = 8, bound: int = 40, no_speech: float = 0.01,
          logprob: float = -0.2, final: bool = False) -> WindowPass:
    return WindowPass(frames=400, text=text, tokens=tokens, bound=bound, no_speech_prob=no_speech,
                      avg_logprob=logprob, final=final)


def test_what_makes_a_sized_pass_doubtful() -> None:
    assert _pass("And so my fellow Americans.").doubt is None
    assert _pass("And so my fellow Americans. And so my", tokens=40).doubt == "bound"
    assert _pass("I'd like to pay with my credit card. I'd like to pay with my credit card.").doubt == "repeat"
    assert _pass("na " * 30).doubt == "repeat"  # gzips far past 2.4
    assert _pass("Thank you.", no_speech=0.9).doubt == "no speech"
    assert _pass("Thank you.", logprob=-1.4).doubt == "unsure"
    assert _pass("", tokens=0).doubt == "empty"


@pytest.mark.parametrize("text", ["Could I get a refund on order 5120", "Where is my order 50 120",
                                  "I'd like to book a table for two,"])
def test_a_sized_final_that_leaves_its_sentence_open_is_redone(text: str) -> None:
    """The full window's final closes its sentence where the sized one often does not, and the
    completeness heuristic and the grounding guard read what the final wrote."""
    assert _pass(text, final=True).doubt == "unfinished"
    assert _pass(text).doubt is None  # a partial's audio ends inside the speech: open is right


@pytest.mark.parametrize("text", ["Where is my order? 5120.", "He said \"stop.\"", "Really?!",
                                  "Wait (please.)", "And then…"])
def test_a_sized_final_that_closes_its_sentence_is_kept(text: str) -> None:
    assert _pass(text, final=True).doubt is None


@pytest.mark.parametrize("text", ["no, no, no", "thank you, thank you", "bye bye bye",
                                  "My number is five five five, two one two, three four five six."])
def test_speech_that_repeats_itself_is_not_a_loop(text: str) -> None:
    assert not repeats(text.split())


@pytest.mark.parametrize("text", ["And so my fellow Americans. And so my fellow Americans.",
                                  "ask not ask not ask not", "the the the the the"])
def test_a_loop_is_a_loop(text: str) -> None:
    assert repeats(text.split())


def test_the_config_sets_the_window_and_refuses_an_unknown_one() -> None:
    config = cfg.load(overrides=["stt.window=sized", "stt.window_margin_ms=1000",
                                 "stt.window_floor_ms=3000"])
    assert config.stt.params == {"window": "sized", "window_margin_ms": 1000, "window_floor_ms": 3000}
    with pytest.raises(ConfigError):
        cfg.load(overrides=["stt.window_margin=1000"])
    from pipeline.stt import WhisperSTT

    with pytest.raises(ConfigError, match="full, sized"):
        WhisperSTT(window="wide")
    with pytest.raises(ConfigError, match="partial_floor_ms = -1 must be >= 0"):
        WhisperSTT(partial_floor_ms=-1)


@pytest.mark.models  # the model loads before the cadence is checked
def test_a_partial_cadence_under_a_pass_is_refused() -> None:
    from pipeline.stt import WhisperSTT

    with pytest.raises(ConfigError, match="100 ms or more"):
        WhisperSTT(partial_interval_ms=50)


# --- the real model ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sized():
    from pipeline.stt import WhisperSTT

    return WhisperSTT(window="sized")


@pytest.mark.models
def test_the_sized_window_transcribes_jfk_in_full(sized, jfk_16k) -> None:
    text = sized.transcribe(jfk_16k, final=True)
    assert "ask not what your country can do for you" in " ".join(text.lower().replace(",", "").split())
    assert wer(JFK_TEXT, text) <= 0.15, text
    kept = sized.last_pass
    assert kept is not None and kept.doubt is None, kept  # the sized pass said it, not a redo
    assert kept.frames == sized.window.frames(len(jfk_16k) // 160) < FULL_FRAMES


@pytest.mark.models
def test_the_sized_window_starts_from_a_forced_prefix(sized, jfk_16k) -> None:
    text = sized.transcribe_after(jfk_16k, "And so my fellow")
    assert text.startswith("And so my fellow") and wer(JFK_TEXT, text) <= 0.15, text
    assert sized.last_pass is not None and sized.last_pass.frames < FULL_FRAMES


def _tight(sized, monkeypatch):
    """400 frames for 3.6 s of jfk.wav: Whisper says its first phrase over and over."""
    monkeypatch.setattr(sized, "window", Window(margin_ms=0, floor_ms=4000))
    monkeypatch.setattr(sized, "window_stats", type(sized.window_stats)())
    return sized


@pytest.fixture(scope="module")
def full():
    from pipeline.stt import WhisperSTT

    return WhisperSTT(window="full")


@pytest.mark.models
def test_a_window_too_tight_for_its_audio_is_never_worse_than_the_full_one(sized, full, jfk_16k,
                                                                            monkeypatch) -> None:
    """Whether 400 frames loop on 3.6 s depends on the CPU's int8 kernels (they do on an
    AVX-512 Xeon), and so does how well the full window hears the cut (AVX2 kernels: "And so am
    I fellow Americans."); a doubtful sized pass is never the answer, and the answer is at
    least as good as the full window's."""
    stt = _tight(sized, monkeypatch)
    audio = jfk_16k[:int(3.6 * INPUT_RATE_HZ)]
    text = stt.transcribe(audio, final=True)
    tried = stt.last_pass
    assert tried is not None and tried.frames == 400
    assert stt.window_stats["full"] == (1 if tried.doubt else 0), (tried, stt.window_stats)
    baseline = full.transcribe(audio, final=True)
    assert wer(FIRST_PHRASE, text) <= max(0.2, wer(FIRST_PHRASE, baseline)), (text, baseline)
    assert not repeats(text.split()), text


@pytest.mark.models
def test_a_sized_pass_that_loops_is_redone_on_the_full_window(sized, full, jfk_16k, monkeypatch) -> None:
    stt = _tight(sized, monkeypatch)
    audio = jfk_16k[:int(3.6 * INPUT_RATE_HZ)]
    looped = WindowPass(frames=400, text="And so my fellow Americans. " * 6, tokens=36, bound=44,
                        no_speech_prob=0.01, avg_logprob=-0.2)
    monkeypatch.setattr(stt._sized, "decode", lambda *a, **k: looped)
    text = stt.transcribe(audio, final=True)
    assert stt.last_pass is looped and looped.doubt == "repeat"
    assert stt.window_stats["full"] == 1  # the full window said it instead
    assert text == full.transcribe(audio, final=True) and not repeats(text.split()), text


@pytest.mark.models
def test_the_decode_bound_holds(sized, jfk_16k, monkeypatch) -> None:
    stt = _tight(sized, monkeypatch)
    audio = jfk_16k[:int(3.6 * INPUT_RATE_HZ)]
    stt.transcribe(audio, final=True)
    bounded = stt.last_pass
    bound = stt.window.max_new_tokens(len(audio) // 160)
    assert bounded is not None and bounded.bound == bound and bounded.tokens <= bound
    # the same window without the bound: where it runs past the bound (a loop, with this CPU's
    # kernels), the bounded pass stopped at it
    features = stt._sized.features(audio)
    unbounded = stt._sized.decode(features, 400, prefix=None, max_new_tokens=224)
    if unbounded.tokens > bound:
        assert bounded.tokens == bound, (bounded, unbounded)


@pytest.mark.models
def test_sized_partials_size_only_the_partial_passes(jfk_16k) -> None:
    """"sized-partials": cheap partials (every 250 ms) to speculate on, the final pass on the
    full window as before."""
    from pipeline.stt import WhisperSTT

    stt = WhisperSTT(window="sized-partials")
    assert stt.partial_interval_ms == 250 and WhisperSTT().partial_interval_ms == 500
    audio = jfk_16k[:int(3.6 * INPUT_RATE_HZ)]
    stt.transcribe(audio, final=False)
    assert stt.last_pass is not None and stt.last_pass.frames < FULL_FRAMES
    redone = stt.window_stats["full"]  # 1 if this CPU's kernels made the sized pass doubtful
    stt.transcribe(audio, final=True)
    assert stt.last_pass is None and stt.window_stats["full"] == redone + 1


@pytest.mark.models
def test_a_partial_floor_sizes_the_partials_and_leaves_the_final_as_it_was(jfk_16k) -> None:
    """`stt.partial_floor_ms`: partials encode at least that much, not Whisper's 30 s (a final
    pass at speech-stop waits for the partial in flight on the model's lock, so a cheaper one
    holds it up less); the sized final pass is the same pass either way."""
    from pipeline.stt import WhisperSTT

    floored, full = WhisperSTT(partial_floor_ms=10_000), WhisperSTT()
    audio = jfk_16k[:int(3.6 * INPUT_RATE_HZ)]
    text = floored.transcribe(audio, final=False)
    assert floored.last_pass is not None and floored.last_pass.frames == 1000  # 10 s, 100 frames a second
    as_full = full.transcribe(audio, final=False)
    assert full.last_pass is None  # the full window
    assert wer(FIRST_PHRASE, text) <= wer(FIRST_PHRASE, as_full) + 0.2, (text, as_full)
    assert floored.transcribe(audio, final=True) == full.transcribe(audio, final=True)
    assert floored.last_pass is not None and full.last_pass is not None
    assert floored.last_pass.frames == full.last_pass.frames < 1000


def test_a_partials_words_are_judged_against_the_start_of_what_was_said():
    from pipeline.stt import word_errors

    said = "I would like a refund for my last order"
    assert word_errors(said, "I would like a", best_start=True) == (0, 4)
    assert word_errors(said, "I would like a reef and", best_start=True) == (2, 6)
    assert word_errors(said, "I would like a", best_start=False) == (5, 9)  # the whole reference
    assert word_errors(said, "", best_start=True) == (0, 1)
