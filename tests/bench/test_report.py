import numpy as np
import pytest

from ensembo.bench.report import render, tables


def record(problem, optimizer, seed, regret, overhead, status="complete"):
    return {
        "problem": problem,
        "optimizer": optimizer,
        "seed": seed,
        "status": status,
        "optimum": 1.0,
        "budget": 10,
        "final_regret": regret,
        "final_loss": 1.0 + regret,
        "best_so_far": [1.0 + regret],
        "overhead_per_evaluation": overhead,
        "incumbent_test_loss": None,
        "error": None if status == "complete" else "why",
    }


OPTIMIZERS = ["ensembo:random", "random", "optuna-tpe"]
RECORDS = [
    record("p", "ensembo:random", 0, 0.1, 0.02),
    record("p", "ensembo:random", 1, 0.3, 0.03),
    record("p", "random", 0, 0.2, 0.01),
    record("p", "random", 1, 0.2, 0.01),
    record("p", "optuna-tpe", 0, 0.4, 0.04),
    record("p", "optuna-tpe", 1, 0.5, 0.06),
    record("q", "ensembo:random", 0, 1.0, 0.02),
    record("q", "random", 0, 2.0, 0.01),
    record("q", "optuna-tpe", 0, 3.0, 0.02),
    record("q", "optuna-tpe", 1, 0.0, 0.0, status="skipped"),
]


def test_medians_ranges_and_ranks():
    t = tables(RECORDS, OPTIMIZERS, ["p", "q"])
    p, q = t.rows
    assert p.median == {
        "ensembo:random": pytest.approx(0.2),
        "random": 0.2,
        "optuna-tpe": pytest.approx(0.45),
    }
    assert (p.low["optuna-tpe"], p.high["optuna-tpe"]) == (0.4, 0.5)
    # seed 0: 1,2,3; seed 1: 2,1,3
    assert p.mean_rank == {"ensembo:random": 1.5, "random": 1.5, "optuna-tpe": 3.0}
    assert q.mean_rank == {"ensembo:random": 1.0, "random": 2.0, "optuna-tpe": 3.0}
    assert t.average_rank == {"ensembo:random": 1.25, "random": 1.75, "optuna-tpe": 3.0}


def test_overhead_ratio_is_the_median_of_paired_ratios():
    t = tables(RECORDS, OPTIMIZERS, ["p", "q"])
    assert t.overhead_ratio[("ensembo:random", "random")] == pytest.approx(np.median([2, 3, 2]))
    assert t.overhead_ratio[("ensembo:random", "optuna-tpe")] == pytest.approx(
        np.median([0.5, 0.5, 1.0])
    )
    wins, losses, ties, _ = t.head_to_head[("ensembo:random", "random")]
    assert (wins, losses, ties) == (2, 1, 0)


def test_render_names_command_optimum_and_incomplete_runs():
    text = render(tables(RECORDS, OPTIMIZERS, ["p", "q"]), title="t", command="ensembo bench x")
    assert "`ensembo bench x`" in text
    assert "f* = 1, budget 10" in text
    assert "q / optuna-tpe / seed 1: skipped — why" in text


def test_test_error_ranks_are_computed_per_seed_like_validation_ranks():
    records = []
    for seed, tests in enumerate([(0.1, 0.2, 0.3), (0.3, 0.2, 0.2)]):
        for optimizer, test_loss in zip(OPTIMIZERS, tests, strict=True):
            records.append(
                {**record("p", optimizer, seed, 0.5, 0.01), "incumbent_test_loss": test_loss}
            )
    t = tables(records, OPTIMIZERS, ["p"])
    # seed 0: 1, 2, 3; seed 1: 3, 1.5, 1.5 (ties share)
    assert t.rows[0].test_mean_rank == {"ensembo:random": 2.0, "random": 1.75, "optuna-tpe": 2.25}
    assert t.average_test_rank == t.rows[0].test_mean_rank
    assert "average rank on test error" in render(t, title="t", command="c")
    assert "average rank on test error" not in render(
        tables(RECORDS, OPTIMIZERS, ["p", "q"]), title="t", command="c"
    )
