"""Echo guard: take the agent's own voice out of the microphone before the barge-in gate.

Through loudspeakers the agent hears itself, loud and voiced: exactly what the gate fires on. The
played audio is known sample for sample, so the guard

1. finds the bulk loudspeaker-to-microphone delay by cross-correlating microphone and playback,
   and re-checks it every few windows, so a changed audio route is followed;
2. cancels the echo with an adaptive filter over the delay-aligned playback: block
   frequency-domain NLMS, two-path (a background filter learns on every block, a foreground
   filter produces the output and takes the background's taps only when they cancel better), so
   a caller talking over the agent cannot wreck a converged filter;
3. attenuates what echo is left: by the leakage the filter has shown (residual vs. its echo
   estimate) once it has converged, and before that by assuming the echo may be as loud as the
   playback.

The caller's voice does not correlate with the playback, so it passes all three.
"""

from __future__ import annotations

import math

import numpy as np

from ..base.audio import INPUT_RATE_HZ, ms_to_samples

_DECIM = 4  # delay search at 4 kHz: speech's delay cues lie below 2 kHz; a quarter of the work
_HISTORY_S = 8.0  # ring length; playback may be handed over a few seconds ahead of the mic
_BLOCK = 512  # samples per filter block: one Silero window (32 ms)
_POWER_KEEP = 0.7  # per-bin playback power: ~3-block memory, smooth enough not to chase noise
_LEAK_BINS = 9  # ~70 Hz: a harmonic's leakage spreads over a few bins of the 2048-point frame
_POWER_REG = 1e-3  # bins 30 dB under the mean learn slower: they hold little echo, mostly noise
_PATH_KEEP = 0.6  # two-path error averages over ~2.5 blocks (80 ms): one lucky block copies nothing
_COPY_RATIO = 0.8  # background must cancel ~1 dB better before the foreground takes it
_RESET_RATIO = 4.0  # background 6 dB worse than foreground: it diverged (double talk); restart
_TRUST_KEEP = 0.8  # convergence check over ~5 blocks: quick to see, not one lucky block
_TRUST_DB = 6.0  # the linear filter is relied on once it removes 3/4 of the echo power
_LEAK_DOWN = 0.2  # leakage follows the residual down within a few windows (single talk) ...
_LEAK_UP = 0.005  # ... and up only slowly: a residual louder than leakage predicts is a caller
_LEAK_JUMP = 4.0  # one window moves the leakage at most 6 dB (log steps are clipped)
_ERLE_KEEP = 0.95  # reported ERLE over ~0.6 s of windows with playback
_OVERSUBTRACT = 2.0  # residual-echo estimates are rough; suppress as if it were 3 dB louder
_RAMP = 64  # gain changes ramp over 4 ms: no clicks, and no half-window lag at an onset
_TINY = 1e-12  # power floor against division by zero (-120 dBFS)


def _next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


class _Timeline:
    """Ring buffer addressed by absolute input-sample index; unwritten or expired samples read 0."""

    def __init__(self, size: int) -> None:
        self._buf = np.zeros(size, np.float64)
        self._size = size
        self.end = 0  # one past the highest index written; below end - size is overwritten

    def _put(self, at: int, x: np.ndarray) -> None:
        i = at % self._size
        k = min(len(x), self._size - i)
        self._buf[i : i + k] = x[:k]
        self._buf[: len(x) - k] = x[k:]

    def write(self, x: np.ndarray, at: int) -> None:
        stop = at + len(x)
        if stop > self.end:
            gap = max(self.end, stop - self._size)
            if gap < at:  # a jump ahead: what lies in between is silence, not stale audio
                self._put(gap, np.zeros(at - gap))
            self.end = stop
        lo = max(at, self.end - self._size)
        if lo < stop:
            self._put(lo, x[lo - at :])

    def read(self, start: int, stop: int) -> np.ndarray:
        out = np.zeros(stop - start)
        lo, hi = max(start, self.end - self._size), min(stop, self.end)
        if lo < hi:
            i, n = lo % self._size, hi - lo
            k = min(n, self._size - i)
            out[lo - start : lo - start + k] = self._buf[i : i + k]
            out[lo - start + k : hi - start] = self._buf[: n - k]
        return out


