"""glibc's allocator, told to give memory back: a long-lived worker's RSS otherwise keeps every
high-water mark its busiest moment reached.

glibc makes one malloc arena per thread that contends for one (up to 8 per core), and an arena
gives freed pages back to the system only from its top; `bound_arenas` caps their number (what
`MALLOC_ARENA_MAX` does, set from inside the process) and `trim` returns the free pages of every
arena now (`malloc_trim(0)`). Both do nothing where the C library is not glibc."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Any

M_ARENA_MAX = -8  # glibc's malloc.h


@functools.cache
def _libc() -> Any:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim  # noqa: B018 - glibc only
        libc.mallopt  # noqa: B018
    except (OSError, AttributeError):
        return None
    return libc


def bound_arenas(arenas: int = 2) -> bool:
    """At most `arenas` malloc arenas from now on (threads started before keep theirs): call it
    before the models start their threads. True when the C library took it."""
    if arenas < 1:
        raise ValueError(f"arenas must be at least 1, got {arenas}")
    libc = _libc()
    return bool(libc is not None and libc.mallopt(M_ARENA_MAX, arenas))


def trim() -> bool:
    """Give the free pages of every malloc arena back to the system; True when some were."""
    libc = _libc()
    return bool(libc is not None and libc.malloc_trim(0))


__all__ = ["bound_arenas", "trim"]
