"""llama-cpp-python: streamed tokens with the model's own chat template, cancellable per token.

The model writes tool calls in its own form (`pipeline.tools.dialect`, chosen from the GGUF's chat
template): what `stream` yields is always the pipeline's one form of call.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..base.cpu import default_threads
from ..base.errors import ConfigError, ModelMissingError
from ..base.models import model_file
from ..base.protocols import Generation
from ..tools.dialect import ToolDialect, dialect_for_template
from .repeats import stop_at_repeat

if TYPE_CHECKING:
    from llama_cpp.llama_types import CreateChatCompletionStreamResponse

__all__ = ["MODELS", "OPTIONAL_MODELS", "Generation", "LlamaLLM", "ModelChoiceError"]

# The embedded models scripts/download_models.sh fetches, by the name `llm.model` takes (paths
# under the models directory).
MODELS = {
    "smollm2-135m": "llm/SmolLM2-135M-Instruct.Q4_1.gguf",
    "qwen2.5-coder-0.5b": "llm/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    "qwen2.5-coder-1.5b": "llm/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
}
# Not in the default set: fetched only when asked for (`download_models.sh --with llm-qwen-1.5b`,
# 1.1 GB), and no end-of-utterance head is trained for it (`stages/eou_heads/`)
OPTIONAL_MODELS = frozenset({"qwen2.5-coder-1.5b"})


# a prefill's step in tokens: ~120 ms on 2 cores for a 0.5B model, the longest a request that
# wants the model waits for a running one to give way
PREFILL_STEP = 8
PAUSE_STEP = 4  # ~45 ms on 2 cores: a prefill in the caller's pause gives way soon after speech-stop
AHEAD_WAIT_S = 5.0  # how long the conversation evaluated ahead waits for a busy model


class ModelChoiceError(ConfigError, ValueError):
    """A model named by a name that is not embedded, or named two ways at once."""


def embedded_gguf(model: str | None, model_path: str | None, *, setting: str, what: str) -> Path:
    """The GGUF a stage loads: `model` names one of MODELS, or `model_path` is the file (one of
    them), resolved under the models directory; a one-line error when either is wrong."""
    if model is not None and model_path:
        raise ModelChoiceError(f"{setting}.model ({model!r}) and {setting}.model_path "
                               f"({model_path!r}) both choose the model; set only one of them")
    if model is not None:
        if model not in MODELS:
            raise ModelChoiceError(f"{setting}.model {model!r} is not an embedded model; choose one "
                                   f"of {', '.join(sorted(MODELS))}, or give {setting}.model_path "
                                   "(a GGUF file)")
        model_path = MODELS[model]
    path = model_file(model_path or "")
    if not path.is_file():
        raise ModelMissingError(path, what)
    return path


class LlamaLLM:
    """A GGUF model on llama.cpp. One generation at a time per loaded model (a lock)."""

    def __init__(
        self,
        *,
        model_path: str | None = None,  # a GGUF file, in place of `model`
        model: str | None = None,  # a name from MODELS; neither: smollm2-135m
        n_ctx: int = 2048,
        max_tokens: int = 96,  # ~2 spoken sentences; bounds the reply's length and latency
        temperature: float = 0.3,
        repeat_penalty: float = 1.1,  # llama.cpp's, over the last 64 tokens; 1.0 turns it off
        threads: int | None = None,  # llama.cpp threads; None: pipeline.base.cpu's split for this machine
        gpu_layers: int = 0,  # -1 offloads every layer on a CUDA build
        seed: int = 7,
        keep_prompt_cache: bool = True,  # see `next_token_logprobs`; False: the old reset
    ) -> None:
        from llama_cpp import Llama

        if model is None and model_path is None:
            model = "smollm2-135m"
        path = embedded_gguf(model, model_path, setting="llm", what="LLM model")
        self.max_tokens = max_tokens
        self.seed = seed
        self.keep_prompt_cache = keep_prompt_cache
        self.temperature = temperature
        if repeat_penalty <= 0:
            raise ValueError(f"llm.repeat_penalty must be > 0 (1.0 is none), not {repeat_penalty}")
        self.repeat_penalty = repeat_penalty
        self.context_window = n_ctx
        self.threads = threads if threads is not None else default_threads("llm")
        self._llm = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=self.threads,
                          n_gpu_layers=gpu_layers, seed=seed, verbose=False)
        self.lock = threading.Lock()
        self._wanting = 0  # requests waiting for the lock: a prefill gives way to them
        self._wanting_lock = threading.Lock()
        self._formatter: Any = None  # the model's chat template, for scoring a prompt
        # how this model writes a tool call (the session's tool desk asks for its instructions)
        self.tool_dialect: ToolDialect = dialect_for_template(
            self._llm.metadata.get("tokenizer.chat_template"))

    def stream(self, messages: list[dict[str, Any]], *, cancel: threading.Event,
               grammar: str | None = None, max_tokens: int | None = None,
               result: Generation | None = None, temperature: float | None = None) -> Iterator[str]:
        """Yield text pieces; stops within one token once `cancel` is set. Blocking: run in a thread.
        `temperature`: this request's (a session's own), else the stage's. A tool call comes out in
        the pipeline's form whatever the model's (`tool_dialect`). A reply that says a sentence
        again stops there (`stop_at_repeat`): it ends as a whole reply, not a cut one."""
        result = result if result is not None else Generation()
        raw = self._stream(self.tool_dialect.history(messages), cancel=cancel, grammar=grammar,
                           max_tokens=max_tokens, result=result, temperature=temperature)

        def stopped() -> None:
            result.finish_reason = "stop"

        with contextlib.closing(raw):
            # the dialect may stop reading at the end of a call
            yield from stop_at_repeat(self.tool_dialect.read(raw), stopped)

    def _stream(self, messages: list[dict[str, Any]], *, cancel: threading.Event,
                grammar: str | None, max_tokens: int | None, result: Generation,
                temperature: float | None) -> Generator[str, None, None]:
        kwargs: dict[str, Any] = {}
        if grammar:
            from llama_cpp import LlamaGrammar

            kwargs["grammar"] = LlamaGrammar.from_string(grammar, verbose=False)
        with self._using():
            self._count_prefill(messages, result)
            # stream=True makes a generator of chunks (llama-cpp-python types both modes as one);
            # the messages are plain dicts where it names a TypedDict per role
            chunks = cast("Generator[CreateChatCompletionStreamResponse, None, None]",
                          self._llm.create_chat_completion(
                              messages=messages,  # type: ignore[arg-type]
                              stream=True,
                              temperature=self.temperature if temperature is None else temperature,
                              repeat_penalty=self.repeat_penalty,
                              max_tokens=max_tokens or self.max_tokens, **kwargs))
            try:
                for chunk in chunks:
                    if cancel.is_set():
                        result.finish_reason = "cancelled"
                        return
                    choice = chunk["choices"][0]
                    piece = cast("str | None", choice.get("delta", {}).get("content"))
                    if piece:
                        result.output_tokens += 1
                        yield piece
                    finish = choice.get("finish_reason")
                    if finish:
                        result.finish_reason = finish
            finally:
                chunks.close()  # frees the model for the next request even when cancelled

    @contextlib.contextmanager
    def _using(self) -> Iterator[None]:
        """The model, once free: a prefill running stops at its next step and lets this in."""
        with self._wanting_lock:
            self._wanting += 1
        try:
            self.lock.acquire()
        finally:
            with self._wanting_lock:
                self._wanting -= 1
        try:
            yield
        finally:
            self.lock.release()

    def prefill(self, messages: list[dict[str, Any]], *, go_on: Callable[[], bool] | None = None,
                upto_words: bool = False, through_words: bool = False) -> int:
        """Evaluate this prompt (instructions, conversation, the caller's words so far and the
        assistant's header) ahead of the request for it: the request then evaluates only the
        tokens after the prefix they share, none when the caller's final words are these. The
        tokens evaluated; 0 when the model is busy (it never waits) or holds the prompt
        already. Steps of `PREFILL_STEP` tokens: a request that wants the model, or `go_on`
        turning false, stops it at the next step, and what was evaluated stays held.
        `upto_words`: only the tokens before the last message's words: the conversation and the
        caller's header, ready for whatever the caller says next; the next request needs them
        whatever it is, so this waits for a busy model (up to `AHEAD_WAIT_S`). `through_words`:
        up to where the words end, not the template's end after them (the final's words may go
        on), in steps of `PAUSE_STEP`: it runs in the caller's pause and gives way to the final
        pass at speech-stop."""
        from llama_cpp import Llama

        if not self.keep_prompt_cache or not (self.lock.acquire(timeout=AHEAD_WAIT_S) if upto_words
                                              else self.lock.acquire(blocking=False)):
            return 0
        try:
            llm = self._llm
            if upto_words:  # up to where two prompts with other words there part
                a, b = (self._prompt_tokens([*messages[:-1], {**messages[-1], "content": w}]) for w in "AB")
                tokens = a[:Llama.longest_token_prefix(a, b)]
            else:
                tokens = self._prompt_tokens(messages)
            if through_words:  # up to where the words end: the same words and more part there
                more = self._prompt_tokens([*messages[:-1], {**messages[-1], "content": f"{messages[-1]['content']} A"}])
                tokens = tokens[:Llama.longest_token_prefix(tokens, more)]
            size = PAUSE_STEP if through_words else PREFILL_STEP
            held = Llama.longest_token_prefix(llm.input_ids[:llm.n_tokens].tolist(), tokens)
            if (held == len(tokens) and (upto_words or through_words or held == llm.n_tokens)) or self._wanting or (
                    go_on is not None and not go_on()):
                return 0  # held (the words' place needs no logits), or stopped before the cache is cut
            # all of it held but more evaluated after (an earlier reply): the last token again,
            # so the logits a request samples from are this prompt's
            llm.n_tokens = min(held, len(tokens) - 1)  # eval drops the model's memory past it
            evaluated = 0
            while llm.n_tokens < len(tokens) and not self._wanting and (go_on is None or go_on()):
                step = tokens[llm.n_tokens:llm.n_tokens + size]
                llm.eval(step)
                evaluated += len(step)
            return evaluated
        finally:
            self.lock.release()

    def _count_prefill(self, messages: list[dict[str, Any]], result: Generation) -> None:
        """The prompt's tokens and how many of them llama.cpp still holds evaluated (the prefix
        it shares with the last request: only the rest is prefilled), into `result`. Under the
        lock, just before the request: the tokens held are the last request's."""
        from llama_cpp import Llama

        tokens = self._prompt_tokens(messages)
        # the comparison llama-cpp-python itself makes to skip the held prefix; it evaluates the
        # last token again when the whole prompt is held
        shared = Llama.longest_token_prefix(self._llm.input_ids[:self._llm.n_tokens].tolist(), tokens)
        result.prompt_tokens, result.cached_tokens = len(tokens), min(shared, len(tokens) - 1)

    def count_tokens(self, messages: list[dict[str, Any]]) -> int:
        """Prompt tokens of these messages as the model sees them (its chat template applied)."""
        return len(self._prompt_tokens(messages))

    def _prompt_tokens(self, messages: list[dict[str, Any]]) -> list[int]:
        """The tokens create_chat_completion evaluates: the model's own template, rendered and
        tokenized the way llama-cpp-python's chat handler does it."""
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        messages = self.tool_dialect.history(messages)
        llm = self._llm
        if self._formatter is None:
            vocab = llm._model
            self._formatter = Jinja2ChatFormatter(
                template=llm.metadata["tokenizer.chat_template"],
                eos_token=vocab.token_get_text(vocab.token_eos()),
                bos_token=vocab.token_get_text(vocab.token_bos()))
        rendered = self._formatter(messages=messages)
        return llm.tokenize(rendered.prompt.encode("utf-8"), add_bos=not rendered.added_special,
                            special=True)

    def complete(self, messages: list[dict[str, Any]], *, cancel: threading.Event | None = None,
                 **kwargs: Any) -> str:
        """The whole reply; like `stream`, it stops within one token once `cancel` is set."""
        return "".join(self.stream(messages, cancel=cancel or threading.Event(), **kwargs))

    def forget(self) -> None:
        """Start over as a process's first request does: the sampler's seed back to `seed` (each
        completion draws the next one from the last, so a reply depends on how many came before)
        and no evaluated prompt (a cached prefix shifts llama.cpp's batches and the last digits of
        the logits). A scenario that played after another in the same process called its tool
        again instead of answering."""
        with self._using():
            self._llm.set_seed(self.seed)
            self._llm.reset()

    @property
    def cached_tokens(self) -> int:
        """Prompt tokens llama.cpp holds evaluated: the next request skips the prefix it shares."""
        return int(self._llm.n_tokens)

    def next_token_logprobs(self, messages: list[dict[str, Any]], candidates: list[str]) -> dict[str, float]:
        """Log-probabilities of candidate first tokens of the assistant's reply: one forward pass
        over the prompt, reading the last position's logits (no `logits_all`, which would slow
        every other prompt).

        The pass overwrites the context, so with `keep_prompt_cache` the evaluated conversation
        (instructions and history, the next reply's prefix) is copied out before and put back
        after: the reply then evaluates only the new turn instead of the whole prompt."""
        import numpy as np

        llm = self._llm
        tokens = self._prompt_tokens(messages)
        with self._using():
            kept = _PromptCache.save(llm) if self.keep_prompt_cache else None
            llm.reset()
            llm.eval(tokens)
            logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),)).astype(np.float64)
            llm.reset()
            if kept is not None:
                kept.restore(llm)
        top = logits.max()
        log_z = top + np.log(np.exp(logits - top).sum())
        out = {}
        for word in candidates:
            ids = llm.tokenize(word.encode("utf-8"), add_bos=False, special=False)
            if ids:
                out[word] = float(logits[ids[0]] - log_z)
        return out


