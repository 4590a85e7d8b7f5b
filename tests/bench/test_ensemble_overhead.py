"""The bookkeeping-overhead measurement runs end to end on a tiny pool."""

from __future__ import annotations

from ensembo.bench.ensemble_overhead import in_a_study, measure, render


def test_overhead_rows_time_every_strategy_against_the_same_fit():
    strategies = ("best", "posthoc", "esmbo")
    rows = measure(n_trials=15, m=30, repeats=1, arrivals=3, strategies=strategies)
    assert [r.strategy for r in rows] == ["best", "posthoc", "esmbo"]
    assert len({r.surrogate_fit_seconds for r in rows}) == 1
    for row in rows:
        assert 0 <= row.bookkeeping_seconds <= row.worst_seconds and row.cold_seconds >= 0
        assert row.surrogate_fit_seconds > 0 and row.proposal_seconds > 0
    table = render(rows)
    assert table.count("\n") == 1 + len(rows) and "| posthoc |" in table


def test_in_a_study_times_the_strategy_and_the_proposals_of_a_real_search():
    result = in_a_study("iris", "posthoc", budget=8)
    assert result["strategy"] > 0 and result["proposals"] > 0
    assert result["validation_rows"] == 45
