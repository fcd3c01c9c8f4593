import random

import pytest

from pipeline.chunker import SentenceChunker, clean_for_speech

# Sentence cases (quick_first_fragment off): input text -> chunks after push + flush.
SENTENCES: list[tuple[str, list[str]]] = [
    # plain sentence ends
    ("Hello world. How are you?", ["Hello world.", "How are you?"]),
    ("Wait! Really? Yes.", ["Wait!", "Really?", "Yes."]),
    ("What?! No way...", ["What?!", "No way..."]),
    ("Why?? Because.", ["Why??", "Because."]),
    ("First part; second part.", ["First part;", "second part."]),
    ("We sell pens, paper, etc.; you pick.", ["We sell pens, paper, etc.;", "you pick."]),
    ("Line one\nLine two", ["Line one", "Line two"]),
    ("Hello world.\n\nNew paragraph here.", ["Hello world.", "New paragraph here."]),
    ("No punctuation at the end", ["No punctuation at the end"]),
    ("Tabs\tand   spaces   collapse. Yes.", ["Tabs and spaces collapse.", "Yes."]),
    ("", []),
    ("   \n\n  ", []),
    # ellipses
    ("I see... Well, okay.", ["I see...", "Well, okay."]),
    ("Well... maybe not.", ["Well... maybe not."]),
    ("Hmm… That works.", ["Hmm…", "That works."]),
    ("Wait... what? Fine!", ["Wait... what?", "Fine!"]),
    # titles and abbreviations
    ("Dr. Smith is here. He is late.", ["Dr. Smith is here.", "He is late."]),
    (
        "Mr. and Mrs. Jones met Ms. Lee at St. Mary's.",
        ["Mr. and Mrs. Jones met Ms. Lee at St. Mary's."],
    ),
    ("Ask Prof. Xavier. He knows.", ["Ask Prof. Xavier.", "He knows."]),
    ("Martin Luther King Jr. was born in 1929.", ["Martin Luther King Jr. was born in 1929."]),
    ("John Smith Sr. Retired early. Sad.", ["John Smith Sr. Retired early.", "Sad."]),
    ("Use a solvent, e.g. acetone. Then rinse.", ["Use a solvent, e.g. acetone.", "Then rinse."]),
    ("The last one, i.e. the blue one. Done.", ["The last one, i.e. the blue one.", "Done."]),
    ("It was cats vs. dogs. Cats won.", ["It was cats vs. dogs.", "Cats won."]),
    (
        "Bring pens, paper, etc. and a snack. Thanks.",
        ["Bring pens, paper, etc. and a snack.", "Thanks."],
    ),
    ("Bring pens, paper, etc. Then we start.", ["Bring pens, paper, etc.", "Then we start."]),
    ("The U.S. economy grew. Then it slowed.", ["The U.S. economy grew.", "Then it slowed."]),
    ("I moved to the U.S. Then I found work.", ["I moved to the U.S.", "Then I found work."]),
    ("He won in the U.S. Mr. Lee lost.", ["He won in the U.S. Mr. Lee lost."]),
    ("Room No. 5 is free. Go now.", ["Room No. 5 is free.", "Go now."]),
    ("The answer is No. Try again.", ["The answer is No.", "Try again."]),
    ("It weighs approx. 5 kg. Nice.", ["It weighs approx. 5 kg.", "Nice."]),
    ("He works at Acme Inc. and likes it. Yes.", ["He works at Acme Inc. and likes it.", "Yes."]),
    ("She joined Acme Ltd. Later she left.", ["She joined Acme Ltd.", "Later she left."]),
    ("He has a Ph.D. She does not.", ["He has a Ph.D.", "She does not."]),
    # times
    ("We met at 7 a.m. Then we left.", ["We met at 7 a.m.", "Then we left."]),
    ("At 7 a.m. we left. It was cold.", ["At 7 a.m. we left.", "It was cold."]),
    ("See you at 5 p.m. Dr. Who will be there.", ["See you at 5 p.m. Dr. Who will be there."]),
    (
        "Times: 9 a.m., noon, and 5 p.m. Come early.",
        ["Times: 9 a.m., noon, and 5 p.m.", "Come early."],
    ),
    ("Meet at 7:30 tonight. Bring snacks.", ["Meet at 7:30 tonight.", "Bring snacks."]),
    # numbers, money, initials
    ("It costs $3.50 today. Pi is 3.14 roughly.", ["It costs $3.50 today.", "Pi is 3.14 roughly."]),
    ("The value rose 4.5 percent. Good.", ["The value rose 4.5 percent.", "Good."]),
    ("I counted to 10. Then I stopped.", ["I counted to 10.", "Then I stopped."]),
    ("It happened in 2020. Nobody expected it.", ["It happened in 2020.", "Nobody expected it."]),
    ("J. R. R. Tolkien wrote it. Read it.", ["J. R. R. Tolkien wrote it.", "Read it."]),
    ("So did I. Then we went home.", ["So did I.", "Then we went home."]),
    # e-mail, URLs, file names, versions
    (
        "Email jane.doe@example.com for help. Thanks.",
        ["Email jane.doe@example.com for help.", "Thanks."],
    ),
    (
        "Visit example.com/path or www.x.org today. Bye.",
        ["Visit example.com/path or www.x.org today.", "Bye."],
    ),
    (
        "Open report.pdf and install v1.2.3 first. Done.",
        ["Open report.pdf and install v1.2.3 first.", "Done."],
    ),
    ("Visit example.com. Then sign up.", ["Visit example.com.", "Then sign up."]),
    ("Search https://x.org/find?q=1 now. Ok.", ["Search https://x.org/find?q=1 now.", "Ok."]),
    # numbered lists
    ("1. Preheat the oven. 2. Mix the flour.", ["1. Preheat the oven.", "2. Mix the flour."]),
    (
        "Steps:\n1. Preheat the oven.\n2. Mix the flour.",
        ["Steps:", "1. Preheat the oven.", "2. Mix the flour."],
    ),
    ("Steps: 1. Preheat the oven. 2. Mix.", ["Steps: 1. Preheat the oven.", "2. Mix."]),
    ("2020. What a year.", ["2020.", "What a year."]),
    # closing quotes and brackets
    ('He said "stop." Then he left.', ['He said "stop."', "Then he left."]),
    ("(See above.) Next step.", ["(See above.)", "Next step."]),
    ('She asked "why?" and left. Odd.', ['She asked "why?" and left.', "Odd."]),
    (
        "Bring fruit (apples, pears, etc.) Then go.",
        ["Bring fruit (apples, pears, etc.)", "Then go."],
    ),
    ("He said \u201cno.\u201d Then he sat.", ["He said \u201cno.\u201d", "Then he sat."]),
    # markdown and emoji
    ("**Sure!** Let me check.", ["Sure!", "Let me check."]),
    ("# Recipe\nMix *well* and `stir`.", ["Recipe", "Mix well and stir."]),
    ("- Eggs\n- Milk\n- Flour", ["Eggs", "Milk", "Flour"]),
    ("Great job! 🎉 See you soon.", ["Great job!", "See you soon."]),
    ("Done!🎉 Next task.", ["Done!", "Next task."]),
    ("Read [the docs](https://example.com/a.b). Then ask.", ["Read the docs.", "Then ask."]),
    ("**Sure! Let me** check.", ["Sure!", "Let me check."]),
    ("🎉🎉\n**", []),
]

