"""Streamed LLM text -> speakable chunks for TTS.

Tokens arrive in arbitrary pieces (half a word, a lone period), so a chunk is emitted only once
the text seen so far proves it ends there. Every decision looks at a bounded stretch of text
after the candidate boundary and waits if that stretch has not arrived yet; a decision never
changes once made, which is why feeding the same text in any split gives the same chunks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .stages.repeats import SaidOnce, sentence_key, sentence_keys, stop_at_repeat
from .stages.sentence_ends import (
    CLOSERS,
    EMOJI,
    TERMINALS,
    WORD_EDGE,
    bare,
    count_words,
    is_opener,
    next_words,
    run_end,
    runaway_end,
    sentence_ends,
    skip_closers,
)

__all__ = ["SentenceChunker", "clean_for_speech", "ends_sentence", "sentence_key", "stop_at_repeat"]

_DASHES = "-—–"


# A clause starts at these words: the first chunk may end before one without punctuation.
_SUBORDINATORS = frozenset("because when if unless although while whereas which who where".split())
# ...but not after these: "even if", "as if", "only when", "what if", "and because", "some of
# which", "to whom", "from where".
_BOUND_BEFORE = frozenset("even as only what and or but just since ever "
                          "of in on at to for with by from about into than".split())
# And, but, or, so join clauses when a subject follows ("and I will", "but it is"); before
# anything else they join words ("black and white", "one hundred and five"): no boundary.
_COORDINATORS = frozenset("and but or so".split())
_SUBJECTS = frozenset(
    "i i'm i'll i've i'd we we're we'll we've you you're you'll you've it it's it'll "
    "they they're they'll he he's she she's that's there there's this".split())
# A phrase these start may follow a whole clause unpunctuated ("I close today | at ten"): the
# first chunk may end before one. Not the particles of phrasal verbs ("log | in", "pick | up"),
# and not "of" or "to", which bind to the word before ("a cup | of", "happy | to").
_PHRASE_HEADS = frozenset("at for with from after before until till during within".split())
# ...only once the words before hold a clause's object: a pronoun, a time or place word, or a
# noun right after its determiner ("your email", "a table"): never after a bare verb ("look |
# at", "wait | for"), inside a phrase already begun ("from Monday | to"), a number, or a question.
_OBJECT_ENDS = frozenset("you it them me us him her that this these those today tomorrow tonight "
                         "now here there more everything something anything".split())
_DETERMINERS = frozenset("the a an your our my his her their its this that these those any some "
                         "every each no another".split())
_PREPOSITIONS = _PHRASE_HEADS | frozenset(
    "of in on by about into onto between through over under around than like near".split())
# a question, a clause that leads to another ("To book a table | for two, ..."), a subject
# with no verb yet ("All the wood | after ...")
_NOT_STATEMENTS = _SUBORDINATORS | frozenset(
    "would could can do does did is are was were will shall should may might have has what "
    "how why to all both half most many".split())


_CLEANUP: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"!?\[([^\]]*)\]\([^)\s]*\)"), r"\1"),  # [text](url), ![alt](src)
    (re.compile(r"```[\w+-]*"), ""),  # code fences with their language tag
    (re.compile(r"(?m)^[ \t]*([-*_])(?:[ \t]*\1){2,}[ \t]*$"), ""),  # horizontal rule
    (re.compile(r"(?m)^[ \t]*#{1,6}(?:[ \t]+|$)"), ""),  # headings
    (re.compile(r"(?m)^[ \t]*>[ \t]?"), ""),  # block quotes
    (re.compile(r"(?m)^[ \t]*[-*+•][ \t]+"), ""),  # bullets
    (re.compile(r"__+|[*`]|~~"), ""),  # emphasis markers, paired or left over from a split
    (re.compile(r"(?<!\w)_(?=\S)(.+?)(?<=\S)_(?!\w)"), r"\1"),  # _italic_, not snake_case
    (EMOJI, ""),
    (re.compile(r"\s+"), " "),
    (re.compile(r" (?=[,.!?;:…])"), ""),  # "Great 🎉!" leaves a space before the "!"
]


def ends_sentence(chunk: str) -> bool:
    """Whether a chunk ends at a sentence's end (its closing marks aside), not mid-sentence."""
    return chunk.rstrip().rstrip(CLOSERS)[-1:] in TERMINALS


def clean_for_speech(text: str) -> str:
    """Strip markdown and emoji, collapse whitespace: what a TTS voice should read aloud."""
    for pattern, repl in _CLEANUP:
        text = pattern.sub(repl, text)
    return text.strip()


