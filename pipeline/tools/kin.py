"""Words for who a person is to the caller: kin ("my mum", "our Jordan's dad") as a record
writes them ("her mother, Edith"), and the associates a desk keeps an account for beside the
caller's ("His business partner, Nomsa Dlamini, customer code KW-2237")."""

from __future__ import annotations

from .spoken.kinds import stem
from .spoken.words import words

__all__ = ["ASSOCIATE", "FAMILIAR", "KIN", "KINSHIP", "is_kin", "kin_word", "record_word"]

# a caller's word for kin, as a record writes it ("Mum's morning visit": "her mother, Edith")
KIN = {"mum": "mother", "mom": "mother", "mam": "mother", "mummy": "mother", "mommy": "mother",
        "dad": "father", "daddy": "father", "gran": "grandmother", "granny": "grandmother",
        "nan": "grandmother", "nana": "grandmother", "grandma": "grandmother", "grandad": "grandfather",
        "granddad": "grandfather", "grandpa": "grandfather", "auntie": "aunt", "aunty": "aunt", "amma": "mother", "ammi": "mother",
        "mama": "mother", "appa": "father", "papa": "father", "nani": "grandmother", "dadi": "grandmother", "ouma": "grandmother"}
KINSHIP = frozenset(KIN.values()) | {"husband", "wife", "son", "daughter", "brother", "sister", "uncle", "aunt",
                                        "grandson", "granddaughter", "grandchild", "nephew", "niece"}
FAMILIAR = frozenset("lad lass boy girl kid partner missus hubby nephew niece cousin grandson granddaughter".split())  # as kin, in a name's place only


def is_kin(value: str) -> bool:
    """Is this a word for kin ("Mam", "my dad", "ma lad"), which names nobody on its own?"""
    ws, kin = [w.text for w in words(value)], KINSHIP | FAMILIAR
    return len(ws) in (1, 2) and ws[0] in ("my", "our", "ma", "me", *KIN, *kin) and record_word(ws[-1]) in kin


def kin_word(text: str) -> str | None:
    """The word a record writes this kin in ("auntie": aunt, "mam": mother), or None: no kin."""
    return word if (word := record_word(text.lower())) in KINSHIP else None


def record_word(text: str) -> str:
    """A word as a record's entries are compared by: its stem, a word for kin as records write it."""
    return KIN.get(s := stem(text), s)


# who a desk may keep an account for beside the caller's ("His business partner, Nomsa Dlamini, customer code KW-2237")
ASSOCIATE = frozenset("partner neighbour neighbor friend colleague boss flatmate housemate landlord tenant".split())
