import numpy as np
import pytest

from ensembo.bench.report import render, tables
from ensembo.stats import friedman_test


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
    assert t.seed_rank == {"ensembo:random": 1.25, "random": 1.75, "optuna-tpe": 3.0}


def test_overhead_ratio_is_the_median_of_paired_ratios():
    t = tables(RECORDS, OPTIMIZERS, ["p", "q"])
    assert t.overhead_ratio[("ensembo:random", "random")] == pytest.approx(np.median([2, 3, 2]))
    assert t.overhead_ratio[("ensembo:random", "optuna-tpe")] == pytest.approx(
        np.median([0.5, 0.5, 1.0])
    )
    wins, losses, ties, _ = t.head_to_head[("ensembo:random", "random")]
    assert (wins, losses, ties) == (2, 1, 0)


CPU_COLUMN = "median CPU overhead per evaluation (s)"


def test_a_cpu_overhead_column_appears_only_when_every_record_has_one():
    with_cpu = [{**r, "cpu_overhead_per_evaluation": r["overhead_per_evaluation"] / 2}
                for r in RECORDS]
    t = tables(with_cpu, OPTIMIZERS, ["p", "q"])
    assert t.cpu_overhead == {"ensembo:random": 0.01, "random": 0.005, "optuna-tpe": 0.02}
    assert CPU_COLUMN in render(t, title="t", command="c")
    mixed = [*with_cpu[:-2], RECORDS[-2], RECORDS[-1]]  # one record made before CPU time
    old = render(tables(RECORDS, OPTIMIZERS, ["p", "q"]), title="t", command="c")
    assert render(tables(mixed, OPTIMIZERS, ["p", "q"]), title="t", command="c") == old
    assert CPU_COLUMN not in old


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
    assert t.seed_test_rank == t.rows[0].test_mean_rank
    assert "mean of per-seed ranks on test error" in render(t, title="t", command="c")
    assert "mean of per-seed ranks on test error" not in render(
        tables(RECORDS, OPTIMIZERS, ["p", "q"]), title="t", command="c"
    )


def _disagreeing_records() -> list[dict]:
    """Two identical problems whose per-seed ranks average to 2 for everyone, while the
    medians rank C (0.05) first, A (0.1) second and B (0.2) last."""
    scores = {"A": (0.1, 0.1, 0.9), "B": (0.2, 0.2, 0.0), "C": (0.3, 0.05, 0.05)}
    return [
        record(problem, optimizer, seed, regret, 0.01)
        for problem in ("p", "q")
        for optimizer, regrets in scores.items()
        for seed, regret in enumerate(regrets)
    ]


def test_the_ranks_printed_beside_the_critical_difference_are_the_ones_friedman_ranks():
    t = tables(_disagreeing_records(), ["A", "B", "C"], ["p", "q"])
    assert t.seed_rank == {"A": 2.0, "B": 2.0, "C": 2.0}
    expected = friedman_test([[0.1, 0.2, 0.05], [0.1, 0.2, 0.05]]).average_ranks
    assert t.friedman_rank == dict(zip("ABC", expected.tolist(), strict=True))
    assert t.friedman_rank == {"A": 2.0, "B": 3.0, "C": 1.0}
    text = render(t, title="t", command="c")
    table = text[text.index("### Average rank over problems"):]
    assert "| optimizer | rank of median (Friedman) | mean of per-seed ranks |" in table
    rows = [line for line in table.splitlines() if line.startswith(("| A ", "| B ", "| C "))]
    assert [row.split(" | ")[:3] for row in rows] == [
        ["| C", "1.00", "2.00"], ["| A", "2.00", "2.00"], ["| B", "3.00", "2.00"]]
    assert "on the ranks of the medians" in table and "critical difference" in table


def test_report_names_what_its_records_were_made_on():
    system = {"python": "3.11.7", "platform": "Linux-x86_64", "cpus": 2, "ensembo_commit": None}
    described = [{**r, "system": system, "versions": {"numpy": "2.4"}} for r in RECORDS[:4]]
    text = render(tables([*described, *RECORDS[4:]], OPTIMIZERS, ["p", "q"]),
                  title="t", command="c")
    environment = text[text.index("### Environment"):]
    assert ("- Python 3.11.7, Linux-x86_64, 2 CPUs, ensembo commit unknown; numpy 2.4: "
            "4 records") in environment
    assert "- not recorded (made before records kept it): 6 records" in environment


def _scored(values: dict[str, dict[str, float | None]], seeds=(0, 1)) -> list[dict]:
    """Records of ``{problem: {optimizer: regret}}`` for every seed; None is a failed run."""
    return [
        record(problem, optimizer, seed, regret or 0.0, 0.01,
               status="complete" if regret is not None else "failed")
        for problem, by_optimizer in values.items()
        for optimizer, regret in by_optimizer.items()
        for seed in seeds
    ]


