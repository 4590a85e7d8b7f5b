"""Critical-difference diagrams (Demšar, 2006) for comparing methods over many problems.

Compute, then draw: :func:`compare_methods` runs the Friedman test and the Nemenyi
critical difference from :mod:`ensembo.stats` on a (problems, methods) loss matrix and
finds the groups of methods whose average ranks differ by less than the critical
difference; :func:`plot_critical_difference` draws the classic diagram. Results
arrive as the run records of ``ensembo bench`` (:func:`read_bench_records`) or as a
long CSV (``problem,method,loss`` and optionally ``seed``, :func:`read_results_csv`);
several seeds of a (problem, method) pair are averaged, and the problems dropped because
a method is missing are returned with what each lacks, so a report can name them.
"""

from __future__ import annotations

import csv
import json
import math
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from ensembo.errors import ExperimentError
from ensembo.report.plots import new_figure, save
from ensembo.stats import friedman_test

if TYPE_CHECKING:
    from ensembo.bench.seed_coverage import SeedShortfall

RESULT_COLUMNS = ("problem", "method", "loss")


@attrs.frozen(kw_only=True)
class MethodComparison:
    """Methods sorted by average rank (1 = best), with the Friedman and Nemenyi results."""

    methods: tuple[str, ...]
    average_ranks: tuple[float, ...]
    critical_difference: float
    friedman_statistic: float
    friedman_p_value: float
    n_problems: int
    alpha: float
    cliques: tuple[tuple[int, int], ...]
    """Index ranges [first, last] (into ``methods``) of groups not significantly different."""


def _cliques(ranks: np.ndarray, critical_difference: float) -> list[tuple[int, int]]:
    """Maximal runs of sorted ranks spanning at most the critical difference."""
    runs = []
    for first in range(len(ranks)):
        last = first
        while last + 1 < len(ranks) and ranks[last + 1] - ranks[first] <= critical_difference:
            last += 1
        if last > first and not any(a <= first and last <= b for a, b in runs):
            runs.append((first, last))
    return runs


def compare_methods(
    losses: np.ndarray, methods: Sequence[str], alpha: float = 0.05
) -> MethodComparison:
    """Friedman + Nemenyi on ``losses`` of shape (problems, methods); lower loss is better."""
    matrix = np.asarray(losses, dtype=float)
    if matrix.ndim != 2 or matrix.shape[1] != len(methods):
        raise ValueError(f"losses of shape {matrix.shape} do not match {len(methods)} methods")
    result = friedman_test(matrix, alpha=alpha)
    order = np.argsort(result.average_ranks, kind="stable")
    ranks = np.asarray(result.average_ranks)[order]
    return MethodComparison(
        methods=tuple(methods[i] for i in order),
        average_ranks=tuple(float(r) for r in ranks),
        critical_difference=result.critical_difference,
        friedman_statistic=result.statistic,
        friedman_p_value=result.p_value,
        n_problems=matrix.shape[0],
        alpha=alpha,
        cliques=tuple(_cliques(ranks, result.critical_difference)),
    )


@attrs.frozen(kw_only=True)
class LossMatrix:
    """What :func:`loss_matrix` ranks, and the problems it dropped."""

    losses: np.ndarray = attrs.field(eq=False)  # (problems, methods)
    methods: list[str]
    problems: list[str]
    dropped: dict[str, tuple[str, ...]]  # problem -> the methods it has no result of
    # ranked (problem, method) pairs averaged over fewer seeds than the problem's records
    seed_shortfalls: tuple[SeedShortfall, ...] = ()


