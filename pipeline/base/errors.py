"""Errors a user can meet; each message says what to do."""

from __future__ import annotations

from pathlib import Path

from .models import ENV, models_dir


class PipelineError(Exception):
    """Base for errors the CLI reports as one line and exit code 2."""


class ModelMissingError(PipelineError):
    def __init__(self, path: str | Path, what: str = "model") -> None:
        super().__init__(
            f"{what} not found at {path}: the models directory ({models_dir()}, ${ENV} sets it) "
            "is missing or incomplete; run `pipeline models download` (in a clone, "
            "scripts/download_models.sh does the same)"
        )


class ConfigError(PipelineError):
    pass


class SpokenError(PipelineError):
    """A stage failure the caller should hear about: `apology` is said instead of silence."""

    apology = "Sorry, I'm having trouble answering right now. Please try again in a moment."


class CallCutError(SpokenError):
    """The model's tool call reached the token limit before its JSON closed: nothing runs."""

    apology = "Sorry, I didn't manage to get all of that down. Could you say it again for me?"


class LLMServerError(SpokenError):
    """The LLM server was down, slow, or answered with an error; the message says what to do."""

    apology = "Sorry, I'm having trouble answering right now. Please say that again in a moment."

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status  # the HTTP status when the server answered with an error
