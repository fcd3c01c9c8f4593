"""One way to open an ONNX model on onnxruntime's CPU provider (Silero VAD, Smart Turn)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .errors import ModelMissingError


def cpu_session(model_path: str | Path, what: str, *, threads: int) -> Any:
    """An onnxruntime session on `threads` intra-op threads; ModelMissingError (with the
    download hint) when the file is not there."""
    import onnxruntime as ort

    path = Path(model_path)
    if not path.is_file():
        raise ModelMissingError(path, what)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1  # one model at a time: a second pool would only contend
    opts.log_severity_level = 3  # warnings about unused initialisers are not the user's business
    return ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"])
