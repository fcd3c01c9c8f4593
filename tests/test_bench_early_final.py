"""bench.early_final's padding of an early pass to the length the pass at speech-stop reads."""

from __future__ import annotations

import numpy as np

from bench.early_final import padded


def test_an_early_pass_is_padded_with_zeros_or_the_quiet_after_the_speech():
    turn = np.ones(4, np.float32)
    quiet = np.array([0.1, -0.2], np.float32)
    assert padded(turn, 5, quiet=quiet, room=False).tolist() == [1, 1, 1, 1, 0, 0, 0, 0, 0]
    room = padded(turn, 5, quiet=quiet, room=True)
    assert room.dtype == np.float32 and np.allclose(room[4:], [0.1, -0.2, 0.1, -0.2, 0.1])
    assert padded(turn, 0, quiet=quiet, room=True) is turn  # already as long: left as it is
    assert padded(turn, 3, quiet=np.zeros(0, np.float32), room=True).tolist() == [1, 1, 1, 1, 0, 0, 0]
