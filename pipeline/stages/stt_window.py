"""Whisper's encoder window sized to the audio, and the checks that send a doubtful pass back.

Whisper pads every pass to its 30 s window (3000 mel frames of 10 ms) and the encoder's cost grows
with the frames, not with the speech: tiny.en int8 on 2 threads took 250 ms for 3000 frames and
20 ms for 600. CTranslate2's Whisper encoder takes any number of frames up to 3000, so a turn of a
few seconds is encoded in a window a little longer than itself (`Window`), and decoded for at most
a few tokens per second of it. Too tight a window makes Whisper loop (400 frames for 3 s of
jfk.wav said its first phrase ten times over), so a sized pass that looks wrong (`WindowPass.doubt`)
is redone by the caller on the full window.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .unvoiced import word_spans

if TYPE_CHECKING:
    from faster_whisper import WhisperModel

FULL_FRAMES = 3000  # Whisper's 30 s window; CTranslate2's encoder takes no more
FRAMES_PER_S = 100  # one mel frame per 10 ms (hop 160 at 16 kHz)
MAX_LENGTH = 448  # Whisper's text context; CTranslate2 decodes at most half of `max_length`

# Whisper's own thresholds (openai/whisper `transcribe`, faster-whisper's defaults): a decode
# that gzips better than 2.4 is looping; one that puts over 0.6 on <|nospeech|>, or averages
# below -1 nat a token, is one Whisper itself would not trust
COMPRESSION_RATIO_MAX = 2.4
NO_SPEECH_MAX = 0.6
AVG_LOGPROB_MIN = -1.0
# a final whose words leave this much voice uncovered (`unvoiced.voice_after`) stopped short: on a sized
# window tiny.en may end its text at a long pause inside the turn ("Can you check the status of?"
# for "... status of | my repair order?" said 0.9 s apart, Piper), and every word after the pause
# was lost. Of the end-of-turn set's 336 sized finals (every voice and noise) 1 had as much (an
# "um" Whisper leaves out, as it should); of 90 of recorded people 5 (a probe of sized passes; as
# the stage runs, 2 sized and 3 full-window finals, one a 6 s sentence dropped:
# bench/results/2026-12-07-final-words-after.md); a missed phrase in fresh2 had 500 ms and more
MISSED_VOICE_MS = 300


@dataclass(frozen=True)
class Window:
    """How many frames a pass over `audio_frames` of audio encodes, and how far it may decode."""

    margin_ms: int  # past the audio's end: a window that ends with the speech loops more
    floor_ms: int  # however short the audio
    # no kept pass in the labelled set ran past 7 tokens per second of audio (6.8 at most:
    # `python -m bench.stt_window`, bench/results/2026-12-01-stt-window.md); 10 a second plus 8
    # leaves room for digits and punctuation
    tokens_per_s: float = 10.0
    tokens_extra: int = 8

    def __post_init__(self) -> None:
        if self.margin_ms < 0 or self.floor_ms < 0:
            raise ValueError("window margin and floor must be >= 0 ms")

    def frames(self, audio_frames: int) -> int:
        """The audio plus the margin, at least the floor, even (the encoder's second convolution
        has stride 2: one position per two frames), at most the full window."""
        want = max(math.ceil(self.floor_ms * FRAMES_PER_S / 1000),
                   audio_frames + math.ceil(self.margin_ms * FRAMES_PER_S / 1000))
        return min(FULL_FRAMES, want + want % 2)

    def max_new_tokens(self, audio_frames: int) -> int:
        return math.ceil(self.tokens_per_s * audio_frames / FRAMES_PER_S) + self.tokens_extra


@dataclass
class WindowPass:
    """One pass on a sized window: what it said and what makes it doubtful."""

    frames: int
    text: str
    tokens: int  # decoded, the forced prefix included
    bound: int  # the most `tokens` could be
    no_speech_prob: float
    avg_logprob: float
    # a final pass: its text must close its sentence. Sized finals drop the closing mark the
    # full window writes ("Could I get a refund on order 5120" for "...5120?"; "Where is my
    # order 50 120" for "Where is my order? 5120."), and the completeness heuristic and the
    # provenance rule read both; such a final is redone on the full window
    final: bool = False
    # (start, end) s of each word in the audio, where the pass was aligned (`unvoiced.word_spans`)
    spans: tuple[tuple[float, float], ...] = ()
    # voice from the last word's start on, past what saying that word could take (`unvoiced.voice_after`)
    voice_after_ms: int = 0

    @property
    def doubt(self) -> str | None:
        """Why this pass should be redone on the full window, or None when it looks right."""
        if self.tokens >= self.bound:
            return "bound"  # stopped by the length bound, not by the end of the text: a runaway
        if loops(self.text):
            return "repeat"
        if self.no_speech_prob > NO_SPEECH_MAX:
            return "no speech"
        if self.avg_logprob < AVG_LOGPROB_MIN:
            return "unsure"
        if not self.text:
            return "empty"
        if self.final and not closes_sentence(self.text):
            return "unfinished"
        if self.missed:
            return "missed"  # the text ended at a pause the caller spoke on after
        return None

    @property
    def missed(self) -> bool:
        """A final whose words leave the caller's voice uncovered (whatever else is doubted)."""
        return self.final and self.voice_after_ms >= MISSED_VOICE_MS


_CLOSERS = "\"'”’)]»"


def closes_sentence(text: str) -> bool:
    """Whether `text` ends with a sentence's closing mark (closing quotes and brackets aside)."""
    return text.rstrip().rstrip(_CLOSERS)[-1:] in (".", "?", "!", "…")


