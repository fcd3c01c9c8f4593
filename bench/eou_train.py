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
`--pool k` averages the last k tokens' states, `--hidden n` puts a tanh layer of n units before
the logistic output; `--compare` prints every such variant's held-out errors (on Qwen, 647
lines: the last token alone with logistic regression 0.170, an MLP of 32 0.192, the mean of
the last 2 or 3 tokens 0.23-0.30), so the shipped heads keep the last token and logistic
regression. The hidden states are kept under bench/.cache/eou/ by model and lines file.

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
L2_GRID = (1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0, 10000.0)
POOL_MAX = 3  # hidden states kept per example: the last three tokens'
POOL = 1  # the shipped heads: the last token's state alone (--compare: bench/results)
HIDDEN = 0  # and logistic regression
CACHE = Path(__file__).resolve().parent / ".cache" / "eou"
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


def features(hidden: object, items: list[Example], progress: bool = True, last: int = POOL_MAX) -> np.ndarray:
    """Hidden states at each example's last `last` tokens, (examples, last, size), the last
    token last; a line's cuts share one decode where their tokens are a prefix of the whole
    line's (they nearly always are)."""
    from pipeline.stages.eou_head import chat_prompt

    def at(n: int) -> list[int]:  # the last `last` positions of an n-token prompt
        return [max(0, n - last + i) for i in range(last)]

    rows: dict[int, np.ndarray] = {}
    by_line: dict[tuple[int, tuple[tuple[str, str], ...]], list[int]] = {}
    for j, ex in enumerate(items):
        by_line.setdefault((ex.line, ex.context), []).append(j)
    for n, ((_, context), idx) in enumerate(by_line.items(), 1):
        toks = {j: hidden.tokens(chat_prompt(items[j].text, context)) for j in idx}  # type: ignore[attr-defined]
        longest = max(idx, key=lambda j: len(toks[j]))
        full = toks[longest]
        shared = [j for j in idx if full[:len(toks[j])] == toks[j]]
        states = hidden.states(full, [p for j in shared for p in at(len(toks[j]))])  # type: ignore[attr-defined]
        rows.update(zip(shared, states.reshape(len(shared), last, -1), strict=True))
        for j in idx:
            if j not in rows:
                rows[j] = hidden.states(toks[j], at(len(toks[j])))  # type: ignore[attr-defined]
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


def pooled(x: np.ndarray, pool: int) -> np.ndarray:
    """The mean of the last `pool` tokens' states, from `features`' (examples, last, size)."""
    return x[:, -pool:, :].mean(axis=1)


def fit_mlp(x: np.ndarray, y: np.ndarray, hidden: int, l2: float, *, epochs: int = 300,
            seed: int = SEED) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """One tanh layer of `hidden` units, then logistic; full-batch Adam on the class-weighted
    log loss plus l2 * |W|^2 / n (standardised x). (W1, b1, w2, b2)."""
    rng = np.random.default_rng(seed)
    n, d = x.shape
    sw = np.where(y == 1, 0.5 / max(1, y.sum()), 0.5 / max(1, (1 - y).sum()))
    params = [rng.normal(0, 1 / np.sqrt(d), (d, hidden)), np.zeros(hidden),
              rng.normal(0, 1 / np.sqrt(hidden), hidden), np.zeros(1)]
    m = [np.zeros_like(q) for q in params]
    v = [np.zeros_like(q) for q in params]
    lr, b1, b2 = 3e-3, 0.9, 0.999
    for t in range(1, epochs + 1):
        w1, c1, w2, c2 = params
        h = np.tanh(x @ w1 + c1)
        p = 1.0 / (1.0 + np.exp(-np.clip(h @ w2 + c2[0], -50, 50)))
        g = sw * (p - y)
        gh = np.outer(g, w2) * (1 - h * h)
        grads = [x.T @ gh + 2 * l2 / n * w1, gh.sum(0), h.T @ g + 2 * l2 / n * w2, np.array([g.sum()])]
        for k, gk in enumerate(grads):
            m[k] = b1 * m[k] + (1 - b1) * gk
            v[k] = b2 * v[k] + (1 - b2) * gk * gk
            params[k] = params[k] - lr * (m[k] / (1 - b1 ** t)) / (np.sqrt(v[k] / (1 - b2 ** t)) + 1e-8)
    w1, c1, w2, c2 = params
    return w1, c1, w2, float(c2[0])


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -50, 50)))


def fit_head(z: np.ndarray, y: np.ndarray, hidden: int, l2: float) -> dict[str, object]:
    """A head's arrays on standardised features: logistic (hidden 0) or the MLP."""
    if hidden:
        w1, c1, w2, c2 = fit_mlp(z, y, hidden, l2)
        return {"hidden_weights": w1, "hidden_bias": c1, "weights": w2, "bias": c2}
    w, b = fit(z, y, l2)
    return {"weights": w, "bias": b}