def loss_matrix(cells: Mapping[tuple[str, str], Sequence[float]], source: str) -> LossMatrix:
    """Loss matrix (problems, methods), method names and problem names from
    ``{(problem, method): [loss per seed]}``; seeds are averaged.

    Problems missing a method are dropped, since the Friedman test needs every method
    on every problem; they are kept in ``dropped``, since one mistyped method name
    drops every other problem.
    """
    methods = sorted({method for _, method in cells})
    lacking = {
        problem: tuple(m for m in methods if (problem, m) not in cells)
        for problem in sorted({problem for problem, _ in cells})
    }
    problems = [problem for problem, lacks in lacking.items() if not lacks]
    dropped = {problem: lacks for problem, lacks in lacking.items() if lacks}
    if len(methods) < 2 or not problems:
        raise ExperimentError(
            source,
            f"a comparison needs >= 2 methods on common problems; found "
            f"{len(methods)} methods and {len(problems)} complete problems"
            + (f" (lacking: {describe_dropped(dropped)})" if dropped else ""),
        )
    matrix = np.array([[np.mean(cells[p, m]) for m in methods] for p in problems])
    return LossMatrix(losses=matrix, methods=methods, problems=problems, dropped=dropped)


def describe_dropped(dropped: Mapping[str, Sequence[str]]) -> str:
    """``p1 (lacks a, b), p2 (lacks c)``."""
    return ", ".join(f"{problem} (lacks {', '.join(lacks)})" for problem, lacks in dropped.items())


