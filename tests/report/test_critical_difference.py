"""Critical-difference diagrams from benchmark results."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo.errors import ExperimentError
from ensembo.report.critical_difference import _cliques, compare_methods, read_results_csv


def _results(path, rows):
    path.write_text(
        "problem,method,seed,loss\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n"
    )
    return path


def test_methods_sorted_by_rank_and_cliques_within_cd():
    rng = np.random.default_rng(0)
    losses = rng.normal(size=(30, 4)) + np.array([0.0, 0.05, 1.5, 3.0])
    comparison = compare_methods(losses, ["a", "b", "c", "d"])
    assert comparison.methods[:2] in (("a", "b"), ("b", "a"))
    assert comparison.methods[2:] == ("c", "d")
    assert list(comparison.average_ranks) == sorted(comparison.average_ranks)
    assert (0, 1) in comparison.cliques  # a and b are indistinguishable
    assert all(
        comparison.average_ranks[last] - comparison.average_ranks[first]
        <= comparison.critical_difference
        for first, last in comparison.cliques
    )


def test_cliques_are_maximal():
    assert _cliques(np.array([1.0, 1.5, 2.0, 4.0]), 1.0) == [(0, 2)]
    assert _cliques(np.array([1.0, 2.5, 4.0]), 1.0) == []


def test_csv_averages_seeds_and_drops_incomplete_problems(tmp_path):
    path = _results(
        tmp_path / "r.csv",
        [
            ("p1", "x", 0, 1.0),
            ("p1", "x", 1, 3.0),
            ("p1", "y", 0, 1.0),
            ("p1", "z", 0, 5.0),
            ("p2", "x", 0, 1.0),
            ("p2", "y", 0, 2.0),
        ],
    )
    data = read_results_csv(path)
    assert data.methods == ["x", "y", "z"] and data.problems == ["p1"]
    np.testing.assert_allclose(data.losses, [[2.0, 1.0, 5.0]])
    assert data.dropped == {"p2": ("z",)}


def test_csv_errors_name_the_problem(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("problem,algo,loss\n")
    with pytest.raises(ExperimentError, match="missing method"):
        read_results_csv(bad)
    with pytest.raises(ExperimentError, match="line 2: loss 'n/a' is not a number"):
        read_results_csv(_results(tmp_path / "nan.csv", [("p", "x", 0, "n/a")]))
    with pytest.raises(ExperimentError, match=">= 2 methods"):
        read_results_csv(_results(tmp_path / "one.csv", [("p", "x", 0, 1), ("q", "x", 0, 2)]))


def test_two_methods_get_ranks_and_paired_tests_without_a_diagram(tmp_path):
    """One setting against one anchor is the first comparison a user makes; it was
    refused ("a critical-difference diagram needs >= 3 methods") and nothing written."""
    from ensembo.report.write import write_benchmark_report

    rows = [(f"p{i}", "x", 0, loss) for i, loss in enumerate([1, 2, 3, 4, 5, 6])]
    rows += [(f"p{i}", "y", 0, loss) for i, loss in enumerate([2, 3, 4, 5, 6, 1])]
    written = write_benchmark_report(_results(tmp_path / "two.csv", rows), tmp_path / "out")
    assert [path.name for path in written] == ["ranks.md"]
    text = (tmp_path / "out" / "ranks.md").read_text()
    assert "| x | 1.16667 |" in text and "| y | 1.83333 |" in text
    assert "x has the lower loss on 5 problems, y on 1, 0 tied (sign test p = 0.219" in text
    assert "no Friedman test or critical-difference diagram" in text


def test_bench_records_are_read_from_an_output_folder(tmp_path):
    import json

    from ensembo.report.critical_difference import read_bench_records

    def record(problem, optimizer, seed, regret, status="complete", budget=20):
        path = tmp_path / "synthetic" / problem / optimizer.replace(":", "_") / f"seed-{seed}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            json.dumps(
                {
                    "suite": "synthetic",
                    "problem": problem,
                    "optimizer": optimizer,
                    "seed": seed,
                    "status": status,
                    "final_regret": regret,
                    "final_loss": regret + 1.0,
                    "budget": budget,
                }
            )
        )

    for problem in ("branin", "levy5"):
        for seed in (0, 1):
            record(problem, "ensembo:gp", seed, 0.1 * (seed + 1))
            record(problem, "random", seed, 1.0)
            record(problem, "optuna-tpe", seed, 0.5)
    record("branin", "random", 2, 99.0, status="failed")  # failed runs are not results
    (tmp_path / "synthetic" / "report.md").write_text("not a record")
    data = read_bench_records(tmp_path)
    assert data.problems == ["synthetic/branin", "synthetic/levy5"]
    assert data.methods == ["ensembo:gp", "optuna-tpe", "random"]
    np.testing.assert_allclose(data.losses, [[0.15, 0.5, 1.0], [0.15, 0.5, 1.0]])
    record("levy5", "random", 3, 7.0, budget=5)  # a trial run with a smaller budget
    with pytest.raises(ExperimentError, match=r"several budgets for one problem "
                       r"\(synthetic/levy5: 20, 5\); rank one budget at a time with "
                       r"--budget \(one of 20, 5\)"):
        read_bench_records(tmp_path)
    by_budget = read_bench_records(tmp_path, budget=20)
    np.testing.assert_allclose(by_budget.losses, data.losses)  # the 5-trial run left out
    with pytest.raises(ExperimentError, match="no complete run records with budget 7; "
                       "the records here have budget 20, 5"):
        read_bench_records(tmp_path, budget=7)


def test_a_repeated_seed_row_is_refused_naming_the_first_repeat(tmp_path):
    """A (problem, method, seed) given twice was averaged in as if it were another seed."""
    rows = [("p1", "x", 0, 1.0), ("p1", "x", 1, 3.0), ("p1", "y", 0, 1.0),
            ("p1", "x", 0, 9.0), ("p1", "y", 0, 8.0)]
    with pytest.raises(ExperimentError, match=r"line 5: problem 'p1', method 'x', seed '0' "
                       r"repeats line 2"):
        read_results_csv(_results(tmp_path / "r.csv", rows))
    # without a seed column the rows of a (problem, method) are averaged, as documented
    no_seeds = tmp_path / "no_seeds.csv"
    no_seeds.write_text("problem,method,loss\np,x,1\np,x,3\np,y,1\nq,x,1\nq,y,2\n")
    np.testing.assert_allclose(read_results_csv(no_seeds).losses, [[2.0, 1.0], [1.0, 2.0]])


def _typo_rows() -> list[tuple]:
    """Ten problems of A, B and C, and one row of a mistyped method 'c' on p0."""
    rows = [(f"p{i}", m, 0, v + 0.01 * i) for i in range(10)
            for m, v in (("A", 0.1), ("B", 0.2), ("C", 0.3))]
    return [*rows, ("p0", "c", 0, 0.5)]


def test_ranks_name_the_problems_dropped_and_what_each_lacks(tmp_path, caplog):
    """One mistyped method name dropped 9 of 10 problems with no word, and ranks.md
    printed a Friedman p and a critical difference computed on the one left."""
    from ensembo.report.write import write_benchmark_report

    with caplog.at_level("WARNING", logger="ensembo.report.write"):
        write_benchmark_report(_results(tmp_path / "r.csv", _typo_rows()), tmp_path / "out",
                               plots=False)
    text = (tmp_path / "out" / "ranks.md").read_text()
    assert "Left out: 9 problems on which some method has no result" in text
    assert "p1 (lacks c), p2 (lacks c)" in text and "p9 (lacks c)." in text
    assert "Friedman statistic" not in text and "critical difference at" not in text
    assert "No Friedman test, critical difference or diagram over a single problem" in text
    assert "9 problem(s) left out of the ranks, lacking a method: c missing on 9 problems" in (
        caplog.text)


def test_no_diagram_is_drawn_over_a_single_problem(tmp_path):
    pytest.importorskip("matplotlib")
    from ensembo.report.write import write_benchmark_report

    written = write_benchmark_report(_results(tmp_path / "r.csv", _typo_rows()), tmp_path / "out")
    assert [path.name for path in written] == ["ranks.md"]


def test_no_common_problem_is_refused_naming_what_each_problem_lacks(tmp_path):
    rows = [("p1", "a", 0, 1.0), ("p1", "b", 0, 2.0), ("p2", "b", 0, 1.0), ("p2", "c", 0, 2.0)]
    with pytest.raises(ExperimentError, match=r"3 methods and 0 complete problems \(lacking: "
                       r"p1 \(lacks c\), p2 \(lacks a\)\)"):
        read_results_csv(_results(tmp_path / "r.csv", rows))


def test_a_run_found_in_two_folders_is_refused_naming_both(tmp_path):
    """A rerun into a second folder under the one reported was averaged in as another
    seed of the same run (it moved a method from rank 2 to 3)."""
    import json

    from ensembo.report.critical_difference import read_bench_records

    for folder, regret in (("run1", 0.1), ("run2", 0.9)):
        for optimizer in ("a", "b"):
            path = tmp_path / folder / "synthetic" / "p" / optimizer / "seed-0.json"
            path.parent.mkdir(parents=True)
            path.write_text(json.dumps({
                "suite": "synthetic", "problem": "p", "optimizer": optimizer, "seed": 0,
                "status": "complete", "final_regret": regret, "final_loss": regret,
                "budget": 20,
            }))
    with pytest.raises(ExperimentError, match=r"run2.*repeats the run .*run1.*optimizer a, seed 0"):
        read_bench_records(tmp_path)


def test_seeds_written_as_the_same_number_are_one_seed(tmp_path):
    rows = [("p1", "x", "0", 1.0), ("p1", "y", "0", 1.0), ("p1", "x", "0.0", 9.0)]
    with pytest.raises(ExperimentError, match=r"seed '0.0' repeats line 2"):
        read_results_csv(_results(tmp_path / "r.csv", rows))


def test_seeds_beyond_float_precision_stay_apart(tmp_path):
    big = 2**53
    rows = [("p1", "x", str(big), 1.0), ("p1", "x", str(big + 1), 3.0),
            ("p1", "y", str(big), 1.0), ("p1", "y", str(big + 1), 1.0)]
    read_results_csv(_results(tmp_path / "r.csv", rows))  # two seeds, not one repeated


def test_a_method_without_a_complete_run_is_named_as_not_ranked(tmp_path):
    """A method whose runs were all skipped (optuna-gp without torch) or failed was left
    out of ranks.md without a word, though the bench's own report named it (audit)."""
    import json

    def record(problem, optimizer, status, regret=1.0):
        path = tmp_path / "synthetic" / problem / optimizer / "seed-0.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({
            "suite": "synthetic", "problem": problem, "optimizer": optimizer, "seed": 0,
            "status": status, "final_regret": regret, "final_loss": regret, "budget": 5}))

    for problem in ("branin", "levy5"):
        record(problem, "random", "complete", 1.0)
        record(problem, "optuna-tpe", "complete", 0.5)
        record(problem, "optuna-gp", "skipped")
    record("branin", "smac-bb", "failed")
    from ensembo.report.write import write_benchmark_report

    write_benchmark_report(tmp_path, tmp_path / "out", plots=False)
    text = (tmp_path / "out" / "ranks.md").read_text()
    assert "Not ranked, no complete run: `optuna-gp` (skipped), `smac-bb` (failed)." in text