# Quick first fragment on (default 4 words): input text -> chunks.
QUICK: list[tuple[str, list[str]]] = [
    # long enough: the first chunk ends at the comma
    (
        "Then I think we should probably go now, because it is late. Let us leave.",
        ["Then I think we should probably go now,", "because it is late.", "Let us leave."],
    ),
    # a reply's opener is a fragment of its own, however short
    (
        "Well, I think we should probably go now, because it is late. Let us leave.",
        ["Well,", "I think we should probably go now, because it is late.", "Let us leave."],
    ),
    (
        "Of course: your table for two is booked.",
        ["Of course:", "your table for two is booked."],
    ),
    # only the first chunk: later commas stay inside their sentence
    (
        "I think we should probably go now, because it is late, and I am tired, really. Ok.",
        [
            "I think we should probably go now,",
            "because it is late, and I am tired, really.",
            "Ok.",
        ],
    ),
    # too short before each comma, and no opener: whole sentences
    (
        "Tuesday, that works. Thanks, I appreciate it.",
        ["Tuesday, that works.", "Thanks, I appreciate it."],
    ),
    (
        "Sure, that works. Thanks, I appreciate it.",
        ["Sure,", "that works.", "Thanks, I appreciate it."],
    ),
    # a clause starts without punctuation: the first chunk ends before it
    (
        "Your refund of 64.50 dollars is on its way and you will see it in three days.",
        ["Your refund of 64.50 dollars is on its way", "and you will see it in three days."],
    ),
    (
        "I can look that order up because you gave me its number. Thanks.",
        ["I can look that order up", "because you gave me its number.", "Thanks."],
    ),
    # ...but not inside a fixed pair, a number, or after "even", and not before four words
    (
        "We play rock and roll and blues on Fridays. Come by.",
        ["We play rock and roll and blues on Fridays.", "Come by."],
    ),
    (
        "That comes to one hundred and twenty dollars in all.",
        ["That comes to one hundred and twenty dollars in all."],
    ),
    (
        "It will be done by Friday even if the courier is late.",
        ["It will be done by Friday even if the courier is late."],
    ),
    (
        "Call me when you can.",
        ["Call me when you can."],
    ),
    (
        "This is a classic line which has been quoted for decades.",
        ["This is a classic line", "which has been quoted for decades."],
    ),
    (
        "We have three rooms left, two of which face the sea.",
        ["We have three rooms left,", "two of which face the sea."],  # the comma, not "which"
    ),
    # a comma after four words: SmolLM2's usual openings
    (
        "I'm sorry for any inconvenience, but I can't make reservations.",
        ["I'm sorry for any inconvenience,", "but I can't make reservations."],
    ),
    (
        "To reset your password, open the settings page.",
        ["To reset your password,", "open the settings page."],
    ),
    (
        "It costs ten, sadly.",
        ["It costs ten, sadly."],  # three words before the comma: one sentence
    ),
    (
        "I will check the order but it may take a minute.",
        ["I will check the order", "but it may take a minute."],
    ),
    # a phrase a preposition starts, after a clause and its object: the first chunk ends before it
    (
        "I close today at 10:45 AM.",
        ["I close today", "at 10:45 AM."],
    ),
    (
        "Check your email for any updates. If it is still missing, call us.",
        ["Check your email", "for any updates.", "If it is still missing, call us."],
    ),
    (
        "I can help you with that right away.",
        ["I can help you", "with that right away."],
    ),
    # ...not after a bare verb, a number, inside a phrase, in a question or a leading clause
    (
        "You can look at your order online.",
        ["You can look at your order online."],
    ),
    (
        "We are open from Monday until Friday.",
        ["We are open from Monday until Friday."],
    ),
    (
        "It costs 20 dollars for the day.",
        ["It costs 20 dollars for the day."],
    ),
    (
        "Can you hold the line for a moment?",
        ["Can you hold the line for a moment?"],
    ),
    (
        "To book a table for two tonight, call us.",
        ["To book a table for two tonight,", "call us."],
    ),
    (
        "All the rooms for Friday are taken.",
        ["All the rooms for Friday are taken."],
    ),
    (
        "Please log in with your email.",
        ["Please log in with your email."],
    ),
    # a sentence end comes first: the rest are whole sentences
    (
        "Okay. I think we should probably go now, because it is late.",
        ["Okay.", "I think we should probably go now, because it is late."],
    ),
    # colon and dashes
    (
        "Here is what you need to know: it is simple.",
        ["Here is what you need to know:", "it is simple."],
    ),
    (
        "The weather today is really quite nice — perfect for a walk.",
        ["The weather today is really quite nice —", "perfect for a walk."],
    ),
    (
        "The weather today is really quite nice - perfect for a walk.",
        ["The weather today is really quite nice -", "perfect for a walk."],
    ),
    (
        "The weather today is really quite nice– perfect for a walk.",
        ["The weather today is really quite nice–", "perfect for a walk."],
    ),
    # hyphenated words, numbers and times are not clause boundaries
    (
        "This truly well-known and much loved book, yes.",
        ["This truly well-known and much loved book,", "yes."],
    ),
    (
        "There were about 1,000,000 people there, all cheering.",
        ["There were about 1,000,000 people there,", "all cheering."],
    ),
    (
        "We open at 9:30 every single weekday morning, sharp.",
        ["We open at 9:30 every single weekday morning,", "sharp."],
    ),
    (
        "The range is 2–3 hours for most people here, roughly.",
        ["The range is 2–3 hours for most people here,", "roughly."],
    ),
    # closers after the comma belong to the fragment
    (
        '"I really do think that is right," she said. Yes.',
        ['"I really do think that is right,"', "she said.", "Yes."],
    ),
    # markup does not count as words
    ("** ** ** ** ** Hi, there friend.", ["Hi, there friend."]),
]


