"""Train the end-of-utterance head for an embedded model (`pipeline.stages.eou_head`).

Data (bench/eou_lines.txt, written for this; nothing from an evaluation set):
- every caller line is a finished turn (a positive);
- the same line cut after every word is a mid-utterance stop (a negative), unless the cut falls
  where a sentence ends in the written line (after . ? ! or at a "|" mark): that prefix is a
  finished turn too, and counts as a positive;
- one more negative a line of three words or more: the line cut after a seeded word, with a
  filler ("um", "uh") after it, since callers pause on fillers;
- half the lines (seeded) are read after a context turn, an "agent:" line, as the session
  passes the agent's last words; the other half with none.

Features: the model's final hidden state at the last token of each (open) user message
(`eou_head.chat_prompt`); a line and all its cuts come from one decode. Head: standardised
features, L2 logistic regression by Newton's method, the two classes weighted equally; the L2
weight is chosen on a fifth of the lines held out (by line), then the head is fitted on all.

    python -m bench.eou_train --model qwen            # pipeline/stages/eou_heads/qwen2.5-coder-0.5b.npz
    python -m bench.eou_train --model smollm2
"""

from __future__ import annotations

import argparse
import hashlib
import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.base.clock import perf_s

LINES = Path(__file__).resolve().parent / "eou_lines.txt"
SHORT = {"qwen": "qwen2.5-coder-0.5b", "smollm2": "smollm2-135m"}
FILLERS = ("um", "uh")
SEED = 7
L2_GRID = (1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0)
_END = re.compile(r"[.?!]$")
# a model-free check kept in the head file: written for it, in no line and no evaluation set
CHECK = ("could you tell me when the library opens tomorrow", "could you tell me when the")


@dataclass
class Example:
    line: int  # index of the caller line it comes from (for the held-out split)
    context: tuple[tuple[str, str], ...]
    text: str
    complete: bool


def read_lines(path: Path = LINES) -> tuple[list[str], list[str]]:
    """(caller lines, agent lines) of the lines file."""
    lines, agent = [], []
    for raw in path.read_text(encoding="utf-8").splitlines():
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        if s.startswith("agent:"):
            agent.append(s.removeprefix("agent:").strip())
        else:
            lines.append(s)
    return lines, agent


def cuts(line: str) -> list[tuple[str, bool]]:
    """(prefix, complete) for the line cut after every word, the whole line last."""
    words = line.split()
    out: list[tuple[str, bool]] = []
    for k, word in enumerate(words):
        if word == "|":
            continue
        following = words[k + 1] if k + 1 < len(words) else None
        complete = following is None or following == "|" or bool(_END.search(word))
        out.append((" ".join(w for w in words[:k + 1] if w != "|"), complete))
    return out


def examples(lines: list[str], agent: list[str], seed: int = SEED) -> list[Example]:
    rng = random.Random(seed)
    out: list[Example] = []
    for i, line in enumerate(lines):
        context = (("assistant", rng.choice(agent)),) if agent and rng.random() < 0.5 else ()
        out += [Example(i, context, text, complete) for text, complete in cuts(line)]
        words = [w for w in line.split() if w != "|"]
        if len(words) >= 3:
            k = rng.randrange(1, len(words) - 1)
            out.append(Example(i, context, " ".join(words[:k]) + ", " + rng.choice(FILLERS) + ",", False))
    return out


def features(hidden: object, items: list[Example], progress: bool = True) -> np.ndarray:
    """Hidden states, one row per example; a line's cuts share one decode where their tokens
    are a prefix of the whole line's (they nearly always are)."""
    from pipeline.stages.eou_head import chat_prompt

    rows: dict[int, np.ndarray] = {}
    by_line: dict[tuple[int, tuple[tuple[str, str], ...]], list[int]] = {}
    for j, ex in enumerate(items):
        by_line.setdefault((ex.line, ex.context), []).append(j)
    for n, ((_, context), idx) in enumerate(by_line.items(), 1):
        toks = {j: hidden.tokens(chat_prompt(items[j].text, context)) for j in idx}  # type: ignore[attr-defined]
        longest = max(idx, key=lambda j: len(toks[j]))
        full = toks[longest]
        shared = [j for j in idx if full[:len(toks[j])] == toks[j]]
        states = hidden.states(full, [len(toks[j]) - 1 for j in shared])  # type: ignore[attr-defined]
        rows.update(zip(shared, states, strict=True))
        for j in idx:
            if j not in rows:
                rows[j] = hidden.states(toks[j], [len(toks[j]) - 1])[0]  # type: ignore[attr-defined]
        if progress and n % 10 == 0:
            print(f"features: {n}/{len(by_line)} lines", file=sys.stderr, flush=True)
    return np.stack([rows[j] for j in range(len(items))])


