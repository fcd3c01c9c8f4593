"""An LLM behind an OpenAI-compatible HTTP server (llama.cpp's llama-server, llama-cpp-python's
server, vLLM): streamed chat completions over a small pool of keep-alive connections.

The stage has LlamaLLM's interface, so the session cannot tell them apart. Native tool calls are
mapped onto the pipeline's own convention (the reply's text is the JSON object
`{"name": ..., "arguments": {...}}`), so spoken arguments, the per-turn result buffer and the
ledger work unchanged. Closing the HTTP stream is how a server learns to stop generating:
`cancel` closes it within one chunk.

Constrained decoding: a GBNF `grammar` goes in the request body, which llama-server and
llama-cpp-python's server accept. vLLM does not take GBNF; it takes `guided_grammar` (an EBNF of
its own dialect, via its xgrammar or outlines backend) or `guided_json` (a JSON schema), so against
vLLM pass `tools` instead and let its tool parser do the constraining.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import threading
import time
from collections.abc import Generator, Iterator
from typing import Any
from urllib.parse import urlsplit

from ..base.errors import LLMServerError
from ..base.protocols import Generation
from . import keepalive
from .llm_tokenizer import ServerTokenizer
from .repeats import stop_at_repeat

log = logging.getLogger(__name__)

# What the session says when the model cannot answer; short, so it costs the caller little.
APOLOGY = LLMServerError.apology  # what the caller hears when the server fails


class OpenAICompatibleLLM:
    """Chat completions from an OpenAI-compatible server; one request per reply, streamed.

    The API key is read from the environment variable named by `api_key_env`, never from the
    command line or a config file; local servers need none.
    """

    def __init__(
        self,
        *,
        base_url: str = "http://127.0.0.1:8080/v1",  # llama-server's default host and port
        model: str = "local",  # single-model llama.cpp servers ignore it; vLLM needs its name
        api_key_env: str = "OPENAI_API_KEY",  # the variable OpenAI's own clients read
        connect_timeout_s: float = 2.0,  # a reachable server accepts at once; this is a dead one
        # prompt evaluation of a full 2048-token context plus queueing behind another call
        first_token_timeout_s: float = 10.0,
        # a bound, not a measurement: max_tokens (96) at a slow 3 tokens/s is 32 s
        total_timeout_s: float = 40.0,
        max_tokens: int = 96,  # LlamaLLM's: ~2 spoken sentences
        temperature: float = 0.3,  # LlamaLLM's
        seed: int = 7,  # LlamaLLM's; servers that honour it repeat a reply for the same prompt
        context_window: int = 2048,  # set it to the server's --ctx-size / --n_ctx / --max-model-len
        pool_size: int = 4,  # keep-alive connections: a reply, a completeness check, a count
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.connect_timeout_s = connect_timeout_s
        self.first_token_timeout_s = first_token_timeout_s
        self.total_timeout_s = total_timeout_s
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.seed = seed
        self.context_window = context_window
        headers = {"Accept": "text/event-stream, application/json"}
        key = os.environ.get(api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._path = urlsplit(self.base_url).path  # "/v1"; the extras live at the root
        self._pool = keepalive.KeepAlivePool(self.base_url, size=pool_size,
                                             connect_timeout_s=connect_timeout_s,
                                             read_timeout_s=first_token_timeout_s, headers=headers)
        self._tokenizer: ServerTokenizer | None = None
        self._tokenizer_lock = threading.Lock()

    def close(self) -> None:
        self._pool.close()

    # --- generation ----------------------------------------------------------------------------

    def stream(self, messages: list[dict[str, Any]], *, cancel: threading.Event,
               grammar: str | None = None, max_tokens: int | None = None,
               result: Generation | None = None, tools: list[dict[str, Any]] | None = None,
               tool_choice: str | dict[str, Any] | None = None,
               temperature: float | None = None) -> Iterator[str]:
        """Yield text pieces; a native tool call comes out as the text of the pipeline's JSON
        convention. Closes the stream within one chunk once `cancel` is set. Blocking.
        `temperature`: this request's (a session's own), else the stage's. A reply that says a
        sentence again stops there (`stop_at_repeat`), as a whole reply."""
        result = result if result is not None else Generation()
        raw = self._stream(messages, cancel=cancel, grammar=grammar, max_tokens=max_tokens,
                           result=result, tools=tools, tool_choice=tool_choice, temperature=temperature)

        def stopped() -> None:
            result.finish_reason = "stop"

        with contextlib.closing(raw):  # closing it closes the server's stream
            yield from stop_at_repeat(raw, stopped)

    def _stream(self, messages: list[dict[str, Any]], *, cancel: threading.Event,
                grammar: str | None, max_tokens: int | None, result: Generation,
                tools: list[dict[str, Any]] | None, tool_choice: str | dict[str, Any] | None,
                temperature: float | None) -> Generator[str, None, None]:
        body = self.request_body(messages, max_tokens=max_tokens, stream=True)
        if temperature is not None:
            body["temperature"] = temperature
        body["stream_options"] = {"include_usage": True}
        if tools:
            body["tools"] = [_chat_tool(t) for t in tools]
            body["tool_choice"] = tool_choice or "auto"
        elif grammar:
            body["grammar"] = grammar
        deadline = time.monotonic() + self.total_timeout_s
        pieces = 0
        usage = None
        finished = False
        call = _CallText()
        response = self._post("/chat/completions", body)
        completed = False
        try:
            for event in _sse_events(response, self, deadline):
                usage = event.get("usage") or usage
                for choice in event.get("choices") or ():
                    delta = choice.get("delta") or {}
                    out = call.feed(delta.get("tool_calls"), spoke_text=pieces > 0)
                    if not call.opened and delta.get("content"):
                        out.append(delta["content"])
                    for piece in out:
                        if cancel.is_set():
                            result.finish_reason = "cancelled"
                            return
                        pieces += 1
                        yield piece
                    if choice.get("finish_reason"):
                        finished = True
                        result.finish_reason = _finish_reason(choice["finish_reason"])
                if cancel.is_set():
                    result.finish_reason = "cancelled"
                    return
            completed = True
            if call.opened:
                yield call.close()
        finally:
            response.close(drain=completed)  # a stream closed early drops its connection
            result.output_tokens = pieces  # one token a chunk, unless the server's usage says
            if usage:
                result.prompt_tokens = int(usage.get("prompt_tokens", 0))
                result.output_tokens = int(usage.get("completion_tokens", pieces))
        if not finished:  # llama-cpp-python's server ends a stream it interrupts so
            log.warning("the LLM server ended a reply without saying why; if it is "
                        "llama-cpp-python's server, start it with --interrupt_requests false")
        if usage is None:  # the server sent no usage: count the prompt ourselves
            result.prompt_tokens = self._count_quietly(messages)

    def complete(self, messages: list[dict[str, Any]], *, cancel: threading.Event | None = None,
                 **kwargs: Any) -> str:
        return "".join(self.stream(messages, cancel=cancel or threading.Event(), **kwargs))

    def next_token_logprobs(self, messages: list[dict[str, Any]], candidates: list[str]
                            ) -> dict[str, float]:
        """Log-probabilities of candidate first tokens of the reply, from one one-token
        completion with `top_logprobs` (for the `llm` completeness signal). A candidate the
        server's top 20 does not include is left out, as LlamaLLM leaves out untokenizable ones."""
        body = self.request_body(messages, max_tokens=1, stream=False)
        body |= {"logprobs": True, "top_logprobs": 20, "temperature": 0.0}  # 20: OpenAI's cap
        data = self.post_json("/chat/completions", body)
        content = ((data.get("choices") or [{}])[0].get("logprobs") or {}).get("content")
        if not content:
            raise LLMServerError(
                f"the LLM server at {self.base_url} returned no log-probabilities: start "
                "llama-cpp-python's server with --logits_all true, or use the heuristic turns "
                "signal (turns.name = \"heuristic\")")
        out: dict[str, float] = {}
        for top in content[0].get("top_logprobs") or ():
            word = top.get("token", "").strip()
            if word in candidates:
                out[word] = max(out.get(word, -math.inf), float(top["logprob"]))
        return out

    # --- counting ------------------------------------------------------------------------------

    def count_tokens(self, messages: list[dict[str, Any]]) -> int:
        """Prompt tokens these messages take, counted by the server's own tokenizer where it has
        one (see `ServerTokenizer`), else estimated."""
        with self._tokenizer_lock:
            if self._tokenizer is None:
                self._tokenizer = ServerTokenizer.detect(self)
        return self._tokenizer.count(messages)

    def _count_quietly(self, messages: list[dict[str, Any]]) -> int:
        try:
            return self.count_tokens(messages)
        except LLMServerError as exc:  # the reply was made; its bookkeeping is not worth failing it
            log.warning("could not count the prompt's tokens: %s", exc)
            return 0

    # --- HTTP ----------------------------------------------------------------------------------

    def request_body(self, messages: list[dict[str, Any]], *, max_tokens: int | None, stream: bool
              ) -> dict[str, Any]:
        return {"model": self.model, "messages": messages, "stream": stream,
                "max_tokens": max_tokens or self.max_tokens, "temperature": self.temperature,
                "seed": self.seed}

    def _post(self, path: str, body: dict[str, Any], *, root: bool = False
              ) -> keepalive.Response:
        """POST under base_url ("/chat/completions"), or at the server's root (`root`: where
        the tokenizer endpoints live); an error status becomes an LLMServerError."""
        try:
            response = self._pool.post(("" if root else self._path) + path, body)
        except keepalive.Refused:
            raise LLMServerError(
                f"the LLM server at {self.base_url} refused the connection: start it, or fix "
                "llm.base_url") from None
        except keepalive.ConnectTimedOut:
            raise LLMServerError(
                f"the LLM server at {self.base_url} did not accept a connection within "
                f"{self.connect_timeout_s:g} s: check that it is running and reachable, or fix "
                "llm.base_url") from None
        except keepalive.HTTPFailure as exc:
            raise _failure(self, exc) from None
        if response.status >= 400:
            try:
                detail = _server_message(response.text())
            except keepalive.HTTPFailure:
                detail = "(no message)"
            finally:
                response.close()
            raise LLMServerError(_status_advice(self, response.status, detail),
                                 status=response.status)
        return response

    def post_json(self, path: str, body: dict[str, Any], *, root: bool = False) -> Any:
        with self._post(path, body, root=root) as response:
            try:
                return response.json()
            except keepalive.HTTPFailure as exc:
                raise _failure(self, exc) from None
            except ValueError:
                raise LLMServerError(
                    f"the LLM server at {self.base_url} answered {path} with something that is "
                    "not JSON: check that llm.base_url points at an OpenAI-compatible "
                    "server") from None