def test_a_mean_over_fewer_seeds_is_named_with_the_seed_it_lacks_and_why(tmp_path):
    """optuna-tpe failed seed 2 of branin: ranks.md ranked its mean over seeds 0-1
    beside the others' means over 0-2 without a word."""
    import json

    def record(problem, optimizer, seed, status="complete", regret=1.0, error=None):
        path = tmp_path / "synthetic" / problem / optimizer / f"seed-{seed}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({
            "suite": "synthetic", "problem": problem, "optimizer": optimizer, "seed": seed,
            "status": status, "final_regret": regret, "final_loss": regret, "budget": 5,
            "error": error}))

    for problem in ("branin", "levy5"):
        for seed in (0, 1, 2):
            record(problem, "random", seed)
            record(problem, "smac-bb", seed, regret=2.0)
            if (problem, seed) != ("branin", 2):
                record(problem, "optuna-tpe", seed, regret=0.5)
    record("branin", "optuna-tpe", 2, "failed", None,
           "Traceback (most recent call last):\n  File x\nValueError: boom")
    from ensembo.report.critical_difference import read_bench_records
    from ensembo.report.write import write_benchmark_report

    [short] = read_bench_records(tmp_path).seed_shortfalls
    assert (short.problem, short.method, short.completed, short.planned) == (
        "synthetic/branin", "optuna-tpe", 2, 3)
    write_benchmark_report(tmp_path, tmp_path / "out", plots=False)
    text = (tmp_path / "out" / "ranks.md").read_text()
    assert ("- synthetic/branin / optuna-tpe: mean over 2 of 3 seeds "
            "(seed 2 failed: ValueError: boom)") in text
    assert "levy5 / optuna-tpe" not in text and "random: mean over" not in text