def feed(chunker: SentenceChunker, pieces: list[str]) -> list[str]:
    out: list[str] = []
    for piece in pieces:
        out += chunker.push(piece)
    return out + chunker.flush()


def sizes(text: str, n: int) -> list[str]:
    return [text[i : i + n] for i in range(0, len(text), n)]


def random_split(text: str, seed: int) -> list[str]:
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(0, 12))))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


def splits(text: str) -> list[list[str]]:
    """Several ways an LLM might stream `text`: whole, per char, fixed sizes, random, halves."""
    patterns = [[text], list(text)] + [sizes(text, n) for n in (2, 3, 5, 7)]
    patterns += [random_split(text, seed) for seed in range(5)] if len(text) > 1 else []
    patterns += [[text[:i], text[i:]] for i in range(1, len(text))]
    return patterns


@pytest.mark.parametrize(("text", "expected"), SENTENCES)
def test_sentences(text: str, expected: list[str]) -> None:
    assert feed(SentenceChunker(quick_first_fragment=False), [text]) == expected


@pytest.mark.parametrize(("text", "expected"), QUICK)
def test_quick_first_fragment(text: str, expected: list[str]) -> None:
    assert feed(SentenceChunker(), [text]) == expected


@pytest.mark.parametrize(("text", "expected"), SENTENCES)
def test_sentences_split_invariant(text: str, expected: list[str]) -> None:
    for pieces in splits(text):
        assert feed(SentenceChunker(quick_first_fragment=False), pieces) == expected, pieces


