"""Threads per model for this machine's cores.

Whisper (CTranslate2), llama.cpp and Piper (onnxruntime) each default to a pool as large as the
machine, and on a small one they run at the same time: the final pass overlaps a speculation's
prompt, and Piper synthesizes the first chunk while the LLM decodes the next. Oversubscribed,
llama.cpp's spinning threads slow sharply (bench/README.md, "Reading the numbers"). Each stage
takes `threads=None` to mean "the split below for the detected cores"; `bench/levers.py
--threads` compares splits, and an explicit `--set llm.threads=N` always wins. The environment
variable PIPELINE_THREADS=N gives every model N threads instead of the split (`make test-shake`
runs the suite with 1).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Literal

Stage = Literal["stt", "llm", "tts", "turns"]


def usable_cores() -> int:
    """Cores this process may run on (a container's CPU set, not the host's count)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def default_threads(stage: Stage, cores: int | None = None) -> int:
    """Threads for one model on `cores` cores (default: the detected ones).

    Up to 2 cores: every model gets both, the setting of the 2-core reference results
    (bench/results/2026-11-30-vm.md); splitting two cores leaves each model one, and each of them
    then runs at half speed even when it runs alone, which it mostly does. Above that, Whisper's
    final pass runs alone (all cores), and so does the audio turn signal (Smart Turn), between the
    final pass and the reply; the LLM and Piper overlap in streaming mode: Piper
    takes a quarter (its first chunk is a median 141 ms of compute on 2 cores, streaming and
    preemptive, in the same results) and the
    LLM the rest, so together they never ask for more cores than there are.
    """
    forced = os.environ.get("PIPELINE_THREADS", "").strip()
    if forced and cores is None:
        if not forced.isdigit() or int(forced) < 1:
            raise ValueError(f"PIPELINE_THREADS must be a whole number >= 1, got {forced!r}")
        return int(forced)
    n = cores if cores is not None else usable_cores()
    if n <= 2 or stage in ("stt", "turns"):
        return max(1, n)
    tts = max(1, n // 4)
    return tts if stage == "tts" else n - tts


class UrgentFirst:
    """One model's lock, taken first by urgent work: a final pass the reply waits for gets the
    model before any partial pass still waiting (a partial already running finishes first: a
    pass cannot be stopped halfway). A plain lock hands the model to whichever thread the OS
    wakes: at speech-stop a partial queued a moment before the final took it, and the final, the
    speculation and the reply waited ~500 ms more."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._held = False
        self._urgent_waiting = 0

    @contextlib.contextmanager
    def hold(self, *, urgent: bool) -> Iterator[None]:
        with self._cond:
            self._urgent_waiting += urgent
            try:
                while self._held or (not urgent and self._urgent_waiting):
                    self._cond.wait()
            finally:
                self._urgent_waiting -= urgent
            self._held = True
        try:
            yield
        finally:
            with self._cond:
                self._held = False
                self._cond.notify_all()


# the variables by which a user may already have sized numpy's BLAS: theirs wins
_BLAS_ENV = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")


def limit_blas_threads() -> int | None:
    """numpy's BLAS on one thread for the process that loads the models (`build_stage`); the
    threads it now has, or None where it was left as it was.

    The pipeline's own numpy work is small (mel filters, resampling, levels), and OpenBLAS's
    idle workers spin on the other cores for a while after each call, on the cores Whisper,
    llama.cpp and onnxruntime are about to use: faster-whisper's mel filters before every pass
    are such a call. PIPELINE_BLAS_THREADS=N sets N instead (0: leave numpy's BLAS as it is), as
    does any of the BLAS libraries' own variables (OPENBLAS_NUM_THREADS, ...) set by the user.
    """
    wanted = os.environ.get("PIPELINE_BLAS_THREADS", "").strip()
    if wanted and (not wanted.isdigit()):
        raise ValueError(f"PIPELINE_BLAS_THREADS must be a whole number >= 0, got {wanted!r}")
    if wanted == "0" or (not wanted and any(os.environ.get(v) for v in _BLAS_ENV)):
        return None
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=int(wanted or 1), user_api="blas")
    return int(wanted or 1)