def compression_ratio(text: str) -> float:
    import zlib

    raw = text.encode("utf-8")
    return len(raw) / len(zlib.compress(raw)) if raw else 0.0


def loops(text: str) -> bool:
    """Whisper's decoder stuck in a loop: the text gzips too well, or a run of it repeats."""
    return compression_ratio(text) > COMPRESSION_RATIO_MAX or repeats(text.split())


_NOT_WORD = re.compile(r"[^\w']+")


def repeats(words: list[str]) -> bool:
    """A run of words said again right after itself: three or more words twice ("I'd like to pay
    with my credit card. I'd like to pay with my credit card."), two words three times, one word
    five times. Shorter repeats are speech: "no, no", "thank you, thank you", "five five five"."""
    w = [_NOT_WORD.sub("", x.lower()) for x in words]
    for n in range(1, len(w) // 2 + 1):
        copies = _COPIES.get(n, 2)
        for i in range(len(w) - n * copies + 1):
            if all(w[i:i + n] == w[i + k * n:i + (k + 1) * n] for k in range(1, copies)):
                return True
    return False


_COPIES = {1: 5, 2: 3}  # back-to-back copies that make a run of this many words a loop (else 2)


def _padded(features: np.ndarray, frames: int) -> tuple[np.ndarray, int]:
    """`features` in a window of `frames`, zero-padded (as `transcribe` pads to 3000), and how
    many of its frames are the audio's."""
    window = np.zeros((features.shape[0], frames), np.float32)
    used = min(frames, features.shape[-1])
    window[:, :used] = features[:, :used]
    return window, used


class SizedDecoder:
    """One encode and one greedy (or beam) decode of a sized window, with the prompt and token
    suppression faster-whisper's `transcribe` uses: without timestamps, blank and non-speech
    tokens suppressed, temperature 0."""

    def __init__(self, model: WhisperModel, *, language: str, beam_size: int) -> None:
        from faster_whisper.tokenizer import Tokenizer
        from faster_whisper.transcribe import get_suppressed_tokens

        self.model = model
        self.tokenizer = Tokenizer(model.hf_tokenizer, model.model.is_multilingual,
                                   task="transcribe", language=language)
        self.suppress = list(get_suppressed_tokens(self.tokenizer, [-1]))  # transcribe's default
        self.beam_size = beam_size

    def features(self, audio: np.ndarray) -> np.ndarray:
        """Log-mel frames of `audio`, as `transcribe` cuts them (its last frame is padding)."""
        features = self.model.feature_extractor(audio)
        return features[:, :features.shape[-1] - 1]

    def decode(self, features: np.ndarray, frames: int, *, prefix: str | None,
               max_new_tokens: int, final: bool = False, prompt: str | None = None,
               align: bool = False) -> WindowPass:
        """`features` zero-padded to `frames` (as `transcribe` pads to 3000), encoded, decoded;
        `prompt`: text the decoder reads as what came before (`transcribe`'s `initial_prompt`);
        `align`: the words timed against the audio too (a median 7.5 ms on tiny.en, 2 cores:
        bench/results/2026-12-06-align-cost.md)."""
        window, used = _padded(features, frames)
        encoded = self.model.encode(window)
        tok = self.tokenizer
        forced = tok.encode(" " + prefix.strip())[:MAX_LENGTH // 2 - 1] if prefix else []
        # CTranslate2 decodes at most max_length // 2 tokens after <|notimestamps|>, the forced
        # prefix among them
        bound = min(MAX_LENGTH // 2, len(forced) + max_new_tokens)
        before = [tok.sot_prev, *tok.encode(" " + prompt.strip())[-(MAX_LENGTH // 2 - 1):]] if prompt else []
        result = self.model.model.generate(
            encoded, [[*before, *tok.sot_sequence, tok.no_timestamps, *forced]], beam_size=self.beam_size,
            max_length=2 * bound + len(before), return_scores=True, return_no_speech_prob=True,
            suppress_blank=True, suppress_tokens=self.suppress)[0]
        ids = result.sequences_ids[0]
        # the score is the length-normalized log probability; Whisper averages over the tokens
        # and the end of text
        avg_logprob = result.scores[0] * len(ids) / (len(ids) + 1)
        return WindowPass(frames=frames, text=tok.decode(ids).strip(), tokens=len(ids),
                          bound=bound, no_speech_prob=result.no_speech_prob, avg_logprob=avg_logprob,
                          final=final, spans=self._align(encoded, ids, used) if align else ())

    def spans_of(self, features: np.ndarray, frames: int, text: str) -> tuple[tuple[float, float], ...]:
        """`text` (another pass's: the full window's) timed against `features` on a window of
        `frames`: one sized encode and the alignment (a median 48 ms more on such a final, 2
        cores: bench/results/2026-12-06-align-cost.md), where faster-whisper's own word timestamps
        align on the full 30 s window and change its transcripts (bench/README.md)."""
        window, used = _padded(features, frames)
        ids = self.tokenizer.encode(" " + text.strip())
        if len(ids) > MAX_LENGTH // 2 - 1:
            return ()  # longer than a decode holds (a loop): its tail is not the text's tail
        return self._align(self.model.encode(window), ids, used)

    def _align(self, encoded: object, ids: list[int], used: int) -> tuple[tuple[float, float], ...]:
        if not ids:
            return ()
        timed = self.model.model.align(encoded, self.tokenizer.sot_sequence, [ids], [used],
                                       median_filter_width=7)[0]
        return tuple(word_spans(self.tokenizer, ids, timed, FRAMES_PER_S / 2))  # 2 frames a position
