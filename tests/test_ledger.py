"""The side-effect ledger: one effect per business key, across threads, processes and crashes."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest

from pipeline.tools import Intent, Ledger, Row
from pipeline.tools.ledger import intent_digest

ROOT = Path(__file__).resolve().parents[1]
KEY = "refund:A17"
ARGS = {"order_id": "A17", "amount": 20}


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "ledger.sqlite3"


@pytest.fixture
def ledger(path: Path):
    with Ledger(path) as opened:
        yield opened


def intend(ledger: Ledger, call_id: str, *, args: dict | None = None, key: str = KEY) -> Intent:
    return ledger.intend(
        business_key=key,
        tool="refund",
        arguments=ARGS if args is None else args,
        target="card-1",
        call_id=call_id,
    )


def test_opens_in_wal_mode_with_expected_columns(ledger: Ledger, path: Path) -> None:
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        columns = [r[1] for r in db.execute("PRAGMA table_info(ledger)")]
    finally:
        db.close()
    assert columns == [
        "business_key",
        "tool",
        "idempotency_key",
        "intent_digest",
        "arguments_json",
        "target",
        "state",
        "call_ids",
        "result_json",
        "error",
        "told",
        "tell_attempts",
        "created_at",
        "updated_at",
        "confirmed",  # a read-back the caller said yes to (added to older files when opened)
    ]


def test_an_older_file_gets_the_confirmation_column_and_keeps_its_rows(path: Path) -> None:
    from pipeline.tools.ledger_rows import SCHEMA

    db = sqlite3.connect(path)
    db.execute(SCHEMA)  # a ledger written before read-backs: no `confirmed` column
    db.execute("INSERT INTO ledger VALUES ('k', 'refund', 'i', 'd', '{}', '', 'committed', '[]', NULL, "
               "NULL, 1, 0, 0, 0)")
    db.commit()
    db.close()
    with Ledger(path) as ledger:
        assert ledger.get("k").state == "committed" and ledger.confirmation("k") is None
        ledger.record_confirmation("k", "A refund of 20 dollars, is that right? / Yes.")
        assert ledger.confirmation("k") == "A refund of 20 dollars, is that right? / Yes."


def test_first_intent_executes_and_repeat_is_already_done(ledger: Ledger) -> None:
    first = intend(ledger, "c1")
    assert first.kind == "execute" and first.must_run
    row = first.row
    assert isinstance(row, Row)
    assert row.state == "pending"
    # a fresh random key for the provider (uuid4, 32 lowercase hex digits), not the business key
    assert uuid.UUID(hex=row.idempotency_key).version == 4
    assert row.idempotency_key == uuid.UUID(hex=row.idempotency_key).hex
    assert row.call_ids == ("c1",)
    assert row.arguments == ARGS and row.target == "card-1" and row.tool == "refund"
    assert row.result is None and row.told is False and row.tell_attempts == 0

    # Same request while in flight, with cosmetic differences: no second effect.
    again = intend(ledger, "c2", args={"order_id": " a17 ", "amount": 20.0})
    assert again.kind == "already_done" and not again.must_run
    assert again.row.state == "pending"
    assert again.row.idempotency_key == row.idempotency_key
    assert again.row.call_ids == ("c1", "c2")

    committed = ledger.commit(KEY, {"refund_id": "R1"})
    assert committed.state == "committed" and committed.result == {"refund_id": "R1"}
    done = intend(ledger, "c3")
    assert done.kind == "already_done"
    assert done.row.result == {"refund_id": "R1"}
    assert done.row.call_ids == ("c1", "c2", "c3")
    # The same call id asking twice is recorded once.
    assert intend(ledger, "c3").row.call_ids == ("c1", "c2", "c3")


def test_digest_normalizes_strings_numbers_and_key_order() -> None:
    a = intent_digest(tool="refund", arguments={"b": "X ", "a": 1.0}, target="Card")
    b = intent_digest(tool=" Refund", arguments={"a": 1, "b": "x"}, target="card ")
    assert a == b and len(a) == 64
    assert a != intent_digest(tool="refund", arguments={"a": 2, "b": "x"}, target="card")
    assert a != intent_digest(tool="refund", arguments={"a": 1, "b": "x"}, target="card-2")
    assert intent_digest(tool="t", arguments={"a": True}, target="") != intent_digest(
        tool="t", arguments={"a": 1}, target=""
    )


def test_different_request_while_pending_updates_the_one_effect(ledger: Ledger) -> None:
    first = intend(ledger, "c1")
    changed = intend(ledger, "c2", args={"order_id": "A17", "amount": 15})
    assert changed.kind == "updated" and changed.must_run
    assert changed.row.state == "pending"
    assert changed.row.idempotency_key == first.row.idempotency_key
    assert changed.row.arguments == {"order_id": "A17", "amount": 15}
    assert changed.row.intent_digest != first.row.intent_digest
    assert changed.row.call_ids == ("c1", "c2")


def test_different_request_after_commit_is_refused(ledger: Ledger) -> None:
    intend(ledger, "c1")
    ledger.commit(KEY, {"refund_id": "R1"})
    refused = intend(ledger, "c2", args={"order_id": "A17", "amount": 999})
    assert refused.kind == "refused" and not refused.must_run
    assert refused.message and "person must reverse" in refused.message
    # The committed effect is untouched.
    assert refused.row.state == "committed"
    assert refused.row.arguments == ARGS
    assert refused.row.result == {"refund_id": "R1"}
    assert refused.row.call_ids == ("c1", "c2")


def test_failed_effect_may_be_retried_with_a_new_key(ledger: Ledger) -> None:
    first = intend(ledger, "c1")
    failed = ledger.fail(KEY, "card declined")
    assert failed.state == "failed" and failed.error == "card declined"
    assert [r.business_key for r in ledger.untold()] == [KEY]
    retry = intend(ledger, "c2")
    assert retry.kind == "execute"
    assert retry.row.state == "pending" and retry.row.error is None
    assert retry.row.idempotency_key != first.row.idempotency_key
    assert ledger.untold() == []


def test_fail_does_not_undo_a_commit(ledger: Ledger) -> None:
    intend(ledger, "c1")
    ledger.commit(KEY, {"refund_id": "R1"})
    assert ledger.fail(KEY, "late error").state == "committed"


def test_outcomes_need_an_intent(ledger: Ledger) -> None:
    with pytest.raises(KeyError, match="call intend"):
        ledger.commit("refund:nope", {})
    with pytest.raises(KeyError, match="call intend"):
        ledger.mark_told("refund:nope")
    intend(ledger, "c1")
    with pytest.raises(ValueError, match="only a committed or failed"):
        ledger.mark_told(KEY)
    with pytest.raises(TypeError, match="must be a dict"):
        ledger.commit(KEY, ["not", "a", "dict"])  # type: ignore[arg-type]
    assert ledger.get(KEY).state == "pending"


def test_told_and_tell_attempts(ledger: Ledger) -> None:
    intend(ledger, "c1")
    intend(ledger, "c1", key="refund:B2")
    ledger.commit(KEY, {"refund_id": "R1"})
    ledger.fail("refund:B2", "declined")
    assert [r.business_key for r in ledger.untold()] == [KEY, "refund:B2"]
    assert ledger.note_tell_attempt(KEY).tell_attempts == 1
    assert ledger.note_tell_attempt(KEY).tell_attempts == 2
    told = ledger.mark_told(KEY)
    assert told.told is True and told.tell_attempts == 2
    assert [r.business_key for r in ledger.untold()] == ["refund:B2"]
    assert {r.business_key for r in ledger.rows()} == {KEY, "refund:B2"}
    assert ledger.get("refund:none") is None


# -- races -------------------------------------------------------------------------------


def _race(path: Path, args_for: list[dict], iterations: int) -> list[list[str]]:
    """Two Ledger objects on one file, in two threads, hitting the same key at once."""
    ledgers = [Ledger(path), Ledger(path)]
    barrier = threading.Barrier(2)
    kinds: list[list[str]] = [[""] * 2 for _ in range(iterations)]
    errors: list[BaseException] = []

    def worker(w: int) -> None:
        try:
            for i in range(iterations):
                barrier.wait()
                got = ledgers[w].intend(
                    business_key=f"refund:{i}",
                    tool="refund",
                    arguments=args_for[w],
                    target="card-1",
                    call_id=f"w{w}-{i}",
                )
                kinds[i][w] = got.kind
        except BaseException as exc:  # surfaced in the main thread below
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    for opened in ledgers:
        opened.close()
    assert not errors, errors
    return kinds


def test_two_connections_racing_produce_exactly_one_execute(path: Path) -> None:
    kinds = _race(path, [ARGS, ARGS], iterations=200)
    for pair in kinds:
        assert sorted(pair) == ["already_done", "execute"], pair
    with Ledger(path) as ledger:
        rows = ledger.rows()
    assert len(rows) == 200
    assert all(r.state == "pending" and len(r.call_ids) == 2 for r in rows)


def test_racing_different_requests_execute_once_and_update_once(path: Path) -> None:
    kinds = _race(path, [ARGS, {"order_id": "A17", "amount": 5}], iterations=100)
    for pair in kinds:
        assert sorted(pair) == ["execute", "updated"], pair


# -- crashes -----------------------------------------------------------------------------


def provider(effects: dict[str, dict]):
    async def query(idempotency_key: str) -> dict | None:
        return effects.get(idempotency_key)

    return query


def test_crash_before_commit_then_provider_has_the_effect(path: Path) -> None:
    ledger = Ledger(path)
    key = intend(ledger, "c1").row.idempotency_key
    del ledger  # crash: the effect was sent, the commit never written

    with Ledger(path) as reopened:
        assert reopened.unsettled() == []  # pending, until a process at startup says it crashed
        unknown = reopened.recover()
        assert [r.business_key for r in unknown] == [KEY]
        assert unknown[0].state == "unknown"
        assert [r.business_key for r in reopened.unsettled()] == [KEY]  # what a session's tool choice reads
        # Unknown is never blindly retried.
        blocked = intend(reopened, "c2")
        assert blocked.kind == "unknown" and not blocked.must_run
        assert "resolve_unknown" in blocked.message
        resolved = asyncio.run(reopened.resolve_unknown(KEY, provider({key: {"refund_id": "R9"}})))
        assert resolved.state == "committed"
        assert resolved.result == {"refund_id": "R9"}
        assert reopened.unsettled() == []
        assert [r.business_key for r in reopened.untold()] == [KEY]
        assert intend(reopened, "c3").kind == "already_done"


def test_crash_before_commit_then_provider_never_saw_it(path: Path) -> None:
    ledger = Ledger(path)
    key = intend(ledger, "c1").row.idempotency_key
    ledger.close()

    with Ledger(path) as reopened:
        reopened.recover()
        resolved = asyncio.run(reopened.resolve_unknown(KEY, provider({})))
        assert resolved.state == "not_started"
        assert reopened.untold() == []
        # Only a new intent runs it again, under the key the provider never saw.
        again = intend(reopened, "c2")
        assert again.kind == "execute"
        assert again.row.idempotency_key == key
        assert again.row.state == "pending"


def test_not_started_with_different_request_is_an_update(path: Path) -> None:
    with Ledger(path) as ledger:
        key = intend(ledger, "c1").row.idempotency_key
        ledger.recover()
        asyncio.run(ledger.resolve_unknown(KEY, provider({})))
        changed = intend(ledger, "c2", args={"order_id": "A17", "amount": 1})
        assert changed.kind == "updated"
        assert changed.row.state == "pending" and changed.row.idempotency_key == key


def test_resolve_that_fails_leaves_the_row_unknown(path: Path) -> None:
    async def down(idempotency_key: str) -> dict | None:
        raise ConnectionError("provider unreachable")

    async def wrong(idempotency_key: str) -> dict | None:
        return "yes"  # type: ignore[return-value]

    with Ledger(path) as ledger:
        intend(ledger, "c1")
        ledger.recover()
        still = asyncio.run(ledger.resolve_unknown(KEY, down))
        assert still.state == "unknown"
        assert "provider unreachable" in (still.error or "")
        assert asyncio.run(ledger.resolve_unknown(KEY, wrong)).state == "unknown"
        assert ledger.get(KEY).state == "unknown"
        assert [r.business_key for r in ledger.recover()] == [KEY]


def test_resolve_leaves_settled_rows_alone(ledger: Ledger) -> None:
    intend(ledger, "c1")
    ledger.commit(KEY, {"refund_id": "R1"})

    async def never(idempotency_key: str) -> dict | None:
        raise AssertionError("a committed row needs no provider query")

    assert asyncio.run(ledger.resolve_unknown(KEY, never)).state == "committed"


def test_recover_leaves_finished_rows_alone(ledger: Ledger) -> None:
    intend(ledger, "c1", key="refund:done")
    ledger.commit("refund:done", {"ok": True})
    intend(ledger, "c2", key="refund:failed")
    ledger.fail("refund:failed", "declined")
    intend(ledger, "c3", key="refund:flight")
    assert [r.business_key for r in ledger.recover()] == ["refund:flight"]
    assert ledger.get("refund:done").state == "committed"
    assert ledger.get("refund:failed").state == "failed"


def test_mark_unknown_after_timeout(ledger: Ledger) -> None:
    intend(ledger, "c1")
    row = ledger.mark_unknown(KEY, "timed out after 10 s")
    assert row.state == "unknown" and row.error == "timed out after 10 s"
    assert intend(ledger, "c2").kind == "unknown"


def test_crash_after_commit_before_receipt_is_spoken(path: Path) -> None:
    ledger = Ledger(path)
    intend(ledger, "c1")
    ledger.commit(KEY, {"refund_id": "R1"})
    ledger.note_tell_attempt(KEY)
    del ledger  # crash while the receipt was being spoken

    with Ledger(path) as reopened:
        assert reopened.recover() == []
        untold = reopened.untold()
        assert [r.business_key for r in untold] == [KEY]
        assert untold[0].result == {"refund_id": "R1"} and untold[0].tell_attempts == 1
        reopened.mark_told(KEY)
    with Ledger(path) as again:
        assert again.untold() == []


_HARD_CRASH = """
import os, sys
from pipeline.tools import Ledger
ledger = Ledger(sys.argv[1])
ledger.intend(business_key=sys.argv[2], tool="refund", arguments={"order_id": "A17"},
              target="card-1", call_id="c1")
if sys.argv[3] == "commit":
    ledger.commit(sys.argv[2], {"refund_id": "R1"})
print(ledger.get(sys.argv[2]).idempotency_key, flush=True)
os._exit(1)  # no close, no cleanup
"""


@pytest.mark.parametrize("stage", ["pending", "commit"])
def test_hard_process_crash_keeps_the_row(path: Path, stage: str) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", _HARD_CRASH, str(path), KEY, stage],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    key = done.stdout.strip()
    with Ledger(path) as reopened:
        recovered = reopened.recover()
        row = reopened.get(KEY)
        assert row is not None and row.idempotency_key == key
        if stage == "pending":
            assert [r.business_key for r in recovered] == [KEY]
            assert row.state == "unknown"
        else:
            assert recovered == []
            assert row.state == "committed"
            assert [r.business_key for r in reopened.untold()] == [KEY]
