#!/usr/bin/env bash
# Run the test command under the ways machines differ, one variation after another, and say
# which variation failed what. A test that passes on one machine and fails here is
# machine-dependent: its assertion is one machine's floats or one machine's timing.
#
#   one-thread    every model on 1 thread (PIPELINE_THREADS=1)
#   two-threads   every model on 2 threads (PIPELINE_THREADS=2)
#   busy-core     the other core kept busy by a bounded load beside the suite
#   avx2-kernels  the kernels an AVX2-only CPU runs (most AMD EPYC): CTranslate2 and MKL held
#                 to AVX2, numpy without its AVX-512 loops, OpenBLAS on Haswell kernels,
#                 onnxruntime with basic graph optimisation (other fused kernels)
#
# Usage: scripts/test_shake.sh [VARIATION ...]   (default: all four)
# Environment: PYTEST_ARGS is passed on to `make test` (for example "-m 'not slow'").
# Logs go to out/shake/VARIATION.log; a summary table to out/shake/summary.md.
set -uo pipefail
cd "$(dirname "$0")/.."

ALL=(one-thread two-threads busy-core avx2-kernels)
VARIATIONS=("$@")
((${#VARIATIONS[@]})) || VARIATIONS=("${ALL[@]}")
OUT=out/shake
mkdir -p "$OUT"
LOAD_PID=""

stop_load() {
    if [[ -n "$LOAD_PID" ]]; then
        kill "$LOAD_PID" 2>/dev/null
        wait "$LOAD_PID" 2>/dev/null
        LOAD_PID=""
    fi
}
trap stop_load EXIT

# A bounded CPU load: one busy process on the last core, ended when the variation ends and in
# any case after two hours.
start_load() {
    local core
    core=$(($(nproc) - 1))
    timeout 7200 taskset -c "$core" python3 -c 'while True: pass' &
    LOAD_PID=$!
}

run_one() {
    local name=$1
    local -a env_args=()
    case "$name" in
        one-thread) env_args=(PIPELINE_THREADS=1) ;;
        two-threads) env_args=(PIPELINE_THREADS=2) ;;
        busy-core) start_load ;;
        avx2-kernels)
            env_args=(CT2_FORCE_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2 OPENBLAS_CORETYPE=Haswell
                      "NPY_DISABLE_CPU_FEATURES=X86_V4 AVX512_ICL AVX512_SPR"
                      PIPELINE_ONNX_OPTIMIZATION=basic)
            ;;
        *)
            echo "unknown variation: $name (use: ${ALL[*]})" >&2
            return 2
            ;;
    esac
    local start end rc
    start=$(date +%s)
    env "${env_args[@]}" make test PYTEST_ARGS="${PYTEST_ARGS:-}" >"$OUT/$name.log" 2>&1
    rc=$?
    end=$(date +%s)
    stop_load
    local result
    result=$(grep -E '^(=+ )?[0-9]+ (passed|failed)' "$OUT/$name.log" | tail -1 | sed 's/=//g')
    printf '| %s | %s | %s | %d min %02d s |\n' "$name" "$([[ $rc == 0 ]] && echo pass || echo FAIL)" \
        "${result:-no summary}" $(((end - start) / 60)) $(((end - start) % 60)) | tee -a "$OUT/summary.md"
    grep -E '^FAILED|^ERROR' "$OUT/$name.log" | sed 's/^/    /'
    return $rc
}

{
    echo
    echo "## $(date -u '+%Y-%m-%d %H:%M UTC') on $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo
    echo "| variation | result | pytest | time |"
    echo "|---|---|---|---|"
} >>"$OUT/summary.md"
tail -4 "$OUT/summary.md"

failed=0
for name in "${VARIATIONS[@]}"; do
    run_one "$name" || failed=1
done
exit $failed
