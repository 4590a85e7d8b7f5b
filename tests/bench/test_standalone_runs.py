"""The shared pieces of the standalone benchmarks (overfitting, estimators, ensembles)."""

from __future__ import annotations

import types

import pytest

from ensembo.bench.standalone_runs import chosen_datasets, run_and_collect
from ensembo.bench.suite import UnknownSuiteError


def _args(problems):
    return types.SimpleNamespace(problems=problems)


def test_without_problems_the_default_datasets_are_chosen():
    assert chosen_datasets(_args(None), ("a", "b")) == ["a", "b"]


def test_any_loadable_name_passes_unless_the_benchmark_limits_them():
    assert chosen_datasets(_args("keel:pima, a"), ("a", "b")) == ["keel:pima", "a"]
    with pytest.raises(UnknownSuiteError, match=r"\['keel:pima'\].*a, b"):
        chosen_datasets(_args("keel:pima,a"), ("a", "b"), allowed=("a", "b"))


def test_report_only_executes_nothing_and_returns_the_final_records(tmp_path):
    finished = tmp_path / "done.json"
    finished.write_text('{"status": "complete", "value": 1}')
    runs = [types.SimpleNamespace(path=str(finished)),
            types.SimpleNamespace(path=str(tmp_path / "pending.json"))]

    def execute(run):
        raise AssertionError(f"report-only executed {run.path}")

    records = run_and_collect(runs, execute, workers=1, label="t", progress=False, run=False)
    assert records == [{"status": "complete", "value": 1}]
