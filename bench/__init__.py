"""Latency, barge-in and tool-choice benchmarks for the pipeline, read from its event log."""
