"""A desk served to phone callers (`pipeline serve --desk`): a phone call has no client to send
`session.update`, so its tools, their holding lines and the ledger come from the server.

A Twilio-dialect carrier (`pipeline.testing.carrier`, written from Twilio's documentation) streams
the caller as 8 kHz mu-law at real-time pace against a real `RealtimeServer` serving the refund
desk of `examples/refund_desk.py` (its scripted model, fake VAD, STT and voice): the refund runs
once, the holding line and the confirmation reach the caller, and the echoed marks say both were
heard.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pipeline.base.audio import dbfs
from pipeline.base.errors import ConfigError
from pipeline.call.session import Stages
from pipeline.stages.fakes import ToneTTS
from pipeline.testing.carrier import Carrier
from pipeline.testing.server import ServerThread
from pipeline.transports.runtime import Desk, load_config, load_desk
from pipeline.turns import HeuristicCompleteness

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "examples"))
import refund_desk  # noqa: E402

ASK = "I would like a refund for order 4417, to the card ending 1234."
HOLDING = "Let me process that refund for you."


class EnergyVAD:
    def probability(self, window: np.ndarray) -> float:
        return 0.95 if dbfs(window) > -35 else 0.02

    def fork(self) -> EnergyVAD:
        return EnergyVAD()


class OneLineSTT:
    """Hears any loud enough turn as the refund request."""

    def transcribe(self, audio: np.ndarray, *, final: bool) -> str:
        return ASK if len(audio) >= 1600 and dbfs(audio) > -40 else ""


def test_a_phone_caller_asks_for_a_refund_from_the_served_desk(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    providers: list[refund_desk.PaymentProvider] = []

    class Kept(refund_desk.PaymentProvider):  # the example's provider, each one kept
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            providers.append(self)

    monkeypatch.setattr(refund_desk, "PaymentProvider", Kept)
    served = Desk(refund_desk.desk, config=refund_desk.CONFIG)  # as `--desk` loads it
    ledger = served.open_ledger(tmp_path / "calls.sqlite3")
    stages = Stages(vad=EnergyVAD(), stt=OneLineSTT(), completeness=HeuristicCompleteness(),
                    llm=refund_desk.scripted_llm(), tts=ToneTTS(ms_per_char=25.0))
    with ServerThread(stages, config=served.base_config(), desk=served) as server:
        async def call() -> tuple[Any, Carrier]:
            async with Carrier("twilio", server.port) as c:
                await asyncio.sleep(0.3)
                await c.say(300, 3.5)  # as long as a caller takes to say ASK (22 syllables)
                line = next(iter(server.server.phone.lines))
                session = line.session
                await c.until(lambda: len([r for r in session.responses if r.heard_in_full]) >= 2,
                              15, "the holding line and the confirmation heard")
                await c.until(lambda: not ledger.untold(), 3, "the refund judged told")
                return session, c

        session, c = asyncio.run(call())
        assert session.config.response.instructions == refund_desk.INSTRUCTIONS
        rows = ledger.rows()
        assert [(r.business_key, r.state) for r in rows] == [("refund:4417", "committed")]
        assert len(providers) == 1 and len(providers[0].effects) == 1
        spoken = [r for r in session.responses if r.speech.spoken]
        holding, confirmation = spoken[0], spoken[1]
        assert holding.item.text == HOLDING
        assert confirmation.item.text.startswith("Done. Your refund of $42.00 for order 4417")
        heard = [i.text for i in session.conversation.items if i.role == "assistant"
                 and i.type == "message"]
        assert refund_desk.mismatches(ledger, heard, providers[0]) == []
        for response in (holding, confirmation):  # the marks Twilio echoed cover each reply
            assert response.heard_in_full
            chars = len(response.item.text or "")
            assert c.heard_ms(response.item.id) >= 0.8 * 25 * chars, response.item.text


def test_load_desk_reads_the_function_and_its_config(tmp_path: Path) -> None:
    desk = load_desk(str(ROOT / "examples" / "front_desk.py"))
    assert desk.base_config().call.end_call
    args = argparse.Namespace(config=None, set=["call.end_call=false"], preset=None, device=None)
    assert not load_config(args, base=desk.base_config()).call.end_call  # --set wins
    assert load_desk(str(ROOT / "examples" / "refund_desk.py") + ":desk").name.endswith(":desk")
    bad = tmp_path / "bad_desk.py"
    bad.write_text("CONFIG = {'nonsense': {}}\n\ndef tools():\n    return 42\n")
    with pytest.raises(ConfigError, match="has no function desk"):
        load_desk(str(bad))
    with pytest.raises(ConfigError, match="unknown section"):
        load_desk(f"{bad}:tools").base_config()
    with pytest.raises(ConfigError, match="does not exist"):
        load_desk(str(tmp_path / "missing.py"))
    with pytest.raises(ConfigError, match="return a ToolRegistry"):
        load_desk(f"{bad}:tools").attach(_Session())  # type: ignore[arg-type]


class _Session:
    clock = None

