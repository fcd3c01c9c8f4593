"""The `llm` completeness signal keeps llama.cpp's prompt cache: the reply after a score reuses
the instructions and history already evaluated, and says exactly what it would have said."""

from __future__ import annotations

import pytest

from pipeline.base.config import DEFAULT_INSTRUCTIONS
from pipeline.turns import LLMCompleteness

pytestmark = pytest.mark.models

MESSAGES = [{"role": "system", "content": DEFAULT_INSTRUCTIONS},
            {"role": "user", "content": "What time is checkout?"}]


@pytest.fixture
def greedy_llm(real_stages):
    """The session's LLM, greedy (so two replies to one prompt are comparable), restored after."""
    llm = real_stages.llm
    saved = llm.temperature, llm.keep_prompt_cache
    llm.temperature = 0.0
    yield llm
    llm.temperature, llm.keep_prompt_cache = saved


@pytest.mark.parametrize("keep", [True, False])
def test_a_completeness_score_keeps_or_drops_the_cached_prompt(greedy_llm, keep):
    llm = greedy_llm
    llm.keep_prompt_cache = keep
    llm.complete(MESSAGES, max_tokens=4)
    cached = llm.cached_tokens
    assert cached > 20  # the instructions alone are ~30 tokens
    LLMCompleteness(llm=llm).probability("What time is checkout?")
    assert llm.cached_tokens == (cached if keep else 0)


def test_the_reply_after_a_kept_cache_is_the_reply_of_llama_cpps_own_prefix_reuse(greedy_llm):
    """Restored cells leave llama.cpp where its own prompt reuse leaves it: the reply is the one
    it gives when the same prompt comes twice. (From an empty context it may differ: the prompt
    evaluated in one batch and its last token evaluated alone round differently, and the small
    model's greedy first word can flip on that; with llama-cpp-python 0.3.36's portable build,
    "I'm sorry for any inconvenience…" from scratch, "Checkout is…" on reuse, cache or not.)"""
    llm = greedy_llm
    signal = LLMCompleteness(llm=llm)
    llm.keep_prompt_cache = False
    signal.probability("What time is checkout?")  # leaves nothing cached
    llm.complete(MESSAGES, max_tokens=16)
    reused = llm.complete(MESSAGES, max_tokens=16)  # llama.cpp keeps the shared prefix itself
    llm.keep_prompt_cache = True
    signal.probability("What time is checkout?")  # the KV cells go out and come back
    assert llm.cached_tokens > 0
    assert llm.complete(MESSAGES, max_tokens=16) == reused


def test_a_request_tells_its_prompt_and_the_part_held_from_the_last_one(greedy_llm):
    """What the first-token mark reports (`Generation.cached_tokens`): the next turn prefills only
    what follows the instructions it shares with the request before."""
    import threading

    from pipeline.base.protocols import Generation

    greedy_llm.forget()  # nothing held
    first, second = Generation(), Generation()
    "".join(greedy_llm.stream(MESSAGES, cancel=threading.Event(), result=first, max_tokens=2))
    assert first.prompt_tokens == greedy_llm.count_tokens(MESSAGES) and first.cached_tokens == 0
    other = [MESSAGES[0], {"role": "user", "content": "Is breakfast included?"}]
    "".join(greedy_llm.stream(other, cancel=threading.Event(), result=second, max_tokens=2))
    instructions = greedy_llm.count_tokens(MESSAGES[:1])
    assert instructions - 5 <= second.cached_tokens < second.prompt_tokens, (instructions, second)


def _said(text: str) -> list[dict[str, str]]:
    return [MESSAGES[0], {"role": "user", "content": text}]


def test_a_prefill_of_the_callers_words_leaves_the_request_only_what_changed(greedy_llm):
    """`response.prefill`: a partial's words evaluated while the caller speaks. The request for
    the final's words then evaluates only the tokens after the prefix they share, and nothing
    when they are the same words."""
    import threading

    from pipeline.base.protocols import Generation

    llm = greedy_llm
    llm.forget()
    evaluated = llm.prefill(_said("What time is"))
    assert evaluated == llm.count_tokens(_said("What time is"))  # nothing was held
    assert llm.prefill(_said("What time is")) == 0  # held already
    done = Generation()
    reply = "".join(llm.stream(MESSAGES, cancel=threading.Event(), result=done, max_tokens=8))
    assert reply.strip()
    shared = llm.count_tokens(_said("What time is")) - 5  # the template's end follows the words
    assert shared <= done.cached_tokens < done.prompt_tokens
    # the final says the partial's words: the request evaluates none of its prompt again
    assert 0 < llm.prefill(_said("Is breakfast included?")) < llm.count_tokens(_said("Is breakfast included?"))
    again = Generation()
    "".join(llm.stream(_said("Is breakfast included?"), cancel=threading.Event(), result=again, max_tokens=4))
    assert again.cached_tokens == again.prompt_tokens - 1


