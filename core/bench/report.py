"""Markdown report over the run records of one benchmark invocation.

Compute first (:func:`tables`), then render, so tests can check numbers without
parsing markdown. Everything is "median over seeds" unless said otherwise: the
machine is shared and noisy, so ratios and ranks are read from the same run.

Two average ranks are shown and named apart: the rank of each problem's median score,
which the Friedman test and the Nemenyi critical difference are computed on (so the CD
is read against these), and the mean of the ranks within each seed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from ensembo.bench.anchor_comparison import (
    against_anchors,
    median_cpu_overheads,
    median_overheads,
)
from ensembo.bench.metrics import final_score
from ensembo.bench.optimizers import is_anchor
from ensembo.bench.provenance import environment_lines, system_summary
from ensembo.bench.seed_coverage import (
    SeedShortfall,
    bench_shortfall_note,
    last_line,
    seed_shortfalls,
)
from ensembo.stats import average_ranks, friedman_test


@attrs.frozen(kw_only=True)
class ProblemRow:
    problem: str
    optimum: float | None
    budget: int | None
    median: dict[str, float]
    low: dict[str, float]
    high: dict[str, float]
    mean_rank: dict[str, float]  # among the optimizers present on this problem
    test_median: dict[str, float]
    test_mean_rank: dict[str, float]  # ranks of the incumbents' test errors, per seed
    scores: dict[str, dict[int, float]]  # optimizer -> seed -> final score
    tests: dict[str, dict[int, float]]  # optimizer -> seed -> incumbent's test error


@attrs.frozen(kw_only=True)
class Tables:
    optimizers: tuple[str, ...]
    rows: tuple[ProblemRow, ...]
    ranked: tuple[str, ...]  # the optimizers with a median on every problem
    friedman_rank: dict[str, float]  # mean over problems of the rank of the median score
    seed_rank: dict[str, float]  # mean over problems of the mean rank within each seed
    seed_test_rank: dict[str, float]  # the same on the incumbents' test errors
    no_common_seed: tuple[str, ...]  # problems left out of seed_rank: no seed all completed
    no_common_test_seed: tuple[str, ...]  # the same for seed_test_rank
    overhead: dict[str, float]  # median seconds per evaluation over all runs
    overhead_ratio: dict[tuple[str, str], float]  # (ensembo entry, anchor) -> median ratio
    head_to_head: dict[tuple[str, str], tuple[int, int, int, float]]  # wins, losses, ties, p
    friedman: tuple[float, float, float] | None  # statistic, p, critical difference
    not_complete: tuple[tuple[str, str, int, str, str], ...]
    missing: dict[tuple[str, str], str]  # (problem, optimizer) without results -> why
    environments: tuple[str | None, ...] = ()  # what each record says it was made on
    known_optimum: bool = False  # some record knows f*, even if none completed here
    # the same on process CPU time; empty unless every record with an overhead has one
    cpu_overhead: dict[str, float] = attrs.field(factory=dict)
    # (problem, optimizer) pairs whose median stands on fewer seeds than planned
    seed_shortfalls: tuple[SeedShortfall, ...] = ()




def _complete(records):
    return [r for r in records if r.get("status") == "complete"]


def tables(
    records: Sequence[dict[str, Any]],
    optimizers: Sequence[str],
    problems: Sequence[str],
    seeds: Sequence[int] | None = None,
) -> Tables:
    """``seeds``: the seeds planned (by default those of ``records``), which the report
    names a method's missing ones against."""
    done = _complete(records)
    seeds = sorted({r["seed"] for r in records} | set(seeds or ()))
    rows = []
    for problem in problems:
        row_records = [r for r in done if r["problem"] == problem]
        if row_records:
            rows.append(_problem_row(problem, row_records, optimizers, seeds))
    ranked = _on_every_problem(rows, optimizers, lambda row: row.median)
    test_ranked = _on_every_problem(rows, ranked, lambda row: row.test_median)
    seed_rank, no_common_seed = _mean_seed_ranks(rows, lambda row: row.scores, ranked, seeds)
    seed_test_rank, no_common_test_seed = _mean_seed_ranks(
        rows, lambda row: row.tests, test_ranked, seeds
    )
    medians = [[row.median[o] for o in ranked] for row in rows]
    friedman = None
    if len(ranked) >= 3 and len(rows) >= 2:
        result = friedman_test(medians)
        friedman = (result.statistic, result.p_value, result.critical_difference)
    ratio, head_to_head = against_anchors(done, optimizers, problems, seeds)
    return Tables(
        optimizers=tuple(optimizers),
        rows=tuple(rows),
        ranked=tuple(ranked),
        friedman_rank=_ranks_of_medians(medians, ranked),
        seed_rank=seed_rank,
        seed_test_rank=seed_test_rank,
        no_common_seed=no_common_seed,
        no_common_test_seed=no_common_test_seed,
        overhead=median_overheads(done, optimizers),
        cpu_overhead=median_cpu_overheads(done, optimizers),
        overhead_ratio=ratio,
        head_to_head=head_to_head,
        friedman=friedman,
        not_complete=tuple(
            (
                r["problem"],
                r["optimizer"],
                r["seed"],
                r.get("status", "?"),
                last_line(r.get("error")),
            )
            for r in records
            if r.get("status") != "complete"
        ),
        missing=_why_missing(records, rows, optimizers),
        environments=tuple(_description(r) for r in records),
        known_optimum=any(r.get("optimum") is not None for r in records),
        seed_shortfalls=seed_shortfalls(
            records, lambda r: r["problem"], [row.problem for row in rows],
            {row.problem: seeds for row in rows},
        ),
    )


