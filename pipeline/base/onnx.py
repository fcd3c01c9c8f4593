"""One way to open an ONNX model on onnxruntime's CPU provider (Silero VAD, Smart Turn).

PIPELINE_ONNX_OPTIMIZATION (disable | basic | extended | all, default all) sets onnxruntime's
graph optimisation level, which decides which fused kernels run: a way to check that a result
does not hang on one kernel choice (`make test-shake` runs the suite with "basic").

onnxruntime's intra-op workers do not spin waiting for work: spinning, they hold a core after
each run, which the LLM decoding beside Piper needs (Piper's first chunk beside the LLM's decode
102 ms against 122 spinning, the same alone: bench/README.md, "The stage budget").
PIPELINE_ONNX_SPINNING=1 lets them spin again."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .errors import ModelMissingError
from .models import model_file


def cpu_session(model_path: str | Path, what: str, *, threads: int, arena: bool = True) -> Any:
    """An onnxruntime session on `threads` intra-op threads; ModelMissingError (with the
    download hint) when the file is not there.

    `arena=False` turns off onnxruntime's CPU memory arena: the arena keeps every block it ever
    grew to and never gives it back, which for a model whose shapes vary with its input (Piper:
    one sentence's length) holds the largest sentence's buffers for the life of the process."""
    import onnxruntime as ort

    path = model_file(model_path)
    if not path.is_file():
        raise ModelMissingError(path, what)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1  # one model at a time: a second pool would only contend
    opts.log_severity_level = 3  # warnings about unused initialisers are not the user's business
    opts.graph_optimization_level = _optimization_level(ort)
    opts.enable_cpu_mem_arena = arena
    opts.add_session_config_entry("session.intra_op.allow_spinning", _spinning())
    return ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"])


def _spinning() -> str:
    value = os.environ.get("PIPELINE_ONNX_SPINNING", "0").strip() or "0"
    if value not in ("0", "1"):
        raise ValueError(f"PIPELINE_ONNX_SPINNING must be 0 or 1, got {value!r}")
    return value


def _optimization_level(ort: Any) -> Any:
    levels = {"disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
              "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
              "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
              "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}
    name = os.environ.get("PIPELINE_ONNX_OPTIMIZATION", "all").strip().lower() or "all"
    if name not in levels:
        raise ValueError(f"PIPELINE_ONNX_OPTIMIZATION must be one of {', '.join(levels)}, "
                         f"got {name!r}")
    return levels[name]