def read_results_csv(path: Path) -> LossMatrix:
    """:func:`loss_matrix` of a long CSV with columns ``problem,method,loss`` (and
    optionally ``seed``: its distinct seeds are averaged, a repeated one refused)."""
    with Path(path).open(newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in RESULT_COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise ExperimentError(
                str(path),
                f"a results CSV needs columns {', '.join(RESULT_COLUMNS)}; "
                f"missing {', '.join(missing)}",
            )
        cells: dict[tuple[str, str], list[float]] = defaultdict(list)
        first_line: dict[tuple[str, str, str], int] = {}
        for line, row in enumerate(reader, start=2):
            where = f"{path}: line {line}"
            _refuse_repeated_seed(row, line, first_line, where)
            cells[row["problem"], row["method"]].append(_loss(row["loss"], where))
    return loss_matrix(cells, str(path))


def _refuse_repeated_seed(
    row: Mapping[str, str | None], line: int, first_line: dict[tuple[str, str, str], int],
    where: str,
) -> None:
    """A (problem, method, seed) is one run: a second row of it would be averaged in as if
    it were another seed. Rows without a seed are averaged as before."""
    seed = (row.get("seed") or "").strip()
    if not seed:
        return
    key = (row["problem"], row["method"], _seed_number(seed))
    if key in first_line:
        raise ExperimentError(
            where,
            f"problem {key[0]!r}, method {key[1]!r}, seed {seed!r} repeats line "
            f"{first_line[key]}; give each seed of a (problem, method) one row",
        )
    first_line[key] = line


def _refuse_repeated_run(
    record: Mapping[str, Any], path: Path, pair: tuple[str, str],
    first_path: dict[tuple[str, str, Any, Any], Path],
) -> None:
    """One (problem, optimizer, seed, budget) found twice (a rerun into a second folder
    under the one reported, a copied folder) would be averaged in as another seed."""
    key = (*pair, record.get("seed"), record.get("budget"))
    if key in first_path:
        raise ExperimentError(
            str(path),
            f"repeats the run {first_path[key]} (problem {pair[0]}, optimizer {pair[1]}, seed "
            f"{key[2]}): report one of the folders, or remove one copy",
        )
    first_path[key] = path


def _seed_number(seed: str) -> str:
    """``0``, ``00`` and ``0.0`` are one seed; text that is no number stays as it is.
    Whole numbers are read as integers (through a float, seeds above 2**53 merged)."""
    try:
        return str(int(seed))
    except ValueError:
        pass
    try:
        number = float(seed)
    except ValueError:
        return seed
    return str(int(number)) if number.is_integer() else str(number)


def _loss(text: str | None, where: str) -> float:
    """A CSV loss: a finite number, since one nan or inf would make every rank nan."""
    try:
        value = float(text)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ExperimentError(where, f"loss {text!r} is not a number") from None
    if not math.isfinite(value):
        raise ExperimentError(where, f"loss {text!r} is not a finite number")
    return value


def read_bench_records(folder: Path, budget: int | None = None) -> LossMatrix:
    """:func:`loss_matrix` of the run records ``ensembo bench`` wrote under ``folder``.

    Each complete run scores what the benchmark report ranks by (final regret when the
    optimum is known, else the final validation loss); problems are ``suite/problem``.
    ``budget`` keeps only the runs of that budget; without it, one problem's runs must
    all have the same budget, since a 5-trial run ranked against a 200-trial one says
    nothing about either.
    """
    from ensembo.bench.metrics import final_score

    cells: dict[tuple[str, str], list[float]] = defaultdict(list)
    budgets: dict[str, set] = defaultdict(set)
    first_path: dict[tuple[str, str, Any, Any], Path] = {}
    for record, path in _run_records(folder):
        record.setdefault("problem", path.parent.parent.name)
        problem = _problem_name(record)
        budgets[problem].add(record.get("budget"))
        if budget is None or record.get("budget") == budget:
            optimizer = str(record.get("optimizer"))
            _refuse_repeated_run(record, path, (problem, optimizer), first_path)
            cells[problem, optimizer].append(final_score(record))
    found = sorted(set().union(*budgets.values()), key=str)
    if budget is not None and not cells:
        raise ExperimentError(
            str(folder),
            f"no complete run records with budget {budget}; the records here have "
            f"budget {', '.join(map(str, found)) or 'none'}",
        )
    mixed = {problem: runs for problem, runs in budgets.items() if len(runs) > 1}
    if budget is None and mixed:
        listing = "; ".join(
            f"{problem}: {', '.join(map(str, sorted(runs, key=str)))}"
            for problem, runs in sorted(mixed.items())
        )
        raise ExperimentError(
            str(folder),
            f"run records of several budgets for one problem ({listing}); rank one budget "
            f"at a time with --budget (one of {', '.join(map(str, found))})",
        )
    if not cells:
        others = other_records(folder)
        left_out = (
            f" (left out: {', '.join(others)}, records of a benchmark with its own "
            "protocol and report.md, not optimizer runs)" if others else ""
        )
        raise ExperimentError(
            str(folder),
            "no complete 'ensembo bench' run records (SUITE/PROBLEM/OPTIMIZER/seed-N.json) "
            f"in this folder{left_out}; give the --out folder of 'ensembo bench', a "
            "results CSV or a study's SQLite file",
        )
    matrix = loss_matrix(cells, str(folder))
    return attrs.evolve(matrix, seed_shortfalls=_seed_shortfalls(folder, budget, matrix.problems))


def _seed_shortfalls(
    folder: Path, budget: int | None, problems: Sequence[str]
) -> tuple[SeedShortfall, ...]:
    """The ranked (problem, method) means made on fewer seeds than the problem's run
    records of ``budget`` have: a failed run is left out of its method's mean, not
    counted against it. A seed whose record was made with another budget is named so
    ("made with budget 20"), as in the bench report, not as having no record."""
    from ensembo.bench.seed_coverage import OTHER_BUDGET, seed_shortfalls

    records, other_budgets = [], []
    for record, _ in _optimizer_records(folder):
        if budget is None or record.get("budget") == budget:
            records.append(record)
        else:
            other_budgets.append({**record, "status": OTHER_BUDGET})
    planned: dict[str, set] = defaultdict(set)
    for record in records:
        planned[_problem_name(record)].add(record.get("seed"))
    return seed_shortfalls(
        [*other_budgets, *records], _problem_name, problems,  # a seed's record of budget wins
        {problem: sorted(seeds, key=str) for problem, seeds in planned.items()},
    )


def _problem_name(record: Mapping[str, Any]) -> str:
    """``suite/problem``, as :func:`read_bench_records` names a problem."""
    return f"{record.get('suite', '')}/{record.get('problem')}"


def is_run_record(record: Mapping[str, Any]) -> bool:
    """An optimizer run of the plain harness, which has a final score to rank.

    The ``ensembles``, ``estimators`` and ``overfitting`` benchmarks also write complete
    ``seed-N.json`` records, but theirs compare methods inside one record and have no
    ``optimizer`` or final loss.
    """
    return "optimizer" in record and (
        record.get("final_regret") is not None or record.get("final_loss") is not None
    )


def _run_records(folder: Path) -> Iterator[tuple[dict[str, Any], Path]]:
    return ((r, p) for r, p in _complete_records(folder) if is_run_record(r))


def other_records(folder: Path) -> list[str]:
    """Folders (first level under ``folder``) holding complete records that are not
    optimizer runs, so a report can say what it left out."""
    found = {
        _top_folder(Path(folder), path)
        for record, path in _complete_records(folder)
        if not is_run_record(record)
    }
    return sorted(found)


def methods_without_a_complete_run(
    folder: Path, budget: int | None, ranked: Sequence[str]
) -> dict[str, list[str]]:
    """Optimizers with run records under ``folder`` (of ``budget``, if given) but no
    complete run, by the states their records are in (skipped, failed): a report
    ranked the others without a word of them."""
    states: dict[str, set[str]] = defaultdict(set)
    for record, _ in _optimizer_records(folder):
        if budget is None or record.get("budget") == budget:
            states[str(record["optimizer"])].add(str(record.get("status")))
    return {method: sorted(found) for method, found in sorted(states.items())
            if method not in ranked}


def _optimizer_records(folder: Path) -> Iterator[tuple[dict[str, Any], Path]]:
    """Every optimizer run's record under ``folder``, whatever its state."""
    for path in sorted(Path(folder).rglob("seed-*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and "optimizer" in record:
            record.setdefault("problem", path.parent.parent.name)
            yield record, path


def _top_folder(folder: Path, path: Path) -> str:
    parts = path.relative_to(folder).parts
    return str(folder / parts[0]) if len(parts) > 1 else str(path)


def _complete_records(folder: Path) -> Iterator[tuple[dict[str, Any], Path]]:
    """The finished runs' records under ``folder``, with their paths."""
    for path in sorted(Path(folder).rglob("seed-*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # a run being written, or not a record
        if isinstance(record, dict) and record.get("status") == "complete":
            yield record, path


def plot_critical_difference(
    comparison: MethodComparison, path: Path, title: str | None = None
) -> Path:
    """Rank axis on top, methods hanging left (better half) and right, thick bars join
    methods that are not significantly different."""
    k = len(comparison.methods)
    half = (k + 1) // 2
    depth = 0.6 + 0.3 * len(comparison.cliques) + 0.5 * half
    figure = new_figure(8.0, 0.9 + 0.45 * (depth + 1.6))
    axes = figure.add_subplot()
    axes.set_axis_off()
    low, high = 1, k
    axes.set_xlim(low - 0.9, high + 0.9)
    axes.set_ylim(depth, -1.6)
    axes.hlines(0, low, high, color="black", linewidth=1)
    for rank in range(low, high + 1):
        axes.vlines(rank, 0, -0.15, color="black", linewidth=1)
        axes.text(rank, -0.25, str(rank), ha="center", va="bottom", fontsize="small")
    axes.text(
        (low + high) / 2, -0.85, "average rank (1 = lowest loss)", ha="center", fontsize="small"
    )
    cd = comparison.critical_difference
    axes.hlines(-1.3, low, low + cd, color="black", linewidth=2)
    axes.text(low + cd / 2, -1.4, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize="small")
    for index, (method, rank) in enumerate(
        zip(comparison.methods, comparison.average_ranks, strict=True)
    ):
        left = index < half
        row = 0.6 + (index if left else k - 1 - index) * 0.5 + 0.3 * len(comparison.cliques)
        end = low - 0.5 if left else high + 0.5
        axes.plot([rank, rank, end], [0, row, row], color="black", linewidth=0.8)
        axes.text(
            end - 0.05 if left else end + 0.05,
            row,
            f"{method} ({rank:.2f})",
            ha="right" if left else "left",
            va="center",
            fontsize="small",
        )
    for level, (first, last) in enumerate(comparison.cliques):
        y = 0.25 + 0.3 * level
        axes.hlines(
            y,
            comparison.average_ranks[first] - 0.03,
            comparison.average_ranks[last] + 0.03,
            color="tab:red",
            linewidth=3,
        )
    axes.set_title(
        title
        or f"Critical difference (Nemenyi, alpha={comparison.alpha}) over "
        f"{comparison.n_problems} problems; Friedman p={comparison.friedman_p_value:.3g}",
        fontsize="medium",
    )
    return save(figure, path)
