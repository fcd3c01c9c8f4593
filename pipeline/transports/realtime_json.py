"""Reading a client message into JSON that every later step can carry, or refusing it whole.

Python's JSON reader takes more than a call can use: `\\ud800`-style escapes become lone
surrogates, which no model, log or UTF-8 wire can encode, so one in an instruction broke every
reply after it; NaN and Infinity are not JSON, and went back out bare, which a browser cannot
parse; nesting it reads can still be too deep to copy. Checking once on receipt, before any of
the event is used, means nothing a client sends can fail deeper in the session; the refusal
names the first field at fault.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from .realtime_protocol import ClientError

_SURROGATE = re.compile("[\ud800-\udfff]")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_DEPTH = 64  # objects and arrays in one another; a tool's JSON schema needs a dozen or so
MAX_INTEGER = 2**53 - 1  # the integers every JSON reader holds exactly (RFC 7493)


def _integer(text: str) -> int:
    if len(text) > 17 or abs(value := int(text)) > MAX_INTEGER:
        shown = text if len(text) <= 20 else text[:20] + "…"
        raise ClientError("invalid_json", f"The message has the integer {shown}, beyond "
                                          f"±{MAX_INTEGER} (what every JSON reader holds "
                                          "exactly); send a smaller number.")
    return value


def _number(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        shown = text if len(text) <= 20 else text[:20] + "…"
        raise ClientError("invalid_json", f"The number {shown} is too large to hold (it would "
                                          "be infinite); send a smaller one.")
    return value


def _constant(name: str) -> Any:
    raise ClientError("invalid_json", f"{name} is not JSON; send a finite number, or null.")


def parse_message(message: str | bytes) -> Any:
    """The message as JSON, or ClientError `invalid_json` saying what is wrong with it."""
    try:
        return json.loads(message, parse_int=_integer, parse_float=_number,
                          parse_constant=_constant)
    except RecursionError:
        raise ClientError("invalid_json", f"The message nests objects and arrays too deep to "
                                          f"read; keep them under {MAX_DEPTH} deep.") from None
    except ValueError as exc:  # JSONDecodeError, or UnicodeDecodeError for a binary frame
        raise ClientError("invalid_json", f"The message is not valid JSON ({exc}); "
                                          "send one JSON object per message.") from None


def field_path(path: tuple[str | int, ...]) -> str:
    """`item.content[0].text`: the way to a value, for an error that names it."""
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        elif _NAME.fullmatch(step) and len(step) <= 40:
            out += f".{step}" if out else step
        else:
            out += f"[{json.dumps(step[:40])}]"
    return out


def is_text(value: str) -> bool:
    """Unicode text: no lone surrogates (isascii is a flag lookup, so most strings cost nothing)."""
    return value.isascii() or _SURROGATE.search(value) is None


def _not_text(value: str, path: tuple[str | int, ...], *, key: bool = False) -> ClientError:
    where = field_path(path)
    what = f"`{where}`" if not key else f"A key in `{where}`" if where else "A key of the event"
    bad = _SURROGATE.search(value)
    assert bad is not None
    return ClientError(
        "invalid_value",
        f"{what} is not Unicode text: it holds the lone surrogate "
        f"\\u{ord(bad.group()):04x} (half of a UTF-16 pair). Send the text as UTF-8, or escape a "
        "character beyond U+FFFF as a whole pair, like \\ud83d\\ude00.", param=where or None)


def check_event(event: dict[str, Any]) -> None:
    """Refuse the event if it nests deeper than MAX_DEPTH, or if any string in it, key or
    value, is not Unicode text."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(event, ())]
    while stack:  # depth first, in the order the client wrote it: the first bad field is named
        value, path = stack.pop()
        if isinstance(value, str):
            if not is_text(value):
                raise _not_text(value, path)
        elif isinstance(value, dict | list) and len(path) >= MAX_DEPTH:
            raise ClientError("invalid_json", f"The message nests objects and arrays more than "
                                              f"{MAX_DEPTH} deep; flatten it.")
        elif isinstance(value, dict):
            for key in value:
                if not is_text(key):
                    raise _not_text(key, path, key=True)
            stack.extend((value[key], (*path, key)) for key in reversed(value))
        elif isinstance(value, list):
            stack.extend((value[i], (*path, i)) for i in reversed(range(len(value))))


__all__ = ["check_event", "field_path", "is_text", "parse_message"]
