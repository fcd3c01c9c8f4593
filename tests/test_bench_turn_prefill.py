"""bench.turn_prefill: a second turn timed with and without the conversation evaluated ahead."""

from __future__ import annotations

from typing import Any

from bench.turn_prefill import second_turn
from pipeline.base.protocols import Generation
from pipeline.stages.fakes import ScriptedLLM


class _Counting(ScriptedLLM):
    """Reports a prompt of 20 tokens, 15 of them held when the conversation was evaluated ahead."""

    def __init__(self) -> None:
        super().__init__(replies=["We close at nine."])
        self.ahead: list[list[dict[str, Any]]] = []

    def prefill(self, messages: list[dict[str, Any]], *, go_on: Any = None, upto_words: bool = False,
                through_words: bool = False) -> int:
        if through_words:  # the words in the caller's pause: evaluated by the request here
            return 0
        assert upto_words
        self.ahead.append(messages)
        return 5

    def stream(self, messages: list[dict[str, Any]], *, result: Generation | None = None, **kw: Any):
        if result is not None:
            result.prompt_tokens, result.cached_tokens = 20, (15 if self.ahead else 10)
        return super().stream(messages, result=result, **kw)


def test_the_second_turn_is_timed_after_the_first_reply_with_the_conversation_evaluated_ahead_or_not():
    llm = _Counting()
    plain = second_turn(llm, "Be brief.", "When do you close?", "And tomorrow?", ahead=False)
    assert plain["evaluated"] == 10 and plain["ahead_tokens"] == 0 and llm.ahead == []
    ahead = second_turn(llm, "Be brief.", "When do you close?", "And tomorrow?", ahead=True)
    assert ahead["evaluated"] == 5 and ahead["ahead_tokens"] == 5
    assert llm.ahead == [[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "When do you close?"},
                          {"role": "assistant", "content": "We close at nine."}, {"role": "user", "content": ""}]]
    assert llm.requests[-1][-1] == {"role": "user", "content": "And tomorrow?"}
    assert ahead["first_reply"] == "We close at nine." and ahead["reply"] == "We close at nine."