def _description(record: dict[str, Any]) -> str | None:
    """Machine, commit and package versions, as far as ``record`` holds them."""
    parts = [system_summary(record["system"])] if record.get("system") else []
    versions = record.get("versions") or {}
    if versions:
        parts.append(", ".join(f"{name} {version}" for name, version in sorted(versions.items())))
    return "; ".join(parts) or None


def _on_every_problem(
    rows: Sequence[ProblemRow],
    optimizers: Sequence[str],
    values: Callable[[ProblemRow], dict[str, Any]],
) -> list[str]:
    """The optimizers with a value on every problem: ranks over problems need one on each."""
    return [o for o in optimizers if rows and all(o in values(row) for row in rows)]


def _mean_seed_ranks(
    rows: Sequence[ProblemRow],
    per_seed: Callable[[ProblemRow], dict[str, dict[int, float]]],
    ranked: Sequence[str],
    seeds: Sequence[int],
) -> tuple[dict[str, float], tuple[str, ...]]:
    """Mean over problems of the per-seed ranks among ``ranked`` alone, so the column ranks
    the same optimizers as the rank of median (values in 1..len(ranked)); and the problems
    left out of it, where those optimizers share no completed seed."""
    if len(ranked) < 2:
        return {}, ()
    by_problem = {row.problem: _mean_ranks(per_seed(row), ranked, seeds) for row in rows}
    kept = [ranks for ranks in by_problem.values() if ranks]
    left_out = tuple(problem for problem, ranks in by_problem.items() if not ranks)
    if not kept:
        return {}, left_out
    return {o: float(np.mean([ranks[o] for ranks in kept])) for o in ranked}, left_out


def _ranks_of_medians(medians: list[list[float]], ranked: Sequence[str]) -> dict[str, float]:
    """Average rank of each optimizer's per-problem median: what Friedman ranks."""
    if len(ranked) < 2:
        return {}
    return dict(zip(ranked, average_ranks(medians).tolist(), strict=True))


def _problem_row(
    problem: str,
    row_records: Sequence[dict[str, Any]],
    optimizers: Sequence[str],
    seeds: Sequence[int],
) -> ProblemRow:
    """One problem's medians, ranges and ranks over the seeds each optimizer completed."""
    scores = {
        o: {r["seed"]: final_score(r) for r in row_records if r["optimizer"] == o}
        for o in optimizers
    }
    present = [o for o in optimizers if scores[o]]
    tests = {
        o: {
            r["seed"]: r["incumbent_test_loss"]
            for r in row_records
            if r["optimizer"] == o and r.get("incumbent_test_loss") is not None
        }
        for o in present
    }
    return ProblemRow(
        problem=problem,
        optimum=row_records[0].get("optimum"),
        budget=row_records[0].get("budget"),
        median={o: float(np.median(list(scores[o].values()))) for o in present},
        low={o: min(scores[o].values()) for o in present},
        high={o: max(scores[o].values()) for o in present},
        mean_rank=_mean_ranks(scores, present, seeds),
        test_median={o: float(np.median(list(t.values()))) for o, t in tests.items() if t},
        test_mean_rank=_mean_ranks(tests, [o for o in present if tests[o]], seeds),
        scores=scores,
        tests=tests,
    )


