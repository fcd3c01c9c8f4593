"""Telling the caller what their side effects did: a reply counts as telling an effect only when
the heard words state its outcome (`tools.confirms`), and an effect nobody told gets a reminder
of its own, at most twice, never after the goodbye has begun."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol

from ..tools.confirms import confirms
from .handle import Purpose
from .states import CallState

if TYPE_CHECKING:
    from .responder import Responder
    from .response import Response


class TellingDesk(Protocol):
    """What of the desk this needs (`desk.ToolDesk`)."""

    core: Any
    control: Any
    ledger: Any
    registry: Any  # the ToolRegistry: a row's tool says which facts tell it
    ledger_keys: set[str]  # the side effects this call asked for
    reply_pending: dict[str, int]  # key -> history version of the reply waiting to start
    responder: Responder | None

    def superseded(self, version: int) -> bool: ...


class Telling:
    """The desk's told judgements and reminders."""

    def __init__(self, desk: TellingDesk) -> None:
        self.desk = desk
        self._reminding: set[str] = set()  # keys with a reminder waiting to start

    def _responses(self) -> Responder:
        assert self.desk.responder is not None, "ToolDesk.bind(responder) first"
        return self.desk.responder

    async def after_heard(self, response: Response) -> None:
        """A response was heard in full: what it stated counts as told; maybe remind."""
        await self.judge(response, response.item.text or "")
        if response.purpose is Purpose.TURN:
            await self._maybe_remind()

    async def judge(self, response: Response, heard: str) -> None:
        """Mark told every effect of this call whose outcome (and facts) these heard words state."""
        run = self.desk.core.clock.run_in_thread
        for row in await run(self.desk.ledger.untold):
            if row.business_key not in self.desk.ledger_keys and row.business_key not in response.asked.about_keys:
                continue
            spec = self.desk.registry.get(row.tool)
            verdict = confirms(row, heard, spec.tells if spec is not None else ())
            if verdict.told:
                await run(self.desk.ledger.mark_told, row.business_key)
            elif row.business_key in response.asked.about_keys:
                self.desk.core.log(f"{row.business_key} is not yet told: {verdict.why} in {heard!r}")

    async def _maybe_remind(self) -> None:
        """A side effect the caller never heard about gets a dedicated reply (at most twice)."""
        if self.desk.control.state is not CallState.OPEN:  # the goodbye is being said: no reminder after it
            return
        clock = self.desk.core.clock
        untold = await clock.run_in_thread(self.desk.ledger.untold)
        # a reply that a newer response superseded tells nothing: what that one left out is reminded
        telling = {key for key, version in self.desk.reply_pending.items() if not self.desk.superseded(version)}
        telling |= self._reminding
        for r in self._responses().responses:
            if r.may_still_tell:
                telling.update(r.asked.about_keys)
        rows = [r for r in untold if r.business_key in self.desk.ledger_keys
                and r.business_key not in telling and r.tell_attempts < 2]
        if not rows:
            return
        keys = tuple(r.business_key for r in rows)
        self._reminding.update(keys)
        for key in keys:
            await clock.run_in_thread(self.desk.ledger.note_tell_attempt, key)
        self.desk.core.spawn(self._remind(keys))

    async def _remind(self, keys: tuple[str, ...]) -> None:
        """One reminder per effect, each judged before the next: one may tell several at once."""
        responder = self._responses()
        run = self.desk.core.clock.run_in_thread
        try:
            for key in keys:
                await responder.floor_free()
                row = await run(self.desk.ledger.get, key)
                if row is None or row.told or self.desk.control.closed:
                    continue
                # the same form as any tool result, so the model reads an outcome one way
                outcome = json.dumps({"status": row.state, "result": row.result, "error": row.error})
                note = ("The caller has not heard this outcome yet. Tell them now, in one short sentence: "
                        f"[result of {row.tool}: {outcome}]")
                reminder = responder.new(None, purpose=Purpose.REMINDER, system_note=note, about_keys=(key,))
                responder.begin(reminder)
                await reminder.handle.wait()
                await self.judge(reminder, reminder.item.text or "")
        finally:
            self._reminding.difference_update(keys)