def test_a_prefill_never_waits_and_gives_way(greedy_llm):
    llm = greedy_llm
    llm.forget()
    with llm.lock:  # a request holds the model: the prefill does not wait for it
        assert llm.prefill(_said("What time is checkout?")) == 0
    llm._wanting += 1  # a request waits for the model: the prefill stops at its next step
    try:
        assert llm.prefill(_said("What time is checkout?")) == 0
    finally:
        llm._wanting -= 1
    assert llm.prefill(_said("What time is checkout?")) > 0
    llm.forget()
    llm.keep_prompt_cache = False  # a model that keeps no prompt has none to prefill
    assert llm.prefill(_said("What time is checkout?")) == 0
    assert llm.cached_tokens == 0


def test_the_conversation_evaluated_up_to_the_callers_words_leaves_the_next_turn_only_its_own(greedy_llm):
    """After a reply, `prefill(upto_words=True)` evaluates the conversation with it and the
    caller's header, not the words: the next turn's request evaluates only its words and the
    assistant's header; a second time there is nothing left to evaluate."""
    import threading

    from pipeline.base.protocols import Generation

    llm = greedy_llm
    llm.forget()
    reply = "".join(llm.stream(MESSAGES, cancel=threading.Event(), max_tokens=12))
    conversation = [*MESSAGES, {"role": "assistant", "content": reply}]
    ahead = llm.prefill([*conversation, {"role": "user", "content": ""}], upto_words=True)
    assert ahead > 0
    assert llm.prefill([*conversation, {"role": "user", "content": "anything"}], upto_words=True) == 0
    nxt = [*conversation, {"role": "user", "content": "Is breakfast included?"}]
    done = Generation()
    "".join(llm.stream(nxt, cancel=threading.Event(), result=done, max_tokens=4))
    words_and_after = len(llm._llm.tokenize(b"Is breakfast included?", add_bos=False, special=True))
    assert done.prompt_tokens - done.cached_tokens <= words_and_after + 6, done  # + the assistant's header
    assert done.cached_tokens >= llm.count_tokens(conversation) - 3, done  # (its own assistant header)


def test_the_conversation_evaluated_ahead_waits_for_a_busy_model_where_the_words_do_not(greedy_llm):
    """What the next request needs whatever the caller says waits for the model (a reply, a
    call before ending); a partial's words, which the next pass may change, never wait."""
    import threading
    import time

    llm = greedy_llm
    llm.forget()
    ahead = [MESSAGES[0], {"role": "user", "content": ""}]
    llm.lock.acquire()
    t0 = time.perf_counter()  # before the timer: the model is free no sooner than t0 + 0.3 s
    threading.Timer(0.3, llm.lock.release).start()
    assert llm.prefill(_said("What time is")) == 0  # busy: at once, nothing
    assert time.perf_counter() - t0 < 0.2
    assert llm.prefill(ahead, upto_words=True) > 0  # once the model was free
    assert time.perf_counter() - t0 >= 0.3


def test_a_prefill_told_to_stop_leaves_what_the_model_holds(greedy_llm):
    """A prefill already stale (its call ended, its conversation changed) or given way to a request
    cuts nothing from the cache: another call's evaluated conversation stays held."""
    llm = greedy_llm
    llm.forget()
    assert llm.prefill(_said("What time is checkout?")) > 0
    held = llm.cached_tokens
    other = [{"role": "system", "content": "You answer calls for a dental clinic."}, {"role": "user", "content": ""}]
    assert llm.prefill(other, upto_words=True, go_on=lambda: False) == 0
    llm._wanting += 1
    try:
        assert llm.prefill(other, upto_words=True) == 0
    finally:
        llm._wanting -= 1
    assert llm.cached_tokens == held


def test_the_words_evaluated_in_the_pause_end_where_the_words_end(greedy_llm):
    """`response.prefill_pause`: the last partial's words, through the words and not the template's
    end after them. The final pass heard more: the request evaluates only the rest; it heard
    those words: only the template's end."""
    import threading

    from pipeline.base.protocols import Generation

    llm = greedy_llm
    llm.forget()
    partial = _said("Can I book a table for two")
    evaluated = llm.prefill(partial, through_words=True)
    assert 0 < evaluated < llm.count_tokens(partial)  # not the template's end
    assert llm.prefill(partial, through_words=True) == 0  # held already
    for final in ("Can I book a table for two at seven tonight?", "Can I book a table for two"):
        done = Generation()
        "".join(llm.stream(_said(final), cancel=threading.Event(), result=done, max_tokens=4))
        assert done.cached_tokens >= evaluated  # the words in the pause were held
        llm.forget()
        assert llm.prefill(partial, through_words=True) == evaluated
    # a stop before the first step cuts nothing from what the model holds
    held = llm.cached_tokens
    assert llm.prefill(_said("Something else entirely"), through_words=True, go_on=lambda: False) == 0
    assert llm.cached_tokens == held
