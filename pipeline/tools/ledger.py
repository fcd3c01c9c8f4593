"""A durable ledger so a side-effecting tool runs its effect at most once per business key.

Rows are keyed on the business key (the order being refunded, not the model's call id),
because a caller who repeats themselves, or a model that calls twice, must not refund twice.
Every check-and-write is one `BEGIN IMMEDIATE` transaction, so two processes or threads
sharing the file cannot both decide to run the same effect.

States: pending (effect may be in flight), committed, failed, unknown (we crashed or timed
out before learning the outcome), not_started (the provider confirmed it never happened).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from .ledger_rows import (
    COLUMNS,
    SCHEMA,
    Intent,
    IntentKind,
    Row,
    State,
    Transaction,
    dump_result,
    intent_digest,
    row_from_db,
)

__all__ = ["Intent", "IntentKind", "Ledger", "Row", "State", "intent_digest"]

class Ledger:
    """SQLite-backed record of side effects; safe to share one file across threads and processes.

    One Ledger object holds one connection; it may be used from several threads (calls are
    serialized), but each process should open its own.
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout_s: float = 10.0) -> None:
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            os.fspath(path), timeout=timeout_s, isolation_level=None, check_same_thread=False
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        # A committed refund must survive power loss, not only a process crash.
        self._db.execute("PRAGMA synchronous=FULL")
        with self._write():
            self._db.execute(SCHEMA)
            columns = {r[1] for r in self._db.execute("PRAGMA table_info(ledger)")}
            if "confirmed" not in columns:  # a file from before read-backs: the column is added
                self._db.execute("ALTER TABLE ledger ADD COLUMN confirmed TEXT")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def intend(
        self, *, business_key: str, tool: str, arguments: dict[str, Any], target: str, call_id: str
    ) -> Intent:
        """Record that `call_id` wants this effect, and say whether the caller may run it."""
        digest = intent_digest(tool=tool, arguments=arguments, target=target)
        args_json = json.dumps(arguments, sort_keys=True, ensure_ascii=False)
        now = time.time()
        with self._write():
            row = self._select(business_key)
            if row is None:
                self._db.execute(
                    f"INSERT INTO ledger ({COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        business_key,
                        tool,
                        uuid.uuid4().hex,
                        digest,
                        args_json,
                        target,
                        "pending",
                        json.dumps([call_id]),
                        None,
                        None,
                        0,
                        0,
                        now,
                        now,
                    ),
                )
                return Intent(kind="execute", row=self._require(business_key))

            call_ids = list(row.call_ids)
            if call_id not in call_ids:
                call_ids.append(call_id)
            same = row.intent_digest == digest

            if row.state == "failed" or (row.state == "not_started" and same):
                # After a definite failure a fresh key: providers that dedupe replay the stored
                # failure for a reused key. After not_started the provider never saw the key,
                # so keeping it costs nothing and still guards against a wrong "never happened".
                key = uuid.uuid4().hex if row.state == "failed" else row.idempotency_key
                self._update(
                    business_key,
                    now,
                    state="pending",
                    idempotency_key=key,
                    intent_digest=digest,
                    arguments_json=args_json,
                    target=target,
                    tool=tool,
                    call_ids=json.dumps(call_ids),
                    result_json=None,
                    error=None,
                    told=0,
                    tell_attempts=0,
                )
                return Intent(kind="execute", row=self._require(business_key))

            if row.state in ("pending", "not_started") and not same:
                self._update(
                    business_key,
                    now,
                    state="pending",
                    intent_digest=digest,
                    arguments_json=args_json,
                    target=target,
                    tool=tool,
                    call_ids=json.dumps(call_ids),
                )
                return Intent(kind="updated", row=self._require(business_key), previous=row)

            self._update(business_key, now, call_ids=json.dumps(call_ids))
            updated = self._require(business_key)
            if row.state == "unknown":
                return Intent(
                    kind="unknown",
                    row=updated,
                    message=(
                        f"We do not know whether {row.tool} for {business_key} went through; "
                        "resolve it with resolve_unknown() before running it again."
                    ),
                )
            if row.state == "committed" and not same:
                return Intent(
                    kind="refused",
                    row=updated,
                    message=(
                        f"{row.tool} for {business_key} already went through with different "
                        f"details, so it cannot be changed automatically; a person must reverse "
                        f"the committed {row.tool} before a different one can be made."
                    ),
                )
            # Same request, committed or still in flight: never a second effect.
            return Intent(kind="already_done", row=updated)

    def restore_intent(self, business_key: str, previous: Row, *, refused_digest: str) -> Row:
        """The provider refused a change to an effect in flight: the row keeps the earlier intent.

        Its state is left alone (the earlier request still settles it); a newer intent recorded
        since the refused one (another digest or key) wins and is left alone too.
        """
        with self._write():
            row = self._require(business_key)
            if row.intent_digest != refused_digest or row.idempotency_key != previous.idempotency_key:
                return row
            self._update(
                business_key,
                time.time(),
                intent_digest=previous.intent_digest,
                arguments_json=json.dumps(previous.arguments, sort_keys=True, ensure_ascii=False),
                target=previous.target,
                tool=previous.tool,
            )
            return self._require(business_key)

    def commit(self, business_key: str, result: dict[str, Any]) -> Row:
        """The effect went through; store the provider's result."""
        with self._write():
            row = self._require(business_key)
            if row.state not in ("pending", "committed"):
                raise ValueError(
                    f"Cannot commit {business_key}: it is {row.state!r}, not pending; "
                    "record a new intent with intend() first."
                )
            # On a re-commit (an updated effect re-run under the same key) keep the newest
            # result, and whether the caller was told stays as it was.
            self._update(
                business_key, time.time(), state="committed", result_json=dump_result(result), error=None
            )
            return self._require(business_key)

    def fail(self, business_key: str, error: str) -> Row:
        """The provider definitely refused the effect; a later intend() may retry it."""
        with self._write():
            row = self._require(business_key)
            if row.state == "committed":
                # A later re-run failing cannot undo an effect that already happened.
                return row
            if row.state not in ("pending", "failed"):
                raise ValueError(
                    f"Cannot mark {business_key} failed: it is {row.state!r}; only a pending "
                    "effect can fail."
                )
            self._update(business_key, time.time(), state="failed", error=error)
            return self._require(business_key)

    def mark_unknown(self, business_key: str, error: str) -> Row:
        """The effect's outcome is not known (e.g. it timed out); resolve it before retrying."""
        with self._write():
            row = self._require(business_key)
            if row.state != "pending":
                return row
            self._update(business_key, time.time(), state="unknown", error=error)
            return self._require(business_key)

    def get(self, business_key: str) -> Row | None:
        with self._lock:
            return self._select(business_key)

    def rows(self) -> list[Row]:
        return self._query("SELECT {} FROM ledger ORDER BY created_at, business_key")

    def untold(self) -> list[Row]:
        """Finished effects whose outcome the caller has not yet been told."""
        return self._query(
            "SELECT {} FROM ledger WHERE state IN ('committed', 'failed') AND told = 0 "
            "ORDER BY updated_at, business_key"
        )

    def unsettled(self) -> list[Row]:
        """Effects whose outcome nobody knows (a crash before the provider answered, `recover`)."""
        return self._query("SELECT {} FROM ledger WHERE state = 'unknown' ORDER BY created_at, business_key")

    def recover(self) -> list[Row]:
        """At startup: every pending row becomes unknown, since we crashed before learning more.

        Call it before any session uses the ledger; a live process's in-flight effects would
        otherwise be marked unknown too.
        """
        with self._write():
            self._db.execute(
                "UPDATE ledger SET state = 'unknown', updated_at = ? WHERE state = 'pending'",
                (time.time(),),
            )
            cursor = self._db.execute(
                f"SELECT {COLUMNS} FROM ledger WHERE state = 'unknown' "
                "ORDER BY created_at, business_key"
            )
            return [row_from_db(r) for r in cursor.fetchall()]

    async def resolve_unknown(
        self, business_key: str, query: Callable[[str], Awaitable[dict[str, Any] | None]], *,
        run_blocking: Callable[..., Awaitable[Any]] | None = None,
    ) -> Row:
        """Ask the provider, by idempotency key, what became of an unknown effect.

        A dict means it happened (committed); None means it never did (not_started, and only a
        new intend() may run it); an exception leaves it unknown with the error noted.
        `run_blocking(fn)` runs the reads and writes (a session passes its clock's thread runner,
        keeping SQLite off the event loop); by default they run inline.
        """
        async def inline(fn: Callable[[], Any]) -> Any:
            return fn()

        run = run_blocking or inline
        row = await run(lambda: self.get(business_key))
        if row is None:
            raise KeyError(f"No ledger row for {business_key!r}.")
        if row.state != "unknown":
            return row
        try:
            # No transaction is held while the provider answers: it may take seconds.
            found = await query(row.idempotency_key)
            if found is not None and not isinstance(found, dict):
                raise TypeError(f"query returned {type(found).__name__}, not a dict or None")
        except Exception as exc:
            error = f"resolve failed: {exc!r}"
            return await run(lambda: self._settle(row, state="unknown", error=error))
        if found is None:
            return await run(lambda: self._settle(row, state="not_started", error=None))
        return await run(lambda: self._settle(row, state="committed", error=None, result_json=dump_result(found)))

    def mark_told(self, business_key: str) -> Row:
        """The caller heard the outcome; it will not be repeated after a restart."""
        with self._write():
            row = self._require(business_key)
            if row.state not in ("committed", "failed"):
                raise ValueError(
                    f"Cannot mark {business_key} told: it is {row.state!r}; tell the caller "
                    "only a committed or failed outcome."
                )
            self._update(business_key, time.time(), told=1)
            return self._require(business_key)

    def note_tell_attempt(self, business_key: str) -> Row:
        """Count an attempt to tell the caller (e.g. a receipt that was barged in on)."""
        with self._write():
            self._require(business_key)
            self._db.execute(
                "UPDATE ledger SET tell_attempts = tell_attempts + 1, updated_at = ? "
                "WHERE business_key = ?",
                (time.time(), business_key),
            )
            return self._require(business_key)

    def record_confirmation(self, business_key: str, confirmation: str) -> None:
        """What the caller was read back and said yes to before the effect ran (a read-back)."""
        with self._write():
            self._require(business_key)
            self._db.execute("UPDATE ledger SET confirmed = ?, updated_at = ? WHERE business_key = ?",
                             (confirmation, time.time(), business_key))

    def confirmation(self, business_key: str) -> str | None:
        """The read-back the caller confirmed for this effect (None: it ran without one)."""
        with self._lock:
            found = self._db.execute("SELECT confirmed FROM ledger WHERE business_key = ?",
                                     (business_key,)).fetchone()
        return None if found is None else found[0]

    # -- internals ---------------------------------------------------------------------------

    def _settle(self, seen: Row, *, state: State, error: str | None, **extra: Any) -> Row:
        with self._write():
            row = self._require(seen.business_key)
            # Another resolver or a new intent may have moved the row while we awaited.
            if row.state != "unknown" or row.idempotency_key != seen.idempotency_key:
                return row
            self._update(row.business_key, time.time(), state=state, error=error, **extra)
            return self._require(row.business_key)

    def _write(self) -> Transaction:
        return Transaction(self._db, self._lock)

    def _query(self, sql: str) -> list[Row]:
        with self._lock:
            return [row_from_db(r) for r in self._db.execute(sql.format(COLUMNS)).fetchall()]

    def _select(self, business_key: str) -> Row | None:
        cursor = self._db.execute(
            f"SELECT {COLUMNS} FROM ledger WHERE business_key = ?", (business_key,)
        )
        found = cursor.fetchone()
        return None if found is None else row_from_db(found)

    def _require(self, business_key: str) -> Row:
        row = self._select(business_key)
        if row is None:
            raise KeyError(
                f"No ledger row for {business_key!r}; call intend() before recording an outcome."
            )
        return row

    def _update(self, business_key: str, now: float, **columns: Any) -> None:
        # Column names come from this module only, never from callers' data.
        assignments = ", ".join(f"{name} = ?" for name in columns)
        self._db.execute(
            f"UPDATE ledger SET {assignments}, updated_at = ? WHERE business_key = ?",
            (*columns.values(), now, business_key),
        )