def _why_missing(
    records: Sequence[dict[str, Any]], rows: Sequence[ProblemRow], optimizers: Sequence[str]
) -> dict[tuple[str, str], str]:
    """For each (problem, optimizer) with no complete run: the states its runs ended in."""
    missing = {}
    for row in rows:
        for o in optimizers:
            if o not in row.median:
                states = {
                    r.get("status")
                    for r in records
                    if r["problem"] == row.problem and r["optimizer"] == o
                }
                missing[(row.problem, o)] = "/".join(sorted(states)) or "not run"
    return missing


def _mean_ranks(
    scores: dict[str, dict[int, float]], present: Sequence[str], seeds: Sequence[int]
) -> dict[str, float]:
    """Mean rank of each optimizer over the seeds all of them completed (ties share)."""
    common = [s for s in seeds if all(s in scores[o] for o in present)]
    if len(present) < 2 or not common:
        return {}
    matrix = np.array([[scores[o][s] for o in present] for s in common])
    return dict(zip(present, average_ranks(matrix).tolist(), strict=True))


def _number(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.3g}" if value != 0 else "0"


def render(t: Tables, *, title: str, command: str, plots: dict[str, str] | None = None) -> str:
    lines = [f"## {title}", "", f"Command: `{command}`", ""]
    lines += _score_table(t)
    lines += _test_table(t)
    lines += _rank_table(t)
    lines += _anchor_tables(t)
    if t.not_complete:
        lines += ["", "### Runs not completed", ""]
        lines += [
            f"- {p} / {o} / seed {s}: {status} — {error}"
            for p, o, s, status, error in t.not_complete
        ]
    if t.environments:
        lines += ["", "### Environment (records made on each)", ""]
        lines += environment_lines(t.environments)
    if plots:
        lines += ["", "### Convergence (median best-so-far over seeds)", ""]
        lines += [f"![{problem}]({path})" for problem, path in plots.items()]
    return "\n".join(lines) + "\n"


def _table_head(first: str, columns: Sequence[str]) -> list[str]:
    return [f"| {first} | " + " | ".join(columns) + " |", "|" + "---|" * (len(columns) + 1)]


def _score_table(t: Tables) -> list[str]:
    has_optimum = t.known_optimum or any(row.optimum is not None for row in t.rows)
    score_name = "final simple regret" if has_optimum else "validation error of the incumbent"
    lines = [f"### Median {score_name} [min–max over seeds] (mean rank within the problem)", ""]
    lines += _table_head("problem", t.optimizers)
    short = {(s.problem, s.method): f" {s.completed}/{s.planned} seeds"
             for s in t.seed_shortfalls}
    for row in t.rows:
        label = row.problem
        if row.optimum is not None:
            label += f" (f* = {row.optimum:.15g}, budget {row.budget})"
        else:
            label += f" (budget {row.budget})"
        cells = []
        for o in t.optimizers:
            if o not in row.median:
                cells.append(t.missing.get((row.problem, o), "not run"))
                continue
            rank = f" ({row.mean_rank[o]:.2f})" if o in row.mean_rank else ""
            cells.append(
                f"{_number(row.median[o])} [{_number(row.low[o])}–{_number(row.high[o])}]{rank}"
                + short.get((row.problem, o), "")
            )
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines + _seed_shortfall_note(t)


def _seed_shortfall_note(t: Tables) -> list[str]:
    """The medians made on fewer seeds than planned, and the seeds the per-seed ranks
    of those problems stand on: no median is to be read as made on every seed."""
    if not t.seed_shortfalls:
        return []
    common = {
        row.problem: sorted(set.intersection(*(set(s) for s in row.scores.values() if s)))
        for row in t.rows
    }
    return ["", *bench_shortfall_note(t.seed_shortfalls, common)]


def _test_table(t: Tables) -> list[str]:
    if not any(row.test_median for row in t.rows):
        return []
    lines = ["", "### Median test error of the incumbent (chosen on validation)", ""]
    lines += _table_head("problem", t.optimizers)
    for row in t.rows:
        cells = [_number(row.test_median.get(o)) for o in t.optimizers]
        lines.append(f"| {row.problem} | " + " | ".join(cells) + " |")
    return lines


def _rank(ranks: dict[str, float], optimizer: str) -> str:
    return f"{ranks[optimizer]:.2f}" if optimizer in ranks else "–"


