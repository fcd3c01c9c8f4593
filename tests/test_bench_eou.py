"""The end-of-utterance head's data recipe and fit (`bench.eou_train`), without a model."""

from __future__ import annotations

import numpy as np

from bench.eot_set import PHRASES
from bench.eou_train import LINES, cuts, examples, fit, read_lines


def test_every_cut_is_a_negative_unless_a_sentence_ends_there():
    assert cuts("Yes, | that's right.") == [("Yes,", True), ("Yes, that's", False),
                                             ("Yes, that's right.", True)]
    assert cuts("Thanks. Bye now.") == [("Thanks.", True), ("Thanks. Bye", False),
                                        ("Thanks. Bye now.", True)]


def test_the_lines_are_many_and_none_is_from_the_evaluation_set():
    lines, agent = read_lines()
    assert len(lines) >= 300 and agent
    said = {" ".join(p.replace("|", " ").split()).lower() for _, p in PHRASES}
    assert not said & {" ".join(x.replace("|", " ").split()).lower() for x in lines}
    assert LINES.name == "eou_lines.txt"


def test_examples_are_seeded_and_have_both_classes_with_fillers():
    lines = ["I need a taxi to the airport.", "Yes, please."]
    a, b = examples(lines, ["Hello?"]), examples(lines, ["Hello?"])
    assert a == b
    assert any(e.text.endswith(("um,", "uh,")) and not e.complete for e in a)
    assert sum(e.complete for e in a) == 2 and sum(not e.complete for e in a) >= 6


def test_the_fit_separates_separable_classes_with_equal_weights():
    rng = np.random.default_rng(1)
    x = np.vstack([rng.normal(1.0, 0.3, size=(20, 3)), rng.normal(-1.0, 0.3, size=(80, 3))])
    y = np.r_[np.ones(20), np.zeros(80)]
    w, b = fit(x, y, l2=1.0)
    p = 1 / (1 + np.exp(-(x @ w + b)))
    assert (p[:20] > 0.5).all() and (p[20:] < 0.5).all()


def test_the_judgement_reads_partly_scored_heads_on_the_stored_transcripts():
    from bench.eou_eval import GROUPS, judge, load_rows

    rows = load_rows()
    texts = list(dict.fromkeys(r["transcript"] for r in rows))
    heads = {"qwen2.5-coder-0.5b": {t: 0.9 for t in texts[::3]},
             "smollm2-135m": {t: float(t.rstrip().endswith(".")) for t in texts}}
    judged = judge(rows, heads)
    jfk = "jfk.wav (real speech), all conditions"
    assert judged["heuristic (default)"][jfk]["unfinished"] == sum(
        1 for r in rows if GROUPS[jfk](r) and not r["finished"])
    assert judged["eou-head qwen"]["all synthetic"]["cut_off"] == 1.0  # scores 0.9: all end
    partial = judged["eou-head qwen"]["all synthetic"]
    assert partial["finished"] + partial["unfinished"] < sum(GROUPS["all synthetic"](r) for r in rows)


def test_the_pause_replay_with_fixed_waits_is_the_stored_judgement():
    from bench.eou_eval import judge as judge_fixed
    from bench.eou_eval import load_rows
    from bench.eou_pauses_eval import judge

    rows = [r for r in load_rows() if r["source"] != "jfk"]  # jfk.wav's pauses: a model file
    judged = judge(rows, {})
    fixed = judge_fixed(rows, {})["heuristic (default)"]["espeak-ng (held out), own pace"]
    mine = judged["heuristic (default) | fixed"]["espeak-ng (held out), all sets"]
    assert mine["unfinished"] >= fixed["unfinished"]  # all sets, not only its own pace
    own = [r for r in rows if r["source"] == "espeak" and r["set"] == "own pace"]
    again = judge(own, {})["heuristic (default) | fixed"]["espeak-ng (held out), all sets"]
    assert again["unfinished"] + again["finished"] == len(own)  # every clip replayed, once
    assert (again["cut_off"], again["waited_max"]) == (fixed["cut_off"], fixed["waited_max"])


