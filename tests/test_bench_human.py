"""The recorded-people set (`bench.human_speech`, `bench.human_turns`): its pins, labels, pause
finding and judgement, without the network or a model."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

import numpy as np
import pytest

from bench import human_speech as hs
from bench.human_turns import render, summarise


class Windows:
    """A VAD that answers from a script of speech (1) and silence (0), one 32 ms window each."""

    window_samples = 512

    def __init__(self, script: str) -> None:
        self.script = script
        self.k = 0

    def reset(self) -> None:
        self.k = 0

    def probability(self, window: np.ndarray) -> float:
        p = 1.0 if self.k < len(self.script) and self.script[self.k] == "1" else 0.0
        self.k += 1
        return p


def test_every_label_is_of_a_pinned_recording_in_order_and_of_a_known_kind() -> None:
    labels = hs.labels()
    names = {r.name for r in hs.RECORDINGS} | {"jfk"}
    assert set(labels) == names
    for name, marks in labels.items():
        ats = [m["at"] for m in marks]
        assert ats == sorted(ats), name
        assert all(m["label"] in ("mid", "end", "last") for m in marks), name
        assert sum(m["label"] == "last" for m in marks) <= 1, name
        assert all(m["before"] for m in marks), name
    kinds = [m["label"] for marks in labels.values() for m in marks]
    assert kinds.count("mid") >= 25 and kinds.count("end") + kinds.count("last") >= 20
    for rec in hs.RECORDINGS:
        assert len(rec.archive_sha256) == 64 and len(rec.sha256) == 64
        assert rec.member.startswith(rec.archive.removesuffix(".tar.gz") + "/")


def test_a_pause_needs_a_quarter_second_and_a_blip_inside_it_does_not_end_it() -> None:
    x = np.zeros(512 * 40, np.float32)
    # speech 5 windows, silence 10 (320 ms), a 2-window blip, silence 6, speech 5, silence 3, speech 4
    script = "11111" + "0" * 10 + "11" + "0" * 6 + "11111" + "000" + "1111"
    found, last = hs.pauses(x, Windows(script))
    assert len(found) == 1  # the 96 ms gap before the last run is too short to count
    start, length = found[0]
    assert start == pytest.approx(5 * 0.032) and length == pytest.approx(18 * 0.032)
    assert last == pytest.approx(len(script) * 0.032)


def _tar_with(member: str, data: bytes) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        info = tarfile.TarInfo(member)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def test_a_recording_is_taken_from_its_cached_archive_and_checked(tmp_path: Path, monkeypatch) -> None:
    wav, member = b"RIFF....WAVEfake", "pkg-1.0/tests/a.wav"
    archive = _tar_with(member, wav)
    monkeypatch.setattr(hs, "HUMAN_CACHE", tmp_path)
    (tmp_path / "archives").mkdir()
    (tmp_path / "archives" / "pkg-1.0.tar.gz").write_bytes(archive)

    def rec(member_sha: str) -> hs.Recording:
        return hs.Recording("a", "pkg", "1.0", "pkg-1.0.tar.gz", hashlib.sha256(archive).hexdigest(),
                            member, member_sha, "MIT", "a test")

    good = rec(hashlib.sha256(wav).hexdigest())
    assert hs.fetch(good).read_bytes() == wav
    good.path.unlink()
    with pytest.raises(SystemExit, match="is not the pinned"):
        hs.fetch(rec("0" * 64))


def _row(name: str, kind: str, ended: bool) -> dict:
    return {"name": name, "kind": kind, "said": "words", "transcript": "words",
            "sig": {"p": 0.9 if ended else 0.1, "ended": "min_silence" if ended else "max_silence"}}


def test_the_judgement_counts_cut_offs_on_mid_pauses_and_waits_on_finished_sentences() -> None:
    rows = [_row("lecture/1@2.02", "mid", True), _row("lecture/2@4.64", "mid", False),
            _row("lecture/3@6.85", "end", False), _row("sonnet/16@52.22", "last", True),
            _row("novel-0870/1@6.88", "last", False), {"name": "meeting/1@1.73", "kind": "mid",
                                                         "said": "x", "no_speech": True}]
    summary = summarise(rows, ["sig"])["sig"]
    # the lecture's first two pauses last 672 and 352 ms: only the first is long enough to end a turn
    assert summary["all"] == {"mid": 2, "cut_off": 0.5, "finished": 3, "waited": 2 / 3,
                              "last": 2, "waited_last": 0.5, "cut_off_as_paused": 0.5}
    shorter = summarise(rows, ["sig"], {"min_silence_ms": 700, "max_silence_ms": 1500})["sig"]
    assert shorter["all"]["cut_off_as_paused"] == 0.0
    longest = [_row("meeting/2@6.62", "mid", False)]  # 1728 ms: over max_silence_ms, it ends the turn
    assert summarise(longest, ["sig"])["sig"]["all"]["cut_off_as_paused"] == 1.0
    assert summary["spontaneous"]["mid"] == 2 and summary["read aloud"]["last"] == 2
    assert summary["novel"]["waited_last"] == 1.0 and summary["meeting"]["mid"] == 0
    text = render({"signals": ["sig"], "summary": summarise(rows, ["sig"]), "clips": rows,
                   "machine": {"date": "2026-12-06", "cpu": "x", "cores": 2, "cores_usable": 2,
                               "ram_gib": 1, "os": "y", "python": "3"}, "command": "c",
                   "load_average": {"start": [0, 0, 0], "end": [0, 0, 0]},
                   "policy": {"complete_threshold": 0.5, "min_silence_ms": 600, "max_silence_ms": 1500}})
    assert "| sig | 50% / 67% / 50% |" in text and "(no speech found)" in text


def test_the_labels_file_says_how_it_was_made() -> None:
    doc = json.loads(hs.LABELS.read_text(encoding="utf-8"))
    assert "before any end-of-turn signal was scored" in doc["about"]


def test_a_recording_replayed_as_a_call_ends_a_turn_only_where_its_pause_lets_it() -> None:
    from bench.human_turns import replay

    policy = {"min_silence_ms": 600, "max_silence_ms": 1500}
    rows = [_row("lecture/4@13.28", "mid", True),  # 288 ms: too short to end anything
            _row("lecture/8@19.58", "mid", True),  # 768 ms and "finished": cut off
            _row("lecture/10@38.91", "mid", False),  # 992 ms, not finished: the turn goes on
            _row("jfk/4@10.53", "last", False)]  # the last words wait the long silence
    fixed = replay(rows, "sig", policy, learn=False)
    assert fixed == {"mid": 3, "cut": 1, "cut_off": 1 / 3, "last_wait_ms": 1500}
    # learned: the 992 ms pause the speaker went on after lengthens the waits of the turn after the
    # next one that ends (2112 ms); a 768 ms pause there no longer ends it (waits are set per turn)
    call = [_row("lecture/10@38.91", "mid", False), _row("lecture/13@46.75", "end", False),
            _row("lecture/8@19.58", "mid", True)]
    assert replay(call, "sig", policy, learn=False)["cut_off"] == 0.5
    assert replay(call, "sig", policy, learn=True)["cut_off"] == 0.0
