"""Per-turn tool results: held while the turn's response runs, then flushed or sorted out.

On clean completion the results enter the conversation and the session asks for a reply. On
interruption a read-only result is stale (the caller has moved on) and is dropped, but a side
effect that happened is never forgotten: it stays in history, marked, and the ledger keeps
`told = 0` so the caller hears about it later.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .runner import ToolResult


@dataclass
class _Turn:
    state: str = "open"  # "open" | "clean" | "interrupted"
    held: list[ToolResult] = field(default_factory=list)


class TurnResultBuffer:
    def __init__(self) -> None:
        self._turns: dict[str, _Turn] = {}

    def add(self, result: ToolResult) -> tuple[list[ToolResult], list[ToolResult]]:
        """Returns (results to put in history now, results dropped as stale)."""
        turn = self._turns.setdefault(self._key(result), _Turn())
        if turn.state == "open":
            turn.held.append(result)
            return [], []
        return self._sort([result], turn.state)

    def settle(self, response_id: str, *, clean: bool) -> tuple[list[ToolResult], list[ToolResult]]:
        """The response that made the calls ended: flush (clean) or sort out (interrupted)."""
        turn = self._turns.setdefault(response_id, _Turn())
        turn.state = "clean" if clean else "interrupted"
        held, turn.held = turn.held, []
        return self._sort(held, turn.state)

    @staticmethod
    def _key(result: ToolResult) -> str:
        return result.response_id

    @staticmethod
    def _sort(results: list[ToolResult], state: str) -> tuple[list[ToolResult], list[ToolResult]]:
        if state == "clean":
            return results, []
        keep = [r for r in results if r.keep_on_interrupt]
        for r in keep:
            r.interrupted = True
        return keep, [r for r in results if not r.keep_on_interrupt]