def fit(x: np.ndarray, y: np.ndarray, l2: float, iters: int = 30) -> tuple[np.ndarray, float]:
    """L2 logistic regression on standardised x, classes weighted equally (Newton's method)."""
    n, d = x.shape
    sw = np.where(y == 1, 0.5 / max(1, y.sum()), 0.5 / max(1, (1 - y).sum())) * n
    xa = np.hstack([x, np.ones((n, 1))])
    w = np.zeros(d + 1)
    reg = np.full(d + 1, l2)
    reg[-1] = 0.0  # the bias is not shrunk
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-np.clip(xa @ w, -50, 50)))
        grad = xa.T @ (sw * (p - y)) + reg * w
        hess = (xa * (sw * p * (1 - p))[:, None]).T @ xa + np.diag(reg) + 1e-9 * np.eye(d + 1)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-7:
            break
    return w[:-1], float(w[-1])


def balanced_error(p: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Shares of complete lines scored below 0.5 and of cut lines scored at or above it."""
    return {"complete_below": float(np.mean(p[y == 1] < 0.5)),
            "cut_at_or_above": float(np.mean(p[y == 0] >= 0.5))}


def main(argv: list[str] | None = None) -> int:
    from pipeline.stages.eou_head import EouHead, HiddenState, chat_prompt, head_file

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(SHORT), help="the embedded model")
    parser.add_argument("--model-path", help="or any ChatML instruct GGUF (then give --out)")
    parser.add_argument("--lines", type=Path, default=LINES, help="the caller lines file")
    parser.add_argument("--out", type=Path, help="head file (default: the shipped one)")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--every", type=int, default=1,
                        help="use every k-th caller line only (a slow machine; the file records it)")
    args = parser.parse_args(argv)
    if not args.model and not (args.model_path and args.out):
        parser.error("give --model, or --model-path and --out")
    name = SHORT[args.model] if args.model else Path(args.model_path).stem
    t0 = perf_s()
    lines, agent = read_lines(args.lines)
    lines = lines[::max(1, args.every)]
    items = examples(lines, agent)
    hidden = HiddenState(model=name if args.model else None, model_path=args.model_path,
                         threads=args.threads)
    x = features(hidden, items)
    y = np.array([float(ex.complete) for ex in items])
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    z = (x - mean) / scale
    held = np.array([ex.line % 5 == 0 for ex in items])
    scores = {}
    for l2 in L2_GRID:
        w, b = fit(z[~held], y[~held], l2)
        p = 1.0 / (1.0 + np.exp(-np.clip(z[held] @ w + b, -50, 50)))
        err = balanced_error(p, y[held])
        scores[l2] = err | {"errors": err["complete_below"] + err["cut_at_or_above"]}
    l2 = min(L2_GRID, key=lambda v: (scores[v]["errors"], -v))
    w, b = fit(z, y, l2)
    check = np.stack([hidden.last(chat_prompt(t)) for t in CHECK])
    train = balanced_error(1.0 / (1.0 + np.exp(-np.clip(z @ w + b, -50, 50))), y)
    info = {"gguf": hidden.path.name, "lines_sha256": hashlib.sha256(args.lines.read_bytes()).hexdigest(),
            "lines": len(lines), "examples": len(items), "complete": int(y.sum()),
            "cut": int(len(y) - y.sum()), "l2": l2, "held_out_by_l2": {str(k): v for k, v in scores.items()},
            "train": train, "check": list(CHECK), "seconds": round(perf_s() - t0, 1),
            "command": "python -m bench.eou_train " + " ".join(argv if argv is not None else sys.argv[1:])}
    head = EouHead(model=name, mean=mean, scale=scale, weights=w, bias=b, info=info,
                   check=check)
    out = args.out or head_file(name)
    head.save(out)
    pc = head.probability(check)
    print(f"{name}: {len(lines)} lines, {len(items)} examples ({info['complete']} complete); L2 {l2}; "
          f"held out (a fifth of the lines): {scores[l2]}; check {pc[0]:.3f} > {pc[1]:.3f}; "
          f"{info['seconds']} s -> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
