"""What a tool call's arguments may come from (`provenance`): the caller's words in this call, what
the agent asked before each, earlier tool results, the instructions, and when it was said."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

_A_SCALE = re.compile(r"\ba (hundred|thousand)\b", re.I)  # "a hundred dollars": one hundred
_OCLOCK = re.compile(r"\bo'?\s?clock\b", re.I)  # "seven o'clock": not "seven oh"


@dataclass
class Evidence:
    """What an argument may be traced to."""

    said: list[str] = field(default_factory=list)  # each turn's transcript or typed text
    results: list[Any] = field(default_factory=list)  # tool outputs (JSON values), prior intents
    asked: list[str] = field(default_factory=list)  # what the agent said before each turn ("" none)
    instructions: str = ""  # the session's: what the deployment told the agent (an account, a record)
    now: datetime | None = None  # when the caller said it: "tomorrow", "right now"

    def __post_init__(self) -> None:
        self.said = [_OCLOCK.sub(" oclock", _A_SCALE.sub(r"one \1", t)) for t in self.said]

    @property
    def exchanged(self) -> list[str]:
        """The caller's turns, and the agent's questions they answered ("Shall I cancel it?" "Yes."):
        what an optional flag or an act nobody named may be asked for in (`flags`, `unasked`)."""
        return [*self.said, *(asked for asked in self.asked[:len(self.said)] if asked)]

    @property
    def last_asked(self) -> str:
        """What the agent said before the caller's last turn ("" where nothing, or not known)."""
        return self.asked[len(self.said) - 1] if self.said and len(self.asked) >= len(self.said) else ""


def is_refusal(output: Any) -> bool:
    """A tool error saying the call was not run for want of what the caller gave."""
    return isinstance(output, dict) and output.get("status") == "not_run"


def evidence_from(user_texts: Iterable[str], outputs: Iterable[str],
                  asked: Iterable[str] = (), *, instructions: str = "",
                  now: datetime | None = None) -> Evidence:
    """Evidence from the caller's texts and the JSON outputs of earlier calls; error outputs
    (a refusal names the arguments it refused) ground nothing. `asked`: what the agent said
    before each of the caller's texts, in the same order ("" where nothing)."""
    results: list[Any] = []
    for raw in outputs:
        try:
            value = json.loads(raw)
        except (TypeError, ValueError):
            value = raw
        if isinstance(value, dict) and ("error" in value or is_refusal(value)):
            continue
        results.append(value)
    pairs = [(t, q) for t, q in itertools.zip_longest(user_texts, asked, fillvalue="") if t]
    return Evidence(said=[t for t, _ in pairs], results=results, asked=[q for _, q in pairs],
                    instructions=instructions, now=now)
