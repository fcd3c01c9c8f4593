#!/usr/bin/env bash
# The default offline model set into this clone's models/ (or $MODELS_DIR): the package's own
# download script (pipeline/base/download_models.sh, what `pipeline models download` runs),
# with the clone's folder as the target. `--help` lists the options.
set -euo pipefail
ROOT="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ -z "${MODELS_DIR:-}" ]]; then
    export MODELS_DIR="$ROOT/models" MODELS_SHOWN="models/"
fi
exec bash "$ROOT/pipeline/base/download_models.sh" "$@"
