"""The browser page served at `/` by the realtime server, and the browser's token subprotocol.

Plain HTTP and WebSocket checks on fake stages; tests/test_browser.py runs the page in Chromium.
"""

from __future__ import annotations

import asyncio
import json
import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from pipeline.base.config import TURN_PRESETS

from .test_realtime_server import fake_stages, serving

WEB = Path(__file__).resolve().parents[1] / "pipeline" / "web"
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def http_get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with _NO_PROXY.open(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_the_page_and_every_module_it_loads_are_served_without_the_token():
    async def scenario() -> None:
        async with serving(fake_stages(), token="s3cret") as server:
            base = f"http://127.0.0.1:{server.port}"
            get = lambda path, **kw: asyncio.to_thread(http_get, base + path, **kw)  # noqa: E731
            status, headers, body = await get("/?token=s3cret")
            assert status == 200 and headers["Content-Type"].startswith("text/html")
            assert "default-src 'self'" in headers["Content-Security-Policy"]
            page = body.decode()
            # every file the page names, and every module those import, comes from this server
            wanted = set(re.findall(r'(?:src|href)="([\w-]+\.(?:js|css))"', page))
            seen: set[str] = set()
            while wanted - seen:
                name = sorted(wanted - seen)[0]
                seen.add(name)
                status, headers, body = await get("/" + name)
                assert status == 200, name
                kind = "text/javascript" if name.endswith(".js") else "text/css"
                assert headers["Content-Type"].startswith(kind), (name, headers["Content-Type"])
                text = body.decode()
                wanted |= set(re.findall(r'from "\./([\w-]+\.js)"', text))
                wanted |= set(re.findall(r'addModule\("([\w-]+\.js)"\)', text))
            assert {"app.js", "audio-worklet.js", "style.css"} <= seen
            assert seen == {p.name for p in WEB.iterdir() if p.suffix in (".js", ".css")}
            # nothing but the page's own files: no other path, no way out of the folder
            for path in ("/nope.js", "/../pyproject.toml", "/%2e%2e/pyproject.toml", "/web/app.js"):
                assert (await get(path))[0] == 404, path
            # the realtime path itself still wants the token, even over plain HTTP
            assert (await get("/v1/realtime"))[0] == 401

    asyncio.run(scenario())


def test_a_browser_passes_the_token_as_a_subprotocol():
    async def scenario() -> None:
        async with serving(fake_stages(), token="s3cret") as server:
            offered = ["realtime", "openai-insecure-api-key.s3cret"]
            async with connect(server.url, proxy=None, subprotocols=offered) as ws:
                assert ws.subprotocol == "realtime"  # a browser fails a handshake without it
                assert json.loads(await ws.recv())["type"] == "session.created"
            for wrong in (["realtime", "openai-insecure-api-key.nope"], ["realtime"],
                          ["openai-insecure-api-key."]):
                with pytest.raises(InvalidStatus) as info:
                    async with connect(server.url, proxy=None, subprotocols=wrong):
                        pass
                assert info.value.response.status_code == 401, wrong
                assert b"openai-insecure-api-key" in info.value.response.body

        async with serving(fake_stages()) as server:  # no token: any client, any subprotocol offer
            for offered in (None, ["realtime"], ["something-else"]):
                async with connect(server.url, proxy=None, subprotocols=offered) as ws:
                    assert ws.subprotocol == ("realtime" if offered == ["realtime"] else None)
                    assert json.loads(await ws.recv())["type"] == "session.created"

    asyncio.run(scenario())


def test_the_page_turn_presets_are_the_server_presets():
    app = (WEB / "app.js").read_text()
    found = re.search(r"TURN_PRESET_SILENCE_MS = \{([^}]*)\}", app)
    assert found, "app.js no longer defines TURN_PRESET_SILENCE_MS"
    page = {k: int(v) for k, v in re.findall(r"(\w+): (\d+)", found.group(1))}
    assert page == {name: lo for name, (lo, _hi) in TURN_PRESETS.items()}
    html = (WEB / "index.html").read_text()
    for name, ms in page.items():  # the menu says what each preset does
        assert re.search(rf'value="{name}"[^<]*{ms} ms', html), name
