"""A waterfall chart of a median turn per mode: one row per stage, bars from the end of speech."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .readout import STAGE_LABELS, STAGES

# What each stage waits for: its solid segment starts at the latest of these that came before it.
_AFTER = {
    "vad_stop": (),
    "stt_final": ("vad_stop",),  # the final pass starts at speech-stop (at commit: sequential)
    "turn_commit": ("vad_stop",),
    "response_start": ("stt_final", "turn_commit"),  # preemptive: the final alone
    "llm_first_token": ("response_start",),
    "first_chunk": ("llm_first_token",),
    "tts_first_audio": ("first_chunk",),
    "first_audio_out": ("tts_first_audio", "turn_commit"),  # held audio waits for commit
}
_COLORS = {"sequential": "#9e9e9e", "streaming": "#1f77b4", "streaming+preemptive": "#2ca02c"}


def plot_waterfall(summary: Mapping[str, Any], modes: Sequence[str], path: Path, *,
                   title: str = "") -> Path:
    """Per mode, each stage's median time after the end of speech: a pale bar from 0 (what the
    caller waits) and a solid segment from what the stage waited for (`_AFTER`) to its end."""
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    per_mode = summary["per_mode"]
    rows = [s for s in STAGES if any(per_mode.get(m, {}).get(s, {}).get("median") is not None
                                     for m in modes)]
    fig, axes = plt.subplots(len(modes), 1, sharex=True, squeeze=False,
                             figsize=(9, 1.2 + 0.42 * len(rows) * len(modes)))
    for ax, mode in zip(axes[:, 0], modes, strict=True):
        color = _COLORS.get(mode, "#ff7f0e")
        stats = per_mode.get(mode, {})
        n = max((stats.get(s, {}).get("n", 0) for s in rows), default=0)
        medians = {s: stats.get(s, {}).get("median") for s in rows}
        for i, stage in enumerate(rows):
            value = medians[stage]
            if value is None:
                continue
            sequential_stt = stage == "stt_final" and mode == "sequential"
            after = ("turn_commit",) if sequential_stt else _AFTER[stage]
            before = [v for s in after if (v := medians.get(s)) is not None and v <= value]
            start = max(before, default=min(0.0, value))
            ax.barh(i, value, color=color, alpha=0.25, height=0.7)
            ax.barh(i, value - start, left=start, color=color, height=0.7)
            ax.text(max(value, 0) + 8, i, f"{value:.0f} ms", va="center", fontsize=8)
        commit = stats.get("turn_commit", {}).get("median")
        if commit is not None:
            ax.axvline(commit, color="black", linestyle=":", linewidth=0.8)
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_yticks(range(len(rows)), [STAGE_LABELS[s] for s in rows], fontsize=8)
        ax.invert_yaxis()
        ax.set_title(f"{mode} (median of {n} turns; dotted: turn commit)", fontsize=9, loc="left")
        ax.grid(axis="x", alpha=0.3)
    axes[-1, 0].set_xlabel("ms after the end of speech (real clock)")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