def _sse_events(response: keepalive.Response, llm: OpenAICompatibleLLM, deadline: float
                ) -> Iterator[dict[str, Any]]:
    """The JSON payloads of a server-sent event stream, up to `[DONE]`."""
    try:
        for line in response.lines():
            if time.monotonic() > deadline:
                raise LLMServerError(
                    f"the LLM server at {llm.base_url} did not finish a reply within "
                    f"{llm.total_timeout_s:g} s: lower llm.max_tokens, give the server more "
                    "capacity, or raise llm.total_timeout_s")
            if not line.startswith("data:"):
                continue  # comments (": ping"), event names, blank separators
            data = line[5:].strip()
            if data == "[DONE]":
                return
            event = json.loads(data)
            if isinstance(event, dict) and event.get("error"):
                error = event["error"]
                message = error.get("message", error) if isinstance(error, dict) else error
                raise LLMServerError(f"the LLM server at {llm.base_url} failed mid-reply: "
                                     f"{message}; check the server's log")
            yield event
    except keepalive.HTTPFailure as exc:
        raise _failure(llm, exc) from None
    # every OpenAI-compatible stream ends with [DONE]; a body that ends first was cut off
    raise _failure(llm, keepalive.Dropped("the stream ended before [DONE]"))


def _failure(llm: OpenAICompatibleLLM, exc: keepalive.HTTPFailure) -> LLMServerError:
    if isinstance(exc, keepalive.ReadTimedOut):
        return LLMServerError(
            f"the LLM server at {llm.base_url} sent nothing for {llm.first_token_timeout_s:g} s: "
            "it is overloaded, stuck, or the prompt is too long; check its log, give it more "
            "capacity, or raise llm.first_token_timeout_s")
    return LLMServerError(
        f"the LLM server at {llm.base_url} dropped the connection ({exc}): it crashed or "
        "restarted; check its log")


