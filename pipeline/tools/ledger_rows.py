"""The ledger's rows: the table, what a row holds, the decision `intend` returns, the digest of
an intent, and the one-transaction-at-a-time write lock."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from dataclasses import dataclass
from typing import Any, Literal

State = Literal["not_started", "pending", "committed", "failed", "unknown"]
IntentKind = Literal["execute", "already_done", "updated", "refused", "unknown"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS ledger (
    business_key    TEXT PRIMARY KEY,
    tool            TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    intent_digest   TEXT NOT NULL,
    arguments_json  TEXT NOT NULL,
    target          TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN
                        ('not_started', 'pending', 'committed', 'failed', 'unknown')),
    call_ids        TEXT NOT NULL,
    result_json     TEXT,
    error           TEXT,
    told            INTEGER NOT NULL DEFAULT 0 CHECK (told IN (0, 1)),
    tell_attempts   INTEGER NOT NULL DEFAULT 0,
    created_at      REAL NOT NULL,
    updated_at      REAL NOT NULL
)
"""
COLUMNS = (
    "business_key, tool, idempotency_key, intent_digest, arguments_json, target, state, "
    "call_ids, result_json, error, told, tell_attempts, created_at, updated_at"
)


@dataclass(frozen=True, kw_only=True)
class Row:
    """One business key's effect, as stored."""

    business_key: str
    tool: str
    idempotency_key: str
    intent_digest: str
    arguments: dict[str, Any]
    target: str
    state: State
    call_ids: tuple[str, ...]
    result: dict[str, Any] | None
    error: str | None
    told: bool
    tell_attempts: int
    created_at: float
    updated_at: float


@dataclass(frozen=True, kw_only=True)
class Intent:
    """What `Ledger.intend` decided; `message` explains refusals and unknowns, and an update
    keeps the intent it replaced (`previous`), to restore it if the provider refuses the change."""

    kind: IntentKind
    row: Row
    message: str | None = None
    previous: Row | None = None

    @property
    def must_run(self) -> bool:
        """True when the caller must run the effect now, with `row.idempotency_key`."""
        return self.kind in ("execute", "updated")


def intent_digest(*, tool: str, arguments: dict[str, Any], target: str) -> str:
    """sha256 of the normalized intent, so "A1 " and "a1" count as the same request."""
    canonical = json.dumps(
        _normalize({"tool": tool, "arguments": arguments, "target": target}),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _normalize(value: Any) -> Any:
    if isinstance(value, str):
        return value.strip().casefold()
    if isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        # 20 and 20.0 are the same amount.
        return int(value)
    if isinstance(value, dict):
        return {str(k): _normalize(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_normalize(v) for v in value]
    return value


class Transaction:
    """`BEGIN IMMEDIATE` ... `COMMIT`, rolled back on error; holds the thread lock throughout."""

    def __init__(self, db: sqlite3.Connection, lock: threading.Lock) -> None:
        self._db = db
        self._lock = lock

    def __enter__(self) -> None:
        self._lock.acquire()
        try:
            # IMMEDIATE takes the write lock before reading, so check-then-write cannot race.
            self._db.execute("BEGIN IMMEDIATE")
        except BaseException:
            self._lock.release()
            raise

    def __exit__(self, exc_type: object, *rest: object) -> None:
        try:
            self._db.execute("ROLLBACK" if exc_type else "COMMIT")
        finally:
            self._lock.release()


def dump_result(result: dict[str, Any]) -> str:
    if not isinstance(result, dict):
        raise TypeError(f"A result must be a dict, not {type(result).__name__}.")
    return json.dumps(result, sort_keys=True, ensure_ascii=False)


def row_from_db(values: tuple[Any, ...]) -> Row:
    (
        business_key,
        tool,
        idempotency_key,
        digest,
        arguments_json,
        target,
        state,
        call_ids,
        result_json,
        error,
        told,
        tell_attempts,
        created_at,
        updated_at,
    ) = values
    return Row(
        business_key=business_key,
        tool=tool,
        idempotency_key=idempotency_key,
        intent_digest=digest,
        arguments=json.loads(arguments_json),
        target=target,
        state=state,
        call_ids=tuple(json.loads(call_ids)),
        result=None if result_json is None else json.loads(result_json),
        error=error,
        told=bool(told),
        tell_attempts=tell_attempts,
        created_at=created_at,
        updated_at=updated_at,
    )


def state_counts(path: str) -> dict[str, int]:
    """Rows per state in the ledger file at `path`, read-only: nothing is created or locked for
    writing, and a missing file or table counts nothing (a worker's metrics read it per scrape)."""
    from pathlib import Path

    if not Path(path).is_file():
        return {}
    uri = Path(path).resolve().as_uri() + "?mode=ro"
    try:
        db = sqlite3.connect(uri, uri=True, timeout=1.0)
        try:
            return {str(state): int(n) for state, n in
                    db.execute("SELECT state, count(*) FROM ledger GROUP BY state")}
        finally:
            db.close()
    except sqlite3.Error:
        return {}
