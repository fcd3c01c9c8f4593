"""MCP tool servers: real servers (tests/mcp_server.py) over stdio and streamable HTTP.

One server per transport for the module; a test that makes it exit leaves the next call (or,
over HTTP, the restarted process) to show the reconnection.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from pipeline.base.clock import SimClock  # noqa: E402
from pipeline.tools import Ledger, ToolCall  # noqa: E402
from pipeline.tools.evidence import Evidence  # noqa: E402
from pipeline.tools.mcp import McpServer, McpTools, McpUnavailable, mcp_tools  # noqa: E402
from pipeline.tools.mcp_config import adapt_schema, spec_for  # noqa: E402
from pipeline.tools.runner import ToolRunner  # noqa: E402

SERVER = Path(__file__).with_name("mcp_server.py")
OPTIONS = {"issue_refund": {"side_effect": True, "holding_line": True, "timeout_s": 10,
                            "business_key": ["order_id"],
                            "tells": ["{amount} dollars", "to the card ending {card_last4}"]},
           "slow_search": {"timeout_s": 0.5}}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HttpServer:
    """tests/mcp_server.py over streamable HTTP, as a process the test starts and restarts."""

    def __init__(self, state: Path) -> None:
        self.state, self.port, self.process = state, _free_port(), None
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER), str(self.state), "--http", str(self.port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the MCP test server did not start listening within 30 s")

    def ensure_up(self) -> None:
        if self.process is None or self.process.poll() is not None:
            self.start()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)


class Shop:
    """One transport's server, its state folder, and the tools loaded from it."""

    def __init__(self, kind: str, state: Path, http: HttpServer | None) -> None:
        self.kind, self.state, self.http = kind, state, http
        where: dict[str, Any] = ({"url": http.url, "headers": {"X-Desk": "kitchen"}} if http else
                                 {"command": sys.executable, "args": [str(SERVER), str(state)]})
        self.server = McpServer.from_dict({"name": "shop", "label": "the shop system",
                                           "deny": ["set_reminder"], "tools": OPTIONS, **where})
        self.tools = McpTools([self.server]).open()

    def refunds(self) -> list[str]:
        log = self.state / "refunds.log"
        return log.read_text().splitlines() if log.exists() else []

    def after_crash(self) -> None:
        """Over HTTP nothing respawns the server: start it again, as its supervisor would."""
        if self.http is not None:
            self.http.process.wait(10)
            self.http.start()


@pytest.fixture(scope="module", params=["stdio", "http"])
def shop(request, tmp_path_factory):
    state = tmp_path_factory.mktemp(f"mcp-{request.param}")
    http = HttpServer(state) if request.param == "http" else None
    if http is not None:
        http.start()
    made = Shop(request.param, state, http)
    yield made
    made.tools.close()
    if http is not None:
        http.stop()


def run(runner: ToolRunner, name: str, **arguments: Any) -> dict[str, Any]:
    call = ToolCall(name=name, arguments=arguments)
    result = asyncio.run(runner.run(call, call_id="call-1", response_id="resp-1", turn_id=None))
    return result.output


def test_tools_are_listed_with_their_schemas_and_filters(shop: Shop) -> None:
    registry = shop.tools.registry()
    assert [s.name for s in registry] == ["look_up_order", "check_stock", "slow_search", "crash",
                                          "desk_header", "process_id", "issue_refund"]
    refund = registry["issue_refund"]  # and set_reminder denied
    assert refund.side_effect and refund.spoken == ("holding_line",) and refund.timeout_s == 10
    assert list(refund.parameters["properties"]) == ["holding_line", "order_id", "card_last4", "amount"]
    assert refund.parameters["properties"]["amount"] == {
        "type": "number", "description": "The amount to refund, in dollars."}
    assert refund.key_for({"order_id": "4417", "card_last4": "1234", "amount": 42}) == "issue_refund:4417"
    one = McpServer.from_dict({"name": "s", "url": "http://x/mcp", "tools": {"t": {"business_key": "id"}}})
    assert one.tools["t"].business_key == ("id",)
    only = McpServer.from_dict({"name": "shop", "url": "http://x/mcp", "allow": ["crash"]})
    assert [t.name for t in shop.tools.listed("shop") if only.wanted(t.name)] == ["crash"]


