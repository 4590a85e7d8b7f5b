"""Benchmark suites, one module per suite, each exposing ``SUITE`` (see ensembo.bench.suite)."""
