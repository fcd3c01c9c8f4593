"""Silence waits learned per caller, as LiveKit's dynamic endpointing does.

A caller who pauses long in the middle of a turn should be given a longer wait before the turn
ends. `LearnedPauses` keeps an exponential moving average of the pauses seen so far in a call
after which the caller went on, and scales both waits by how far that average is above the
prior, within bounds. As LiveKit's does, it never shortens them: a pause shorter than the prior
counts as the prior, so a caller who pauses briefly keeps the configured waits, and a call with
no long pause behaves as if it were off.

Two kinds of pause are learned (LiveKit's first two cases): a silence inside a turn after which
speech resumed before the commit (`observed_pause`), and the silence before a new turn begun
within the long wait of a turn committed at the short one, while its reply was being made or
sounding (`committed`, `turn_began`): the caller went on as the reply began, so that turn was cut
off, and the pause is one the next wait should outlast. That second kind is learned once the new
turn proves the caller's: by words (`heard_words`), or, begun over the reply's voice (its echo, a
backchannel?), by interrupting it (`interrupted`). With `turn.learn_pauses` on, turn taking
(`call/turn_taking.py`) keeps one per call and applies `LearnedPauses.policy_for` with
`TurnDetector.set_policy` at the start of each caller turn, and when a cut-off is learned. Why it
is on by default: the replay in `python -m bench.eou_pauses_eval --current` (bench/README.md,
"Waits learned per caller, replayed").
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..base.config import TurnPolicy

__all__ = ["LearnedPauses"]


@dataclass(frozen=True)
class _GoneOn:
    """A turn begun soon after one committed at the short wait, while its reply began."""

    end_ms: float  # where the committed turn's silence began
    onset_ms: float  # where the new turn's speech began
    over_agent: bool  # begun over the reply's voice: proved only by interrupting it


@dataclass
class LearnedPauses:
    """min/max silence waits from the pauses a caller went on after, in one call.

    The average starts at `prior_pause_ms` (a pause that leaves the configured waits as they
    are); each observed pause, at least the prior, moves it by `alpha`. Both waits scale by
    average / prior, up to their upper bounds (never below the configured waits); the max wait
    stays at least `gap_ms` above the min.
    """

    min_silence_ms: float = 600.0  # the configured waits (turn.min_silence_ms, max_silence_ms)
    max_silence_ms: float = 1500.0
    prior_pause_ms: float = 400.0  # the mid-turn pause the configured waits are made for
    alpha: float = 0.3  # weight of the newest pause in the average
    min_ceiling_ms: float = 1200.0  # the longest each wait grows to
    max_ceiling_ms: float = 3000.0
    gap_ms: float = 300.0
    average_ms: float = field(init=False)
    seen: int = field(default=0, init=False)
    cut_offs: int = field(default=0, init=False)  # turns the caller went on after, learned
    _committed_end_ms: float | None = field(default=None, init=False)  # a turn ended at the short wait
    _pending: _GoneOn | None = field(default=None, init=False)  # a turn begun after it, not yet proved

    def __post_init__(self) -> None:
        if not 0.0 < self.alpha <= 1.0:
            raise ValueError(f"alpha = {self.alpha}: give a weight in (0, 1]")
        if self.prior_pause_ms <= 0:
            raise ValueError(f"prior_pause_ms = {self.prior_pause_ms}: give a positive pause")
        self.average_ms = self.prior_pause_ms

    @classmethod
    def for_policy(cls, policy: TurnPolicy, **kwargs: Any) -> LearnedPauses:
        """Starting from a policy's waits."""
        return cls(min_silence_ms=policy.min_silence_ms, max_silence_ms=policy.max_silence_ms, **kwargs)

    @classmethod
    def follow(cls, learned: LearnedPauses | None, policy: TurnPolicy) -> LearnedPauses | None:
        """What learns under `policy`: None with `learn_pauses` off; else `learned`, keeping what
        it learned and scaling the policy's waits from now on, or a new one."""
        if not policy.learn_pauses:
            return None
        if learned is None:
            return cls.for_policy(policy)
        learned.min_silence_ms, learned.max_silence_ms = policy.min_silence_ms, policy.max_silence_ms
        return learned

    def observed_pause(self, pause_ms: float) -> None:
        """A silence after which the caller spoke again (a shorter one than the prior counts as it)."""
        if pause_ms <= 0:
            return
        self.average_ms += self.alpha * (max(pause_ms, self.prior_pause_ms) - self.average_ms)
        self.seen += 1

    def committed(self, speech_end_ms: float | None, reason: str) -> None:
        """A turn was committed, its silence begun at `speech_end_ms`. One ended at the short wait
        (or an early commit: `CommitReason`) is one the caller may yet go on from."""
        short = reason in ("min_silence", "early_silence")
        self._committed_end_ms = speech_end_ms if short else None

    def turn_began(self, onset_ms: float, *, replying: bool, over_agent: bool, joined: bool = False) -> None:
        """A new turn's speech began at `onset_ms`, the reply to the last one still being made or
        sounding (`replying`). Within the long wait of a turn committed at the short one, the
        caller may have gone on as the reply began (LiveKit's "immediate interruption"): that
        pause waits to be learned until the turn proves the caller's, by words (`heard_words`)
        or, begun over the reply's voice (`over_agent`: its echo, a backchannel?), by
        interrupting it (`interrupted`). Not after a reply was heard to its end: that is the next
        turn. A turn `joined` to talk held from over the reply keeps that talk's pause."""
        pending, self._pending = self._pending, None
        if joined and pending is not None:
            self._pending = replace(pending, over_agent=over_agent)
            return
        end, self._committed_end_ms = self._committed_end_ms, None
        if end is not None and replying and 0 < onset_ms - end < self.waits()[1]:
            self._pending = _GoneOn(end_ms=end, onset_ms=onset_ms, over_agent=over_agent)

    def heard_words(self) -> bool:
        """The turn begun after a cut-off said words, not over the reply: the caller went on.
        True if that learned its pause."""
        pending = self._pending
        if pending is None or pending.over_agent:
            return False
        return self._learn(pending.onset_ms)

    def interrupted(self, onset_ms: float | None = None) -> bool:
        """The turn begun after a cut-off interrupted the reply, its caller's speech from
        `onset_ms` (None: where the turn began). True if that learned its pause."""
        pending = self._pending
        if pending is None:
            return False
        return self._learn(pending.onset_ms if onset_ms is None else onset_ms)

    def _learn(self, onset_ms: float) -> bool:
        pending, self._pending = self._pending, None
        assert pending is not None
        pause = onset_ms - pending.end_ms
        if not 0 < pause < self.waits()[1]:  # the interruption came later: a barge-in, not going on
            return False
        self.observed_pause(pause)
        # we were wrong once: the same pause is not to end a turn again (the short wait then
        # outlasts it, to its ceiling)
        self.average_ms = max(self.average_ms, pause)
        self.cut_offs += 1
        return True

    @property
    def ratio(self) -> float:
        return self.average_ms / self.prior_pause_ms

    def waits(self) -> tuple[float, float]:
        """(min, max) silence waits for the caller's next turn, in ms: the configured ones
        scaled up by the ratio, each to its upper bound (or the configured wait, if higher),
        at least `gap_ms` apart (or as far apart as configured, if less)."""
        ratio = max(1.0, self.ratio)
        short = max(self.min_silence_ms, min(self.min_ceiling_ms, self.min_silence_ms * ratio))
        long = max(self.max_silence_ms, min(self.max_ceiling_ms, self.max_silence_ms * ratio))
        gap = min(self.gap_ms, max(0.0, self.max_silence_ms - self.min_silence_ms))
        return short, max(long, short + gap)

    @staticmethod
    def policy_for(learned: LearnedPauses | None, base: TurnPolicy) -> TurnPolicy:
        """The waits a caller's next turn takes: `base` with what `learned` learned (`base`
        itself while learning is off or learned nothing). An early commit's silence scales with
        the short wait, so a pause learned is not cut off early either."""
        if learned is None:
            return base
        short, long = (round(w) for w in learned.waits())
        if (short, long) == (base.min_silence_ms, base.max_silence_ms):
            return base
        scaled = round(base.early_silence_ms * short / max(1, base.min_silence_ms))
        early = min(short, scaled) if base.early_silence_ms else 0
        return replace(base, min_silence_ms=short, max_silence_ms=long, early_silence_ms=early)
