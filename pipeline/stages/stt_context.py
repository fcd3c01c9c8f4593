"""What the call is about, told to the speech recogniser: a prompt Whisper reads as the text that
came before the audio.

Whisper decodes the likeliest words for the sound, and a short window with no context can write
"reef and" for "refund". Given the words the call is about (the agent's tools and their argument
names as said aloud, a deployment's hotwords: product and street names), a little of the
instructions and the last turns, it leans toward them. The prompt is bounded in tokens (it is
decoded before every pass, partial and final), and a pass that fails in one of the ways a prompt
makes Whisper fail is done again without it (`prompt_failure`): it writes the prompt back, it
loops, or it "hears" only the prompt's words where a short sound was (a hotword in noise).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from .stt_window import loops

_WORD = re.compile(r"[a-z0-9']+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPOKEN_PARTS = {"id": "ID", "ids": "IDs", "num": "number", "no": "number", "qty": "quantity",
                 "addr": "address", "dob": "date of birth", "tel": "phone", "msg": "message",
                 "last4": "last four", "eta": "ETA", "sku": "SKU", "url": "URL", "iban": "IBAN"}
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
LEAK_RUN_WORDS = 4  # this many words in a row from the prompt: written back, not heard
# a text this short whose every content word is in the prompt may be the prompt "heard" in noise
# (base wrote "Reset password" over pink noise with the IT desk's context,
# bench/results/2026-12-02-hearing.md); said for real, the pass without the prompt hears it too
ECHO_MAX_WORDS = 4
# words that carry no request: in a prompt or not, they say nothing of where the text came from
_FUNCTION_WORDS = frozenset(
    "a an the this that these those i me my mine you your yours we us our it its he him his she "
    "her they them their is am are was were be been being do does did have has had will would "
    "can could shall should may might must to of in on at by for from with about as into up "
    "out off over and or but so if then than not no yes yeah yep okay ok oh uh um mm hmm please "
    "thanks thank just what which who where when how there here".split())


def spoken_name(identifier: str) -> str:
    """An identifier as it is said: `issue_refund` "issue refund", `cardLast4` "card last four"."""
    words = _CAMEL.sub(" ", identifier).replace("_", " ").replace("-", " ").split()
    return " ".join(_SPOKEN_PARTS.get(w.lower(), w.lower()) for w in words)


def words_of(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def leaks(text: str, prompt: str, run: int = LEAK_RUN_WORDS) -> bool:
    """Does `text` hold `run` or more words in a row exactly as the prompt has them?"""
    said, source = words_of(text), words_of(prompt)
    if len(said) < run or len(source) < run:
        return False
    runs = {tuple(source[i:i + run]) for i in range(len(source) - run + 1)}
    return any(tuple(said[i:i + run]) in runs for i in range(len(said) - run + 1))


def content_words(text: str) -> set[str]:
    """The words of `text` that could carry a request: not a function word nor a backchannel."""
    return {w for w in words_of(text) if w not in _FUNCTION_WORDS}


def only_prompt_words(text: str, prompt: str, max_words: int = ECHO_MAX_WORDS) -> bool:
    """Is `text` short, with every content word in the prompt?"""
    content = content_words(text)
    return len(words_of(text)) <= max_words and bool(content) and content <= set(words_of(prompt))


def prompt_failure(text: str, prompt: str) -> str | None:
    """Why a pass decoded after `prompt` should be done again without it, or None: it wrote the
    prompt back, it loops ("6.0.0.0..." on a phone-band clip, "password, password, ..."), or it
    is only the prompt's words (then the redo decides: `words_were_said`). The name is the one
    the recogniser counts it under."""
    if leaks(text, prompt):
        return "prompt leaked"
    if loops(text):
        return "prompt looped"
    if only_prompt_words(text, prompt):
        return "prompt words only"
    return None


def words_were_said(unprompted: str) -> bool:
    """A pass that heard only the prompt's words, done again without the prompt, heard content
    words too: something was said, and the prompt named it rather than made it up. "Yes, reset
    it, please." to the IT desk is "Yes, we have this." without the prompt; base's "Help." in an
    "Uh-huh" is "Oh" (bench/results/2026-12-02-hearing-guarded.md)."""
    return bool(content_words(unprompted))


def approximate_tokens(text: str) -> int:
    """Whisper's English tokens for `text`, over-counted (about 1.3 a word; 1.5 here) where the
    recogniser's own tokenizer is not at hand."""
    return (3 * len(text.split()) + 1) // 2


@dataclass(frozen=True)
class CallContext:
    """A call's standing context: its instructions and its vocabulary (tool and argument names
    as said, and the deployment's hotwords). `prompt` adds the last turns."""

    instructions: str = ""
    vocabulary: tuple[str, ...] = ()

    @classmethod
    def of(cls, instructions: str, tools: Iterable[tuple[str, Iterable[str]]] = (),
           hotwords: Iterable[str] = ()) -> CallContext:
        """From the instructions, each tool's name with its argument names, and hotwords."""
        seen: dict[str, None] = {}
        for word in hotwords:
            seen.setdefault(word.strip(), None)
        for name, arguments in tools:
            seen.setdefault(spoken_name(name), None)
            for argument in arguments:
                seen.setdefault(spoken_name(argument), None)
        return cls(instructions=" ".join(instructions.split()), vocabulary=tuple(w for w in seen if w))

    def prompt(self, turns: Sequence[str] = (), *, max_tokens: int = 96,
               count: Callable[[str], int] = approximate_tokens) -> str:
        """The vocabulary, then as much of the instructions as fits, then the last turns (the
        nearest context last, where the decoder weighs it most), in at most `max_tokens`."""
        parts: list[str] = []
        used = 0

        def take(text: str) -> bool:
            nonlocal used
            cost = count(text)
            if not text or used + cost > max_tokens:
                return False
            parts.append(text)
            used += cost
            return True

        vocabulary = ", ".join(self.vocabulary)
        if vocabulary:
            take(vocabulary[0].upper() + vocabulary[1:] + ".")
        recent: list[str] = []
        for turn in reversed(turns):  # the newest turns first, while they fit
            text = " ".join(turn.split())
            if not text or count(text) + used > max_tokens:
                break
            recent.insert(0, text)
            used += count(text)
        for sentence in _SENTENCE_END.split(self.instructions):
            if not take(sentence):
                break
        return " ".join(parts + recent)