class _PromptCache:
    """The evaluated tokens of llama.cpp's sequence 0 and their KV cells, copied out and back.

    Only the sequence's cells are copied (llama_state_seq_*: for SmolLM2-135M, 30 layers x K and
    V x 3 KV heads x 64 dims x 2 bytes = 23 KB a token),
    not `Llama.save_state`, which also copies and scans the score matrix (tens of MB)."""

    def __init__(self, n_tokens: int, input_ids: Any, data: Any, size: int) -> None:
        self.n_tokens, self.input_ids, self.data, self.size = n_tokens, input_ids, data, size

    @classmethod
    def save(cls, llm: Any) -> _PromptCache | None:
        import ctypes

        import llama_cpp

        n = int(llm.n_tokens)
        if n == 0:
            return None
        size = llama_cpp.llama_state_seq_get_size(llm._ctx.ctx, 0)
        data = (ctypes.c_uint8 * size)()
        if llama_cpp.llama_state_seq_get_data(llm._ctx.ctx, data, size, 0) != size:
            return None  # nothing to lose: the reply evaluates its whole prompt, as before
        return cls(n, llm.input_ids[:n].copy(), data, size)

    def restore(self, llm: Any) -> None:
        import llama_cpp

        if llama_cpp.llama_state_seq_set_data(llm._ctx.ctx, self.data, self.size, 0) != self.size:
            llm.reset()  # a partial restore would be wrong: start from nothing instead
            return
        llm.input_ids[:self.n_tokens] = self.input_ids
        llm.n_tokens = self.n_tokens