def head_logit(arrays: dict[str, object], z: np.ndarray) -> np.ndarray:
    h = z if "hidden_weights" not in arrays else np.tanh(z @ arrays["hidden_weights"] + arrays["hidden_bias"])  # type: ignore[operator]
    return h @ arrays["weights"] + arrays["bias"]  # type: ignore[operator]


def held_out_scores(x: np.ndarray, y: np.ndarray, held: np.ndarray, pool: int, hidden: int,
                    grid: tuple[float, ...]) -> dict[float, dict[str, float]]:
    """Per L2 weight: the errors on the held-out lines of a head fitted on the others."""
    f = pooled(x, pool)
    mean, scale = f[~held].mean(axis=0), f[~held].std(axis=0) + 1e-6
    z = (f - mean) / scale
    out = {}
    for l2 in grid:
        arrays = fit_head(z[~held], y[~held], hidden, l2)
        err = balanced_error(_sigmoid(head_logit(arrays, z[held])), y[held])
        out[l2] = err | {"errors": err["complete_below"] + err["cut_at_or_above"]}
    return out


MLP_GRID = (1.0, 10.0, 100.0, 1000.0)


def cached_features(hidden: object, items: list[Example], lines_file: Path, name: str) -> np.ndarray:
    """`features`, kept under bench/.cache/eou/ by model, lines file and recipe."""
    key = hashlib.sha256(repr((name, lines_file.read_bytes(), SEED, POOL_MAX, len(items))).encode()).hexdigest()[:16]
    path = CACHE / f"{name}-{key}.npy"
    if path.is_file():
        return np.load(path)
    x = features(hidden, items)
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, x.astype(np.float32))
    return x


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
    parser.add_argument("--pool", type=int, default=POOL, choices=range(1, POOL_MAX + 1),
                        help="average the hidden states of the last this many tokens")
    parser.add_argument("--hidden", type=int, default=HIDDEN,
                        help="units of a tanh layer before the logistic output (0: logistic regression)")
    parser.add_argument("--compare", action="store_true", help="print the held-out errors of every "
                        "pooling and head (logistic, MLP 32) and write no head")
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
    x = cached_features(hidden, items, args.lines, f"{name}-every{args.every}")
    y = np.array([float(ex.complete) for ex in items])
    held = np.array([ex.line % 5 == 0 for ex in items])
    if args.compare:
        for pool in range(1, POOL_MAX + 1):
            for units, grid in ((0, L2_GRID), (32, MLP_GRID)):
                sc = held_out_scores(x, y, held, pool, units, grid)
                best = min(grid, key=lambda v: (sc[v]["errors"], -v))
                print(f"pool {pool}, hidden {units}: L2 {best}: " + ", ".join(
                    f"{k} {v:.3f}" for k, v in sc[best].items()), flush=True)
        return 0
    grid = MLP_GRID if args.hidden else L2_GRID
    scores = held_out_scores(x, y, held, args.pool, args.hidden, grid)
    l2 = min(grid, key=lambda v: (scores[v]["errors"], -v))
    f = pooled(x, args.pool)
    mean, scale = f.mean(axis=0), f.std(axis=0) + 1e-6
    z = (f - mean) / scale
    arrays = fit_head(z, y, args.hidden, l2)
    check = np.stack([hidden.pooled(chat_prompt(t), args.pool) for t in CHECK])
    train = balanced_error(_sigmoid(head_logit(arrays, z)), y)
    info = {"gguf": hidden.path.name, "lines_sha256": hashlib.sha256(args.lines.read_bytes()).hexdigest(),
            "lines": len(lines), "examples": len(items), "complete": int(y.sum()),
            "cut": int(len(y) - y.sum()), "l2": l2, "held_out_by_l2": {str(k): v for k, v in scores.items()},
            "pool": args.pool, "hidden": args.hidden,
            "train": train, "check": list(CHECK), "seconds": round(perf_s() - t0, 1),
            "command": "python -m bench.eou_train " + " ".join(argv if argv is not None else sys.argv[1:])}
    head = EouHead(model=name, mean=mean, scale=scale, weights=np.asarray(arrays["weights"]),
                   bias=float(arrays["bias"]), info=info, check=check,  # type: ignore[arg-type]
                   hidden_weights=arrays.get("hidden_weights"), hidden_bias=arrays.get("hidden_bias"))  # type: ignore[arg-type]
    out = args.out or head_file(name)
    head.save(out)
    pc = head.probability(check)
    print(f"{name}: {len(lines)} lines, {len(items)} examples ({info['complete']} complete); pool "
          f"{args.pool}, hidden {args.hidden}, L2 {l2}; held out (a fifth of the lines): {scores[l2]}; "
          f"check {pc[0]:.3f} > {pc[1]:.3f}; {info['seconds']} s -> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