def test_a_schema_the_grammar_cannot_take_is_refused_naming_server_and_tool(shop: Shop) -> None:
    reminder = next(t for t in shop.tools.listed("shop") if t.name == "set_reminder")
    with pytest.raises(ValueError, match="MCP server 'shop', tool 'set_reminder'.*'when'.*deny"):
        adapt_schema(shop.server, reminder.name, reminder.input_schema, None)


def test_a_tool_that_succeeds_returns_its_result(shop: Shop) -> None:
    output = run(ToolRunner(shop.tools.registry()), "look_up_order", order_id="4417")
    assert output == {"order_id": "4417", "status": "a cast-iron skillet, delivered last Tuesday"}
    header = run(ToolRunner(shop.tools.registry()), "desk_header")
    assert header == {"result": "kitchen" if shop.http is not None else ""}


def test_an_error_result_is_a_tool_error_the_agent_can_say(shop: Shop) -> None:
    output = run(ToolRunner(shop.tools.registry()), "check_stock", sku="pan-28")
    assert "the shop system answered that check_stock failed" in output["error"]
    assert "stock system unavailable for pan-28" in output["error"]


def test_a_hang_hits_the_tool_timeout_and_returns_promptly(shop: Shop) -> None:
    started = time.monotonic()
    output = run(ToolRunner(shop.tools.registry()), "slow_search", query="skillet")
    assert output == {"error": "slow_search did not answer within 0.5 s"}
    assert time.monotonic() - started < 3
    assert run(ToolRunner(shop.tools.registry()), "look_up_order", order_id="4417")["order_id"] == "4417"


def test_a_side_effect_asked_twice_runs_on_the_server_once(shop: Shop, tmp_path: Path) -> None:
    before = len(shop.refunds())
    with Ledger(tmp_path / "ledger.sqlite3") as ledger:
        runner = ToolRunner(shop.tools.registry(), ledger=ledger)
        first = run(runner, "issue_refund", holding_line="One moment.", order_id="5120",
                    card_last4="1234", amount=42.0)
        again = run(runner, "issue_refund", holding_line="Let me redo that.", order_id="5120",
                    card_last4="1234", amount=42.0)
        assert first == {"status": "committed", "result": {"refund_id": "re_5120", "card_last4": "1234",
                                                           "amount": 42.0}}
        assert again["status"] == "already_done"  # the ledger answered; the server never heard it
        assert ledger.get("issue_refund:5120").state == "committed"
    assert shop.refunds()[before:] == ["5120 1234 42.0"]  # one effect; no holding line sent on


def test_an_invented_argument_is_refused_before_the_server_hears_of_it(shop: Shop, tmp_path: Path) -> None:
    before = len(shop.refunds())
    with Ledger(tmp_path / "ledger.sqlite3") as ledger:
        said = Evidence(said=["I'd like a refund to my card ending 1234, sixty dollars"])
        runner = ToolRunner(shop.tools.registry(), ledger=ledger, evidence=lambda: said)
        output = run(runner, "issue_refund", holding_line="One moment.", order_id="9999",
                     card_last4="1234", amount=60.0)
        assert output["status"] == "not_run" and "order_id" in output["message"]
        assert ledger.rows() == []
    assert len(shop.refunds()) == before


