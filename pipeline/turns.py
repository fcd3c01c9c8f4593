"""Dual-threshold turn detection, with a pluggable "looks complete" signal.

After VAD speech-stop, the turn ends at `min_silence_ms` if the transcript looks complete and at
`max_silence_ms` regardless; both are measured from the same point (the end of the last speech
window), and any speech resets the clock. A thinking pause therefore never ends a turn. With
early commit on (`early_silence_ms` > 0), a probability of at least `early_threshold` ends it
sooner, after `early_silence_ms`.

This module sits below the stages (the model signals in `stages/` build on its text heuristic),
and holds what turn taking tells others of a turn: why it ended (`CommitReason`) and its words as
they are recognised (`WordsHeard`, which the barge-in words verdict reads).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from .base.audio import INPUT_RATE_HZ, WINDOW_MS, frame_levels_db
from .base.config import TurnPolicy
from .base.protocols import Completeness, ScoringLLM, SpeechConfidence

__all__ = ["CommitReason", "Completeness", "HeuristicCompleteness", "LLMCompleteness", "TurnDetector",
           "VadEdge", "VadSignal", "WordsHeard", "voice_end_ms"]


# Words that promise more is coming; a transcript ending in one is not finished.
_TRAILING = {
    "and", "or", "but", "so", "because", "cause", "the", "a", "an", "to", "of", "for", "with",
    "in", "on", "at", "from", "by", "um", "uh", "er", "erm", "hmm", "like", "my", "your", "our",
    "their", "his", "her", "its", "is", "are", "was", "were", "if", "then", "that", "which",
    "who", "when", "where", "about", "into", "than", "as", "i", "we", "you", "it's", "i'm",
    "i'd", "would", "could", "should", "will", "can", "want", "need", "let", "also", "plus",
    "minus", "point", "number", "this", "these", "those", "some", "any", "very", "really",
    "not",  # "ask not ...", "I do not ...": a dangling negation usually heads a clause
}
# A short utterance opening with a connective is a lead-in ("And so, my fellow Americans ..."):
# Whisper closes every segment with a period, so its punctuation is no evidence here.
_LEAD_INS = ("and so", "and then", "so", "and", "but", "well", "now", "okay so", "because")
_LEAD_IN_MAX_WORDS = 6
# An utterance that is only a form of address, after any interjection ("Oh, my fellow
# Americans!", "Ladies and gentlemen,") calls for attention before the message: Whisper closes it
# with "." or "!" at the pause, and which opener it hears ("And so" or "Oh") varies with the
# machine's kernels, so the address itself is the evidence.
_ADDRESS = re.compile(
    r"^(?:(?:oh|ah|and|so|well|now|okay|ok|hey)\s+)*"
    r"(?:(?:my|dear|my dear)\s+fellow\s+[a-z']+"
    r"|(?:my|dear|my dear)\s+(?:friends?|colleagues|people|citizens|countrymen|folks|guys|team)"
    r"|ladies and gentlemen|folks|everyone|everybody)$")
_NUMBER_WORDS = {"hundred", "thousand", "million", "twenty", "thirty", "forty", "fifty", "sixty",
                 "seventy", "eighty", "ninety"}
_WORD = re.compile(r"[a-z']+|\d+")
# A value callers say in groups, with a pause between them ("My number is 555, | 212, | ...",
# "My address is 12 | Oak Street"): its name just before "is" ("'s", "was"; "zip code",
# "phone number"), or "ending (in)", then only digits, the words for them and single letters.
# Until it holds as many digits as such a value does whole, it may go on; a short value said
# whole waits the long silence instead (on the head's caller lines, bench/eou_lines.txt, cuts
# inside such a value held against finished lines made to wait: bench/README.md).
_VALUE_NAMES = frozenset("number code reference ref postcode zip address phone mobile pin id account".split())
_VALUE_LEADS = frozenset("is 's was".split())
_SPOKEN_DIGITS = {**dict.fromkeys("zero oh one two three four five six seven eight nine".split(), 1),
                  **dict.fromkeys("ten eleven twelve thirteen fourteen fifteen sixteen seventeen "
                                  "eighteen nineteen".split(), 2),
                  "double": 1, "triple": 2}  # "double five": 2 digits, "triple five": 3
_WHOLE_DIGITS = {"zip": 5, "pin": 4, "ending": 4}  # the others: a phone number's 10
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# A sentence opened by a condition or a concession that says its point comes after it ("If the
# store is open tomorrow, | I'll come in", "Although I booked a double, | ..."): a subordinator,
# then a subject. Whisper closes it with a period at the pause. Not "when", "once", "while",
# "before", "after", "until", "since" or "because": they also open an answer to a question ("When
# I get off work.", "Because I'm moving."); not "you" or "that" after it ("If you could call me
# back.", "If that's okay.": a polite request or tag, whole); not a question, nor a clause with a
# comma in it (the main clause may have come), nor one of 3 words or fewer or more than 8 ("If I
# want to cancel what do I do.": Whisper wrote no comma before the main clause).
_SUBORDINATORS = frozenset("if unless although though whereas".split())
_SUBJECTS = frozenset("i we he she they it the my our his her their this there a an i'm it's we're "
                      "they're i've we've there's someone nobody".split())
_OPENERS = frozenset("and so but well okay ok um uh now oh".split())


class HeuristicCompleteness:
    """Fast text heuristic: terminal punctuation, trailing conjunctions and fillers, numbers.

    Scores only matter by their side of `turn.complete_threshold` (0.5); the spread leaves room
    for a plugin that averages signals.
    """

    def probability(self, text: str, audio: np.ndarray | None = None) -> float:
        """Text only; `audio` is accepted and ignored."""
        text = text.strip()
        if not text:
            return 0.0
        words = _WORD.findall(text.lower())
        if not words:
            return 0.0
        last = words[-1]
        if last in _TRAILING or text.endswith((",", "-", "—", ":", "...", "…")):
            return 0.05
        if last in _NUMBER_WORDS or re.search(r"\d[\d,]*,$|\d+\s*(and|,)\s*$", text):
            return 0.2  # "two hundred" / "4, 5," — a number or list may continue
        if _value_goes_on(text.lower()):
            return 0.4  # "My number is 555." — said in groups, it may go on
        # a lead-in or an address opens what comes next: read the last sentence only, since
        # earlier ones may be the agent's own words the turn picked up ("Thanks for calling
        # us. And so my fellow Americans." when a caller cuts in over the reply)
        sentence = _WORD.findall(_SENTENCE_END.split(text.lower())[-1]) or words
        if _ADDRESS.match(" ".join(sentence)) or _clause_first(text, sentence):
            return 0.3
        opening = " ".join(sentence[:2])
        if len(sentence) <= _LEAD_IN_MAX_WORDS and any(
                opening == lead or opening.startswith(lead + " ") or sentence[0] == lead for lead in _LEAD_INS):
            return 0.3
        if text.endswith((".", "!", "?")):
            return 0.9
        return 0.6  # no punctuation, no dangling word: probably done


def _clause_first(text: str, sentence: list[str]) -> bool:
    """Is the last sentence (`sentence`, its words) only a subordinate clause said first, its
    main clause still to come? (`_SUBORDINATORS`)"""
    if text.rstrip().endswith("?") or "," in _SENTENCE_END.split(text)[-1]:
        return False
    k = 0
    while k < len(sentence) and sentence[k] in _OPENERS:
        k += 1
    return 4 <= len(sentence) - k <= 8 and sentence[k] in _SUBORDINATORS and sentence[k + 1] in _SUBJECTS


def _value_goes_on(text: str) -> bool:
    """Does `text` end in a named value said so far in fewer digits than it holds whole ("my
    number is 555", "... is 555. 212." as Whisper writes a pause, "the zip code is 90",
    "my address is 12")? Not "the number of people is 4" or "my balance is 500"."""
    words = [part for w in _WORD.findall(text.replace("’", "'"))
             for part in ((w[:-2], "'s") if w.endswith("'s") and len(w) > 2 else (w,))]
    digits, k = 0, len(words)
    while k and (words[k - 1].isdigit() or words[k - 1] in _SPOKEN_DIGITS
                 or len(words[k - 1]) == 1 and words[k - 1] not in ("a", "i")):
        w = words[k - 1]
        digits += len(w) if w.isdigit() else _SPOKEN_DIGITS.get(w, 0)
        k -= 1
    lead = k - 1 - (k >= 2 and words[k - 1] == "in" and words[k - 2] == "ending")
    if not digits or lead < 1:
        return False
    if words[lead] == "ending":  # "the card ending 42", "ending in 42": the last four
        return digits < _WHOLE_DIGITS["ending"]
    name = words[lead - 1]
    if name in ("number", "code") and lead >= 2 and words[lead - 2] in _VALUE_NAMES:
        name = words[lead - 2]  # "zip code", "phone number"
    return (words[lead] in _VALUE_LEADS and name in _VALUE_NAMES
            and digits < _WHOLE_DIGITS.get(name, 10))


class LLMCompleteness:
    """Asks the loaded LLM whether the caller has finished; costs one short prompt per call."""

    def __init__(self, *, llm: Any = None) -> None:
        if not isinstance(llm, ScoringLLM):
            raise ValueError("the llm completeness signal needs an LLM stage that can score tokens "
                             "(next_token_logprobs), like llama-cpp")
        self.llm = llm

    def probability(self, text: str, audio: np.ndarray | None = None) -> float:
        """Text only; `audio` is accepted and ignored."""
        if not text.strip():
            return 0.0
        messages = [
            {"role": "system", "content": "Answer with one word: yes or no."},
            {"role": "user", "content": f'A caller said: "{text}"\nIs this a finished sentence?'},
        ]
        scores = self.llm.next_token_logprobs(messages, ["yes", "no", "Yes", "No"])
        yes = math.exp(max(scores.get("yes", -50.0), scores.get("Yes", -50.0)))
        no = math.exp(max(scores.get("no", -50.0), scores.get("No", -50.0)))
        return yes / (yes + no) if yes + no > 0 else 0.5


class VadEdge(StrEnum):
    """Where the detector's speech state changed."""

    SPEECH_STARTED = "speech_started"
    SPEECH_STOPPED = "speech_stopped"


