"""`bench.denoise`'s own parts, model-free: the noises it makes are repeatable and mixed at the
SNR it reports, and its word error rate counts edits over the words said."""

from __future__ import annotations

import numpy as np
import pytest

from bench import denoise as bd
from pipeline.base.audio import INPUT_RATE_HZ, dbfs


@pytest.mark.parametrize("kind", ["pink", "street",
                                  pytest.param("cafe", marks=pytest.mark.models)])  # talkers from jfk.wav
def test_each_noise_is_repeatable_and_mixed_at_the_snr(kind: str) -> None:
    a = bd.make_noise(kind, 2.0, seed=4)
    assert len(a) == 2 * INPUT_RATE_HZ and np.array_equal(a, bd.make_noise(kind, 2.0, seed=4))
    assert not np.array_equal(a, bd.make_noise(kind, 2.0, seed=5))
    t = np.arange(INPUT_RATE_HZ) / INPUT_RATE_HZ
    speech = np.concatenate([np.zeros(4800), 0.1 * np.sin(2 * np.pi * 300 * t), np.zeros(8000)]).astype(np.float32)
    mixed = bd.mix(speech, kind, speech_from=4800, speech_to=4800 + INPUT_RATE_HZ, seed=1)
    under = mixed - speech
    assert dbfs(speech[4800:4800 + INPUT_RATE_HZ]) - dbfs(under) == pytest.approx(bd.SNR_DB, abs=0.5)
    assert np.array_equal(bd.mix(speech, "clean", speech_from=0, speech_to=1, seed=1), speech)


def test_word_error_counts_edits_over_the_words_said() -> None:
    assert bd.wer("Hold on, please.", "hold on please") == (0, 3)
    assert bd.wer("book a room for two", "book a learn for") == (2, 5)
    assert bd.wer("", "uh") == (1, 0)
    assert bd.wer("The order number is four seven nine two.", "The order number is 4792.") == (0, 8)