def test_learned_waits_outlast_a_callers_repeated_pauses_and_cost_the_finished_turns_wait():
    from bench.eou_pauses_eval import replay

    hesitant = {"finished": False, "looks": False}  # a pause after "for": the signal waits
    mid = {"finished": False, "looks": True}  # a pause after words that look finished
    whole = {"finished": True, "looks": True}
    turns = [([hesitant] * 3 + [whole], [1000.0] * 3)] + [([mid, whole], [1000.0])] * 3
    looks = lambda r: r["looks"]  # noqa: E731
    fixed = replay(turns, looks, "fixed")
    learned = replay(turns, looks, "learned per turn")
    assert [o["cut_off"] for o in fixed if "cut_off" in o] == [False] * 3 + [True] * 3
    assert [o["cut_off"] for o in learned if "cut_off" in o] == [False] * 6
    assert learned[-1]["wait_ms"] > fixed[-1]["wait_ms"] == 600
    assert learned[-1]["wait_ms"] <= 1200  # the bound


def test_the_mlp_fit_separates_classes_a_line_cannot():
    from bench.eou_train import _sigmoid, fit_head, head_logit

    rng = np.random.default_rng(2)
    x = rng.normal(size=(400, 2))
    y = (x[:, 0] * x[:, 1] > 0).astype(float)  # XOR-like quadrants: no line separates them
    line = _sigmoid(head_logit(fit_head(x, y, 0, 1.0), x))
    mlp = _sigmoid(head_logit(fit_head(x, y, 16, 1.0), x))
    assert np.mean((line >= 0.5) == y) < 0.7 < 0.9 < np.mean((mlp >= 0.5) == y)


def test_the_bound_sweeps_every_threshold_and_finds_a_clean_split():
    from bench.eou_bound import bound

    rows = [{"finished": f} for f in (True, True, False, False)]
    assert bound([0.9, 0.8, 0.2, 0.1], rows) == {
        "under_target": {"cut_off": 0.0, "waited_max": 0.0}, "minmax": {"cut_off": 0.0, "waited_max": 0.0}}
    swapped = bound([0.1, 0.2, 0.8, 0.9], rows)  # a score the wrong way round
    assert swapped["under_target"] == {"cut_off": 0.0, "waited_max": 1.0}


def test_the_stored_bound_is_what_the_stored_scores_give():
    import json

    from bench.eot_rescore import RESULTS
    from bench.eou_bound import STEM, run
    from bench.eou_eval import STEM as HEADS_STEM
    from bench.eou_eval import load_rows

    heads = json.loads((RESULTS / f"{HEADS_STEM}.json").read_text(encoding="utf-8"))["heads"]
    stored = json.loads((RESULTS / f"{STEM}.json").read_text(encoding="utf-8"))
    now = run(load_rows(), heads)
    assert now["bound_on_held_out"] == stored["bound_on_held_out"]
    assert now["fitted_on_piper"].keys() == stored["fitted_on_piper"].keys()


def test_a_value_said_in_groups_holds_more_cuts_than_finished_lines_on_the_head_lines():
    """The heuristic's value rule, judged on lines it was not written from: of the caller lines,
    cut after every word, it must hold far more cuts inside a value than finished lines it makes
    wait (41 against 11 when it was written)."""
    from pipeline.turns import HeuristicCompleteness

    h = HeuristicCompleteness()
    lines, _ = read_lines()
    held = {True: 0, False: 0}
    for line in lines:
        for text, complete in cuts(line):
            if 0.3 < h.probability(text) < 0.5:
                held[complete] += 1
    assert held[False] >= 3 * held[True] > 0


def test_a_caller_cut_off_once_is_learned_from_and_not_cut_off_again_in_the_replay():
    from bench.eou_pauses_eval import replay

    mid = {"finished": False, "looks": True}  # every pause after words that look finished
    whole = {"finished": True, "looks": True}
    turns = [([mid, whole], [1000.0])] * 3
    looks = lambda r: r["looks"]  # noqa: E731
    cut = lambda mode: [o["cut_off"] for o in replay(turns, looks, mode) if "cut_off" in o]  # noqa: E731
    assert cut("fixed") == cut("learned per turn") == [True] * 3  # no pause was ever gone on from
    assert cut("learned per turn and from cut-offs") == [True, False, False]
