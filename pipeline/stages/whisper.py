"""faster-whisper (CTranslate2) as the speech-to-text stage: one blocking pass over 16 kHz audio,
on Whisper's full 30 s window or one sized to the audio (`pipeline/stages/stt_window.py`).
`pipeline.stt.StreamingTranscriber` makes a stream of it."""

from __future__ import annotations

import string
from collections import Counter
from dataclasses import replace

import numpy as np

from ..base.audio import INPUT_RATE_HZ
from ..base.cpu import UrgentFirst, default_threads
from ..base.errors import ConfigError, ModelMissingError
from ..base.models import model_file
from ..base.protocols import SpeechConfidence
from .stt_context import prompt_failure, words_were_said
from .stt_window import (
    FULL_FRAMES,
    MAX_LENGTH,
    SizedDecoder,
    Window,
    WindowPass,
    compression_ratio,
    loops,
)
from .unvoiced import resume_at, unvoiced_tail, voice_after

WINDOWS = ("full", "sized", "sized-final", "sized-partials")
MAX_RESUMES = 3  # passes over speech after a pause a final stopped at (`_with_the_rest`)
FEWER_WORDS = 2  # a full-window redo this many words short of the sized pass lost them


def said_words(text: str) -> int:
    """How many words `text` says, a digit one ("26, 9, 4," is four)."""
    return sum(sum(c.isdigit() for c in w) or 1 for w in text.split() if any(c.isalnum() for c in w))


def joined(before: str, after: str) -> str | None:
    """Two passes' texts, one after the other, without the words the second says again at its
    start; None where the second holds nothing new, its words all found in the first (the
    alignment timed the first's last word early, and the second read the first's words again)."""
    def norm(words: list[str]) -> list[str]:
        return [w.strip(string.punctuation).lower() for w in words]
    a, b = before.split(), after.split()
    na, nb = norm(a), norm(b)
    if not nb or any(na[i:i + len(nb)] == nb for i in range(len(na) - len(nb) + 1)):
        return None
    overlap = next((k for k in range(min(len(a), len(b)), 0, -1) if na[-k:] == nb[:k]), 0)
    return " ".join([*a, *b[overlap:]])


