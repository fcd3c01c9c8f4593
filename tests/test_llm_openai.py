"""The openai-compatible LLM stage against a real server: llama-cpp-python's, on SmolLM2.

Loopback only. The server is started per module (and once more for the test that kills it).
"""

from __future__ import annotations

import re
import socket
import threading
import time
from pathlib import Path

import pytest

from pipeline.base.models import model_file
from pipeline.stages.llm import Generation
from pipeline.stages.llm_openai import APOLOGY, LLMServerError, OpenAICompatibleLLM
from pipeline.testing import LlamaServer
from pipeline.tools import ToolSpec, parse_tool_call, tool_call_grammar

ROOT = Path(__file__).resolve().parents[1]
MODEL = model_file("llm/SmolLM2-135M-Instruct.Q4_1.gguf")

REFUND = ToolSpec.from_openai({
    "type": "function", "name": "refund", "description": "Refund an order to the card it was paid with.",
    "parameters": {"type": "object", "properties": {
        "order_id": {"type": "string", "description": "The order number, like A123."},
        "holding_line": {"type": "string", "spoken": True, "maxLength": 80,
                         "description": "What to say to the caller while the refund runs."}},
        "required": ["order_id", "holding_line"]}})
# room for the whole call: strings are bounded (the schema's maxLength, the grammar's 160
# characters), and the model may use them (80 tokens cut a rambling holding line mid-string
# with llama-cpp-python 0.3.36)
CALL_TOKENS = 160
ASK_REFUND = [{"role": "system", "content": "You are a refund desk. Use the refund tool."},
              {"role": "user", "content": "Please refund my order A17."}]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(log: Path, *extra: str) -> LlamaServer:
    pytest.importorskip("llama_cpp.server.app",
                        reason="install the server extra: pip install -e '.[server]'")
    return LlamaServer.start(MODEL, log=log, extra=extra)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = start_server(tmp_path_factory.mktemp("server") / "server.log")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def llm(server):
    # the server's first grammar costs ~25 s once (2 shared cores); generous bounds, not figures
    client = OpenAICompatibleLLM(base_url=server.url, first_token_timeout_s=60.0,
                                 total_timeout_s=180.0)
    yield client
    client.close()


@pytest.mark.models
@pytest.mark.slow
def test_streams_text_pieces_and_reports_what_it_cost(llm):
    result = Generation()
    pieces = list(llm.stream([{"role": "user", "content": "Say hello to Anna in one sentence."}],
                             cancel=threading.Event(), result=result, max_tokens=24))
    assert len(pieces) > 3 and "".join(pieces).strip()
    assert result.finish_reason in ("stop", "length")
    assert result.output_tokens == len(pieces)  # this server sends no usage: one token a chunk
    messages = [{"role": "user", "content": "Say hello to Anna in one sentence."}]
    assert result.prompt_tokens == llm.count_tokens(messages) > 5


@pytest.mark.models
@pytest.mark.slow
def test_a_native_tool_call_arrives_as_the_pipelines_json_and_parses(llm):
    pieces = list(llm.stream(ASK_REFUND, cancel=threading.Event(), tools=[REFUND.to_openai()],
                             tool_choice={"type": "function", "function": {"name": "refund"}},
                             max_tokens=CALL_TOKENS))
    assert pieces[0] == '{"name": "refund", "arguments": '
    assert len(pieces) > 4  # the arguments stream in fragments, for spoken arguments
    call = parse_tool_call("".join(pieces), [REFUND])
    assert call is not None and call.name == "refund"
    assert set(call.arguments) == {"order_id", "holding_line"}


@pytest.mark.models
@pytest.mark.slow
def test_a_grammar_goes_to_the_server_and_constrains_the_reply(llm):
    grammar = tool_call_grammar([REFUND], allow_text=False)
    text = llm.complete(ASK_REFUND, grammar=grammar, max_tokens=CALL_TOKENS)
    call = parse_tool_call(text, [REFUND])
    assert call is not None and call.name == "refund"


@pytest.mark.models
@pytest.mark.slow
def test_cancel_closes_the_stream_within_one_chunk_and_the_server_stops(llm, server):
    cancel, result = threading.Event(), Generation()
    stream = llm.stream([{"role": "user", "content": "Count from one to two hundred in words."}],
                        cancel=cancel, result=result, max_tokens=400)
    seen = [next(stream) for _ in range(3)]
    before = server.disconnects()
    cancel.set()
    assert list(stream) == [] and result.finish_reason == "cancelled"
    assert len(seen) == 3
    deadline = time.monotonic() + 10  # a bound, not a measurement: bench/endpoint.py times it
    while server.disconnects() == before:
        assert time.monotonic() < deadline, "the server never noticed the closed stream"
        time.sleep(0.05)
    follow = Generation()
    list(llm.stream([{"role": "user", "content": "Hi."}], cancel=threading.Event(), result=follow,
                    max_tokens=4))
    assert follow.output_tokens > 0  # the model was free again, not busy with 400 tokens