@pytest.mark.parametrize(("text", "expected"), QUICK)
def test_quick_split_invariant(text: str, expected: list[str]) -> None:
    for pieces in splits(text):
        assert feed(SentenceChunker(), pieces) == expected, pieces


def test_quick_off_keeps_whole_sentences() -> None:
    text = "Well, I think we should probably go now, because it is late."
    assert feed(SentenceChunker(quick_first_fragment=False), [text]) == [text]


def test_min_fragment_words() -> None:
    text = "Tuesday, that works for me."
    assert feed(SentenceChunker(min_fragment_words=1), [text]) == ["Tuesday,", "that works for me."]
    assert feed(SentenceChunker(min_fragment_words=2), [text]) == [text]
    # "1,000" has no space after its comma
    money = "It costs 1,000 dollars, sadly."
    assert feed(SentenceChunker(min_fragment_words=1), [money]) == [
        "It costs 1,000 dollars,",
        "sadly.",
    ]


def test_quick_fragment_again_after_flush_and_reset() -> None:
    text = "I think we should probably go now, because it is late."
    expected = ["I think we should probably go now,", "because it is late."]
    chunker = SentenceChunker()
    assert feed(chunker, [text]) == expected
    assert feed(chunker, [text]) == expected  # flush ended the response
    chunker.push("Hello there. ")
    chunker.reset()
    assert feed(chunker, [text]) == expected


def test_push_emits_as_soon_as_certain() -> None:
    chunker = SentenceChunker(quick_first_fragment=False)
    assert chunker.push("Hello world") == []
    assert chunker.push(".") == []  # might be "world.com"
    assert chunker.push(" How") == ["Hello world."]
    assert chunker.pending_text == "How"
    assert chunker.push(" are you?") == []
    assert chunker.push("\n") == ["How are you?"]
    assert chunker.pending_text == ""


def test_push_holds_until_lookahead_rules_out_exceptions() -> None:
    chunker = SentenceChunker(quick_first_fragment=False)
    assert chunker.push("See you at 7 a.m. ") == []  # needs the next word
    assert chunker.push("D") == []  # could be "Dr."
    assert chunker.push("one.") == ["See you at 7 a.m."]  # "Do..." is no title
    assert chunker.push(" Bye") == ["Done."]
    assert chunker.flush() == ["Bye"]


def test_push_holds_after_ellipsis_and_closers() -> None:
    chunker = SentenceChunker(quick_first_fragment=False)
    assert chunker.push("Well... ") == []  # "Well... Maybe" or "Well... maybe"?
    assert chunker.push("m") == []
    assert chunker.pending_text == "Well... m"
    assert chunker.push("aybe. ") == ["Well... maybe."]
    chunker.reset()
    assert chunker.push('He said "stop." ') == []
    assert chunker.push("Then") == ['He said "stop."']


def test_flush_returns_remainder_cleaned() -> None:
    chunker = SentenceChunker()
    assert chunker.push("Hello **there** ") == []
    assert chunker.pending_text == "Hello **there** "
    assert chunker.flush() == ["Hello there"]
    assert chunker.pending_text == ""
    assert chunker.flush() == []