class WhisperSTT:
    """faster-whisper (CTranslate2). Options are chosen for latency, each for a stated reason."""

    def __init__(
        self,
        *,
        model_path: str = "stt/whisper-tiny.en",
        device: str = "cpu",
        compute_type: str = "auto",  # int8 on CPU, float16 on CUDA: fastest with no WER loss
        language: str = "en",  # fixed: skips language detection (a full extra encoder pass)
        beam_size: int = 1,  # greedy: one hypothesis, the cheapest decode
        threads: int | None = None,  # CTranslate2 intra-op threads; None: pipeline.base.cpu's split
        # final pass: force the words LocalAgreement confirmed as the decoder's prefix and decode
        # only the tail. Off: a partial's misheard word is then kept for good ("asked not" in
        # jfk.wav's final with AVX2 kernels, plus a hallucinated trailing "I"), and the encoder
        # costs the same either way (bench/README.md)
        prefix_final: bool = False,
        # encoder window: "full" pads every pass to Whisper's 30 s; "sized" encodes the audio plus
        # window_margin_ms (at least window_floor_ms) and redoes on the full window a pass that
        # looks wrong (pipeline/stages/stt_window.py); "sized-final" / "sized-partials" size only
        # those passes. "sized-final" by default: on 174 clips of the end-of-turn set its finals
        # were no worse by word error rate (0.182 against 0.188), wrote the same digits on 25 of
        # 29 (and "4792" three times where the full window wrote "4.9 to" or "4.7.9.2."), and got
        # the completeness heuristic's verdict the full window's got on 172, at a sixth of its
        # median time; a sized final that leaves its sentence open is redone on the full window
        # (`python -m bench.stt_window`, bench/results/2026-12-01-stt-window-guard.md; the redo's
        # words stand unless it says two fewer: `FEWER_WORDS`). Partials
        # are not sized to the turn (they loop more so, and once fired a barge-in on the echo's
        # words: bench/README.md); `partial_floor_ms` can bound them
        window: str = "sized-final",
        window_margin_ms: int = 2000,
        window_floor_ms: int = 1000,
        # a partial pass every this much new audio; None: 250 ms when partials are sized (a
        # sized pass takes a median 93 ms, so one stays in flight at most), 500 ms on the full
        # window (447 ms a pass: tiny.en on 2 cores, bench/results/2026-12-01-stt-window.md)
        partial_interval_ms: int | None = None,
        # at speech-stop, before a final pass on the full window: one pass over the turn on a
        # sized window (not redone when doubtful), for a speculation to start from while
        # the final pass runs; the reply is adopted only if the final says the same words
        # (response.speculate_from = "quick"; bench/results/2026-12-01-wire-ab.md). A sized
        # final is itself that pass, so with one there is none: the speculation starts from it
        quick_pass: bool = True,
        # "sized-final"'s partials: encode at least this much instead of Whisper's 30 s (0: the
        # full window, the default). The model runs one pass at a time, so a final pass at
        # speech-stop first waits out the partial in flight: a full-window partial is ~400 ms on
        # 2 cores, one with a 10 s floor ~140 ms, and a 10 s floor almost never loops
        # (bench/results/2026-12-01-stt-window.md). The final is the same pass either way. At the
        # wire, end of speech to first audio per call 0.84 of the full window's with 10000
        # (bench/results/2026-12-03-wire-early-final.md). Off by default: against what was said,
        # its partials get as many words wrong wideband (0.206 against 0.208) but more on the
        # phone band in every set and condition (all 0.265 against 0.241, Piper 0.179 against
        # 0.150; `python -m bench.stt_window --floors 10000 --no-finals --phone`,
        # bench/results/2026-12-03-stt-partials.md)
        partial_floor_ms: int = 0,
        # final passes: time their words against the audio and report the last ones with no
        # voice under them (`SpeechConfidence.unvoiced_words`), which tiny.en writes into the
        # silence after a dangling word ("a table for it."); the turn signal scores the words
        # before them too, and the lower score decides (pipeline/stages/unvoiced.py). A median
        # 7.5 ms more on a final kept sized, 48 on one redone on the full window (2 cores,
        # bench/results/2026-12-06-align-cost.md); on the held-out espeak-ng pauses of the
        # end-of-turn set it cut off 1-4 fewer of 72 (bench/results/2026-12-06-unvoiced.md)
        time_final_words: bool = True,
    ) -> None:
        from faster_whisper import WhisperModel

        if window not in WINDOWS:
            raise ConfigError(f"stt.window = {window!r} is not allowed; use one of: {', '.join(WINDOWS)}")
        if partial_floor_ms < 0:
            raise ConfigError(f"stt.partial_floor_ms = {partial_floor_ms} must be >= 0 (0: the full window)")
        path = model_file(model_path)
        if not (path / "model.bin").is_file():
            raise ModelMissingError(path / "model.bin", "Whisper model")
        if compute_type == "auto":
            compute_type = "float16" if device == "cuda" else "int8"
        self.model_path = str(path)
        self.language = language if not path.name.endswith(".en") or language == "en" else "en"
        self.beam_size = beam_size
        self.prefix_final = prefix_final
        self.threads = threads if threads is not None else default_threads("stt")
        self._model = WhisperModel(str(path), device=device, compute_type=compute_type,
                                   cpu_threads=self.threads)
        self._lock = UrgentFirst()  # one pass at a time on this model, the final's first
        if partial_interval_ms is not None and partial_interval_ms < 100:
            raise ConfigError(f"stt.partial_interval_ms = {partial_interval_ms} is too short; "
                              "use 100 ms or more (a pass takes ~100 ms even on a sized window)")
        self.time_final_words = time_final_words
        self.quick_pass = quick_pass and window not in ("sized", "sized-final")
        self._quick_window = Window(window_margin_ms, window_floor_ms)
        self.window = self._quick_window if window != "full" else None
        # "sized-final": partials on the full window; "sized-partials": only partials sized
        self.window_partials = window in ("sized", "sized-partials")
        self.window_final = window in ("sized", "sized-final")
        self._partial_window = (Window(window_margin_ms, partial_floor_ms)
                                if partial_floor_ms and window == "sized-final" else None)
        self.partial_interval_ms = (partial_interval_ms if partial_interval_ms is not None
                                    else 250 if self.window_partials else 500)
        self._sized_decoder: SizedDecoder | None = None  # made at the first sized pass
        self.last_pass: WindowPass | None = None  # the last sized pass, kept or redone
        self.window_stats: Counter[str] = Counter()  # passes kept sized, on the full window, redone why

    # `prompt` (every pass takes it): what the call is about, read by the decoder as the text
    # that came before (`pipeline/stages/stt_context.py` writes it); None: nothing
    def transcribe(self, audio: np.ndarray, *, final: bool, prompt: str | None = None) -> str:
        return self._decode(audio, prefix=None, final=final, prompt=prompt)[0]

    def transcribe_scored(self, audio: np.ndarray, *, final: bool,
                          prompt: str | None = None) -> tuple[str, float]:
        text, confidence = self._decode(audio, prefix=None, final=final, prompt=prompt)
        return text, confidence.avg_logprob

    def transcribe_confident(self, audio: np.ndarray, *, final: bool,
                             prompt: str | None = None) -> tuple[str, SpeechConfidence]:
        return self._decode(audio, prefix=None, final=final, prompt=prompt)

    def transcribe_after(self, audio: np.ndarray, prefix: str, *, prompt: str | None = None) -> str:
        return self._decode(audio, prefix=prefix or None, final=True, prompt=prompt)[0]

    def _decode(self, audio: np.ndarray, *, prefix: str | None, final: bool,
                prompt: str | None = None) -> tuple[str, SpeechConfidence]:
        """The text, and how sure the pass is of it (the worst segment's figures; no segment:
        the defaults, sure of nothing said). A pass that fails as a prompt makes Whisper fail
        (it writes the prompt back, loops, or hears only the prompt's words: `prompt_failure`)
        is done again without it; only those passes cost a second decode. Prompt words alone
        are kept when the pass without the prompt hears words too (`words_were_said`)."""
        audio = np.asarray(audio, dtype=np.float32)
        with self._lock.hold(urgent=final):
            done = self._decode_once(audio, prefix, final, prompt)
            why = prompt_failure(done[0], prompt) if prompt else None
            if not why:
                return done
            kept_pass = self.last_pass
            again = self._decode_once(audio, prefix, final, None)
            if why == "prompt words only" and words_were_said(again[0]):
                self.window_stats["prompt words kept"] += 1
                self.last_pass = kept_pass
                return done
            self.window_stats[why] += 1
            return again

    def _decode_once(self, audio: np.ndarray, prefix: str | None, final: bool,
                     prompt: str | None) -> tuple[str, SpeechConfidence]:
        self.last_pass = None
        if self.window is not None and (self.window_final if final else self.window_partials):
            done = self._decode_sized(audio, prefix, self.window, final=final, prompt=prompt)
            if done is not None:
                return done
        elif not final and self._partial_window is not None:
            done = self._decode_sized(audio, prefix, self._partial_window, final=False, prompt=prompt)
            if done is not None:
                return done
        self.window_stats["full"] += 1
        full = self._decode_full(audio, prefix, prompt, final=final)
        sized = self.last_pass  # the doubted sized pass, where there was one
        if (sized is not None and sized.doubt == "unfinished" and not unvoiced_tail(audio, sized.spans)
                and said_words(sized.text) >= said_words(full[0]) + FEWER_WORDS):
            # the redo was for the closing mark, and the full window lost words the sized pass heard
            # ("The reference number is 26." for its "... 26, 9, 4,"): the sized pass's words stand,
            # unless its last words have no voice under them (written into the silence)
            self.window_stats["sized words kept"] += 1
            return sized.text, replace(full[1], avg_logprob=sized.avg_logprob,
                                       unvoiced_words=unvoiced_tail(audio, sized.spans))
        return full

    def transcribe_quick(self, audio: np.ndarray, *, prompt: str | None = None) -> str | None:
        """One pass on a window sized to `audio`, or None: off, the audio fills the full window
        anyway, or the pass looks wrong, or fails as a prompt makes Whisper fail (no redo: the
        final pass follows at once)."""
        if not self.quick_pass:
            return None
        audio = np.asarray(audio, dtype=np.float32)
        with self._lock.hold(urgent=True):
            features = self._sized.features(audio)
            frames = self._quick_window.frames(features.shape[-1])
            if frames >= FULL_FRAMES:
                return None
            done = self._sized.decode(features, frames, prefix=None, prompt=prompt,
                                      max_new_tokens=self._quick_window.max_new_tokens(features.shape[-1]))
            why = prompt_failure(done.text, prompt) if prompt else None
            if why:
                self.window_stats[f"quick {why}"] += 1
                return None
            self.window_stats[f"quick {done.doubt or 'sized'}"] += 1
            return done.text if done.doubt is None else None

    @property
    def _sized(self) -> SizedDecoder:
        """The sized-window decoder (its tokenizer and suppression list), only once it is used:
        a full window needs it only to time a final's words (`time_final_words`)."""
        if self._sized_decoder is None:
            self._sized_decoder = SizedDecoder(self._model, language=self.language,
                                               beam_size=self.beam_size)
        return self._sized_decoder

    def _decode_sized(self, audio: np.ndarray, prefix: str | None, window: Window, *,
                      final: bool, prompt: str | None = None) -> tuple[str, SpeechConfidence] | None:
        """A pass on a window sized to `audio`, or None when the full window should do it: the
        audio fills it anyway, or the sized pass looks wrong (`WindowPass.doubt`). A prompted
        pass that loops is handed back as it is: the prompt is the likelier cause, and `_decode`
        redoes it without one (sized again) instead of looping on the full window first."""
        features = self._sized.features(audio)
        frames = window.frames(features.shape[-1])
        if frames >= FULL_FRAMES:
            return None
        done = self._sized.decode(
            features, frames, prefix=prefix, max_new_tokens=window.max_new_tokens(features.shape[-1]),
            final=final, prompt=prompt, align=final and self.time_final_words and prefix is None)
        if done.spans:  # a final's words, timed: does voice go on after them?
            done = self._timed_words(audio, done)
            if done.missed:  # the text stopped at a pause the caller spoke on after
                done = self._with_the_rest(audio, done, window, prompt)
        self.last_pass = done
        doubt = done.doubt
        self.window_stats[doubt or "sized"] += 1
        confidence = SpeechConfidence(done.avg_logprob, done.no_speech_prob, compression_ratio(done.text),
                                      unvoiced_words=unvoiced_tail(audio, done.spans))
        return (done.text, confidence) if doubt is None or (prompt and loops(done.text)) else None

    @staticmethod
    def _timed_words(audio: np.ndarray, done: WindowPass) -> WindowPass:
        words = [w for w in done.text.split() if any(c.isalnum() for c in w)] or [""]
        return replace(done, voice_after_ms=voice_after(audio, done.spans, words[-1]))

    def _with_the_rest(self, audio: np.ndarray, done: WindowPass, window: Window,
                       prompt: str | None) -> WindowPass:
        """A final that stopped at a pause inside the turn, with the speech after the pause
        transcribed on a window of its own (with the call's prompt: the text so far as the prompt
        made tiny.en unsure of it), up to MAX_RESUMES times. A rest whose words all stand in the
        final already was read again: the final stays as it is. Where there is no pause to start
        from, or a pass over the rest looks wrong, the final is handed back still missing words
        (a sized one is then redone on the full window; a full-window one stays as it is)."""
        for _ in range(MAX_RESUMES):
            if not done.missed or (cut_s := resume_at(audio, done.spans)) is None:
                return done
            rest = audio[round(cut_s * INPUT_RATE_HZ):]
            features = self._sized.features(rest)
            more = self._sized.decode(features, window.frames(features.shape[-1]), prefix=None, final=True,
                                      max_new_tokens=window.max_new_tokens(features.shape[-1]),
                                      prompt=prompt, align=True)
            if more.doubt not in (None, "missed") or not more.spans:
                return done
            if (text := joined(done.text, more.text)) is None:  # the words covered the voice after all
                self.window_stats["read again"] += 1
                return replace(done, voice_after_ms=0)
            self.window_stats["resumed"] += 1
            done = self._timed_words(audio, replace(
                done, text=text, tokens=done.tokens + more.tokens, bound=done.bound + more.bound,
                avg_logprob=min(done.avg_logprob, more.avg_logprob),
                no_speech_prob=max(done.no_speech_prob, more.no_speech_prob),
                spans=done.spans + tuple((s + cut_s, e + cut_s) for s, e in more.spans)))
        return done

    def _decode_full(self, audio: np.ndarray, prefix: str | None,
                     prompt: str | None = None, *, final: bool = False) -> tuple[str, SpeechConfidence]:
        segments, _ = self._model.transcribe(
            audio,
            language=self.language,
            beam_size=self.beam_size,
            without_timestamps=True,  # we never use them; saves decoder steps
            condition_on_previous_text=False,  # one short utterance: nothing to condition on
            temperature=0.0,  # no fallback re-decodes: bounded latency
            vad_filter=False,  # our own VAD already cut the turn
            prefix=prefix,  # the output still begins with it
            initial_prompt=prompt or None,
        )
        segments = list(segments)
        text = " ".join(s.text.strip() for s in segments).strip()
        confidence = SpeechConfidence(
            avg_logprob=min((s.avg_logprob for s in segments), default=0.0),
            no_speech_prob=max((s.no_speech_prob for s in segments), default=0.0),
            compression_ratio=max((s.compression_ratio for s in segments), default=0.0))
        if not (final and self.time_final_words and not prefix and text):
            return text, confidence
        return self._timed_full(audio, text, confidence, prompt)

    def _timed_full(self, audio: np.ndarray, text: str, confidence: SpeechConfidence,
                    prompt: str | None) -> tuple[str, SpeechConfidence]:
        """A full-window final's words timed on a window sized to the audio (none past it: a turn
        of ~28 s or more): its last words with no voice under them counted, and the speech after a
        pause it stopped at transcribed too (the full window loses such words as well: "The
        reference number is 26." for "... two six, | nine nine four.")."""
        features = self._sized.features(audio)
        frames = self._quick_window.frames(features.shape[-1])
        if frames >= FULL_FRAMES:
            return text, confidence
        done = self._timed_words(audio, WindowPass(
            frames=FULL_FRAMES, text=text, tokens=0, bound=MAX_LENGTH, no_speech_prob=confidence.no_speech_prob,
            avg_logprob=confidence.avg_logprob, final=True, spans=self._sized.spans_of(features, frames, text)))
        if done.missed:
            self.window_stats["full missed"] += 1
            done = self._with_the_rest(audio, done, self._quick_window, prompt)
        return done.text, replace(confidence, avg_logprob=min(confidence.avg_logprob, done.avg_logprob),
                                  unvoiced_words=unvoiced_tail(audio, done.spans))
