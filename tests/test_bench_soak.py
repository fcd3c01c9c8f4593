"""bench/soak.py's own parts: the sampler and the report (the soak itself needs the models and
minutes; `python -m bench.soak --minutes 1` runs it)."""

from __future__ import annotations

from bench.machine import describe_machine
from bench.soak import Sampler, report


def test_the_report_quotes_the_first_20_and_the_last_and_names_a_shared_machine():
    with Sampler(every_s=0.01) as sampler:
        rows = []
        for n in (1, 8, 20, 40):
            sampler.sessions = n
            rows.append(sampler.sample("after_batch"))
    assert all(r["rss_mib"] > 0 and r["threads"] >= 1 and r["py_objects"] > 0 for r in rows)
    assert [s for s in sampler.samples if "mark" not in s]  # the timer sampled in between too
    first, last = rows[2], rows[3]
    # other tests' closed sessions may wait in this process for the cycle collector
    assert all(isinstance(r["live_calls"], int) and r["live_calls"] >= 0 for r in rows)
    result = {"minutes": 1, "allocator": "serve", "arenas_bounded": True, "llm": "scripted",
              "malloc_arena_max": None,
              "sessions": 40, "outcomes": {"completed": 38, "aborted": 2}, "samples": sampler.samples,
              "after_first_20": first, "after_all": last,
              "growth_vs_first_20": last["rss_mib"] / first["rss_mib"] - 1}
    text = report(result, describe_machine(), (9.5, 10.5))
    assert "after all 40" in text and "(at 20)" in text and "shared" in text and "9.5" in text
    assert text.count("\n| ") >= 5  # the header and one row per batch
    assert "bounded to 2" in text


def test_python_growth_names_the_line_that_kept_memory():
    import tracemalloc

    from bench.soak import python_growth

    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        kept = [bytearray(64 * 1024) for _ in range(16)]  # 1 MiB held on one line
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    growth = python_growth(before, after, top=3)
    assert "test_bench_soak.py" in growth[0]["where"] and growth[0]["kib"] >= 1024 and len(kept) == 16