@pytest.mark.models
@pytest.mark.slow
def test_requests_share_a_keep_alive_connection_and_a_cancelled_stream_drops_its_own(server):
    llm = OpenAICompatibleLLM(base_url=server.url, first_token_timeout_s=60.0)
    hi = [{"role": "user", "content": "Hi."}]

    def client_ports(since: int) -> list[str]:  # uvicorn logs each request's client address
        return re.findall(r'127\.0\.0\.1:(\d+) - "POST /v1/chat/completions',
                          server.log.read_text(errors="replace")[since:])

    llm.count_tokens(hi)  # its one-off calibration makes two requests of its own
    start = len(server.log.read_text(errors="replace"))
    for _ in range(3):
        llm.complete(hi, max_tokens=2)
    assert len(client_ports(start)) == 3 and len(set(client_ports(start))) == 1
    cancel = threading.Event()
    stream = llm.stream(hi, cancel=cancel, max_tokens=50)
    next(stream)
    cancel.set()
    list(stream)
    llm.complete(hi, max_tokens=2)
    ports = client_ports(start)
    assert len(ports) == 5 and ports[3] == ports[0] and ports[4] != ports[0]
    llm.close()


@pytest.mark.models
@pytest.mark.slow
def test_token_counts_agree_with_the_in_process_model(llm):
    from pipeline.stages.llm import LlamaLLM

    local = LlamaLLM(model_path=str(MODEL))
    messages = [{"role": "system", "content": "You are a helpful voice assistant on a phone call."},
                {"role": "user", "content": "Can you move my delivery to Thursday, please?"},
                {"role": "assistant", "content": "Sure. Which order is it, the one from May?"},
                {"role": "user", "content": 'Order A-1203. [result of lookup: {"ok": true}]'}]
    for n in (1, 2, 4):
        assert abs(llm.count_tokens(messages[:n]) - local.count_tokens(messages[:n])) <= 2
    assert llm.context_window == local.context_window == 2048


@pytest.mark.models
@pytest.mark.slow
def test_log_probabilities_feed_the_completeness_signal(llm):
    from pipeline.turns import LLMCompleteness

    scores = llm.next_token_logprobs(
        [{"role": "user", "content": "Answer yes or no: is water wet?"}], ["yes", "no", "Yes", "No"])
    assert scores and all(v <= 0.0 for v in scores.values())
    assert 0.0 <= LLMCompleteness(llm=llm).probability("I would like to book a table.") <= 1.0


@pytest.mark.models
@pytest.mark.slow
def test_an_error_status_says_what_the_server_said_and_what_to_do(server):
    root = server.url.removesuffix("/v1")  # base_url without /v1: /chat/completions is not there
    llm = OpenAICompatibleLLM(base_url=root)
    with pytest.raises(LLMServerError, match=r"HTTP 404.*check llm.base_url"):
        llm.complete([{"role": "user", "content": "Hi."}])


@pytest.mark.models
@pytest.mark.slow
def test_a_slow_first_token_is_a_timeout_error_not_a_hang(server):
    llm = OpenAICompatibleLLM(base_url=server.url, first_token_timeout_s=0.05)
    long_prompt = " ".join(["Please read this sentence about the weather carefully."] * 120)
    t0 = time.monotonic()
    with pytest.raises(LLMServerError, match="raise llm.first_token_timeout_s"):
        llm.complete([{"role": "user", "content": long_prompt}], max_tokens=8)
    assert time.monotonic() - t0 < 5


def test_no_server_is_a_clear_error():
    llm = OpenAICompatibleLLM(base_url=f"http://127.0.0.1:{free_port()}/v1")
    with pytest.raises(LLMServerError, match="refused the connection: start it, or fix llm.base_url"):
        llm.complete([{"role": "user", "content": "Hi."}])
    assert LLMServerError.apology == APOLOGY and len(APOLOGY.split()) < 20


@pytest.mark.models
@pytest.mark.slow
def test_a_key_comes_from_the_environment_and_a_dying_server_is_an_error(tmp_path, monkeypatch):
    dying = start_server(tmp_path / "server.log", "--api_key", "sesame")
    try:
        monkeypatch.delenv("PIPELINE_TEST_KEY", raising=False)
        keyless = OpenAICompatibleLLM(base_url=dying.url, api_key_env="PIPELINE_TEST_KEY")
        with pytest.raises(LLMServerError, match="HTTP 401.*PIPELINE_TEST_KEY environment"):
            keyless.complete([{"role": "user", "content": "Hi."}])
        monkeypatch.setenv("PIPELINE_TEST_KEY", "sesame")
        llm = OpenAICompatibleLLM(base_url=dying.url, api_key_env="PIPELINE_TEST_KEY",
                                  first_token_timeout_s=30.0)
        stream = llm.stream([{"role": "user", "content": "Count from one to two hundred in words."}],
                            cancel=threading.Event(), max_tokens=400)
        next(stream)
        dying.process.kill()
        t0 = time.monotonic()
        with pytest.raises(LLMServerError, match="dropped the connection|sent nothing for"):
            list(stream)
        assert time.monotonic() - t0 < 30 + 2  # bounded by the timeout, never a hang
    finally:
        dying.stop()
