"""The llama.cpp build's CPU flags (scripts/install_llama.sh): the AVX-512 sets a CPU has, never
AMX, and a wheel kept per set of flags, so a CPU without them never gets a wheel built with them."""

from __future__ import annotations

import os
import platform
import subprocess

import pytest

from .conftest import ROOT

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64", reason="the x86-64 flags")

EPYC_ZEN4 = "fpu sse2 avx avx2 fma f16c avx512f avx512dq avx512cd avx512bw avx512vl avx512_bf16 avx512vbmi avx512_vnni"
SKYLAKE_X = "fpu sse2 avx avx2 fma f16c avx512f avx512dq avx512cd avx512bw avx512vl"
ZEN3 = "fpu sse2 avx avx2 fma f16c"
XEON_AMX = EPYC_ZEN4 + " amx_bf16 amx_tile amx_int8"


def _printed(tmp_path, flags: str | None) -> tuple[list[str], str]:
    """The CMake flags a CPU with these cpuinfo flags gets, and where their wheel is kept."""
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\n" + (f"flags\t\t: {flags}\n" if flags is not None else ""))
    env = {k: v for k, v in os.environ.items() if k != "LLAMA_CMAKE_ARGS"}  # a user's own flags
    args, folder = subprocess.run(
        ["bash", str(ROOT / "scripts" / "install_llama.sh")], check=True, text=True, capture_output=True,
        env={**env, "PYTHON": "python3", "PRINT_ARGS": "1", "CPUINFO": str(cpuinfo),
             "WHEEL_CACHE": str(tmp_path / "wheels")}).stdout.splitlines()
    return args.split(), folder


def _args(tmp_path, flags: str | None) -> list[str]:
    out = _printed(tmp_path, flags)[0]
    assert "-DGGML_NATIVE=OFF" in out and "-DGGML_AVX2=ON" in out
    assert {"-DGGML_AMX_TILE=OFF", "-DGGML_AMX_INT8=OFF", "-DGGML_AMX_BF16=OFF"} <= set(out)
    return out


@pytest.mark.parametrize("flags, on, off", [
    (ZEN3, [], ["-DGGML_AVX512=ON"]),
    (SKYLAKE_X, ["-DGGML_AVX512=ON"], ["-DGGML_AVX512_VNNI=ON", "-DGGML_AVX512_BF16=ON"]),
    (EPYC_ZEN4, ["-DGGML_AVX512=ON", "-DGGML_AVX512_VNNI=ON", "-DGGML_AVX512_BF16=ON",
                 "-DGGML_AVX512_VBMI=ON"], []),
    (XEON_AMX, ["-DGGML_AVX512=ON"], ["-DGGML_AMX_TILE=ON"]),
])
def test_the_build_asks_for_the_sets_the_cpu_has_and_never_amx(tmp_path, flags, on, off):
    out = _args(tmp_path, flags)
    assert set(on) <= set(out) and not set(off) & set(out), out


def test_cpus_with_other_sets_keep_other_wheels(tmp_path):
    (_, avx2), (_, avx512) = _printed(tmp_path, ZEN3), _printed(tmp_path, EPYC_ZEN4)
    assert avx2 != avx512 and {avx2.rsplit("-", 1)[0], avx512.rsplit("-", 1)[0]} == {
        str(tmp_path / "wheels" / "llama-cpp-python-0.3.36")}


def test_a_cpuinfo_without_flags_gets_the_avx2_build(tmp_path):
    out = _args(tmp_path, None)
    assert "-DGGML_AVX512=OFF" in out