class SentenceChunker:
    """Splits streamed text into sentences (and a quick first clause) for TTS.

    quick_first_fragment: let the first chunk of a response end at a comma, colon or dash
        once it holds `min_fragment_words` words, so the first audio starts sooner.
    min_fragment_words: words needed before that clause boundary (default 4, as many as a
        clause start needs: "I'm sorry for any inconvenience," and "To reset your password,"
        open SmolLM2's replies, and at 6 their whole sentence was the first chunk); a reply's opener
        ("Sure,", "Of course,") is a fragment with fewer, unless `opener_fragments` is off.
    first_phrase_words: with quick_first_fragment, the first chunk may also end where a clause
        starts without punctuation ("I can look that up | because…", "Your refund is on its way
        | and you will…") once it holds this many words; 0 turns it off (default 4). Never
        inside a number, a name or a fixed pair ("rock and roll": no subject follows "and").
    head_phrase_words: with quick_first_fragment, the first chunk may also end before a phrase
        a preposition starts, after a clause and its object ("I close today | at 10 AM.",
        "Check your email | for updates.") once it holds this many words; 0 turns it off
        (default 3). A reply's first sentence is often its only one: without this its sound
        waits for all of it (`_OBJECT_ENDS` says which words may end such a chunk).
    max_chunk_chars: text with no boundary is split at the last whitespace within this many
        characters (default 400), so runaway output still reaches the speaker.
    drop_repeats: a chunk that says again a sentence this response already said (`sentence_key`)
        is not spoken, nor is anything after it: a small model that starts over ("I'm glad of
        that. I'm glad of that.") has started a loop. `repeated` then says so (the LLM stages
        also stop generating at a repeat; this catches every model, scripted ones included).
    """

    def __init__(
        self,
        *,
        quick_first_fragment: bool = True,
        min_fragment_words: int = 4,
        first_phrase_words: int = 4,
        head_phrase_words: int = 3,
        opener_fragments: bool = True,
        max_chunk_chars: int = 400,
        drop_repeats: bool = True,
    ) -> None:
        if min_fragment_words < 0:
            raise ValueError("min_fragment_words must be >= 0")
        if first_phrase_words < 0:
            raise ValueError("first_phrase_words must be >= 0")
        if head_phrase_words < 0:
            raise ValueError("head_phrase_words must be >= 0")
        if max_chunk_chars < 1:
            raise ValueError("max_chunk_chars must be >= 1")
        self.quick_first_fragment = quick_first_fragment
        self.min_fragment_words = min_fragment_words
        self.first_phrase_words = first_phrase_words
        self.head_phrase_words = head_phrase_words
        self.opener_fragments = opener_fragments
        self.max_chunk_chars = max_chunk_chars
        self.drop_repeats = drop_repeats
        self.repeated = False  # this response said a sentence again: the rest is dropped
        self._said = SaidOnce()  # the sentences emitted so far
        self._before: set[str] = set()  # sentences earlier replies of this turn said (`said_before`)
        self._buf = ""
        self._scan = 0  # _buf[:_scan] holds no boundary: decisions are final, so skip it
        self._first = True  # no chunk emitted yet in this response

    @property
    def pending_text(self) -> str:
        """Text buffered but not yet emitted."""
        return self._buf

    def push(self, text: str) -> list[str]:
        """Add streamed text; return the chunks whose end is now certain."""
        if self.repeated:
            return []
        # Leading whitespace never matters, and stripping it keeps positions split-independent.
        self._buf = (self._buf + text).lstrip()
        return self._drain(final=False)

    def flush(self, *, complete_only: bool = False) -> list[str]:
        """End of the response: return everything left, cleaned; the next push starts afresh.

        complete_only: the reply was cut off (it reached its token limit), so text after its
        last complete sentence is a fragment, perhaps a half word: it is dropped, not spoken.
        """
        chunks = self._drain(final=False)
        rest = self._drain(final=True)
        if complete_only and rest and not ends_sentence(rest[-1]):
            rest.pop()
        self.reset()
        return chunks + rest

    def said_before(self, texts: Iterable[str]) -> None:
        """Sentences the caller already heard in this turn (the holding line before a tool's
        result): one said again is dropped by itself, and the reply goes on; `reset` keeps them."""
        for text in texts:
            self._before.update(sentence_keys(text))

    def reset(self) -> None:
        """Drop buffered text (barge-in); the next push starts a new response."""
        self._buf = ""
        self._scan = 0
        self._first = True
        self.repeated = False
        self._said = SaidOnce()

    def _drain(self, *, final: bool) -> list[str]:
        chunks: list[str] = []
        while self._buf:
            end = self._find_end(self._buf, final=final)
            if end is None:
                break
            chunk = clean_for_speech(self._buf[:end])
            self._buf = self._buf[end:].lstrip()
            self._scan = 0
            if (chunk and self.drop_repeats and ends_sentence(chunk) and not self._said.begun
                    and sentence_key(chunk) in self._before):
                continue  # said in an earlier reply of this turn: this one says what is new
            if chunk and self.drop_repeats and self._said.repeats(chunk, whole=ends_sentence(chunk)):
                self.repeated = True
                self._buf, self._scan = "", 0
                break
            if chunk:
                chunks.append(chunk)
                self._first = False
        return chunks

    def _find_end(self, s: str, *, final: bool) -> int | None:
        """Where the first chunk of `s` ends, or None to wait for more text.

        With `final`, the text is complete: never waits, and without a boundary it is all one
        chunk.
        """
        clauses = self.quick_first_fragment and self._first and not self._may_be_said_before(s)
        n = len(s)
        i = self._scan
        while i < n:
            self._scan = i  # everything before i is decided: not a boundary
            if i >= self.max_chunk_chars:
                return runaway_end(s, self.max_chunk_chars)
            c = s[i]
            if c == "\n":
                return i
            if c in TERMINALS:
                j = run_end(s, i, TERMINALS)
                k = skip_closers(s, j)
                if k >= n:
                    return n if final else None
                if s[k].isspace():
                    verdict = sentence_ends(s, i, j, k, final)
                    if verdict is None:
                        return None
                    if verdict:
                        return k
                i = j
                continue
            if clauses and (c in ",:" or c in _DASHES):
                end = self._clause_end(s, i, final)
                if end != 0:
                    return end
            if (clauses and (self.first_phrase_words or self.head_phrase_words) and c.isspace()
                    and i > 0 and not s[i - 1].isspace()):
                end = self._phrase_end(s, i, final)
                if end != 0:
                    return end
            i += 1
        self._scan = n
        return n if final else None

    def _may_be_said_before(self, s: str) -> bool:
        """The reply so far may begin a sentence said before: its first chunk is then the whole
        sentence, so the repeat is dropped ("Okay," would go out alone before it)."""
        if not self._before or not (start := sentence_key(s)):
            return False
        return any(key.startswith(start) or start.startswith(key + " ") for key in self._before)

    def _clause_end(self, s: str, i: int, final: bool) -> int | None:
        """End of a quick first fragment at the comma/colon/dash at i; 0 if not a boundary."""
        if count_words(s[:i]) < self.min_fragment_words and not (
                self.opener_fragments and is_opener(s[:i])):
            return 0
        if s[i] in ",:":
            k = skip_closers(s, i + 1)  # "1,000" and "7:30" fail the whitespace test below
        else:
            k = run_end(s, i, s[i])
            # A hyphen is a dash only with spaces around it: "well-known", "-5" are words.
            if k - i > 2 or (s[i] == "-" and (i == 0 or not s[i - 1].isspace())):
                return 0
        if k >= len(s):
            return len(s) if final else None
        return k if s[k].isspace() else 0


    def _phrase_end(self, s: str, i: int, final: bool) -> int | None:
        """End of a first chunk at the whitespace at i, where a clause or a phrase starts without
        punctuation; 0 if not a boundary, None while the words after it have not arrived."""
        words = count_words(s[:i])
        if self.head_phrase_words and words >= self.head_phrase_words:
            head = next_words(s, i, 1, final)
            if head is None:
                return None
            if head and head[0] in _PHRASE_HEADS and self._clause_with_object(s[:i]):
                return i
        if not self.first_phrase_words or words < self.first_phrase_words:
            return 0
        after = next_words(s, i, 2, final)
        if after is None:
            return None
        if not after:
            return 0
        before = bare(s[:i].split()[-1])
        if not before or before[0].isdigit() or before in _BOUND_BEFORE:
            return 0
        if after[0] in _SUBORDINATORS:
            return i
        if after[0] in _COORDINATORS and len(after) > 1 and after[1] in _SUBJECTS:
            return i
        return 0

    @staticmethod
    def _clause_with_object(text: str) -> bool:
        """Whether `text` (a reply's first words) is a statement whose last word ends its object,
        with no phrase begun in it: a phrase a preposition starts may follow it."""
        tokens = text.split()
        if any(t[-1:] in WORD_EDGE for t in tokens):  # a comma, a quote: not plain words
            return False
        words = [bare(t) for t in tokens]
        if words[0] in _NOT_STATEMENTS or any(w in _PREPOSITIONS for w in words):
            return False
        last = words[-1]
        if not last.isalpha():
            return False
        return last in _OBJECT_ENDS or (len(words) > 2 and words[-2] in _DETERMINERS
                                        and last not in _DETERMINERS)
