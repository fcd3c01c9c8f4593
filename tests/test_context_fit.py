"""Fitting the conversation into the model's context: what is kept, what goes, and the budget."""

from __future__ import annotations

import json
import random

import pytest

from pipeline.base.conversation import Conversation, Item
from pipeline.call.context import ContextOverflowError, fit_conversation, omitted_note
from pipeline.stages.fakes import ScriptedLLM

INSTRUCTIONS = "You are a refund desk on a phone call. Answer in one short sentence."
COUNT = ScriptedLLM().count_tokens  # a token a word, 4 a message, 3 a prompt


def user(text: str) -> Item:
    return Item(type="message", role="user", text=text)


def agent(text: str) -> Item:
    return Item(type="message", role="assistant", text=text)


def call(call_id: str, order: str) -> Item:
    return Item(type="function_call", call_id=call_id, name="refund",
                arguments=json.dumps({"order_id": order}))


def output(call_id: str, result: str) -> Item:
    return Item(type="function_call_output", call_id=call_id, name="refund", output=result)


def chat(turns: int) -> list[Item]:
    items: list[Item] = []
    for n in range(turns):
        items += [user(f"Question number {n} about my order, please help me with it."),
                  agent(f"Answer number {n}: your order is on its way and arrives soon.")]
    return items


def fit(items: list[Item], budget: int, **kwargs):
    return fit_conversation(INSTRUCTIONS, items, count_tokens=COUNT, max_prompt_tokens=budget,
                            **kwargs)


def test_a_conversation_that_fits_is_sent_as_the_conversation_builds_it():
    items = chat(5)
    conversation = Conversation()
    conversation.items = items
    result = fit(items, 2048)
    assert result.messages == conversation.to_messages(INSTRUCTIONS)
    assert result.dropped_ids == () and result.turns_omitted == 0
    assert result.prompt_tokens == COUNT(result.messages)


def test_the_oldest_turns_go_first_and_the_instructions_stay():
    items = chat(40)
    result = fit(items, 300)
    assert result.prompt_tokens <= 300
    assert result.prompt_tokens == COUNT(result.messages)
    system = result.messages[0]
    assert system["role"] == "system" and system["content"].startswith(INSTRUCTIONS)
    assert omitted_note(result.turns_omitted) in system["content"]
    kept = [m["content"] for m in result.messages[1:]]
    first_kept = 40 - len(kept) // 2
    assert result.turns_omitted == first_kept
    # what stays is a contiguous run of the latest turns, whole
    assert kept[0].startswith(f"Question number {first_kept} ")
    assert kept[-1].startswith("Answer number 39:")
    assert result.dropped_ids == tuple(i.id for i in items[:2 * first_kept])


def test_one_more_turn_would_not_have_fitted():
    items = chat(40)
    result = fit(items, 300)
    k = result.turns_omitted
    one_more = fit_conversation(INSTRUCTIONS, items[2 * (k - 1):], count_tokens=COUNT,
                                max_prompt_tokens=10_000)
    note = len(omitted_note(k).split())
    assert COUNT(one_more.messages) + note > 300


def test_the_result_is_under_budget_and_drops_no_more_as_the_budget_grows():
    rng = random.Random(16)
    items: list[Item] = []
    for n in range(60):
        items.append(user(" ".join(["word"] * rng.randint(1, 30))))
        if rng.random() < 0.2:
            items += [call(f"c{n}", f"A{n}"), output(f"c{n}", '{"ok": true}')]
        items.append(agent(" ".join(["reply"] * rng.randint(1, 40))))
    whole = fit(items, 100_000).prompt_tokens
    omitted = []
    for budget in range(200, whole + 50, 50):
        result = fit(items, budget)
        assert result.prompt_tokens == COUNT(result.messages) <= budget
        omitted.append(result.turns_omitted)
    assert omitted == sorted(omitted, reverse=True)
    assert omitted[0] > 50 and omitted[-1] == 0, omitted


def test_a_call_still_waiting_for_its_output_is_kept():
    items = chat(3) + [user("Refund order A7, please."), call("c7", "A7")] + chat(30)
    result = fit(items, 250)
    assert result.turns_omitted > 4
    waiting = items[7]
    assert waiting.type == "function_call" and waiting.id not in result.dropped_ids
    assert sum('"order_id": "A7"' in m["content"] for m in result.messages) == 1
    assert items[6].id in result.dropped_ids  # the request around it went with its turn


