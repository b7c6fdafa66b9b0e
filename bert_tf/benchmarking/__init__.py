"""Throughput measurement shared by `tools/benchmark.py`: timing, FLOP counts, peers."""
