"""The trained end-of-utterance head (`pipeline.stages.eou_head`): the shipped head files load,
and score a complete caller line above the same line cut short, first from the hidden states
kept in the file (no model), then on the real model."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.stages.eou_head import EouHead, EouHeadCompleteness, chat_prompt, head_file
from pipeline.stages.llm import MODELS, OPTIONAL_MODELS

HEADED = sorted(set(MODELS) - OPTIONAL_MODELS)  # a head ships for each model of the default set


@pytest.mark.parametrize("model", HEADED)
def test_the_shipped_head_scores_its_complete_line_above_the_cut_one(model):
    head = EouHead.load(head_file(model))
    assert head.model == model and head.check is not None
    assert head.weights.shape == head.mean.shape == head.scale.shape
    whole, cut = head.probability(head.check)
    assert whole > 0.5 > cut
    assert head_file(model).stat().st_size < 200_000  # a small file in the repository


def test_a_head_survives_saving_and_loading(tmp_path):
    rng = np.random.default_rng(0)
    head = EouHead(model="m", mean=rng.normal(size=4), scale=np.ones(4), weights=rng.normal(size=4),
                   bias=0.25, info={"lines": 3}, check=rng.normal(size=(2, 4)))
    head.save(tmp_path / "m.npz")
    again = EouHead.load(tmp_path / "m.npz")
    assert again.model == "m" and again.info["lines"] == 3
    np.testing.assert_allclose(again.probability(head.check), head.probability(head.check), rtol=1e-5)


def test_the_prompt_leaves_the_callers_turn_open_after_the_context():
    prompt = chat_prompt("I'd like, um, TWO.", [("assistant", "How many?"), ("system", "x")])
    assert prompt.endswith("<|im_start|>assistant\nHow many?<|im_end|>\n<|im_start|>user\ni'd like um two")
    assert "x<|im_end|>" not in prompt


@pytest.mark.models
@pytest.mark.parametrize("model", HEADED)
def test_on_the_model_a_finished_request_scores_above_its_cut(model):
    signal = EouHeadCompleteness(model=model)
    for whole, cut in [("Could you check my order status please.", "Could you check my"),
                       ("I'd like a taxi to the station.", "I'd like a taxi to the")]:
        assert signal.probability(whole) > signal.probability(cut)
    assert signal.probability("") == 0.0
    # the kept prompt changes no score beyond llama.cpp's sums over a differently split batch:
    # within 0.002 with AVX2 kernels, 0.0022 with AVX-512 VNNI ones (an AMD EPYC), so 0.005
    first = signal.probability("What time do you open")
    signal.probability_in("something else entirely", None, [("assistant", "Hello.")])
    assert signal.probability("What time do you open") == pytest.approx(first, abs=5e-3)


def test_a_head_with_a_hidden_layer_and_pooling_survives_saving_and_loading(tmp_path):
    rng = np.random.default_rng(1)
    head = EouHead(model="m", mean=rng.normal(size=4), scale=np.ones(4), weights=rng.normal(size=3),
                   bias=-0.5, info={"pool": 2, "hidden": 3}, check=rng.normal(size=(2, 4)),
                   hidden_weights=rng.normal(size=(4, 3)), hidden_bias=rng.normal(size=3))
    head.save(tmp_path / "m.npz")
    again = EouHead.load(tmp_path / "m.npz")
    assert again.pool == 2 and again.hidden_weights is not None
    z = (head.check - head.mean) / head.scale
    expected = 1 / (1 + np.exp(-(np.tanh(z @ head.hidden_weights + head.hidden_bias) @ head.weights - 0.5)))
    np.testing.assert_allclose(again.probability(head.check), expected, rtol=1e-5)