def test_flush_drops_whitespace_and_markup_only() -> None:
    for text in ["", "  \n\t ", "**", "# ", "- ", "🎉 👍", "```"]:
        chunker = SentenceChunker()
        chunker.push(text)
        assert chunker.flush() == [], text


def test_reset_drops_pending_text() -> None:
    chunker = SentenceChunker(quick_first_fragment=False)
    assert chunker.push("Hello wor") == []
    chunker.reset()
    assert chunker.pending_text == ""
    assert chunker.push("Bye. Now") == ["Bye."]
    assert chunker.flush() == ["Now"]


def test_runaway_split_at_last_whitespace() -> None:
    text = "aaa bbb ccc ddd eee fff ggg hhh"
    chunker = SentenceChunker(max_chunk_chars=20)
    assert chunker.push(text) == ["aaa bbb ccc ddd eee"]
    assert chunker.flush() == ["fff ggg hhh"]


def test_runaway_without_whitespace_cuts_hard() -> None:
    chunker = SentenceChunker(max_chunk_chars=20)
    assert feed(chunker, ["x" * 50]) == ["x" * 20, "x" * 20, "x" * 10]


def test_runaway_default_limit_and_split_invariance() -> None:
    words = [f"word{i}" for i in range(200)]
    text = " ".join(words)
    expected = feed(SentenceChunker(), [text])
    assert all(len(chunk) <= 400 for chunk in expected)
    assert len(expected) == 4
    assert " ".join(expected).split() == words
    for pieces in (list(text), sizes(text, 3), random_split(text, 1)):
        assert feed(SentenceChunker(), pieces) == expected


def test_boundary_still_wins_under_the_limit() -> None:
    chunker = SentenceChunker(quick_first_fragment=False, max_chunk_chars=30)
    assert feed(chunker, ["Short one. " + "long " * 10]) == [
        "Short one.",
        "long long long long long long",
        "long long long long",
    ]


def test_constructor_validates() -> None:
    with pytest.raises(ValueError):
        SentenceChunker(max_chunk_chars=0)
    with pytest.raises(ValueError):
        SentenceChunker(min_fragment_words=-1)
    with pytest.raises(TypeError):
        SentenceChunker(False)  # type: ignore[misc]


CLEAN: list[tuple[str, str]] = [
    ("**bold** and *italic*", "bold and italic"),
    ("__under__ stays snake_case and _this_", "under stays snake_case and this"),
    ("Run `pip list` now", "Run pip list now"),
    ("```python\nprint(1)\n```", "print(1)"),
    ("# Heading", "Heading"),
    ("### Third level\ntext", "Third level text"),
    ("- one\n* two\n+ three", "one two three"),
    ("  - indented bullet", "indented bullet"),
    ("See [the docs](https://example.com/x) now", "See the docs now"),
    ("![a cat](cat.png)", "a cat"),
    ("Great job! 🎉🎉", "Great job!"),
    ("Thumbs 👍🏽 up ❤️ ok ⭐", "Thumbs up ok"),
    ("Flag 🇫🇷 family 👨‍👩‍👧", "Flag family"),
    ("Done ✅!", "Done!"),
    ("  lots \t of \n\n space  ", "lots of space"),
    ("> quoted text", "quoted text"),
    ("---", ""),
    ("It is 25°C, -5 at night, 2 - 1 = 1", "It is 25°C, -5 at night, 2 - 1 = 1"),
    ("jane.doe@example.com costs $3.50", "jane.doe@example.com costs $3.50"),
    ("~~old~~ new", "old new"),
    ("", ""),
]


@pytest.mark.parametrize(("text", "expected"), CLEAN)
def test_clean_for_speech(text: str, expected: str) -> None:
    assert clean_for_speech(text) == expected


def test_opener_fragments_and_phrase_starts_can_be_turned_off() -> None:
    sure = "Sure, that works for me."
    assert feed(SentenceChunker(opener_fragments=False), [sure]) == [sure]
    refund = "Your refund is on its way and you will see it soon."
    assert feed(SentenceChunker(first_phrase_words=0), [refund]) == [refund]
    assert feed(SentenceChunker(), [refund]) == ["Your refund is on its way",
                                                 "and you will see it soon."]
    with pytest.raises(ValueError):
        SentenceChunker(first_phrase_words=-1)
    close = "I close today at ten in the morning."
    assert feed(SentenceChunker(head_phrase_words=0), [close]) == [close]
    assert feed(SentenceChunker(head_phrase_words=4), [close]) == [close]  # three words before
    assert feed(SentenceChunker(quick_first_fragment=False), [close]) == [close]
    with pytest.raises(ValueError):
        SentenceChunker(head_phrase_words=-1)


