"""Where model files are: a relative model path names a file under the models directory.

The models directory is, in this order:
- `$MODELS_DIR` when set (a relative one from the working directory, as the shell reads it);
- `models/` at the repository root when the package runs from a clone (the folder
  scripts/download_models.sh and `make models` fill);
- `$PIPELINE_MODELS`, else `$XDG_CACHE_HOME/pipeline/models`, else `~/.cache/pipeline/models`:
  the user cache an installed package reads and `pipeline models download` fills.

A stage's `model_path` that is relative (`stt/whisper-base`) is read from there whatever the
working directory is; an absolute path (or one starting with `~`) is used as it is.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ENV = "MODELS_DIR"
CACHE_ENV = "PIPELINE_MODELS"
REPO = Path(__file__).resolve().parents[2]
REPO_MODELS = REPO / "models"
# the pinned model set and how to fetch it, shipped inside the package so that an installed
# one can fetch its models from any directory (scripts/download_models.sh runs the same file)
DOWNLOAD_SCRIPT = Path(__file__).resolve().parent / "download_models.sh"


def _env_dir(name: str) -> Path | None:
    value = os.environ.get(name, "").strip()
    return Path(value).expanduser().resolve() if value else None


def in_clone() -> bool:
    """The package runs from a clone of the repository (not from an installed copy)."""
    return (REPO / "pyproject.toml").is_file() and REPO_MODELS.is_dir()


def user_cache() -> Path:
    """`$PIPELINE_MODELS`, else the XDG cache's pipeline/models."""
    configured = _env_dir(CACHE_ENV)
    if configured is not None:
        return configured
    cache = _env_dir("XDG_CACHE_HOME") or Path.home() / ".cache"
    return cache / "pipeline" / "models"


def models_dir() -> Path:
    """`$MODELS_DIR`, else a clone's models/, else the user cache (`user_cache`)."""
    configured = _env_dir(ENV)
    if configured is not None:
        return configured
    return REPO_MODELS if in_clone() else user_cache()


def model_file(path: str | Path) -> Path:
    """A configured model path made absolute: relative ones are under `models_dir()`."""
    p = Path(path).expanduser()
    return p if p.is_absolute() else models_dir() / p


def download(args: list[str], target: Path | None = None) -> int:
    """Fetch, verify (sha256) and assemble the default models into `target` (`models_dir()`):
    `pipeline models download`. `args` go to the script (`--only`, `--hub`); its exit status."""
    target = target or models_dir()
    env = {**os.environ, "PYTHON": sys.executable, ENV: str(target)}
    return subprocess.run(["bash", str(DOWNLOAD_SCRIPT), *args], env=env, check=False).returncode