def _rank_table(t: Tables) -> list[str]:
    columns = ["rank of median (Friedman)", "mean of per-seed ranks"]
    if t.seed_test_rank:
        columns.append("mean of per-seed ranks on test error")
    columns.append("median overhead per evaluation (s)")
    if t.cpu_overhead:
        columns.append("median CPU overhead per evaluation (s)")
    lines = [
        "",
        "### Average rank over problems (lower is better)",
        "",
        (
            "Rank of median: each problem's median score ranked among the optimizers, "
            "averaged over problems; the Friedman test and its critical difference are "
            "computed on these ranks. Mean of per-seed ranks: ranks within each seed, "
            "averaged over seeds (the figures in parentheses above), then over problems."
        ),
        "",
        *_table_head("optimizer", columns),
    ]
    order = sorted(
        t.optimizers,
        key=lambda o: (t.friedman_rank.get(o, np.inf), t.seed_rank.get(o, np.inf)),
    )
    for o in order:
        cells = [_rank(t.friedman_rank, o), _rank(t.seed_rank, o)]
        if t.seed_test_rank:
            cells.append(_rank(t.seed_test_rank, o))
        cells.append(_number(t.overhead.get(o)))
        if t.cpu_overhead:
            cells.append(_number(t.cpu_overhead.get(o)))
        lines.append(f"| {o} | " + " | ".join(cells) + " |")
    return lines + _unranked_lines(t) + _friedman_line(t)


def _unranked_lines(t: Tables) -> list[str]:
    """Who is left out of the ranks and why, so that no optimizer or problem disappears
    from them without a word."""
    notes = []
    unranked = [o for o in t.optimizers if o not in t.ranked]
    if unranked and t.rows:
        lacking = "; ".join(f"{o} (lacks {_lacked(t, o)})" for o in unranked)
        notes.append(
            f"Not ranked, having no median on every problem: {lacking}. "
            + (f"Both rank columns rank the other {len(t.ranked)} alone, so the mean of "
               "per-seed ranks can differ from the figures in parentheses above."
               if len(t.ranked) >= 2 else "Fewer than two optimizers are left: no ranks.")
        )
    without_tests = [o for o in t.ranked if t.seed_test_rank and o not in t.seed_test_rank]
    if without_tests:
        lacking = "; ".join(
            f"{o} (lacks {', '.join(r.problem for r in t.rows if o not in r.test_median)})"
            for o in without_tests
        )
        notes.append(
            f"Not in the test-error rank column, having no test error on every problem: "
            f"{lacking}; that column ranks the other {len(t.seed_test_rank)} alone."
        )
    if t.seed_shortfalls:
        notes.append("Some medians ranked here stand on fewer seeds than planned: see the "
                     "note under the first table.")
    for problems, column in (
        (t.no_common_seed, "mean of per-seed ranks"),
        (t.no_common_test_seed, "mean of per-seed ranks on test error"),
    ):
        if problems:
            notes.append(
                f"Left out of the {column}: {', '.join(problems)}, where the ranked optimizers "
                "share no completed seed; that column averages the other "
                f"{len(t.rows) - len(problems)} problems."
            )
    return [line for note in notes for line in ("", note)]


def _lacked(t: Tables, optimizer: str) -> str:
    """The problems ``optimizer`` has no median on, with the states its runs ended in."""
    return ", ".join(
        f"{row.problem}: {t.missing.get((row.problem, optimizer), 'not run')}"
        for row in t.rows
        if optimizer not in row.median
    )


def _friedman_line(t: Tables) -> list[str]:
    if t.friedman is None:
        return []
    statistic, p_value, cd = t.friedman
    return [
        "",
        (
            f"Friedman test over problems on the ranks of the medians: chi² = {statistic:.3g}, "
            f"p = {p_value:.3g}; Nemenyi critical difference (α = 0.05) = {cd:.2f} ranks "
            "(two optimizers whose ranks of median differ by more differ significantly)."
        ),
    ]


def _anchor_tables(t: Tables) -> list[str]:
    if not t.overhead_ratio:
        return []
    anchors = [o for o in t.optimizers if is_anchor(o)]
    mine = [o for o in t.optimizers if not is_anchor(o)]
    lines = ["", "### Overhead ratio ensembo / anchor (median of per-(problem, seed) ratios)", ""]
    lines += _table_head("ensembo entry", anchors)
    for m in mine:
        cells = [_number(t.overhead_ratio.get((m, a))) for a in anchors]
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "### Head to head: ensembo entry vs anchor over (problem, seed) pairs",
        "",
        "wins/losses/ties of the ensembo entry on the final score, two-sided sign-test p.",
        "",
    ]
    lines += _table_head("ensembo entry", anchors)
    for m in mine:
        cells = []
        for a in anchors:
            if (m, a) in t.head_to_head:
                w, lost, tie, p = t.head_to_head[(m, a)]
                cells.append(f"{w}/{lost}/{tie} (p={p:.2g})")
            else:
                cells.append("–")
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    return lines