def test_a_phrase_start_waits_for_the_whole_word_after_the_cut() -> None:
    chunker = SentenceChunker()
    assert chunker.push("I close today a") == []  # "a" may grow into "at" or "around"
    assert chunker.push("t") == []  # "at", or "attend"?
    assert chunker.push(" ") == ["I close today"]
    assert chunker.flush() == ["at"]


# --- a reply that repeats itself, a reply cut at its token limit ---------------------------------

def test_a_sentence_said_again_is_dropped_with_all_that_follows() -> None:
    chunker = SentenceChunker(quick_first_fragment=False)
    text = "I'm glad of that. I'm glad of that. I'm glad of that."
    assert feed(chunker, list(text)) == ["I'm glad of that."]
    # any case, markup or closing mark is the same sentence; the loop's tail is not spoken either
    chunker = SentenceChunker(quick_first_fragment=False)
    assert feed(chunker, ["Your refund is done. **your refund is DONE!** And more."]) == [
        "Your refund is done."]


def test_a_repeat_of_a_sentence_a_quick_fragment_began_is_dropped() -> None:
    chunker = SentenceChunker(min_fragment_words=1)
    assert feed(chunker, ["Sure, I can help with that. Sure, I can help with that. Bye."]) == [
        "Sure,", "I can help with that."]


def test_different_sentences_and_repeats_across_responses_are_spoken() -> None:
    chunker = SentenceChunker(quick_first_fragment=False)
    assert feed(chunker, ["It is late. It is late at night. Late."]) == [
        "It is late.", "It is late at night.", "Late."]
    assert feed(chunker, ["It is late."]) == ["It is late."]  # a new response: said afresh
    off = SentenceChunker(quick_first_fragment=False, drop_repeats=False)
    assert feed(off, ["Yes. Yes."]) == ["Yes.", "Yes."]


def test_a_cut_reply_ends_at_its_last_complete_sentence() -> None:
    chunker = SentenceChunker(quick_first_fragment=False)
    assert chunker.push("Checkout is at eleven. Late check") == ["Checkout is at eleven."]
    assert chunker.flush(complete_only=True) == []  # "Late check" may be half a word
    assert chunker.push("Checkout is at eleven. It is free.") == ["Checkout is at eleven."]
    assert chunker.flush(complete_only=True) == ["It is free."]  # it ended on a sentence
    assert chunker.push("Checkout is at eleven") == []
    assert chunker.flush() == ["Checkout is at eleven"]  # not cut: the whole reply is spoken


def test_a_cut_reply_keeps_its_quick_first_fragment() -> None:
    chunker = SentenceChunker(min_fragment_words=1)
    assert chunker.push("Sure, your refund of twenty dol") == ["Sure,"]
    assert chunker.flush(complete_only=True) == []


def test_stop_at_repeat_ends_a_scripted_models_loop() -> None:
    import threading

    from pipeline.chunker import stop_at_repeat
    from pipeline.stages.fakes import ScriptedLLM

    llm = ScriptedLLM(replies=["I'm glad of that. I'm glad of that. I'm glad of that."])
    stopped: list[bool] = []
    pieces = list(stop_at_repeat(llm.stream([], cancel=threading.Event()), lambda: stopped.append(True)))
    assert stopped == [True]
    assert "".join(pieces).split() == "I'm glad of that. I'm glad of that.".split()  # the chunker drops it
    # a tool call passes whole, whatever its text repeats; short sentences ("No.") do not stop it
    call = '{"name": "say", "arguments": {"text": "One moment please. One moment please. "}}'
    assert "".join(stop_at_repeat(list(call))) == call
    assert "".join(stop_at_repeat(["No. ", "No. ", "Dr. Lee is in."])) == "No. No. Dr. Lee is in."


def test_the_calls_chunker_takes_the_phrase_heads_from_the_configuration() -> None:
    from pipeline.base.config import load
    from pipeline.call.response_speech import sentence_chunker

    close = "I close today at ten in the morning."
    assert feed(sentence_chunker(load(None, [])), [close]) == ["I close today", "at ten in the morning."]
    off = load(None, ["chunker.head_phrase_words=0"])
    assert feed(sentence_chunker(off), [close]) == [close]
