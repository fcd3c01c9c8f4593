"""The guard on a prompted pass (pipeline/stages/whisper.py `_decode`, stt_context.prompt_failure):
a pass that writes the prompt back, loops, or hears only the prompt's words is done again without
the prompt, and counted; any other pass is decoded once. On a scripted backend, no model."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.stages.stt_context import CallContext
from pipeline.stages.stt_window import WindowPass

SHOP = CallContext.of("You are the phone support desk of an online shop.",
                      [("look_up_order", ["order_id"]), ("issue_refund", ["order_id", "card_last4"])],
                      hotwords=["Mastercard"])
PROMPT = SHOP.prompt(["Could you give me the order number?"])
UNPROMPTED = "I heard this without the prompt."
AUDIO = np.zeros(16000 * 2, np.float32)


class Segment:
    def __init__(self, text: str) -> None:
        self.text, self.avg_logprob, self.no_speech_prob, self.compression_ratio = text, -0.3, 0.1, 1.0


class ScriptedModel:
    """faster-whisper's WhisperModel as the stage calls it: says `prompted` when given a prompt."""

    prompted = unprompted = ""

    def __init__(self, *args, **kwargs) -> None:
        self.prompts: list[str | None] = []

    def transcribe(self, audio, *, initial_prompt=None, **options):
        self.prompts.append(initial_prompt)
        return iter([Segment(self.prompted if initial_prompt else self.unprompted)]), None


class ScriptedSized:
    """The sized-window decoder, scripted the same way."""

    def __init__(self, prompted: str, unprompted: str) -> None:
        self.prompted, self.unprompted = prompted, unprompted
        self.prompts: list[str | None] = []

    def features(self, audio):
        return np.zeros((80, len(audio) // 160), np.float32)

    def spans_of(self, features, frames, text):
        return ()  # no word timed: none unvoiced

    def decode(self, features, frames, *, prefix, max_new_tokens, final=False, prompt=None, align=False):
        self.prompts.append(prompt)
        text = self.prompted if prompt else self.unprompted
        return WindowPass(frames=frames, text=text, tokens=min(len(text.split()), max_new_tokens),
                          bound=max_new_tokens, no_speech_prob=0.1, avg_logprob=-0.3, final=final)


def _stt(monkeypatch, tmp_path, prompted: str, window: str, unprompted: str = UNPROMPTED):
    import faster_whisper

    from pipeline.stages.whisper import WhisperSTT

    (tmp_path / "model.bin").write_bytes(b"")
    monkeypatch.setattr(faster_whisper, "WhisperModel",
                        type("Model", (ScriptedModel,), {"prompted": prompted, "unprompted": unprompted}))
    stt = WhisperSTT(model_path=str(tmp_path), window=window)
    stt._sized_decoder = ScriptedSized(prompted, unprompted)
    return stt


@pytest.mark.parametrize("prompted, unprompted, why", [
    ("Look up order, order ID, issue refund.", UNPROMPTED, "prompt leaked"),  # the vocabulary written back
    ("6." + "0." * 80, UNPROMPTED, "prompt looped"),  # a phone-band clip, tiny.en with context
    ("Refund, refund, refund, refund, refund.", UNPROMPTED, "prompt looped"),
    ("Mastercard.", "", "prompt words only"),  # a hotword "heard" in noise where nothing is
    ("The order ID.", "Oh.", "prompt words only"),
])
@pytest.mark.parametrize("window", ["full", "sized-final"])
def test_a_prompted_pass_that_fails_is_done_again_without_the_prompt(monkeypatch, tmp_path, prompted,
                                                                    unprompted, why, window):
    stt = _stt(monkeypatch, tmp_path, prompted, window, unprompted)
    assert stt.transcribe(AUDIO, final=True, prompt=PROMPT) == unprompted
    assert stt.window_stats[why] == 1
    if window == "sized-final":  # the redo is sized too: a loop is not run again on the full window
        assert stt._sized_decoder.prompts == [PROMPT, None] and PROMPT not in stt._model.prompts
    else:
        assert stt._model.prompts == [PROMPT, None]


def test_prompt_words_are_kept_when_words_were_said_without_the_prompt(monkeypatch, tmp_path):
    """"Yes, reset it, please." to the IT desk is "Yes, we have this." without the prompt: a
    short answer in the agent's words is what the prompt is for."""
    stt = _stt(monkeypatch, tmp_path, "Yes, issue refund.", "full", unprompted="Yes, his you're fun.")
    assert stt.transcribe(AUDIO, final=True, prompt=PROMPT) == "Yes, issue refund."
    assert stt._model.prompts == [PROMPT, None]
    assert stt.window_stats["prompt words kept"] == 1 and not stt.window_stats["prompt words only"]


@pytest.mark.parametrize("prompted", [
    "I want a refund on my Mastercard.",  # the words the prompt is there to help hear
    "Order 4417, please.",  # a prompt word with one of the caller's own
    "Yes.",  # no content word: nothing the prompt could have put there
    "No, no.",
])
def test_a_prompted_pass_that_looks_right_is_decoded_once(monkeypatch, tmp_path, prompted):
    stt = _stt(monkeypatch, tmp_path, prompted, "full")
    assert stt.transcribe(AUDIO, final=True, prompt=PROMPT) == prompted
    assert stt._model.prompts == [PROMPT]
    assert not any(k.startswith("prompt") for k in stt.window_stats)


def test_without_a_prompt_a_loop_is_not_the_prompt_s_and_is_decoded_once(monkeypatch, tmp_path):
    looping = "6." + "0." * 80
    stt = _stt(monkeypatch, tmp_path, "unused", "full", unprompted=looping)
    assert stt.transcribe(AUDIO, final=True) == looping
    assert stt._model.prompts == [None]


def test_a_quick_pass_that_hears_only_the_prompt_is_dropped(monkeypatch, tmp_path):
    stt = _stt(monkeypatch, tmp_path, "Mastercard.", "full")
    assert stt.transcribe_quick(AUDIO, prompt=PROMPT) is None
    assert stt.window_stats["quick prompt words only"] == 1
    assert stt._sized_decoder.prompts == [PROMPT]  # not redone: the final pass follows at once
