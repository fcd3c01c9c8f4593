"""The allocator settings a long-running server takes (pipeline/base/memory.py), and which models
keep onnxruntime's memory arena; `python -m bench.soak` measures what a server then holds."""

from __future__ import annotations

import pytest

from pipeline.base.memory import bound_arenas, trim


def test_the_allocator_settings_are_taken_or_refused_clearly():
    assert bound_arenas(64) is True  # glibc (Debian) takes it; 64 leaves this process as it was
    assert isinstance(trim(), bool)
    with pytest.raises(ValueError, match="at least 1"):
        bound_arenas(0)


@pytest.mark.models
def test_piper_runs_without_onnxruntimes_memory_arena_and_vad_with_it():
    """The arena keeps the largest sentence's buffers for good; Silero's windows are one size."""
    from pipeline.stages.tts import PiperTTS
    from pipeline.stages.vad import SileroVAD

    piper = PiperTTS(threads=1)
    assert piper._voice.session.get_session_options().enable_cpu_mem_arena is False
    assert len(piper.synthesize("Hello there.")) > 0
    vad = SileroVAD(threads=1)
    assert vad._session.get_session_options().enable_cpu_mem_arena is True
