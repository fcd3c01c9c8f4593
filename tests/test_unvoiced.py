"""Words Whisper writes into the silence after the speech are not read as the caller's last words
by the turn signal (pipeline/stages/unvoiced.py): tiny.en closes a dangling "a table for" as
"a table for it." in the pause, and the turn ended there."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from pipeline.base.audio import INPUT_RATE_HZ
from pipeline.base.protocols import SpeechConfidence
from pipeline.call.session import Stages
from pipeline.stages.fakes import ScriptedLLM, ScriptedSTT, ToneTTS
from pipeline.stages.unvoiced import MIN_VOICED_MS, said_part, unvoiced_tail, word_spans
from pipeline.testing.calls import call
from pipeline.transports.scripted import Clip
from pipeline.turns import HeuristicCompleteness

from .test_listeners import LoudVAD, caller_tone


def _voice_then_silence(voice_s: float, silence_s: float) -> np.ndarray:
    t = np.arange(int(voice_s * INPUT_RATE_HZ)) / INPUT_RATE_HZ
    voice = (0.3 * np.sin(2 * np.pi * 180 * t)).astype(np.float32)
    noise = np.random.default_rng(0).normal(0, 1e-4, int(silence_s * INPUT_RATE_HZ)).astype(np.float32)
    return np.concatenate([voice, noise])


def test_a_last_word_timed_after_the_voice_is_counted() -> None:
    audio = _voice_then_silence(1.0, 0.5)  # voice to 1.0 s
    assert unvoiced_tail(audio, [(0.1, 0.5), (0.5, 1.0), (1.0, 1.3)]) == 1
    assert unvoiced_tail(audio, [(0.1, 0.5), (0.5, 0.99), (0.99, 1.2), (1.2, 1.4)]) == 2


def test_a_last_word_with_enough_voice_under_it_is_kept() -> None:
    audio = _voice_then_silence(1.0, 0.5)
    edge = 1.0 - MIN_VOICED_MS / 1000
    assert unvoiced_tail(audio, [(0.1, 0.5), (0.5, edge), (edge, 1.2)]) == 0
    assert unvoiced_tail(audio, [(0.1, 0.5), (0.5, edge + 0.02), (edge + 0.02, 1.2)]) == 1
    assert unvoiced_tail(audio, [(0.1, 0.5), (0.5, 1.0)]) == 0


def test_under_noise_a_word_in_the_pause_is_still_found() -> None:
    # noise 23 dB under the voice, under all of it: every frame is within 25 dB of the speech
    rng = np.random.default_rng(1)
    noise = 0.3 / np.sqrt(2) / 10 ** (23 / 20)
    audio = _voice_then_silence(1.0, 0.6)
    audio[:] += rng.normal(0, noise, len(audio)).astype(np.float32)
    audio = np.concatenate([rng.normal(0, noise, 4800).astype(np.float32), audio])  # the lead
    assert unvoiced_tail(audio, [(0.4, 0.9), (0.9, 1.3), (1.3, 1.5)]) == 1
    assert unvoiced_tail(audio, [(0.4, 0.9), (0.9, 1.3)]) == 0


def test_under_loud_noise_no_word_is_doubted() -> None:
    # noise 10 dB under the voice: a soft last word cannot be told from it
    rng = np.random.default_rng(2)
    audio = _voice_then_silence(1.0, 0.6)
    audio = np.concatenate([np.zeros(4800, np.float32), audio])
    audio += rng.normal(0, 0.3 / np.sqrt(2) / np.sqrt(10), len(audio)).astype(np.float32)
    assert unvoiced_tail(audio, [(0.4, 0.9), (0.9, 1.3), (1.3, 1.5)]) == 0


def test_never_every_word() -> None:
    audio = _voice_then_silence(1.0, 1.0)
    assert unvoiced_tail(audio, [(1.1, 1.3), (1.3, 1.5)]) == 1  # the first word stays
    assert unvoiced_tail(audio, [(1.1, 1.3)]) == 0
    assert unvoiced_tail(audio, []) == 0
    assert unvoiced_tail(np.zeros(100, np.float32), [(0.0, 0.1), (0.1, 0.2)]) == 0


@pytest.mark.parametrize(("text", "n", "said"), [
    ("I'd like to book a table for it.", 1, "I'd like to book a table for"),
    ("I'd like to book a table for it.", 0, "I'd like to book a table for it."),
    ("Can you send me, Murk?", 1, "Can you send me,"),
    ("We need a room for it ...", 1, "We need a room for"),  # a mark alone goes with its word
    ("Thanks, bye.", 2, "Thanks,"),  # never every word
    ("bye.", 1, "bye."),
])
def test_the_said_part_drops_the_last_words(text: str, n: int, said: str) -> None:
    assert said_part(text, n) == said


class _Tokenizer:
    """Word pieces as faster-whisper's tokenizer splits them: a space starts a word, a mark is one."""

    eot = -1
    pieces = {1: " I", 2: "'d", 3: " like", 4: " it", 5: ".", 6: " 555", 7: "-212"}

    def split_to_word_tokens(self, ids: list[int]) -> tuple[list[str], list[list[int]]]:
        words: list[str] = []
        tokens: list[list[int]] = []
        for i in ids:
            piece = self.pieces.get(i, "")
            if not words or piece.startswith(" ") or piece[:1] in ".,?!-" or i == self.eot:
                words.append(piece)
                tokens.append([i])
            else:
                words[-1] += piece
                tokens[-1].append(i)
        return words, tokens


