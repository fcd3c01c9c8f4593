"""Handing a phone call to a person (`transfer_call`): each carrier's command, written from its
public REST reference, sent once the hand-off line is heard, before the media stream closes.

- Twilio: update the call with TwiML that dials the person (`POST .../Calls/{CallSid}.json`,
  `Twiml=<Response><Dial>...`); a sip: target carries a warm summary as an `X-Handoff-Summary`
  header on its URI. Without credentials the stream just ends, and the TwiML after `<Connect>`
  runs (a `<Dial>` there).
- Telnyx: the Call Control `transfer` command (`POST /v2/calls/{call_control_id}/actions/transfer`)
  with `to`; a warm summary rides as the custom SIP header `X-Handoff-Summary`. Without an API key
  the stream ends and the TeXML after `<Connect>` runs.
- Plivo: the transfer API (`POST /v1/Account/{auth_id}/Call/{call_uuid}/`, `legs=aleg`,
  `aleg_url`): the URL (`call.transfer_url`) answers with the XML that dials; a warm summary is
  added to it as the query parameter `summary`. Without credentials the stream ends and the XML
  after `<Stream keepCallAlive="true">` runs.

Credentials come from the environment (never the config file): `TWILIO_ACCOUNT_SID` and
`TWILIO_AUTH_TOKEN`, `TELNYX_API_KEY`, `PLIVO_AUTH_ID` and `PLIVO_AUTH_TOKEN`. A command that
fails is logged; the stream closes all the same, so the carrier's own set-up still runs.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from xml.sax.saxutils import escape

from ..call.transfer import Handoff
from .telephony_dialects import Start

log = logging.getLogger(__name__)

# where each carrier's REST API lives (a test points these at a local endpoint)
API_BASE = {"twilio": "https://api.twilio.com", "telnyx": "https://api.telnyx.com",
            "plivo": "https://api.plivo.com"}
COMMAND_TIMEOUT_S = 5.0
SUMMARY_HEADER = "X-Handoff-Summary"


@dataclass(frozen=True)
class Command:
    """One HTTP request to the carrier."""

    method: str
    url: str
    headers: dict[str, str]
    body: bytes


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


def command(carrier: str, start: Start, handoff: Handoff,
            env: dict[str, str] | None = None) -> Command | None:
    """The carrier's transfer command for this call, or None where it has no credentials (or,
    for Plivo, no transfer URL; for Telnyx, no target): then the stream's end does it."""
    env = dict(os.environ) if env is None else env
    base = API_BASE[carrier]
    if carrier == "twilio":
        sid, token = env.get("TWILIO_ACCOUNT_SID"), env.get("TWILIO_AUTH_TOKEN")
        if not (sid and token and handoff.to):
            return None
        if handoff.to.startswith("sip:"):
            target = handoff.to
            if handoff.summary is not None:
                sep = "&" if "?" in target else "?"
                target += f"{sep}{SUMMARY_HEADER}={urllib.parse.quote(handoff.summary)}"
            dial = f"<Sip>{escape(target)}</Sip>"
        else:
            dial = f"<Number>{escape(handoff.to)}</Number>"
        body = urllib.parse.urlencode({"Twiml": f"<Response><Dial>{dial}</Dial></Response>"})
        return Command("POST", f"{base}/2010-04-01/Accounts/{sid}/Calls/{start.call_id}.json",
                       {"Authorization": _basic(sid, token),
                        "Content-Type": "application/x-www-form-urlencoded"}, body.encode())
    if carrier == "telnyx":
        key = env.get("TELNYX_API_KEY")
        if not (key and handoff.to):
            return None
        payload: dict[str, object] = {"to": handoff.to}
        if handoff.summary is not None:
            payload["custom_headers"] = [{"name": SUMMARY_HEADER, "value": handoff.summary}]
        call = urllib.parse.quote(start.call_id, safe="")
        return Command("POST", f"{base}/v2/calls/{call}/actions/transfer",
                       {"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
                       json.dumps(payload).encode())
    auth_id, token = env.get("PLIVO_AUTH_ID"), env.get("PLIVO_AUTH_TOKEN")
    if not (auth_id and token and handoff.url):
        return None
    url = handoff.url
    if handoff.summary is not None:
        url += ("&" if "?" in url else "?") + urllib.parse.urlencode({"summary": handoff.summary})
    return Command("POST", f"{base}/v1/Account/{auth_id}/Call/{start.call_id}/",
                   {"Authorization": _basic(auth_id, token), "Content-Type": "application/json"},
                   json.dumps({"legs": "aleg", "aleg_url": url, "aleg_method": "POST"}).encode())


def send(cmd: Command) -> bool:
    """Send the command (blocking: run it in a thread); False, logged, when it fails."""
    request = urllib.request.Request(cmd.url, data=cmd.body, headers=cmd.headers, method=cmd.method)
    try:
        with urllib.request.urlopen(request, timeout=COMMAND_TIMEOUT_S) as reply:
            ok = 200 <= reply.status < 300
    except (urllib.error.URLError, OSError) as exc:
        log.warning("the transfer command to %s failed (%s); the stream ends and the carrier's "
                    "own set-up after it runs. Check the credentials and the target.", cmd.url, exc)
        return False
    if not ok:
        log.warning("the transfer command to %s answered %s", cmd.url, reply.status)
    return ok


__all__ = ["API_BASE", "Command", "command", "send"]
