"""`transfer_call` (`call.transfer`): the agent says a line, the line is heard in full, then the
phone call is handed over: each carrier's transfer command goes to its REST API (here a local
endpoint standing in for it), and the media stream closes.

The carriers' ends are `pipeline.testing.carrier` (written from their documentation); the desk is
`examples/refund_desk.py` served to phone callers (its scripted model, a tone voice), with one rule
more: a caller who asks for a person is transferred. No carrier was reached: what each carrier
does with the command is its documentation's word (docs/telephony.md).
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import sys
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pipeline.base.audio import dbfs
from pipeline.base.config import apply
from pipeline.base.conversation import Item
from pipeline.call.session import Stages
from pipeline.call.transfer import Handoff, summary_of
from pipeline.stages.fakes import ToneTTS
from pipeline.testing.carrier import Carrier
from pipeline.testing.scenario_voice import EnergyVAD
from pipeline.testing.server import ServerThread
from pipeline.tools.ledger_rows import Row
from pipeline.transports import telephony_transfer
from pipeline.transports.recording import Recorder
from pipeline.transports.runtime import Desk
from pipeline.transports.telephony_dialects import MULAW, Start
from pipeline.turns import HeuristicCompleteness

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "examples"))
import refund_desk  # noqa: E402

ASK = "I would like a refund for order 4417, to the card ending 1234."
PERSON = "Can I talk to a person, please?"
LINE = "Of course, I'm putting you through to a colleague now."
SAYS = {300: ASK, 700: PERSON}
TO = "+15550100"
PLIVO_URL = "https://desk.example.com/plivo/dial.xml"
ENV = {"TWILIO_ACCOUNT_SID": "AC123", "TWILIO_AUTH_TOKEN": "tw-secret", "TELNYX_API_KEY": "KEY1",
       "PLIVO_AUTH_ID": "MA123", "PLIVO_AUTH_TOKEN": "pl-secret"}


class PitchSTT:
    """Hears the loudest tone of the turn as the sentence it stands for."""

    def transcribe(self, audio: np.ndarray, *, final: bool) -> str:
        if len(audio) < 1600 or dbfs(audio) < -40:
            return ""
        spectrum = np.abs(np.fft.rfft(audio * np.hanning(len(audio))))
        peak = np.fft.rfftfreq(len(audio), 1 / 16000)[int(np.argmax(spectrum))]
        return SAYS[min(SAYS, key=lambda f: abs(f - peak))]


def _llm() -> Any:
    llm = refund_desk.scripted_llm()
    rule = {"name": "transfer_call", "arguments": {"line": LINE, "reason": "caller asked for a person"}}
    llm.rules.insert(0, (re.compile(r"a person", re.I), rule))
    return llm


class CarrierApi:
    """A carrier's REST API on 127.0.0.1: records each request, answers 200."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.requests.append(("POST", self.path, dict(self.headers), body))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"data": {"result": "ok"}}')

            def log_message(self, *args: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()


@pytest.fixture()
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[CarrierApi]:
    api = CarrierApi()
    for name in telephony_transfer.API_BASE:
        monkeypatch.setitem(telephony_transfer.API_BASE, name, api.base)
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)
    yield api
    api.http.shutdown()


def _serve(tmp_path: Path, *, warm: bool) -> tuple[ServerThread, Any]:
    served = Desk(refund_desk.desk, config=refund_desk.CONFIG)
    ledger = served.open_ledger(tmp_path / "calls.sqlite3")
    config = apply(served.base_config(), {"call": {"transfer": True, "transfer_to": TO,
                                                   "transfer_url": PLIVO_URL, "transfer_warm": warm}})
    stages = Stages(vad=EnergyVAD(), stt=PitchSTT(), completeness=HeuristicCompleteness(),
                    llm=_llm(), tts=ToneTTS(ms_per_char=25.0))
    return ServerThread(stages, config=config, desk=served), ledger


async def _call(server: ServerThread, kind: str, *, refund_first: bool) -> tuple[Any, Carrier]:
    async with Carrier(kind, server.port) as c:
        await asyncio.sleep(0.3)
        line = next(x for x in server.server.phone.lines if x.start.stream_id == c.stream_id)
        session = line.session
        if refund_first:
            await c.say(300, 3.5)
            await c.until(lambda: len([r for r in session.responses if r.heard_in_full]) >= 2,
                          15, "the holding line and the confirmation heard")
            await c.until(c.idle, 4, "the confirmation played out")
        await c.say(700, 1.5)
        await c.until(lambda: c.closed_at is not None, 15, "the stream closed after the hand-off line")
        return session, c


def _handoff_response(session: Any) -> Any:
    return next(r for r in reversed(session.responses) if r.speech.spoken and r.item.text == LINE)


