"""Echo guard: take the agent's own voice out of the microphone before the barge-in gate.

Through loudspeakers the agent hears itself, loud and voiced: exactly what the gate fires on. The
played audio is known sample for sample, so the guard

1. finds the bulk loudspeaker-to-microphone delay by cross-correlating microphone and playback
   (re-checked every few windows, so a changed route is followed);
2. cancels the echo with an adaptive filter over the delay-aligned playback: block
   frequency-domain NLMS, two-path (a background filter learns, a foreground filter speaks and
   only takes the background's taps when they cancel better), so a caller talking over the agent
   cannot wreck a converged filter;
3. attenuates whatever echo is left while the residual still rises and falls with the echo
   estimate; before the filter has converged, it assumes the echo can be as loud as the playback.

The caller's voice does not correlate with the playback, so it passes through all three.
"""

from __future__ import annotations

import math

import numpy as np

from .audio import INPUT_RATE_HZ, ms_to_samples

_DECIM = 4  # delay search at 4 kHz: speech's delay cues lie below 2 kHz, and it is 16x cheaper
_HISTORY_S = 8.0  # ring length; playback may be handed over up to a few seconds ahead of the mic
_POWER_KEEP = 0.7  # per-bin playback power: ~3-block memory, smooth enough not to chase noise
_PATH_KEEP = 0.8  # two-path error averages: ~5 blocks (160 ms), so one lucky block copies nothing
_COPY_RATIO = 0.7  # background must cancel >= 1.5 dB better before the foreground takes it
_RESET_RATIO = 4.0  # background 6 dB worse than foreground: it diverged (double talk); restart it
_LEAK_KEEP = 0.97  # residual-vs-estimate regression over ~1 s of windows, long enough for talk
_ERLE_KEEP = 0.95  # ERLE over ~0.6 s of windows with playback: follows convergence, not noise
_TRUST_KEEP = 0.8  # convergence check over ~5 blocks: quick to see, yet not one lucky block
_TRUST_DB = 10.0  # the linear filter is relied on once it has removed this much of the echo
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

    `push_reference` every played frame (16 kHz) with its place on the input timeline, then
    `process` every microphone window; feed the returned residual to the VAD and barge-in gate.
    """

    def __init__(
        self,
        *,
        max_delay_ms: float = 250.0,  # playback buffers + DAC/ADC + air; 250 ms covers USB/BT sets
        filter_ms: float = 64.0,  # early reflections of a small room; longer tails go to step 3
        step: float = 0.5,  # NLMS step (stable below 2); 0.5 converges in ~0.3 s, little noise
        lead_ms: float = 8.0,  # taps before the first arrival: delay estimates are a few ms off
        delay_span_ms: float = 500.0,  # two syllables or more: enough for one clear peak
        delay_every_ms: float = 128.0,  # re-check often, so a moved route is found in ~0.5 s
        max_suppression_db: float = 20.0,  # residual echo ends up ~40 dB under the echo; 0 = off
        echo_return_db: float = 0.0,  # echo level vs playback assumed before convergence (worst)
        ref_floor_dbfs: float = -70.0,  # playback quieter than this is silence (16-bit dither)
        sample_rate_hz: int = INPUT_RATE_HZ,
    ) -> None:
        rate = sample_rate_hz
        self._max_delay = _DECIM * (ms_to_samples(max_delay_ms, rate) // _DECIM)
        self._taps = max(_DECIM, ms_to_samples(filter_ms, rate))
        self._lead = ms_to_samples(lead_ms, rate)
        self._span = _DECIM * max(1, ms_to_samples(delay_span_ms, rate) // _DECIM)
        self._every = max(1, ms_to_samples(delay_every_ms, rate))
        self._step = step
        self._min_gain = 10.0 ** (-max_suppression_db / 20.0)
        self._echo_return = 10.0 ** (echo_return_db / 10.0)
        self._ref_floor = 10.0 ** (ref_floor_dbfs / 20.0)
        self._nfft = _next_pow2(self._taps + 512)  # 512: one Silero window per block
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

        With no playback in reach (none within `max_delay_ms` plus the filter), `mic` comes back
        unchanged and nothing adapts.
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
        out = self._suppress(d, e, y, reach)
        p_in, p_out = float(np.dot(d, d)), float(np.dot(out, out))
        self._erle_in = _ERLE_KEEP * self._erle_in + (1 - _ERLE_KEEP) * p_in
        self._erle_out = _ERLE_KEEP * self._erle_out + (1 - _ERLE_KEEP) * p_out
        return out.astype(np.float32)

    @property
    def erle_db(self) -> float:
        """Echo return loss enhancement of the returned signal, dB, over the last ~0.6 s of
        windows with playback (0 before any). A caller talking over the agent counts as
        residual, so it reads low during double talk."""
        if self._erle_in <= 0.0:
            return 0.0
        return 10.0 * math.log10(max(self._erle_in, _TINY) / max(self._erle_out, _TINY))

    @property
    def delay_ms(self) -> float | None:
        """The bulk echo delay in use (first arrival), or None before one was found."""
        if self._delay is None:
            return None
        return (self._delay + self._lead) * 1000.0 / INPUT_RATE_HZ

    # --- step 1: bulk delay ------------------------------------------------------------------

    def _check_delay(self, end: int) -> None:
        """Cross-correlate the last `delay_span_ms` of mic against playback; move on agreement."""
        m = self._mic.read(end - self._span, end).reshape(-1, _DECIM).mean(axis=1)
        r = self._ref.read(end - self._span - self._max_delay, end).reshape(-1, _DECIM).mean(axis=1)
        if not np.any(np.abs(r) > self._ref_floor):
            return
        n = self._dfft
        cross = np.conj(np.fft.rfft(m, n)) * np.fft.rfft(r, n)
        # PHAT weighting: every band votes equally, so the lowest formant cannot blur the peak.
        cross /= np.abs(cross) + 1e-3 * np.abs(cross).max() + _TINY
        k = self._max_delay // _DECIM
        corr = np.fft.irfft(cross, n)[k::-1]  # corr[lag]: mic correlates with playback lag ago
        peak = int(np.argmax(corr))
        floor = float(np.median(np.abs(corr)))
        if corr[peak] < 6.0 * floor:  # no clear echo (silence, or the caller drowns it)
            return
        # First arrival: the earliest lag within 16 ms before the peak that reaches half of it.
        early = max(0, peak - 16 * INPUT_RATE_HZ // 1000 // _DECIM)
        first = early + int(np.argmax(corr[early : peak + 1] >= 0.5 * corr[peak]))
        delay = max(0, first * _DECIM - self._lead)
        if self._delay is not None:
            if abs(delay - self._delay) <= self._lead // 2:
                self._candidate = None
                return
            held = (self._delay + self._lead) // _DECIM
            if 0 <= held <= k and corr[held] > 0.5 * corr[peak]:  # current delay still holds
                self._candidate = None
                return
        if self._candidate is None or abs(delay - self._candidate) > self._lead // 2:
            # Voiced speech repeats every pitch period, so one short look can pick a period
            # off the true delay; wait for the next look (more syllables) to agree.
            self._candidate = delay
            return
        self._candidate = None
        self._move_to(delay)

    def _move_to(self, delay: int) -> None:
        if self._delay is not None and abs(delay - self._delay) < self._taps:
            shift = delay - self._delay  # keep what was learnt: slide the taps with the window
            for name in ("_wf", "_wb"):
                w = np.fft.irfft(getattr(self, name), self._nfft)[: self._taps]
                w = np.roll(w, -shift)
                if shift > 0:
                    w[-shift:] = 0.0
                else:
                    w[:-shift] = 0.0
                setattr(self, name, np.fft.rfft(w, self._nfft))
            self._trusted = False
        else:
            self._reset_filters()
        self._delay = delay

    # --- step 2: adaptive filter ----------------------------------------------------------

    def _reset_filters(self) -> None:
        bins = self._nfft // 2 + 1
        self._wf = np.zeros(bins, np.complex128)  # foreground: produces the output
        self._wb = np.zeros(bins, np.complex128)  # background: adapts every block
        self._power = np.zeros(bins)
        self._err_f = self._err_b = 0.0
        self._lin_in = self._lin_out = 0.0
        self._trusted = False
        self._leak = np.zeros(4)  # running means of pe, py, pe*py, py*py
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
            if np.any(np.abs(x[n_fft - b - taps :]) > self._ref_floor):  # adapt only on playback
                ef, yf = self._adapt(xf, dd, ef, eb, yf, yb, b)
            e[c0 : c0 + b], y[c0 : c0 + b] = ef, yf
        return e, y

    def _adapt(self, xf: np.ndarray, d: np.ndarray, ef: np.ndarray, eb: np.ndarray,
               yf: np.ndarray, yb: np.ndarray, b: int) -> tuple[np.ndarray, np.ndarray]:
        n_fft, taps = self._nfft, self._taps
        p = np.abs(xf) ** 2
        if not self._power.any():  # first block: start from it, not from zero (huge steps)
            self._power = p
        self._power = _POWER_KEEP * self._power + (1 - _POWER_KEEP) * p
        # Per-bin normalised (MDF): each bin learns at the same rate however loud it is.
        norm = np.maximum(self._power, p) + 1e-3 * self._power.mean() + _TINY
        err = np.zeros(n_fft)
        err[n_fft - b :] = eb
        grad = np.fft.irfft(np.conj(xf) * np.fft.rfft(err) / norm, n_fft)
        grad[taps:] = 0.0  # constrained: the filter stays `taps` long (no circular wrap)
        self._wb += self._step * np.fft.rfft(grad)
        # Two-path: compare the filters on this block's errors (before this update).
        self._err_f = _PATH_KEEP * self._err_f + (1 - _PATH_KEEP) * float(np.dot(ef, ef))
        self._err_b = _PATH_KEEP * self._err_b + (1 - _PATH_KEEP) * float(np.dot(eb, eb))
        if self._err_b < _COPY_RATIO * self._err_f:
            self._wf = self._wb.copy()
            self._err_f = self._err_b
            ef, yf = eb, yb
        elif self._err_b > _RESET_RATIO * self._err_f:
            self._wb = self._wf.copy()
            self._err_b = self._err_f
        self._lin_in = _TRUST_KEEP * self._lin_in + (1 - _TRUST_KEEP) * float(np.dot(d, d))
        self._lin_out = _TRUST_KEEP * self._lin_out + (1 - _TRUST_KEEP) * float(np.dot(ef, ef))
        if self._lin_out * 10.0 ** (_TRUST_DB / 10.0) < self._lin_in:
            self._trusted = True  # sticky until the delay moves: double talk must not undo it
        return ef, yf

    # --- step 3: residual echo suppression ---------------------------------------------------

    def _suppress(self, d: np.ndarray, e: np.ndarray, y: np.ndarray, reach: np.ndarray) -> np.ndarray:
        if self._min_gain >= 1.0:
            return e
        pe, py = float(np.mean(e * e)), float(np.mean(y * y))
        s = self._leak
        s *= _LEAK_KEEP
        s += (1 - _LEAK_KEEP) * np.array([pe, py, pe * py, py * py])
        var = s[3] - s[1] * s[1]
        # Leakage: how much of the echo estimate's rise and fall is still in the residual.
        # The caller's voice does not move with the echo estimate, so it barely counts.
        leak = max(0.0, (s[2] - s[0] * s[1]) / var) if var > _TINY * _TINY else 0.0
        echo_left = min(leak, 1.0) * py
        if not self._trusted:  # not converged: the echo may be as loud as the playback
            blocks = reach[: reach.size - reach.size % 256].reshape(-1, 256)
            echo_left = max(echo_left, self._echo_return * float(np.max(np.mean(blocks**2, axis=1))))
        gain = min(1.0, max(self._min_gain, 1.0 - _OVERSUBTRACT * echo_left / max(pe, _TINY)))
        g = np.full(e.size, gain)
        ramp = min(_RAMP, e.size)
        g[:ramp] = np.linspace(self._gain, gain, ramp, endpoint=False)
        self._gain = gain
        return e * g