def test_a_crash_after_a_side_effect_is_unknown_and_the_next_call_reconnects(
        shop: Shop, tmp_path: Path) -> None:
    before, connections = len(shop.refunds()), shop.tools.links["shop"].connections
    (shop.state / "crash_next").touch()
    started = time.monotonic()
    with Ledger(tmp_path / "ledger.sqlite3") as ledger:
        runner = ToolRunner(shop.tools.registry(), ledger=ledger)
        output = run(runner, "issue_refund", holding_line="One moment.", order_id="7001",
                     card_last4="1234", amount=10.0)
        assert output["status"] == "unknown" and "may still go through" in output["error"]
        assert ledger.get("issue_refund:7001").state == "unknown"
        assert time.monotonic() - started < 5  # the crash is noticed, not waited out
        assert shop.refunds()[before:] == ["7001 1234 10.0"]  # it did happen, unknown to us
        shop.after_crash()
        assert run(runner, "look_up_order", order_id="4417")["order_id"] == "4417"
        again = run(runner, "issue_refund", holding_line="One moment.", order_id="7001",
                    card_last4="1234", amount=10.0)
        assert again["status"] == "unknown"  # not run twice: it waits for someone to resolve it
    assert shop.tools.links["shop"].connections == connections + 1
    assert len(shop.refunds()) == before + 1


def test_a_crash_during_a_read_is_an_honest_error_and_the_server_comes_back(shop: Shop) -> None:
    runner = ToolRunner(shop.tools.registry())
    if shop.http is not None:  # nothing respawns it: the one retry finds it gone
        output = run(runner, "crash", reason="test")
        shop.after_crash()
    else:  # respawned for the retry, which crashes it again
        output = run(runner, "crash", reason="test")
    assert output["error"].startswith("McpUnavailable: the shop system ")
    assert run(runner, "look_up_order", order_id="4417")["order_id"] == "4417"


def test_a_server_restarted_between_calls_is_reconnected_transparently(shop: Shop, tmp_path: Path) -> None:
    before, connections = len(shop.refunds()), shop.tools.links["shop"].connections
    with Ledger(tmp_path / "ledger.sqlite3") as ledger:
        runner = ToolRunner(shop.tools.registry(), ledger=ledger)
        if shop.http is not None:
            shop.http.stop()
            shop.http.start()
        else:  # killed from outside while idle: the link sees its output close
            os.kill(run(runner, "process_id")["result"], signal.SIGKILL)
            time.sleep(0.5)
        output = run(runner, "issue_refund", holding_line="One moment.", order_id="8001",
                     card_last4="1234", amount=5.0)
        assert output["status"] == "committed"  # a side effect too: nothing was lost in flight
    assert shop.refunds()[before:] == ["8001 1234 5.0"]
    # stdio: the command run again; HTTP (protocol 2026-07-28): no session to renew
    assert shop.tools.links["shop"].connections == connections + (shop.http is None)


def test_on_a_simulated_clock_time_waits_for_the_server(shop: Shop) -> None:
    async def main() -> tuple[dict[str, Any], float]:
        clock = SimClock()
        driver = asyncio.ensure_future(clock.drive())
        try:
            runner = ToolRunner(shop.tools.registry(clock=clock), clock=clock)
            result = await runner.run(ToolCall(name="look_up_order", arguments={"order_id": "4417"}),
                                      call_id="c", response_id="r", turn_id=None)
            return result.output, clock.now()
        finally:
            driver.cancel()

    output, now = asyncio.run(main())
    assert output["order_id"] == "4417" and now == 0.0


def test_a_server_that_cannot_be_reached_fails_the_open_clearly() -> None:
    gone = {"name": "bookings", "url": f"http://127.0.0.1:{_free_port()}/mcp", "connect_timeout_s": 5}
    with pytest.raises(McpUnavailable, match="the bookings server could not be reached"):
        McpTools([gone]).open()
    with pytest.raises(McpUnavailable, match="could not be reached"):
        mcp_tools([{"name": "nowhere", "command": "/nonexistent/mcp-server"}])