@pytest.mark.parametrize("kind", ["twilio", "telnyx", "plivo"])
def test_a_cold_transfer_says_its_line_in_full_then_sends_the_carriers_command(
        tmp_path: Path, api: CarrierApi, kind: str) -> None:
    server, ledger = _serve(tmp_path, warm=False)
    with server:
        session, c = asyncio.run(_call(server, kind, refund_first=False))
    handoff = _handoff_response(session)
    assert handoff.heard_in_full  # the carrier echoed the marks after its last frame
    assert c.heard_ms(handoff.item.id) >= 0.8 * 25 * len(LINE)
    assert c.close_code == 1000 and c.frames_queued_at_close == 0  # nothing of it left unplayed
    assert not any(e["event"] in ("clear", "clearAudio") for e in c.received)  # never cut short
    [(method, path, headers, body)] = api.requests
    output = next(i.output for i in session.conversation.items if i.type == "function_call_output")
    assert json.loads(output) == {"transferred": True, "mode": "cold", "to": TO}
    if kind == "twilio":
        assert path == "/2010-04-01/Accounts/AC123/Calls/CA1.json"
        assert headers["Authorization"] == "Basic " + base64.b64encode(b"AC123:tw-secret").decode()
        form = urllib.parse.parse_qs(body.decode())
        assert form["Twiml"] == [f"<Response><Dial><Number>{TO}</Number></Dial></Response>"]
    elif kind == "telnyx":
        assert path == "/v2/calls/v3%3Acall/actions/transfer"
        assert headers["Authorization"] == "Bearer KEY1"
        assert json.loads(body) == {"to": TO}
    else:
        assert path == "/v1/Account/MA123/Call/call-1/"
        assert json.loads(body) == {"legs": "aleg", "aleg_url": PLIVO_URL, "aleg_method": "POST"}
    assert ledger.rows() == []  # nothing was done: nothing to tell the person
    ledger.close()


def test_a_warm_transfer_hands_the_person_the_call_and_its_ledger_rows(
        tmp_path: Path, api: CarrierApi) -> None:
    server, ledger = _serve(tmp_path, warm=True)
    recorder = Recorder(tmp_path / "recordings")  # as `serve --record` adds it
    server.server.call_watchers.append(recorder.watch)
    with server:
        session, c = asyncio.run(_call(server, "telnyx", refund_first=True))
    recorder.shutdown()
    assert [(r.business_key, r.state, r.told) for r in ledger.rows()] == [("refund:4417", "committed", True)]
    handoff = _handoff_response(session)
    assert handoff.heard_in_full and c.close_code == 1000 and c.frames_queued_at_close == 0
    [(_, _, _, body)] = api.requests
    [header] = json.loads(body)["custom_headers"]
    summary = header["value"]
    assert header["name"] == "X-Handoff-Summary"
    assert summary.startswith("Transferred: caller asked for a person.")
    assert ASK in summary and PERSON in summary
    assert "refund(" in summary and "order_id=4417" in summary and "committed, caller told" in summary
    output = json.loads(next(i.output for i in session.conversation.items
                             if i.type == "function_call_output" and "transferred" in (i.output or "")))
    assert output["mode"] == "warm" and output["summary"] == summary  # in the event stream too
    [folder] = (tmp_path / "recordings").iterdir()  # the recording closed: its summary written last
    record = json.loads((folder / "summary.json").read_text())
    assert record["end_reason"] == "agent_hung_up"
    assert [(t["name"], t["state"]) for t in record["tools"]] == [("refund", "committed"),
                                                                  ("transfer_call", "ok")]
    outputs = [json.loads(line).get("item", {}).get("output") or ""
               for line in (folder / "events.jsonl").read_text().splitlines()]
    assert any(json.loads(o).get("summary") == summary for o in outputs if "transferred" in o)
    ledger.close()


def test_without_credentials_the_stream_just_ends_for_the_carriers_own_next_step(
        tmp_path: Path, api: CarrierApi, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TWILIO_AUTH_TOKEN")
    server, ledger = _serve(tmp_path, warm=False)
    with server:
        session, c = asyncio.run(_call(server, "twilio", refund_first=False))
    assert _handoff_response(session).heard_in_full and c.close_code == 1000
    assert api.requests == []  # the TwiML after <Connect> dials (docs/telephony.md)
    ledger.close()


def test_summary_of_names_the_reason_the_caller_and_each_effect() -> None:
    items = [Item(type="message", role="user", text=t) for t in ("one", "two", "three", "four", "five")]
    row = Row(business_key="refund:1", tool="refund", idempotency_key="k", intent_digest="d",
              arguments={"order_id": "1", "card_last4": "9"}, target="", state="unknown",
              call_ids=(), result=None, error="timeout", told=False, tell_attempts=0,
              created_at=0.0, updated_at=0.0)
    text = summary_of(items, [row], "angry caller")
    assert text == ("Transferred: angry caller. Caller said: two / three / four / five. "
                    "refund(card_last4=9, order_id=1): unknown, caller not yet told.")
    assert len(summary_of([Item(type="message", role="user", text="x" * 2000)], [], "r")) == 600


def test_the_commands_need_their_credentials_and_targets() -> None:
    start = Start("S1", "CA9", MULAW, 8000)
    cold = Handoff("r", TO, PLIVO_URL)
    assert telephony_transfer.command("twilio", start, cold, env={}) is None
    assert telephony_transfer.command("telnyx", start, Handoff("r"), env=ENV) is None  # no target
    assert telephony_transfer.command("plivo", start, Handoff("r", TO), env=ENV) is None  # no URL
    sip = telephony_transfer.command("twilio", start, Handoff("r", "sip:desk@pbx.example.com", "", "a&b"),
                                     env=ENV)
    assert sip is not None
    twiml = urllib.parse.parse_qs(sip.body.decode())["Twiml"][0]
    assert twiml == ("<Response><Dial><Sip>sip:desk@pbx.example.com?X-Handoff-Summary=a%26b"
                     "</Sip></Dial></Response>")
    plivo = telephony_transfer.command("plivo", start, Handoff("r", "", PLIVO_URL, "a b"), env=ENV)
    assert plivo is not None and json.loads(plivo.body)["aleg_url"] == PLIVO_URL + "?summary=a+b"
