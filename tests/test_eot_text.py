"""The text end-of-turn model on the embedded instruct LLM (Qwen2.5-Coder-0.5B-Instruct): what
it reads, that keeping its evaluated prompt between calls changes no score, and that the
conversation before the turn counts."""

from __future__ import annotations

import pytest

from pipeline.stages.text_eot import TextEndOfTurn, normalise


def test_the_model_reads_the_words_without_case_or_punctuation():
    assert normalise("Oh, my fellow Americans!") == "oh my fellow americans"
    assert normalise("I'd like - um - two.") == "i'd like um two"


def test_an_unknown_model_says_which_ones_there_are():
    with pytest.raises(ValueError, match="qwen2.5-coder-0.5b"):
        TextEndOfTurn(model="gpt-9")


@pytest.fixture(scope="module")
def qwen():
    """The model alone, without the heuristic's veto."""
    return TextEndOfTurn(model="qwen2.5-coder-0.5b", with_heuristic=False)


@pytest.mark.models
def test_with_the_heuristic_a_dangling_word_keeps_the_turn_open(qwen):
    vetoed = TextEndOfTurn(model="qwen2.5-coder-0.5b", with_heuristic=True)
    assert vetoed.score == "stop" and (vetoed.centre, vetoed.scale) == (qwen.centre, qwen.scale)
    assert vetoed.probability("I'd like to pay with") <= 0.05  # the heuristic's dangling "with"
    assert vetoed.probability("Thanks, bye.") == pytest.approx(min(qwen.probability("Thanks, bye."), 0.9))


@pytest.mark.models
def test_a_finished_request_scores_above_the_same_words_cut_mid_sentence(qwen):
    for whole, cut in [("I'd like to book a room for two nights.", "I'd like to book a room for."),
                       ("Can you tell me how to reset my password?", "Can you tell me how to."),
                       ("Thanks, bye.", "I need eggs, milk, and.")]:
        assert qwen.probability(whole) > qwen.probability(cut), (whole, cut)
    assert qwen.probability("") == 0.0


@pytest.mark.models
def test_kept_state_changes_no_score(qwen):
    """The evaluated prompt is kept between calls (only what changed is evaluated again): a
    score is the same whatever came before it."""
    first = qwen.end_logprob("what time is checkout")
    qwen.end_logprob("my order number is four four")
    qwen.end_logprob("what time")  # a prefix of it: the kept state is longer than the prompt
    # llama.cpp's sums differ a little with how tokens are batched (0.01 nats here); a wrong
    # kept state would score another prompt, whole nats away
    assert qwen.end_logprob("what time is checkout") == pytest.approx(first, abs=0.05)


@pytest.mark.models
def test_the_question_before_makes_a_short_answer_finished(qwen):
    asked = [("assistant", "How many people is the table for?")]
    assert qwen.end_logprob("for two", asked) > qwen.end_logprob("for two") + 1.0
    # and the probability reads the same context
    assert qwen.probability_in("for two", None, asked) > qwen.probability("for two")


class _Recording:
    """The heuristic, writing down the context each call was given."""

    def __init__(self) -> None:
        from pipeline.turns import HeuristicCompleteness

        self.inner = HeuristicCompleteness()
        self.contexts: list[tuple[str, list[tuple[str, str]]]] = []

    def probability(self, text, audio=None):
        raise AssertionError("a context signal is asked with its context")

    def probability_in(self, text, audio, context):
        self.contexts.append((text, list(context)))
        return self.inner.probability(text)


@pytest.mark.models
def test_turn_taking_gives_a_context_signal_the_turns_before_the_open_one(real_stages, say):
    from pipeline.stages.fakes import ScriptedLLM, ScriptedSTT, ToneTTS
    from pipeline.testing import call, with_stages
    from pipeline.transports.scripted import Clip

    signal = _Recording()
    stages = with_stages(real_stages, completeness=signal, tts=ToneTTS(),
                         stt=ScriptedSTT(transcripts=["Book a table.", "For two."]),
                         llm=ScriptedLLM(replies=["How many people?", "Done."]))
    audio = say("Book a table.")
    replied = lambda e: e.type == "response.done"  # noqa: E731
    rec = call(stages, [Clip(audio, 0.3), Clip(audio, None, after=replied, delay_s=0.5)])
    assert rec.transcripts == ["Book a table.", "For two."], rec.timeline()
    first = [c for t, c in signal.contexts if t == "Book a table."]
    second = [c for t, c in signal.contexts if t == "For two."]
    assert first and first[0] == [], signal.contexts  # nothing before the first turn
    assert second and second[-1] == [("user", "Book a table."), ("assistant", "How many people?")]
