"""Transcripts compared as words: the same words, word errors, words found within others.

Case and punctuation aside throughout: a partial hypothesis lacks the final pass's closing
punctuation more often than it differs in a word.
"""

from __future__ import annotations

import re

_WORD_NORM = re.compile(r"[^\w']+")


def _norm(word: str) -> str:
    return _WORD_NORM.sub("", word.lower())


def same_words(a: str, b: str) -> bool:
    """Two transcripts say the same words (case and punctuation aside): a partial hypothesis
    lacks the final pass's closing punctuation more often than it differs in a word."""
    return [_norm(w) for w in a.split()] == [_norm(w) for w in b.split()]


def word_errors(reference: str, hypothesis: str, *, best_start: bool = False) -> tuple[int, int]:
    """(word edits, reference words): the edit distance behind a word error rate, with case and
    punctuation aside (digits are words). `best_start`: against the start of the reference the
    hypothesis matches best, and that start's words (a partial pass, whose audio ends inside the
    speech; ties go to the longer start)."""
    norm = lambda s: re.sub(r"[^a-z0-9' ]+", " ", s.lower()).split()  # noqa: E731
    r, h = norm(reference), norm(hypothesis)
    d = list(range(len(h) + 1))  # edits of h[:j] against r[:i], row by row
    best = (d[-1], 0)
    for i, rw in enumerate(r, 1):
        prev, d[0] = d[0], i
        for j, hw in enumerate(h, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (rw != hw))
        if d[-1] <= best[0]:
            best = (d[-1], i)
    return (best[0], max(best[1], 1)) if best_start else (d[len(h)], len(r))


def words_within(text: str, within: str, *, min_words: int = 2) -> bool:
    """`text`'s words (at least `min_words` of them) appear, in order and together, in
    `within`: a transcript of talk under the agent that is the agent's own words is its echo."""
    needle = [_norm(w) for w in text.split() if _norm(w)]
    hay = [_norm(w) for w in within.split() if _norm(w)]
    if len(needle) < min_words:
        return False
    return any(hay[i:i + len(needle)] == needle for i in range(len(hay) - len(needle) + 1))


def agreed_prefix(a: list[str], b: list[str]) -> int:
    """Number of leading words two hypotheses share (ignoring case and punctuation)."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if _norm(x) != _norm(y):
            break
        n += 1
    return n
