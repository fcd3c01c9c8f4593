"""How an OpenAI-compatible LLM stage counts prompt tokens on the server it talks to."""

from __future__ import annotations

import logging
import math
from typing import Any, Protocol

from ..base.errors import LLMServerError

log = logging.getLogger(__name__)


class TokenizingServer(Protocol):
    """What the tokenizer needs of the LLM stage: its address and its requests."""

    base_url: str

    def post_json(self, path: str, body: dict[str, Any], *, root: bool = False) -> Any: ...

    def request_body(self, messages: list[dict[str, Any]], *, max_tokens: int | None,
                     stream: bool) -> dict[str, Any]: ...


class ServerTokenizer:
    """How `count_tokens` counts, found once per server.

    - llama-server: `/apply-template` renders the model's chat template, `/tokenize` counts it
      (exact).
    - llama-cpp-python's server: `/extras/tokenize` counts each message's text with the model's
      tokenizer, and the template's cost per message (and once per prompt) is measured once from
      the `usage` of two one-token completions. Exact for templates that wrap each message in
      special tokens (ChatML); within a token or two a message otherwise.
    - anything else: an estimate of 4 characters a token (English text with a BPE vocabulary)
      plus 4 tokens a message for the template, rounded up.
    """

    def __init__(self, kind: str, llm: TokenizingServer, *, per_message: int = 4,
                 per_prompt: int = 3) -> None:
        self.kind, self.llm = kind, llm
        self.per_message, self.per_prompt = per_message, per_prompt
        self._texts: dict[str, int] = {}  # message text -> tokens (llama-cpp-python only)
        self._bos = 0

    @classmethod
    def detect(cls, llm: TokenizingServer) -> ServerTokenizer:
        """Raises if the server cannot be reached, so a passing outage is not remembered."""
        try:
            llm.post_json("/extras/tokenize", {"input": "x"}, root=True)
            return cls._calibrated(llm)
        except LLMServerError as exc:
            if exc.status is None:
                raise
        try:
            llm.post_json("/apply-template", {"messages": [{"role": "user", "content": "x"}]},
                           root=True)
            return cls("llama-server", llm)
        except LLMServerError as exc:
            if exc.status is None:
                raise
            log.warning("the LLM server at %s offers no tokenizer; token counts are estimates",
                        llm.base_url)
            return cls("estimate", llm)

    @classmethod
    def _calibrated(cls, llm: TokenizingServer) -> ServerTokenizer:
        tok = cls("llama-cpp-python", llm)
        tok._bos = len(llm.post_json("/extras/tokenize", {"input": ""}, root=True)["tokens"])
        one = [{"role": "system", "content": "x"}]
        two = one + [{"role": "user", "content": "x"}]
        used = [llm.post_json("/chat/completions", llm.request_body(m, max_tokens=1, stream=False))
                ["usage"]["prompt_tokens"] for m in (one, two)]
        tok.per_message = used[1] - used[0] - tok._text("x")
        tok.per_prompt = used[0] - tok.per_message - tok._text("x")
        return tok

    def _text(self, text: str) -> int:
        if text not in self._texts:
            if len(self._texts) > 20_000:  # a long call's worth; then start again
                self._texts.clear()
            tokens = self.llm.post_json("/extras/tokenize", {"input": text}, root=True)
            self._texts[text] = len(tokens["tokens"]) - self._bos
        return self._texts[text]

    def count(self, messages: list[dict[str, Any]]) -> int:
        if self.kind == "llama-server":
            prompt = self.llm.post_json("/apply-template", {"messages": messages},
                                         root=True)["prompt"]
            tokens = self.llm.post_json("/tokenize", {"content": prompt, "add_special": True,
                                                       "parse_special": True}, root=True)["tokens"]
            return len(tokens)
        texts = [str(m.get("content") or "") for m in messages]
        if self.kind == "llama-cpp-python":
            content = sum(self._text(t) for t in texts)
        else:
            content = sum(math.ceil(len(t) / 4) for t in texts)
        return self.per_prompt + self.per_message * len(messages) + content