def test_both_rank_columns_rank_the_same_optimizers_when_one_failed_a_problem():
    """X, best on p1 and p2, failed p3: the mean of per-seed ranks kept ranking it on p1
    and p2 (C got 3.67 among 3 ranked optimizers) while the rank of median left it out."""
    scores = {"A": 1.0, "B": 2.0, "C": 3.0, "X": 0.5}
    records = _scored({
        "p1": scores, "p2": scores, "p3": {**scores, "X": None},
    })
    t = tables(records, ["A", "B", "C", "X"], ["p1", "p2", "p3"])
    assert t.seed_rank == {"A": 1.0, "B": 2.0, "C": 3.0}  # was C 3.67 among three
    assert t.friedman_rank == t.seed_rank
    assert t.ranked == ("A", "B", "C")
    assert t.rows[0].mean_rank["C"] == 4.0  # the parenthesised figure still ranks X there
    text = render(t, title="t", command="c")
    assert "| X | – | – |" in text
    assert "Not ranked, having no median on every problem: X (lacks p3: failed)." in text


def test_a_problem_without_a_common_seed_leaves_the_ranks_and_friedman_test_in_place():
    """On p4, A completed seed 0 alone and B seeds 1-2: every rank and the Friedman test
    vanished, with no word, though every optimizer had a median on every problem."""
    records = _scored({p: {"A": 1.0, "B": 2.0, "C": 3.0} for p in ("p1", "p2", "p3", "p4")},
                      seeds=(0, 1, 2))
    failed_on_p4 = {("A", 1), ("A", 2), ("B", 0)}
    for r in records:
        if r["problem"] == "p4" and (r["optimizer"], r["seed"]) in failed_on_p4:
            r["status"] = "failed"
    t = tables(records, ["A", "B", "C"], ["p1", "p2", "p3", "p4"])
    assert t.friedman_rank == {"A": 1.0, "B": 2.0, "C": 3.0}
    assert t.friedman is not None
    assert t.seed_rank == {"A": 1.0, "B": 2.0, "C": 3.0}
    assert t.no_common_seed == ("p4",)
    text = render(t, title="t", command="c")
    assert "| A | 1.00 | 1.00 |" in text
    assert ("Left out of the mean of per-seed ranks: p4, where the ranked optimizers share "
            "no completed seed; that column averages the other 3 problems.") in text
    assert "Friedman test over problems" in text


def test_an_optimizer_without_test_errors_on_a_problem_is_named_beside_the_test_ranks():
    """The test-error column ranked the other optimizers alone and said nothing."""
    records = []
    for problem in ("p1", "p2"):
        for optimizer, regret in (("A", 0.1), ("B", 0.2), ("C", 0.3)):
            for seed in (0, 1):
                r = record(problem, optimizer, seed, regret, 0.01)
                if not (optimizer == "C" and problem == "p1"):
                    r["incumbent_test_loss"] = regret
                records.append(r)
    text = render(tables(records, ["A", "B", "C"], ["p1", "p2"]), title="t", command="c")
    assert ("Not in the test-error rank column, having no test error on every problem: "
            "C (lacks p1); that column ranks the other 2 alone.") in text


def test_a_median_over_fewer_seeds_than_planned_is_named_with_the_seeds_it_lacks():
    """optuna-tpe failed seed 2 on p: its median over seeds 0-1 stood beside the others'
    over 0-2, and was ranked with them, without a word."""
    records = _scored({"p": {"A": 1.0, "B": 2.0, "optuna-tpe": 0.5}}, seeds=(0, 1, 2))
    [failed] = [r for r in records if (r["optimizer"], r["seed"]) == ("optuna-tpe", 2)]
    failed.update(status="failed", error="Traceback (most recent call last):\nValueError: boom")
    t = tables(records, ["A", "B", "optuna-tpe"], ["p"], seeds=[0, 1, 2, 3])
    assert [(s.method, s.completed, s.planned) for s in t.seed_shortfalls] == [
        ("A", 3, 4), ("B", 3, 4), ("optuna-tpe", 2, 4)]
    text = render(t, title="t", command="c")
    assert "0.5 [0.5–0.5] (1.00) 2/4 seeds |" in text
    assert ("- p / optuna-tpe: median over 2 of 4 seeds (seed 2 failed: ValueError: boom; "
            "seed 3 has no record)") in text
    assert ("- on p, the mean ranks in parentheses use only the 2 seeds every optimizer "
            "there completed (0, 1)") in text
    assert "Some medians ranked here stand on fewer seeds than planned" in text


def test_no_seed_note_when_every_optimizer_completed_every_seed():
    t = tables(_scored({"p": {"A": 1.0, "B": 2.0}}), ["A", "B"], ["p"])
    assert t.seed_shortfalls == ()
    assert "Fewer seeds than planned" not in render(t, title="t", command="c")