def test_a_seed_run_with_another_budget_is_named_so_not_as_having_no_record(tmp_path):
    """`ensembo report FOLDER --budget 10` said 'seed 3 has no record' of a seed whose
    record was made with budget 20; the bench report.md says 'made with budget 20'."""
    import json

    from ensembo.bench import report as bench_report
    from ensembo.bench import runner
    from ensembo.report.write import write_benchmark_report

    bench = tmp_path / "bench"
    for problem in ("p1", "p2"):
        for optimizer, offset in (("a", 0), ("b", 1), ("c", 2)):
            for seed in range(4):
                budget = 20 if (optimizer, seed) == ("a", 3) else 10
                path = runner.run_path(bench, "synthetic", problem, optimizer, seed)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps({
                    "suite": "synthetic", "problem": problem, "optimizer": optimizer,
                    "seed": seed, "budget": budget, "status": "complete",
                    "final_loss": offset + seed / 10, "error": None}))
    write_benchmark_report(bench, tmp_path / "ranks", plots=False, budget=10)
    ranks = (tmp_path / "ranks" / "ranks.md").read_text()
    assert "- synthetic/p1 / a: mean over 3 of 4 seeds (seed 3 made with budget 20)" in ranks
    assert "has no record" not in ranks
    records = []  # as `ensembo bench --budget 10 --report-only` reads them
    for path in sorted(bench.rglob("seed-*.json")):
        spec = json.loads(path.read_text())
        run = runner.RunSpec(suite="synthetic", problem=spec["problem"],
                             optimizer=spec["optimizer"], seed=spec["seed"], budget=10,
                             path=str(path))
        records += runner.load_records([run])
    text = bench_report.render(bench_report.tables(records, ["a", "b", "c"], ["p1", "p2"],
                                                   seeds=[0, 1, 2, 3]),
                               title="t", command="c")
    assert "- p1 / a: median over 3 of 4 seeds (seed 3 made with budget 20)" in text
