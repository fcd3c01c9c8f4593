#!/usr/bin/env bash
# Build llama-cpp-python once per version and build flags, keep the wheel, install it.
#
# pip builds llama.cpp from source with -march=native, and its wheel cache is keyed by the source
# alone. On a Xeon with AMX that build crashes in ggml_backend_amx_mul_mat on the first decode,
# and a wheel cached on one CPU is reused on the next. So the default flags here are x86-64 ones
# named one by one (AVX2, FMA, F16C; never AMX), plus the AVX-512 sets this CPU has
# (/proc/cpuinfo: the 0.5B model's prefill is ~1.5x as fast with them on an AMD EPYC,
# bench/README.md), and the wheel is kept under a name that holds the version and a hash of the
# flags: a CPU without those sets asks for other flags, so it builds (and keeps) its own wheel.
#
# Environment:
#   PYTHON            the venv's python (required)
#   LLAMA_CMAKE_ARGS  CMake flags instead of this CPU's defaults (a CUDA build:
#                     "-DGGML_CUDA=on"); a new value builds a new wheel
#   WHEEL_CACHE       where built wheels are kept (default: ~/.cache/pipeline/wheels)
#   CPUINFO           where the CPU's flags are read (default: /proc/cpuinfo)
#   PRINT_ARGS=1      print the CMake flags this CPU gets and where their wheel is kept, and
#                     stop (tests/test_install.py)
set -euo pipefail

VERSION=0.3.36
: "${PYTHON:?PYTHON must name the venv python}"
if [[ "$(uname -m)" == x86_64 ]]; then
    DEFAULT_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
    flags=" $(grep -m1 '^flags' "${CPUINFO:-/proc/cpuinfo}" 2>/dev/null | cut -d: -f2 || true) "
    has() { local f; for f in "$@"; do [[ "$flags" == *" $f "* ]] || return 1; done; }
    # GGML_AVX512 compiles with -mavx512f -mavx512cd -mavx512vl -mavx512dq -mavx512bw
    if has avx512f avx512cd avx512vl avx512dq avx512bw; then
        DEFAULT_ARGS+=" -DGGML_AVX512=ON"
        has avx512vbmi && DEFAULT_ARGS+=" -DGGML_AVX512_VBMI=ON"
        has avx512_vnni && DEFAULT_ARGS+=" -DGGML_AVX512_VNNI=ON"
        has avx512_bf16 && DEFAULT_ARGS+=" -DGGML_AVX512_BF16=ON"
    else
        DEFAULT_ARGS+=" -DGGML_AVX512=OFF"
    fi
    DEFAULT_ARGS+=" -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
else
    DEFAULT_ARGS="-DGGML_NATIVE=ON"
fi
ARGS="${LLAMA_CMAKE_ARGS:-$DEFAULT_ARGS}"
KEY=$(printf '%s %s' "$VERSION" "$ARGS" | sha256sum | cut -c1-12)
DIR="${WHEEL_CACHE:-$HOME/.cache/pipeline/wheels}/llama-cpp-python-$VERSION-$KEY"
if [[ "${PRINT_ARGS:-}" == 1 ]]; then
    printf '%s\n%s\n' "$ARGS" "$DIR"
    exit 0
fi

if "$PYTHON" - "$VERSION" "$DIR" <<'PY'
import json, sys
from importlib import metadata
try:
    dist = metadata.distribution("llama_cpp_python")
except metadata.PackageNotFoundError:
    sys.exit(1)
origin = dist.read_text("direct_url.json") or "{}"
sys.exit(0 if dist.version == sys.argv[1] and sys.argv[2] in json.loads(origin).get("url", "") else 1)
PY
then
    exit 0  # this build is the one installed
fi

if ! ls "$DIR"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    echo "building llama-cpp-python $VERSION ($ARGS): about 5 minutes on 2 cores, once"
    mkdir -p "$DIR.tmp"
    LOG="$DIR.tmp/build.log"
    # The whole build log goes to $LOG; the terminal gets the build's progress (its [n/total]
    # steps) every 5%, and the log's tail when the build fails.
    if ! CMAKE_ARGS="$ARGS" "$PYTHON" -m pip wheel -v --disable-pip-version-check --no-cache-dir \
        --no-deps --no-binary llama-cpp-python -w "$DIR.tmp" "llama-cpp-python==$VERSION" 2>&1 |
        tee "$LOG" | awk '
            /^ *\[ *[0-9]+\/[0-9]+\]/ { s = $0; sub(/^ *\[ */, "", s); split(s, n, /[\/\]]/)
                                         if (n[2] > 0) pct = int(100 * n[1] / n[2]) }
            /^ *\[ *[0-9]+%\]/ { s = $0; sub(/^ *\[ */, "", s); pct = s + 0 }
            pct >= shown + 5 || (pct == 100 && shown < 100) {
                shown = pct; printf "  building llama.cpp: %d%%\n", pct; fflush() }
            BEGIN { shown = -5; pct = -1 }'; then
        tail -n 40 "$LOG" >&2
        echo "error: building llama-cpp-python failed (the whole log: $LOG)" >&2
        exit 1
    fi
    rm -rf "$DIR" && mv "$DIR.tmp" "$DIR"
fi
"$PYTHON" -m pip install --disable-pip-version-check --force-reinstall --no-deps "$DIR"/llama_cpp_python-*.whl
"$PYTHON" -m pip install --disable-pip-version-check "$(ls "$DIR"/llama_cpp_python-*.whl)"