def test_word_spans_read_the_alignment_a_mark_with_its_word() -> None:
    # (text index, time index at 50 a second): token k starts at the pair where the index jumps
    pairs = [(0, 0), (1, 5), (2, 10), (3, 20), (4, 40), (5, 55)]
    spans = word_spans(_Tokenizer(), [1, 2, 3, 4, 5], SimpleNamespace(alignments=pairs), 50.0)
    assert spans == [(0.0, 0.2), (0.2, 0.4), (0.4, 1.1)]  # "I'd", "like", "it." (its mark with it)


def test_a_word_whisper_writes_in_pieces_is_one_span() -> None:
    # " 555" and "-212" are two of Whisper's words and one of the text's: said_part drops both
    pairs = [(0, 0), (1, 5), (2, 10), (3, 20), (4, 40), (5, 55)]
    spans = word_spans(_Tokenizer(), [3, 6, 7, 5], SimpleNamespace(alignments=pairs), 50.0)
    assert spans == [(0.0, 0.1), (0.1, 0.8)]  # "like", "555-212."
    assert said_part("like 555-212.", 1) == "like"


class _UnvoicedTail(ScriptedSTT):
    """Scripted finals, the k-th reporting its last `unvoiced[k]` words with no voice under them."""

    def __init__(self, transcripts: list[str], unvoiced: list[int]) -> None:
        super().__init__(transcripts=transcripts)
        self.unvoiced = unvoiced

    def transcribe_confident(self, audio: np.ndarray, *, final: bool) -> tuple[str, SpeechConfidence]:
        k = self._next
        text = self.transcribe(audio, final=final)
        return text, SpeechConfidence(unvoiced_words=self.unvoiced[min(k, len(self.unvoiced) - 1)] if final else 0)


def _turns(unvoiced_first: int) -> int:
    stt = _UnvoicedTail(["I'd like to book a table for it.", "I'd like to book a table for it. Two people."],
                        [unvoiced_first, 0])
    stages = Stages(vad=LoudVAD(), stt=stt, completeness=HeuristicCompleteness(),
                    llm=ScriptedLLM(replies=["Okay."]), tts=ToneTTS())
    # a pause of 900 ms: past the 600 ms a finished-looking turn needs, short of 1500
    rec = call(stages, [Clip(caller_tone(1.2), at_s=0.3), Clip(caller_tone(0.8), at_s=2.4)])
    return len(rec.commits)


def test_a_word_written_into_the_pause_does_not_end_the_turn() -> None:
    assert _turns(unvoiced_first=1) == 1  # "... a table for": the turn waits, the caller goes on
    assert _turns(unvoiced_first=0) == 2  # as written, "... for it." ended the turn at the pause