@pytest.mark.parametrize(("config", "message"), [
    ({"name": "a"}, "either command= .* or url="),
    ({"name": "a", "url": "ftp://x"}, "must start with http"),
    ({"name": "a", "url": "http://x/mcp", "colour": 1}, r"unknown keys \['colour'\]"),
    ({"name": "a", "url": "http://x/mcp", "tools": {"t": {"spoken": True}}}, "unknown options"),
    ({"name": "a", "url": "http://x/mcp", "deny": ["t"], "tools": {"t": {}}}, "denied and also"),
    ({"name": "a", "command": "srv", "headers": {"A": "b"}}, "headers= go with url="),
])
def test_a_bad_server_config_says_what_to_fix(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        McpServer.from_dict(config)


def test_a_side_effect_without_a_business_key_is_refused_at_load(shop: Shop) -> None:
    server = McpServer.from_dict({"name": "shop", "url": "http://x/mcp", "tools": {
        "issue_refund": {"side_effect": True}}})
    listed = next(t for t in shop.tools.listed("shop") if t.name == "issue_refund")
    with pytest.raises(ValueError, match="side_effect but no business_key"):
        spec_for(server, listed, None)


def test_an_agent_whose_only_tools_come_from_an_mcp_server_completes_a_refund_call(tmp_path: Path) -> None:
    from pipeline.testing.scenario import parse
    from pipeline.testing.scenario_run import run as run_scenario

    state = tmp_path / "server"
    state.mkdir()
    refund = {"name": "issue_refund", "arguments": {
        "holding_line": "Let me process that refund.", "order_id": "4417", "card_last4": "1234",
        "amount": 42.0}}
    scenario = parse({
        "name": "an MCP server's refund: once, with a holding line, the caller told", "voice": "text",
        "agent": {
            "llm": {"rules": [
                [r"result of issue_refund.*already_done", "That refund already went through."],
                [r"result of issue_refund.*committed",
                 "Done. Refund {refund_id} of {amount} dollars to the card ending {card_last4} is "
                 "on its way."],
                [r"again", refund], [r"refund", refund]], "replies": ["Happy to help."]},
            "tools": "pipeline.tools.mcp:mcp_tools",
            "tools_args": {"servers": [{
                "name": "shop", "command": sys.executable, "args": [str(SERVER), str(state)],
                "allow": ["issue_refund", "look_up_order"], "tools": OPTIONS}]}},
        "line": [
            {"say": "I would like a refund of forty two dollars for order forty four seventeen, "
                    "to the card ending one two three four."},
            {"say": "Actually, please refund it again.", "after": "agent_said:on its way",
             "delay_s": 6.0}],
        "expect": [
            {"said": "process that refund"},
            {"tool_called": "issue_refund", "arguments": {"order_id": "4417", "card_last4": "1234"}},
            {"said": "of 42.0 dollars to the card ending 1234 is on its way", "in_full": True},
            {"said": "already went through"},
            {"ledger": "issue_refund:4417", "state": "committed", "told": True, "calls": 2}]})
    result = run_scenario(scenario)
    assert result.failures == []
    assert (state / "refunds.log").read_text().splitlines() == ["4417 1234 42.0"]  # one effect


def test_a_tool_name_the_model_cannot_write_is_made_one_it_can() -> None:
    from mcp.types import Tool

    server = McpServer.from_dict({"name": "files", "url": "http://x/mcp", "prefix": "fs_"})
    listed = Tool(name="files.read", description="Read a file.",
                  input_schema={"type": "object", "properties": {"path": {"type": "string"}}})
    assert spec_for(server, listed, None).name == "fs_files_read"


def test_a_desk_module_connects_at_import_and_offers_the_tools_to_each_call(tmp_path: Path) -> None:
    from pipeline.base.clock import RealClock
    from pipeline.transports.runtime import load_desk

    desk_file = tmp_path / "mcp_desk.py"
    desk_file.write_text(
        "from pipeline.tools.mcp import McpTools\n"
        f"MCP = McpTools([{{'name': 'shop', 'command': {sys.executable!r}, "
        f"'args': [{str(SERVER)!r}, {str(tmp_path)!r}], 'allow': ['look_up_order']}}]).open()\n"
        "def desk(clock):\n"
        "    return MCP.registry(clock=clock)\n")
    desk = load_desk(str(desk_file))
    try:
        registry = desk.setup(clock=RealClock())
        assert [spec.name for spec in registry] == ["look_up_order"]
        assert run(ToolRunner(registry), "look_up_order", order_id="4417")["order_id"] == "4417"
    finally:
        sys.modules[f"pipeline_desk_{desk_file.stem}"].MCP.close()


def test_calls_of_many_phone_calls_after_a_restart_share_one_new_connection(shop: Shop) -> None:
    runner = ToolRunner(shop.tools.registry())
    if shop.http is not None:
        shop.http.stop()
        shop.http.start()
    else:
        os.kill(run(runner, "process_id")["result"], signal.SIGKILL)
        time.sleep(0.5)
    connections = shop.tools.links["shop"].connections

    async def at_once() -> list[Any]:
        calls = [runner.run(ToolCall(name="look_up_order", arguments={"order_id": "4417"}),
                            call_id=f"call-{n}", response_id="r", turn_id=None) for n in range(4)]
        return await asyncio.gather(*calls)

    assert [r.output["order_id"] for r in asyncio.run(at_once())] == ["4417"] * 4
    assert shop.tools.links["shop"].connections == connections + (shop.http is None)


ASK = "I would like a refund of forty two dollars for order forty four seventeen, to the card ending one two three four."


@pytest.mark.models
@pytest.mark.slow
def test_on_the_embedded_model_an_mcp_refund_is_made_once_and_the_caller_told(tmp_path: Path) -> None:
    from pipeline.testing.scenario import parse
    from pipeline.testing.scenario_run import run as run_scenario

    state = tmp_path / "server"
    state.mkdir()
    scenario = parse({
        "name": "an MCP server's refund on the embedded model", "voice": "text",
        "agent": {
            "config": {"llm": {"model": "qwen2.5-coder-0.5b"}},
            "instructions": (
                "You are the refund desk of a kitchen shop, on the phone. Answer in one or two "
                "short, plain sentences. To refund an order you need its number, the last four "
                "digits of the card and the amount; ask for what the caller has not said, then "
                "call the issue_refund tool. Say what the tool returned."),
            "tools": "pipeline.tools.mcp:mcp_tools",
            "tools_args": {"servers": [{
                "name": "shop", "label": "the payments system", "command": sys.executable,
                "args": [str(SERVER), str(state)], "allow": ["issue_refund"], "tools": OPTIONS}]}},
        "line": [{"say": ASK}],
        "expect": [
            {"tool_called": "issue_refund", "arguments": {"order_id": "4417", "card_last4": "1234"}},
            {"said": "card ending 1234", "in_full": True},
            {"ledger": "issue_refund:4417", "state": "committed", "told": True}]})
    books = tmp_path / "ledger.sqlite3"
    result = run_scenario(scenario, ledger_path=books)
    assert result.failures == [], result.report()
    assert (state / "refunds.log").read_text().splitlines() == ["4417 1234 42.0"]
    # the caller calls back and asks again: the model calls the tool again, the ledger answers
    # it (already_done) and the server never hears of it
    again = run_scenario(scenario, ledger_path=books)
    outputs = [json.loads(i.output) for i in again.record.session.conversation.items
               if i.type == "function_call_output"]
    assert [o["status"] for o in outputs] == ["already_done"], again.report()
    assert (state / "refunds.log").read_text().splitlines() == ["4417 1234 42.0"]
    assert again.failures == [], again.report()
    with Ledger(books) as ledger:
        assert len(ledger.get("issue_refund:4417").call_ids) == 2