class CommitReason(StrEnum):
    """Why a turn ended (`input_audio_buffer.committed`'s reason): a member equals its string."""

    MIN_SILENCE = "min_silence"  # the short silence, and the transcript looks complete
    MAX_SILENCE = "max_silence"  # the long silence, whatever the transcript
    EARLY_SILENCE = "early_silence"  # early commit: a shorter silence and a surer signal
    MAX_LENGTH = "max_length"  # the turn reached turn.max_turn_ms
    CLIENT = "client"  # the client committed it (no server VAD)


def speech_heard_ms(done_ms: float, onset_ms: float | None, now_ms: float) -> float | None:
    """Speech the VAD heard in a turn by `now_ms`: its finished segments' `done_ms` and the open
    one since `onset_ms`; None when the VAD heard none (a turn the client commits)."""
    if not done_ms and onset_ms is None:
        return None
    return done_ms + (max(0.0, now_ms - onset_ms) if onset_ms is not None else 0.0)


@dataclass(frozen=True)
class WordsHeard:
    """A caller turn's words as they are recognised, told by turn taking to whoever decides on
    them (barge-in): a partial, or (`final`) the words a final pass or the commit settled on.
    With them, what says whether they were spoken at all: the pass's own confidence and the
    speech the VAD heard (`voiced_at`)."""

    turn_id: str
    text: str
    final: bool
    logprob: float = 0.0  # the mean token log-probability of the pass that wrote `text` (0: none)
    confidence: SpeechConfidence | None = None  # the pass's figures in full, where the STT gives them
    done_ms: float = 0.0  # speech heard in the turn's finished segments
    onset_ms: float | None = None  # the onset of the segment still open

    def voiced_at(self, now_ms: float) -> float | None:
        return speech_heard_ms(self.done_ms, self.onset_ms, now_ms)