class _Sized:
    """The sized decoder, scripted: its last word timed after the voice (1.0 s) when aligned."""

    SPANS = ((0.1, 0.5), (0.5, 0.95), (1.1, 1.3))

    def __init__(self, text: str) -> None:
        self.text = text

    def features(self, audio: np.ndarray) -> np.ndarray:
        return np.zeros((80, len(audio) // 160), np.float32)

    def decode(self, features, frames, *, prefix, max_new_tokens, final=False, prompt=None, align=False):
        from pipeline.stages.stt_window import WindowPass

        return WindowPass(frames=frames, text=self.text, tokens=3, bound=max_new_tokens, no_speech_prob=0.1,
                          avg_logprob=-0.3, final=final, spans=self.SPANS if align else ())

    def spans_of(self, features, frames, text):
        return self.SPANS


def _stage(monkeypatch, tmp_path, *, window: str, time_final_words: bool = True, text: str = "A table for it."):
    import faster_whisper

    from pipeline.stages.whisper import WhisperSTT

    class Model:  # faster-whisper's, as the full window calls it
        def __init__(self, *args, **kwargs) -> None:
            pass

        def transcribe(self, audio, **options):
            return iter([SimpleNamespace(text=text, avg_logprob=-0.3, no_speech_prob=0.1,
                                         compression_ratio=1.0)]), None

    (tmp_path / "model.bin").write_bytes(b"")
    monkeypatch.setattr(faster_whisper, "WhisperModel", Model)
    stt = WhisperSTT(model_path=str(tmp_path), window=window, time_final_words=time_final_words)
    stt._sized_decoder = _Sized(text)
    return stt


@pytest.mark.parametrize("window", ["sized-final", "full"])
def test_the_stage_reports_a_final_s_unvoiced_last_word(monkeypatch, tmp_path, window: str) -> None:
    audio = _voice_then_silence(1.0, 0.6)
    stt = _stage(monkeypatch, tmp_path, window=window)
    assert stt.transcribe_confident(audio, final=True)[1].unvoiced_words == 1
    assert stt.transcribe_confident(audio, final=False)[1].unvoiced_words == 0  # partials: not timed
    off = _stage(monkeypatch, tmp_path, window=window, time_final_words=False)
    assert off.transcribe_confident(audio, final=True)[1].unvoiced_words == 0


def test_lower_of_scores_the_said_part_only_where_it_could_decide() -> None:
    from pipeline.stages.unvoiced import lower_of

    scored: list[str] = []

    def probability(text: str) -> float:
        scored.append(text)
        return 0.05 if text.endswith("for") else 0.9

    assert lower_of(probability, "A table for it.", 1) == 0.05
    assert scored == ["A table for it.", "A table for"]
    scored.clear()
    assert lower_of(probability, "A table for it.", 0) == 0.9 and scored == ["A table for it."]
    assert lower_of(lambda _: 0.3, "A table for it.", 1) == 0.3  # already open: one score


# --- the real model ---------------------------------------------------------------------------

ASK_NOT_END_S = 4.31  # jfk.wav: "... ask not" ends here, before a pause of 1.1 s


@pytest.fixture(scope="module")
def decoder():
    from pipeline.stages.stt_window import SizedDecoder
    from pipeline.stt import WhisperSTT

    stt = WhisperSTT(window="sized-final")
    return stt, SizedDecoder(stt._model, language="en", beam_size=1)


@pytest.mark.models
def test_a_word_forced_past_the_voice_is_found_unvoiced(decoder, jfk_16k) -> None:
    stt, sized = decoder
    ask_not = np.concatenate([jfk_16k[:int(ASK_NOT_END_S * INPUT_RATE_HZ)], np.zeros(INPUT_RATE_HZ // 2, np.float32)])
    features = sized.features(ask_not)
    frames = stt.window.frames(features.shape[-1])
    said = sized.decode(features, frames, prefix="And so, my fellow Americans, ask not", max_new_tokens=4,
                        final=True, align=True)
    forced = sized.decode(features, frames, prefix="And so, my fellow Americans, ask not what your",
                          max_new_tokens=4, final=True, align=True)
    assert unvoiced_tail(ask_not, said.spans) == 0, said
    assert unvoiced_tail(ask_not, forced.spans) >= 1, forced


@pytest.mark.models
def test_a_whole_recording_keeps_every_word(decoder, jfk_16k) -> None:
    stt, _ = decoder
    text, confidence = stt.transcribe_confident(jfk_16k, final=True)
    assert "country" in text.lower() and confidence.unvoiced_words == 0, (text, confidence)


def test_a_mark_alone_is_no_word() -> None:
    pairs = [(0, 0), (1, 5), (2, 10), (3, 20)]
    tokenizer = _Tokenizer()
    tokenizer.pieces = {**tokenizer.pieces, 8: " ..."}
    assert word_spans(tokenizer, [3, 8], SimpleNamespace(alignments=pairs), 50.0) == [(0.0, 0.1)]


@pytest.mark.models
def test_smart_turn_scores_the_same_audio_once(jfk_16k) -> None:
    from pipeline.stages.smart_turn import SmartTurnCompleteness

    signal = SmartTurnCompleteness()
    runs: list[int] = []
    session = signal._session

    class Counting:
        def run(self, *args, **kwargs):
            runs.append(1)
            return session.run(*args, **kwargs)

    signal._session = Counting()
    audio = jfk_16k[:4 * INPUT_RATE_HZ]
    first = signal.probability("ask not", audio)
    assert signal.probability("ask", audio.copy()) == first and len(runs) == 1
    signal.probability("ask not", jfk_16k[:5 * INPUT_RATE_HZ])
    assert len(runs) == 2