class _CallText:
    """Streamed `tool_calls` deltas as the text of the pipeline's tool-call JSON.

    The pipeline makes one call per response, so only the first call (index 0) is taken.
    """

    def __init__(self) -> None:
        self.opened = False
        self._args = 0

    def feed(self, calls: list[dict[str, Any]] | None, *, spoke_text: bool) -> list[str]:
        out: list[str] = []
        for call in calls or ():
            if call.get("index", 0) != 0:
                log.warning("the model made more than one tool call; only the first is used")
                continue
            fn = call.get("function") or {}
            if not self.opened and fn.get("name"):
                if spoke_text:  # the caller heard text already; the JSON would be read aloud
                    log.warning("the model called %s after speaking; the call is dropped",
                                fn["name"])
                    continue
                self.opened = True
                out.append('{"name": ' + json.dumps(fn["name"]) + ', "arguments": ')
            if self.opened and fn.get("arguments"):
                self._args += 1
                out.append(fn["arguments"])
        return out

    def close(self) -> str:
        return "}" if self._args else "{}}"  # a call without arguments still parses


def _chat_tool(definition: dict[str, Any]) -> dict[str, Any]:
    """A Chat Completions tool; `ToolSpec.to_openai()` gives the flat (Realtime API) shape."""
    if "function" in definition:
        return definition
    body = {k: v for k, v in definition.items() if k != "type"}
    return {"type": "function", "function": body}


def _finish_reason(reason: str) -> str:
    return "length" if reason == "length" else "stop"  # "tool_calls", "eos": a finished reply


def _server_message(text: str) -> str:
    try:
        data = json.loads(text)
    except ValueError:
        return text.strip()[:300] or "(no message)"
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        return str(error.get("message", error))
    if error:
        return str(error)
    if isinstance(data, dict) and "detail" in data:  # FastAPI (llama-cpp-python's server)
        return json.dumps(data["detail"])[:300]
    return json.dumps(data)[:300]


def _status_advice(llm: OpenAICompatibleLLM, status: int, detail: str) -> str:
    said = f"the LLM server at {llm.base_url} answered HTTP {status}: {detail}"
    if status in (401, 403):
        return f"{said}; put the server's API key in the {llm.api_key_env} environment variable"
    if status == 404:
        return f"{said}; check llm.base_url (it usually ends in /v1) and llm.model"
    if status < 500:
        return f"{said}; check llm.model and the options this server accepts"
    return f"{said}; check the server's log"