def test_a_call_answered_in_the_latest_turn_is_kept_with_its_output():
    items = (chat(3) + [user("Refund order A7, please."), call("c7", "A7"), agent("One moment.")]
             + chat(30) + [user("Is it done?"), output("c7", '{"refunded": true}')])
    result = fit(items, 250)
    assert result.turns_omitted > 4
    kept = [m["content"] for m in result.messages]
    assert any('"order_id": "A7"' in c for c in kept)
    assert any('[result of refund: {"refunded": true}]' in c for c in kept)
    assert items[8].id in result.dropped_ids  # "One moment." is not protected


def test_an_answered_call_goes_with_its_turn_and_an_orphan_output_with_its_call():
    items = ([user("Refund order A1."), call("c1", "A1"), output("c1", '{"refunded": true}'),
              agent("Done."), user("And A2?"), call("c2", "A2"), agent("Checking."),
              user("Thanks."), output("c2", '{"refunded": false}'), agent("That one failed.")]
             + chat(3))
    # room for everything from "Thanks." on, and the note: the first two turns must go
    budget = fit(items[7:], 10_000).prompt_tokens + len(omitted_note(2).split())
    result = fit(items, budget)
    assert result.turns_omitted == 2
    text = json.dumps(result.messages)
    assert "Thanks." in text and "That one failed." in text
    for gone in ("A1", "A2", "refunded"):  # c2's output would answer a call no longer there
        assert gone not in text
    assert set(result.dropped_ids) == {i.id for i in items[:7]} | {items[8].id}


def test_extra_messages_are_kept_last_and_counted():
    items = chat(40)
    extra = [{"role": "user", "content": "And one more thing about the weather tomorrow."}]
    result = fit(items, 300, extra_messages=extra)
    assert result.messages[-1] == extra[0]
    assert result.prompt_tokens == COUNT(result.messages) <= 300
    assert result.turns_omitted >= fit(items, 300).turns_omitted


def test_too_small_a_budget_is_a_clear_error():
    items = chat(5) + [user(" ".join(["long"] * 200))]
    with pytest.raises(ContextOverflowError, match="shorten the instructions"):
        fit(items, 150)


def test_fitting_is_deterministic_and_the_cache_changes_only_the_cost():
    items = chat(80)
    cache: dict = {}
    cold = fit(items, 400)
    warm_first = fit(items, 400, cache=cache)
    warm_again = fit(items, 400, cache=cache)
    assert cold == warm_first  # same messages, same ids; the counting cost is the same too
    assert (warm_again.messages, warm_again.dropped_ids) == (cold.messages, cold.dropped_ids)
    assert warm_again.count_calls == 1  # only the prompt actually sent is counted again


def test_each_new_turn_costs_a_few_counts_whatever_the_length():
    items = chat(150)
    cache: dict = {}
    fit(items, 400, cache=cache)
    calls = []
    for n in range(10):
        items += [user(f"Follow-up {n}, please tell me more."), agent(f"More detail {n}.")]
        calls.append(fit(items, 400, cache=cache).count_calls)
    assert max(calls) <= 4, calls


def test_a_drop_step_moves_the_cut_rarely_so_the_prompt_start_stays_the_same():
    def cuts(step: int) -> list[int]:
        items, cache, out = chat(20), {}, []
        for n in range(40):
            items += [user(f"Follow-up {n}, please tell me more."), agent(f"More detail {n}.")]
            result = fit(items, 400, cache=cache, drop_step=step)
            assert result.prompt_tokens <= 400
            out.append(result.turns_omitted)
        return out

    one, eight = cuts(1), cuts(8)
    assert all(k % 8 == 0 for k in eight)
    assert all(a >= b for a, b in zip(eight, one, strict=True))  # never keeps more than needed
    assert len(set(eight)) * 4 <= len(set(one)), (one, eight)


@pytest.mark.models
def test_fitting_with_the_real_tokenizer_stays_under_budget(real_llm):
    items = chat(100)
    items[150:150] = [call("c1", "A1")]  # waiting for its output, deep in the call
    budget = 600
    cache: dict = {}
    result = fit_conversation(INSTRUCTIONS, items, count_tokens=real_llm.count_tokens,
                              max_prompt_tokens=budget, cache=cache)
    assert result.prompt_tokens == real_llm.count_tokens(result.messages) <= budget
    assert result.messages[0]["content"].startswith(INSTRUCTIONS)
    assert items[150].id not in result.dropped_ids
    assert result.messages[-1]["content"].startswith("Answer number 99:")
    assert 40 < result.turns_omitted < 100
    # within a few tokens of the budget: whole turns are ~30 tokens each
    assert budget - result.prompt_tokens < 60


@pytest.fixture(scope="module")
def real_llm():
    from pipeline.stages.llm import LlamaLLM

    return LlamaLLM()
