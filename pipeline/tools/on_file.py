"""Where a record (the instructions) holds values in an argument's role, and where a text says a
number at all: what `provenance` reads a record's entries and the caller's numbers with."""

from __future__ import annotations

import re
from typing import Any

from .argrules import Rule
from .number_role import role_here
from .record import alike, code_shape
from .spoken import ValueKind
from .spoken.codes import codes_in
from .spoken.numbers import numbers_said
from .spoken.words import words

__all__ = ["on_file", "outside_lists", "spans_of_numbers"]

_CLOCKISH = re.compile(r"\d{1,2}:\d{2}(?::\d{2})?|\d{4}-\d{1,2}-\d{1,2}.*|\d{1,2}/\d{1,2}(?:/\d{2,4})?")


def on_file(value: Any, record: str, rule: Rule) -> list[tuple[int, int]]:
    """Where the record holds values in this role, of the value's form: each number, or the whole
    code it is in ("BW-4471902", "LK19 XRT"), written with digits (not the desk's "SW and ten
    digits"); and a code shaped as one in the role, where no word names it another's ("Jobs on
    file: J-7731 ...; J-7745 ...": both are jobs, and the caller's words choose)."""
    runs = codes_in(record, pauses=False) if rule.kind is ValueKind.CODE else []
    out: list[tuple[int, int]] = []
    loose: list[tuple[int, int]] = []
    for span in spans_of_numbers(record):
        whole = next(((a, b) for a, b, _ in runs if a <= span[0] and span[1] <= b), span)
        if whole in out or not alike(value, text := record[whole[0]:whole[1]]) or (
                rule.kind is ValueKind.CODE and not any(ch.isdigit() for ch in text)):
            continue
        if (role := role_here(record, whole, rule)) is True:
            out.append(whole)
        elif role is None and rule.kind is ValueKind.CODE:
            loose.append(whole)
    shapes = {code_shape(record[a:b]) for a, b in out}
    return out + [s for s in loose if s not in out and code_shape(record[s[0]:s[1]]) in shapes]


def spans_of_numbers(text: str) -> list[tuple[int, int]]:
    """Where the text says a number (not a time of day), or an id with a digit in it."""
    out = [(n.start, n.end) for n in numbers_said(text) if not n.clock]
    out += [(w.start, w.end) for w in words(text) if any(ch.isdigit() for ch in w.text)
            and not any(a <= w.start < b for a, b in out) and not _CLOCKISH.fullmatch(w.text)]
    return out


def outside_lists(spans: list[tuple[int, int]], record: str) -> list[tuple[int, int]]:
    """These spans of the record, less those inside an entry of a list of records, each with its own
    code of one shape ("CO-3302 \u2014 30 sausage rolls ...; CO-3315 \u2014 8-inch chocolate cake ...").
    Those describe the things on file, so a new thing's values are not theirs: Qwen gave a new cake
    order `size_inches: 8`, the 8-inch cake on file's, on a line that named no size."""
    codes = [(a, code) for a, _, code in codes_in(record, pauses=False) if any(ch.isalpha() for ch in code)]
    shapes = [code_shape(code) for _, code in codes]
    starts = [a for (a, _), shape in zip(codes, shapes, strict=True) if shapes.count(shape) > 1]
    entries = [(m.start(), m.end()) for m in re.finditer(r"[^;\n]+", record)]
    listed = [(a, b) for a, b in entries if any(a <= at < b for at in starts)]
    return [s for s in spans if not any(a <= s[0] and s[1] <= b for a, b in listed)]
