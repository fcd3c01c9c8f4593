"""Where model files are: a relative model path names a file under the models directory.

The models directory is `$MODELS_DIR` when set (the variable scripts/download_models.sh fills),
else `models/` at the repository root. A stage's `model_path` that is relative
(`stt/whisper-base`) is read from there whatever the working directory is; an absolute path
(or one starting with `~`) is used as it is.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV = "MODELS_DIR"
REPO_MODELS = Path(__file__).resolve().parents[2] / "models"


def models_dir() -> Path:
    """`$MODELS_DIR` (a relative one from the working directory, as the shell reads it), else
    the repository's models/."""
    configured = os.environ.get(ENV, "").strip()
    return Path(configured).expanduser().resolve() if configured else REPO_MODELS


def model_file(path: str | Path) -> Path:
    """A configured model path made absolute: relative ones are under `models_dir()`."""
    p = Path(path).expanduser()
    return p if p.is_absolute() else models_dir() / p
