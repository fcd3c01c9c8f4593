"""Fit a conversation into the model's context before each response.

Pure and deterministic: the same items, instructions and budget give the same messages. The oldest
whole turns go first (a user message with everything that answered it); the instructions, the
latest turn, and tool calls still in play stay. Counting may tokenize, so each turn is counted
once on its own (cached by its content), the cut is chosen from those counts walking back from
the latest turn, and only the prompt actually sent is counted whole, to make sure it fits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..base.conversation import Conversation, Item
from ..base.errors import PipelineError

Messages = list[dict[str, Any]]
CountTokens = Callable[[Messages], int]


class ContextOverflowError(PipelineError):
    """Even the instructions and the latest turn do not fit in the prompt budget."""


@dataclass(frozen=True)
class Fit:
    """The chat messages to send, and what was left out to make them fit."""

    messages: Messages
    prompt_tokens: int  # counted on exactly these messages
    dropped_ids: tuple[str, ...]  # item ids left out, oldest first
    turns_omitted: int
    count_calls: int  # how many times count_tokens ran (the costly part)


def omitted_note(turns: int) -> str:
    return f"({turns} earlier {'turn' if turns == 1 else 'turns'} of this call omitted.)"


def fit_conversation(instructions: str, items: Sequence[Item], *, count_tokens: CountTokens,
                     max_prompt_tokens: int, extra_messages: Iterable[dict[str, Any]] = (),
                     cache: dict[Any, int] | None = None, drop_step: int = 1) -> Fit:
    """The messages `Conversation.to_messages` would build, with the oldest turns dropped until
    they count at most `max_prompt_tokens`.

    Always kept: the instructions (the system message, tool definitions included), the latest
    turn (from the last user message on), `extra_messages` (appended last), every function_call
    still waiting for its output, and any call whose output arrived in the latest turn, with that
    output. An output whose call was dropped goes with it. The note saying how many turns were
    left out is appended to the system message: several chat templates reject a second system
    message.

    `cache` holds per-turn counts between calls: keep one dict for the life of a call and each
    new turn costs about three `count_tokens` calls, whatever the call's length.

    `drop_step` drops turns in multiples of that many. The prompt then keeps the same start for
    several turns in a row, so a server's prompt cache (llama.cpp reuses the longest prefix it
    shares with the previous request) is not invalidated on every turn of a long call.
    """
    if drop_step < 1:
        raise ValueError("drop_step must be at least 1 (1: drop turns one at a time)")
    cache = cache if cache is not None else {}
    extras = list(extra_messages)
    counter = _Counter(count_tokens, cache, instructions)
    turns = _split_turns(items)
    keep = _protected(turns)

    def build(k: int) -> tuple[Messages, list[Item]]:
        kept = [i for t in turns[:k] for i in t if i.id in keep] + [i for t in turns[k:] for i in t]
        # an output whose call was dropped would answer nothing the model can see
        gone = {i.call_id for t in turns[:k] for i in t
                if i.type == "function_call" and i.id not in keep}
        kept = [i for i in kept if not (i.type == "function_call_output" and i.call_id in gone)]
        note = f"\n\n{omitted_note(k)}" if k else ""
        return _messages(instructions + note, kept) + extras, kept

    # The estimate walks back from the latest turn, one cached count per turn, and stops at the
    # first turn that does not fit: turns older than that are never rendered or counted.
    base = counter.alone() + counter.marginal(extras)
    note = counter.marginal_note(omitted_note(100))  # hardly depends on N: counted once
    left = {n: counter.turn([i for i in t if i.id in keep])
            for n, t in enumerate(turns) if any(i.id in keep for i in t)}
    k = max(0, len(turns) - 1)
    estimate = base + sum(left.values())
    if turns:
        estimate += counter.turn(turns[k]) - left.get(k, 0) + (note if k else 0)
    while k > 0:
        grown = estimate + counter.turn(turns[k - 1]) - left.get(k - 1, 0) - (note if k == 1 else 0)
        if grown > max_prompt_tokens:
            break
        estimate, k = grown, k - 1
    last = max(0, len(turns) - 1)
    k = min(last, -(-k // drop_step) * drop_step)  # up to the next multiple: the cut moves rarely
    while True:  # the estimate is close; the exact count of what is sent decides
        messages, kept = build(k)
        tokens = counter.count(messages)
        if tokens <= max_prompt_tokens:
            break
        if k >= last:
            raise ContextOverflowError(
                f"the instructions, the latest turn and the tool calls still in play need "
                f"{tokens} tokens but the prompt may use {max_prompt_tokens}: shorten the "
                "instructions or tool descriptions, lower the reply's max_tokens, or use a model "
                "with a larger context window")
        k = min(last, k + drop_step)
    kept_ids = {i.id for i in kept}
    return Fit(messages=messages, prompt_tokens=tokens,
               dropped_ids=tuple(i.id for i in items if i.id not in kept_ids),
               turns_omitted=k, count_calls=counter.calls)


def _messages(system: str, items: list[Item]) -> Messages:
    """Exactly what the session sends: `Conversation.to_messages` over these items."""
    conversation = Conversation()
    conversation.items = list(items)
    return conversation.to_messages(system)


class _Counter:
    """count_tokens with a cache keyed by the messages' text, and marginal counts of a turn."""

    def __init__(self, count_tokens: CountTokens, cache: dict[Any, int], system: str) -> None:
        self._count, self._cache, self._system = count_tokens, cache, system
        self.calls = 0

    def count(self, messages: Messages) -> int:
        self.calls += 1
        return self._count(messages)

    def _cached(self, messages: Messages) -> int:
        key = tuple((m["role"], m["content"]) for m in messages)
        if key not in self._cache:
            self._cache[key] = self.count(messages)
        return self._cache[key]

    def alone(self) -> int:
        return self._cached([{"role": "system", "content": self._system}])

    def marginal(self, messages: Messages) -> int:
        """What these messages add after the system message (0 for none)."""
        if not messages:
            return 0
        return self._cached([{"role": "system", "content": self._system}, *messages]) - self.alone()

    def turn(self, items: list[Item]) -> int:
        """What one turn's messages add, cached by its items' content (no rendering when known)."""
        if not items:
            return 0
        key = ("turn", self._system, tuple(
            (i.id, i.type, i.role, i.text, i.interrupted, i.name, i.arguments, i.output, i.note)
            for i in items))
        if key not in self._cache:
            self._cache[key] = self.marginal(_render(items))
        return self._cache[key]

    def marginal_note(self, note: str) -> int:
        with_note = [{"role": "system", "content": f"{self._system}\n\n{note}"}]
        return self._cached(with_note) - self.alone()


def _render(items: list[Item]) -> Messages:
    return _messages("", items)[1:]


def _split_turns(items: Sequence[Item]) -> list[list[Item]]:
    """Turns: each starts at a user message; what comes before the first one is a turn too."""
    turns: list[list[Item]] = []
    for item in items:
        if not turns or (item.type == "message" and item.role == "user"):
            turns.append([])
        turns[-1].append(item)
    return turns


def _protected(turns: list[list[Item]]) -> set[str]:
    """Item ids that stay wherever they are: calls still waiting for their output, and calls
    (with their outputs) answered in the latest turn."""
    if not turns:
        return set()
    answered = {i.call_id for t in turns for i in t if i.type == "function_call_output"}
    latest = {i.call_id for i in turns[-1] if i.type == "function_call_output"}
    keep: set[str] = set()
    for item in (i for t in turns for i in t):
        if item.type == "function_call" and (item.call_id not in answered or item.call_id in latest):
            keep.add(item.id)
        elif item.type == "function_call_output" and item.call_id in latest:
            keep.add(item.id)
    return keep