@dataclass
class VadSignal:
    kind: VadEdge
    at_ms: float  # speech onset (before padding) or end of the last speech window


class TurnDetector:
    """Speech start/stop from VAD windows, and the dual-threshold end-of-turn decision.

    Pure audio-time logic (no I/O), so it is exact on the simulated clock.
    """

    def __init__(self, policy: TurnPolicy) -> None:
        self.in_speech = False
        self.last_speech_end_ms: float | None = None
        self._above = 0
        self._below = 0
        self._onset_ms = 0.0
        self._last_above_end_ms = 0.0
        self.set_policy(policy)

    def set_policy(self, policy: TurnPolicy) -> None:
        """New thresholds take effect at once; speech state (an open turn's silence) is kept."""
        self.policy = policy
        self.start_windows = max(1, math.ceil(policy.min_speech_ms / WINDOW_MS))
        self.stop_windows = max(1, math.ceil(policy.speech_stop_ms / WINDOW_MS))
        self._silence_below = policy.vad_threshold - policy.vad_hysteresis

    def on_window(self, prob: float, window_end_ms: float) -> VadSignal | None:
        window_start_ms = window_end_ms - WINDOW_MS
        if prob >= self.policy.vad_threshold:
            if self._above == 0:
                self._onset_ms = window_start_ms
            self._above += 1
            self._below = 0
            self._last_above_end_ms = window_end_ms
            if not self.in_speech and self._above >= self.start_windows:
                self.in_speech = True
                self.last_speech_end_ms = None
                return VadSignal(VadEdge.SPEECH_STARTED, self._onset_ms)
        else:
            self._above = 0
            # Silero's hysteresis: in speech, silence starts only below (threshold - hysteresis);
            # once it has started, windows in between count on, as time passes in Silero's own loop
            if not self.in_speech or prob < self._silence_below or self._below:
                self._below += 1
            if self.in_speech and self._below >= self.stop_windows:
                self.in_speech = False
                self.last_speech_end_ms = self._last_above_end_ms
                return VadSignal(VadEdge.SPEECH_STOPPED, self._last_above_end_ms)
        return None

    @property
    def trailing_ms(self) -> float:
        """In speech, how long the windows since the last speech window have been below the
        threshold: the speech may be stopping (0 out of speech, or while it goes on)."""
        return self._below * WINDOW_MS if self.in_speech else 0.0

    @property
    def stopping(self) -> bool:
        """Out of speech, or its trailing windows have lasted `early_pass_ms` (the final pass
        may begin)."""
        return not self.in_speech or 0 < self.policy.early_pass_ms <= self.trailing_ms

    @property
    def speech_end_so_far_ms(self) -> float:
        """The end of the last window above the threshold: the VAD's end if the speech stops."""
        return self._last_above_end_ms

    def silence_from(self, end_ms: float) -> None:
        """Count the silence after this speech-stop from `end_ms` (`voice_end_ms`), never later
        than the VAD's own end."""
        if self.last_speech_end_ms is not None:
            self.last_speech_end_ms = min(self.last_speech_end_ms, end_ms)

    def silence_ms(self, now_ms: float) -> float:
        if self.in_speech or self.last_speech_end_ms is None:
            return 0.0
        return now_ms - self.last_speech_end_ms

    def end_of_turn(self, now_ms: float, complete_prob: float | None) -> CommitReason | None:
        """Why the turn should end now (one of the three silences), or None."""
        silence = self.silence_ms(now_ms)
        if self.last_speech_end_ms is None or self.in_speech:
            return None
        if silence >= self.policy.max_silence_ms:
            return CommitReason.MAX_SILENCE
        if (silence >= self.policy.min_silence_ms and complete_prob is not None
                and complete_prob >= self.policy.complete_threshold):
            return CommitReason.MIN_SILENCE
        early = self.policy.early_silence_ms
        if (early > 0 and silence >= early and complete_prob is not None
                and complete_prob >= self.policy.early_threshold):
            return CommitReason.EARLY_SILENCE
        return None

    def reset(self) -> None:
        self.in_speech = False
        self.last_speech_end_ms = None
        self._above = self._below = 0