class EchoGuard:
    """Acoustic echo cancellation plus residual suppression against the known playback.

    `push_reference` every played frame (16 kHz) with its place on the input timeline, at the
    latest before the microphone window it plays into; `process` every microphone window and
    feed the returned residual to the VAD and barge-in gate. Not thread-safe: call both from the
    same thread or event loop. The learnt echo path survives pauses in playback, so later turns
    of the same call start converged.
    """

    def __init__(
        self,
        *,
        # Output buffers + converters + air: built-in and USB audio stay well under this;
        # Bluetooth output can exceed it (raise it there).
        max_delay_ms: float = 250.0,
        # Direct path and early reflections of a small room; the reverberant tail beyond it is
        # left to the residual suppressor.
        filter_ms: float = 64.0,
        # NLMS step, time-domain equivalent: 0.5 takes 20 dB off within a second of speech
        # (tests/test_echo.py holds it to that); 1.0 overshoots on voiced speech.
        step: float = 0.5,
        # Filter taps kept before the estimated first arrival: the delay search runs at 4 kHz
        # and may pick a strong reflection a few ms after the direct sound.
        lead_ms: float = 8.0,
        # Several syllables per delay look: one voiced syllable can mislead by a pitch period.
        delay_span_ms: float = 500.0,
        # A look every 4 windows: two that agree find a moved audio route (tests/test_echo.py).
        delay_every_ms: float = 128.0,
        # On top of the filter's 20 dB this leaves residual echo up to 40 dB under the echo, far
        # below the gate's -40 dBFS; 0 turns the suppressor off (the linear canceller alone).
        max_suppression_db: float = 20.0,
        # Until the filter converges the echo is assumed as loud as the playback: speaker-to-mic
        # coupling louder than that is rare, and erring loud only delays a barge-in.
        echo_return_db: float = 0.0,
        # Playback quieter than this counts as silence: nothing to cancel, nothing to learn from.
        ref_floor_dbfs: float = -70.0,
        sample_rate_hz: int = INPUT_RATE_HZ,
    ) -> None:
        if not 0.0 < step < 2.0:
            raise ValueError(f"step must be in (0, 2), got {step}")
        if max_delay_ms < 0 or filter_ms <= 0 or lead_ms < 0 or max_suppression_db < 0:
            raise ValueError("delays, filter length and suppression must not be negative")
        rate = self._rate = sample_rate_hz
        self._max_delay = _DECIM * (ms_to_samples(max_delay_ms, rate) // _DECIM)
        self._taps = max(_DECIM, ms_to_samples(filter_ms, rate))
        self._lead = ms_to_samples(lead_ms, rate)
        self._span = _DECIM * max(1, ms_to_samples(delay_span_ms, rate) // _DECIM)
        self._every = max(1, ms_to_samples(delay_every_ms, rate))
        self._step = step
        self._min_gain = 10.0 ** (-max_suppression_db / 20.0)
        self._echo_return = 10.0 ** (echo_return_db / 10.0)
        self._ref_floor = 10.0 ** (ref_floor_dbfs / 20.0)
        self._nfft = _next_pow2(self._taps + _BLOCK)
        self._chunk = self._nfft - self._taps  # longest block the overlap-save frame holds
        self._dfft = _next_pow2((self._span + self._max_delay) // _DECIM)
        size = _next_pow2(int(_HISTORY_S * rate))
        self._ref = _Timeline(size)
        self._mic = _Timeline(size)
        self._delay: int | None = None  # where the filter starts, in samples behind the mic
        self._candidate: int | None = None
        self._since_check = 0
        self._erle_in = self._erle_out = 0.0
        self._reset_filters()

    # --- public API ------------------------------------------------------------------------

    def push_reference(self, samples: np.ndarray, at_sample: int) -> None:
        """The playback (16 kHz float) that the loudspeaker starts at input sample `at_sample`."""
        x = np.asarray(samples, dtype=np.float64).reshape(-1)
        if x.size:
            self._ref.write(x, int(at_sample))

    def process(self, mic: np.ndarray, at_sample: int) -> np.ndarray:
        """The microphone window starting at input sample `at_sample`, minus the agent's echo.

        With no playback in reach (none within `max_delay_ms` plus the filter length), `mic`
        comes back unchanged and nothing adapts.
        """
        d32 = np.asarray(mic, dtype=np.float32).reshape(-1)
        n, at = d32.size, int(at_sample)
        if n == 0:
            return d32
        self._mic.write(d32, at)
        reach = self._ref.read(at - self._max_delay - self._taps, at + n)
        if not np.any(np.abs(reach) > self._ref_floor):
            self._gain = 1.0
            return d32
        self._since_check += n
        if self._since_check >= self._every:
            self._since_check = 0
            self._check_delay(at + n)
        d = d32.astype(np.float64)
        if self._delay is None:
            e, y = d, np.zeros(n)
        else:
            e, y = self._cancel(d, at)
        out = self._suppress(e, y, reach)
        self._erle_in = _ERLE_KEEP * self._erle_in + (1 - _ERLE_KEEP) * float(np.dot(d, d))
        self._erle_out = _ERLE_KEEP * self._erle_out + (1 - _ERLE_KEEP) * float(np.dot(out, out))
        return out.astype(np.float32)

    @property
    def erle_db(self) -> float:
        """Echo return loss enhancement of the returned signal in dB, over the last ~0.6 s of
        windows with playback (0.0 before any). A caller talking over the agent counts as
        residual, so it reads low during double talk."""
        if self._erle_in <= 0.0:
            return 0.0
        return 10.0 * math.log10(self._erle_in / max(self._erle_out, _TINY))

    @property
    def delay_ms(self) -> float | None:
        """The echo's first arrival behind the playback, or None before it was found."""
        if self._delay is None:
            return None
        return (self._delay + self._lead) * 1000.0 / self._rate

    # --- step 1: bulk delay ----------------------------------------------------------------

    def _check_delay(self, end: int) -> None:
        """Cross-correlate the last `delay_span_ms` of mic with the playback; move on agreement."""
        m = self._mic.read(end - self._span, end).reshape(-1, _DECIM).mean(axis=1)
        r = self._ref.read(end - self._span - self._max_delay, end).reshape(-1, _DECIM).mean(axis=1)
        if not np.any(np.abs(r) > self._ref_floor):
            return
        n = self._dfft
        cross = np.conj(np.fft.rfft(m, n)) * np.fft.rfft(r, n)
        # PHAT weighting: every band votes equally, so the lowest formant cannot blur the peak;
        # bands 60 dB under the strongest (no playback there) stay out of the vote.
        cross /= np.abs(cross) + 1e-3 * np.abs(cross).max() + _TINY
        k = self._max_delay // _DECIM
        corr = np.fft.irfft(cross, n)[k::-1]  # corr[lag]: the mic follows the playback by lag
        peak = int(np.argmax(corr))
        # Below 6x the median there is no clear echo (silence, or the caller drowns it):
        # tests/test_echo.py's echoes stand above it and its echo-free spans below. Chance peaks
        # above it rarely repeat, which the two-look agreement below relies on.
        if corr[peak] < 6.0 * float(np.median(np.abs(corr))):
            return
        # First arrival: the earliest lag within `lead_ms` before the peak reaching half of it.
        early = max(0, peak - self._lead // _DECIM)
        first = early + int(np.argmax(corr[early : peak + 1] >= 0.5 * corr[peak]))
        if self._delay is not None:
            start, stop = self._delay, self._delay + self._taps
            held = float(corr[start // _DECIM : stop // _DECIM].max(initial=0.0))
            # Stay while the filter still spans the echo (moving costs convergence), or while
            # the echo it spans is still half as strong as the new peak: a caller's voice can
            # make a stray peak, but it does not make the real echo go away.
            spans = start <= first * _DECIM and peak * _DECIM < start + 3 * self._taps // 4
            if spans or held > 0.5 * corr[peak]:
                self._candidate = None
                return
        delay = max(0, first * _DECIM - self._lead)
        if self._candidate is None or abs(delay - self._candidate) > self._lead // 2:
            # Voiced speech repeats every pitch period, so one short look can land a period
            # off the true delay (or a caller's syllable can fake a peak); wait for the next
            # look to agree.
            self._candidate = delay
            return
        self._candidate = None
        self._move_to(delay)

    def _move_to(self, delay: int) -> None:
        if self._delay is not None and abs(delay - self._delay) < self._taps // 2:
            shift = delay - self._delay  # keep what was learnt: slide the taps with the window
            for name in ("_wf", "_wb"):
                w = np.fft.irfft(getattr(self, name), self._nfft)[: self._taps]
                w = np.roll(w, -shift)
                if shift > 0:
                    w[-shift:] = 0.0
                elif shift < 0:
                    w[:-shift] = 0.0
                setattr(self, name, np.fft.rfft(w, self._nfft))
        else:
            self._reset_filters()
        self._delay = delay

    # --- step 2: adaptive filter -----------------------------------------------------------

    def _reset_filters(self) -> None:
        bins = self._nfft // 2 + 1
        self._wf = np.zeros(bins, np.complex128)  # foreground: produces the output
        self._wb = np.zeros(bins, np.complex128)  # background: adapts every block
        self._power = np.zeros(bins)
        self._err_f = self._err_b = 0.0
        self._lin_in = self._lin_out = 0.0
        self._trusted = False
        self._leak = 1.0  # residual echo power per unit of echo-estimate power
        self._gain = 1.0

    def _cancel(self, d: np.ndarray, at: int) -> tuple[np.ndarray, np.ndarray]:
        """Overlap-save block NLMS over the delay-aligned playback; returns (residual, echo)."""
        assert self._delay is not None
        n_fft, taps = self._nfft, self._taps
        e, y = np.empty_like(d), np.empty_like(d)
        for c0 in range(0, d.size, self._chunk):
            b = min(self._chunk, d.size - c0)
            stop = at + c0 + b - self._delay
            x = self._ref.read(stop - n_fft, stop)
            xf = np.fft.rfft(x)
            yf = np.fft.irfft(xf * self._wf, n_fft)[n_fft - b :]
            yb = np.fft.irfft(xf * self._wb, n_fft)[n_fft - b :]
            dd = d[c0 : c0 + b]
            ef, eb = dd - yf, dd - yb
            if np.any(np.abs(x[n_fft - b - taps :]) > self._ref_floor):  # adapt on playback only
                ef, yf = self._adapt(xf, dd, ef, eb, yf, yb)
            e[c0 : c0 + b], y[c0 : c0 + b] = ef, yf
        return e, y

    def _adapt(self, xf: np.ndarray, d: np.ndarray, ef: np.ndarray, eb: np.ndarray,
               yf: np.ndarray, yb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One background NLMS step, then the two-path decision; returns the output pair."""
        n_fft, taps, b = self._nfft, self._taps, d.size
        p = np.abs(xf) ** 2
        # A bin beside a loud harmonic holds mostly that harmonic's leakage: normalise it by
        # its neighbourhood, or its steps are huge and noisy (voiced speech would not converge).
        p = np.maximum(p, np.convolve(p, np.full(_LEAK_BINS, 1.0 / _LEAK_BINS), mode="same"))
        if not self._power.any():
            self._power = p  # start from the first block, not from zero (huge first steps)
        self._power = _POWER_KEEP * self._power + (1 - _POWER_KEEP) * p
        # Never below this block's power, or a syllable onset takes an oversized step. Scaled so
        # a block moves the taps as far as b time-domain NLMS steps of size `step` would.
        power = np.maximum(self._power, p)
        norm = power * (taps / n_fft) + _POWER_REG * power.mean() + _TINY
        err = np.zeros(n_fft)
        err[n_fft - b :] = eb
        grad = np.fft.irfft(np.conj(xf) * np.fft.rfft(err) / norm, n_fft)
        grad[taps:] = 0.0  # constrained: the filter stays `taps` long (no circular wrap)
        self._wb += self._step * np.fft.rfft(grad)
        # Two-path: compare the filters on this block's errors (both before this update).
        self._err_f = _PATH_KEEP * self._err_f + (1 - _PATH_KEEP) * float(np.dot(ef, ef))
        self._err_b = _PATH_KEEP * self._err_b + (1 - _PATH_KEEP) * float(np.dot(eb, eb))
        if self._err_b < _COPY_RATIO * self._err_f:
            self._wf = self._wb.copy()
            self._err_f = self._err_b
            ef, yf = eb, yb
        elif self._err_b > _RESET_RATIO * self._err_f:
            self._wb = self._wf.copy()
            self._err_b = self._err_f
        if not self._trusted:
            self._lin_in = _TRUST_KEEP * self._lin_in + (1 - _TRUST_KEEP) * float(np.dot(d, d))
            self._lin_out = _TRUST_KEEP * self._lin_out + (1 - _TRUST_KEEP) * float(np.dot(ef, ef))
            if self._lin_out * 10.0 ** (_TRUST_DB / 10.0) < self._lin_in:
                # Sticky until the filter is reset: double talk must not undo it.
                self._trusted = True
                self._leak = self._lin_out / self._lin_in
        return ef, yf

    # --- step 3: residual echo suppression -------------------------------------------------

    def _suppress(self, e: np.ndarray, y: np.ndarray, reach: np.ndarray) -> np.ndarray:
        if self._min_gain >= 1.0:
            return e
        pe, py = float(np.mean(e * e)), float(np.mean(y * y))
        if self._trusted:
            if py > _TINY:
                # Leakage tracks the lower edge of residual/estimate: single-talk windows pull
                # it down fast; a caller's loud windows push it up only slowly and boundedly.
                ratio = min(max(pe / py / self._leak, 1.0 / _LEAK_JUMP), _LEAK_JUMP)
                self._leak *= ratio ** (_LEAK_DOWN if ratio < 1.0 else _LEAK_UP)
            echo_left = self._leak * py
        else:  # not converged: the echo may be as loud as the loudest playback in reach
            blocks = reach[: reach.size - reach.size % 256].reshape(-1, 256)
            echo_left = self._echo_return * float(np.max(np.mean(blocks * blocks, axis=1)))
        gain = min(1.0, max(self._min_gain, 1.0 - _OVERSUBTRACT * echo_left / max(pe, _TINY)))
        g = np.full(e.size, gain)
        ramp = min(_RAMP, e.size)
        g[:ramp] = np.linspace(self._gain, gain, ramp, endpoint=False)
        self._gain = gain
        return e * g