# Silero's probability stays above the threshold for about three 32 ms windows after the voice
# stops (it reads context), so the VAD's speech end comes ~100 ms late (bench/README.md, "Where
# the silence starts"); the voice end is looked for no further back than this
VOICE_END_LOOKBACK_MS = 160
_LEVEL_SPAN_MS = 10_000  # the speech level is read from this much of the turn, up to its end
_FRAME_MS = 10


def voice_end_ms(history: Callable[[float, float], np.ndarray], start_ms: float, vad_end_ms: float,
                 below_db: float) -> float:
    """Where the voice itself ended: the end of the last 10 ms frame within `below_db` of the
    turn's speech level (the 90th percentile of its frames' levels), at most
    `VOICE_END_LOOKBACK_MS` before the VAD's end. The VAD's end where the frames up to it stay
    that loud (noise a few dB under the voice), where there is too little audio to tell, or with
    `below_db` 0. `history(from_ms, to_ms)`: the input audio between the two (later from where
    it no longer holds `from_ms`); the turn began at `start_ms`."""
    if below_db <= 0:
        return vad_end_ms
    audio = history(max(start_ms, vad_end_ms - _LEVEL_SPAN_MS), vad_end_ms)  # it ends at the VAD's end
    frame = INPUT_RATE_HZ * _FRAME_MS // 1000
    n, back = len(audio) // frame, VOICE_END_LOOKBACK_MS // _FRAME_MS
    if n < 2 * back:
        return vad_end_ms
    levels = frame_levels_db(audio, frame, from_end=True)
    floor = float(np.percentile(levels, 90)) - below_db
    for quiet, i in enumerate(range(n - 1, n - 1 - back, -1)):
        if levels[i] >= floor:
            return vad_end_ms - quiet * _FRAME_MS
    return vad_end_ms - back * _FRAME_MS
