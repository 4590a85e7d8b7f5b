"""Write a report folder: compute the data once, then each rendering into its file.

The files are written into a staging folder and moved in together once all are written
(:mod:`ensembo.report.staged_folder`): a report that fails or is stopped leaves the
folder as it was.
"""

from __future__ import annotations

import importlib.util
import logging
from collections import Counter
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING

from ensembo.errors import ExperimentError
from ensembo.registry import Registry
from ensembo.report.data import compute_report
from ensembo.report.staged_folder import staged
from ensembo.report.tables import (
    markdown_table,
    summary_markdown,
    trials_markdown,
    write_trials_csv,
)

if TYPE_CHECKING:
    from ensembo.report.critical_difference import MethodComparison

logger = logging.getLogger(__name__)


def plotting_available() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def _plots_wanted(plots: bool) -> bool:
    if plots and not plotting_available():
        logger.warning(
            "matplotlib is not installed, so the report has no figures; "
            "install it with: pip install 'ensembo[plots]' (or pass --no-plots to silence this)"
        )
        return False
    return plots


def write_study_report(
    storage: str | PathLike,
    out: str | PathLike,
    *,
    plots: bool = True,
    registry: Registry | None = None,
) -> list[Path]:
    """``report.md``, ``trials.md``, ``trials.csv`` and, with matplotlib, the PNG figures."""
    data = compute_report(storage, registry)  # before any folder is made: it may refuse
    out = Path(out)
    wanted = _plots_wanted(plots)
    with staged(out) as stage:
        figures: list[Path] = []
        if wanted:
            from ensembo.report.plots import plot_study

            figures = plot_study(data, stage)
        (stage / "trials.md").write_text(trials_markdown(data), encoding="utf-8")
        write_trials_csv(data, stage / "trials.csv")
        (stage / "report.md").write_text(summary_markdown(data, figures), encoding="utf-8")
    names = ["report.md", "trials.md", "trials.csv", *(figure.name for figure in figures)]
    return [out / name for name in names]


def write_benchmark_report(
    results: str | PathLike,
    out: str | PathLike,
    *,
    alpha: float = 0.05,
    plots: bool = True,
    budget: int | None = None,
) -> list[Path]:
    """``ranks.md`` (average ranks, Friedman, Nemenyi) and ``critical_difference.png``.

    ``results`` is a folder of ``ensembo bench`` run records or a long results CSV;
    ``budget`` ranks only a folder's runs of that budget.
    """
    from ensembo.report.critical_difference import (
        compare_methods,
        methods_without_a_complete_run,
        other_records,
        read_bench_records,
        read_results_csv,
    )

    source = Path(results)
    left_out = ""
    if source.is_dir():
        data = read_bench_records(source, budget)
        left_out = _left_out_note(other_records(source)) + _unranked_note(
            methods_without_a_complete_run(source, budget, data.methods))
    elif budget is not None:
        raise ExperimentError(
            str(source), "a budget selects runs of an 'ensembo bench' folder; a results "
            "CSV has no budgets"
        )
    else:
        data = read_results_csv(source)
    matrix, methods, problems = data.losses, data.methods, data.problems
    out = Path(out)
    runs = "" if budget is None else f", runs with budget {budget}"
    heading = (
        f"# Ranks over {len(problems)} problems\n\nFrom `{results}`{runs}; "
        f"1 is the lowest loss.\n\n{left_out}{_dropped_note(data.dropped, results)}"
        f"{_seed_shortfall_note(data.seed_shortfalls)}"
    )
    if len(methods) == 2:  # Friedman and its diagram need three; a pair has paired tests
        with staged(out) as stage:
            (stage / "ranks.md").write_text(
                heading + _pair_comparison(matrix, methods), encoding="utf-8"
            )
        return [out / "ranks.md"]
    # both read before any folder is made: they may refuse
    comparison = compare_methods(matrix, methods, alpha)
    diagram = len(problems) >= 2 and _plots_wanted(plots)
    with staged(out) as stage:
        if diagram:
            from ensembo.report.critical_difference import plot_critical_difference

            plot_critical_difference(comparison, stage / "critical_difference.png")
        table = markdown_table(
            ["method", "average rank"],
            list(zip(comparison.methods, comparison.average_ranks, strict=True)),
        )
        figure = "\n![critical difference](critical_difference.png)\n" if diagram else ""
        (stage / "ranks.md").write_text(
            f"{heading}{table}\n\n{_friedman_text(comparison)}\n{figure}", encoding="utf-8"
        )
    return [out / "ranks.md", *([out / "critical_difference.png"] if diagram else [])]


def _friedman_text(comparison: MethodComparison) -> str:
    """The Friedman test and critical difference, which compare ranks across problems:
    over a single one they would print a p and a CD that mean nothing."""
    if comparison.n_problems < 2:
        return (
            "No Friedman test, critical difference or diagram over a single problem: they "
            "compare ranks across problems, so they need at least two."
        )
    return (
        f"Friedman statistic {comparison.friedman_statistic:.4g}, "
        f"p = {comparison.friedman_p_value:.3g}. Nemenyi critical difference at "
        f"alpha = {comparison.alpha}: {comparison.critical_difference:.3f}."
    )


def _dropped_note(dropped: dict[str, tuple[str, ...]], source: str | PathLike) -> str:
    """The problems left out because some method has no result on them, named in
    ``ranks.md`` and warned of: one mistyped method name drops every other problem."""
    if not dropped:
        return ""
    from ensembo.report.critical_difference import describe_dropped

    logger.warning(
        "%s: %d problem(s) left out of the ranks, lacking a method: %s",
        source, len(dropped), _lacking_counts(dropped),
    )
    return (
        f"Left out: {len(dropped)} problem{'' if len(dropped) == 1 else 's'} on which some "
        "method has no result, since the Friedman test needs every method on every "
        f"problem: {describe_dropped(dropped)}.\n\n"
    )


def _lacking_counts(dropped: dict[str, tuple[str, ...]]) -> str:
    """``c missing on 9 problems, a missing on 1 problem``: what the dropped problems lack."""
    counts = Counter(method for lacks in dropped.values() for method in lacks)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{m} missing on {n} problem{'' if n == 1 else 's'}" for m, n in ranked)


def _seed_shortfall_note(shortfalls) -> str:
    """The means made on fewer seeds than the others of their problem, named with the
    seeds they lack: ranked beside means over every seed, they would read as alike."""
    if not shortfalls:
        return ""
    from ensembo.bench.seed_coverage import shortfall_lines

    return (
        "Fewer seeds than the others: a failed or skipped run is left out of its method's "
        "mean over seeds, not counted against it, so these means are over fewer seeds than "
        "the rest of their problem's:\n\n" + "\n".join(shortfall_lines(shortfalls, "mean"))
        + "\n\n"
    )


def _left_out_note(folders: list[str]) -> str:
    """Records of the benchmarks with their own protocol are not ranked; say so."""
    if not folders:
        return ""
    return (
        f"Left out: {', '.join(f'`{f}`' for f in folders)} (records of a benchmark with "
        "its own protocol, e.g. `ensembles`, `estimators` or `overfitting`, not optimizer "
        "runs; see the report.md next to them).\n\n"
    )


def _unranked_note(unranked: dict[str, list[str]]) -> str:
    """Optimizers with no complete run are not ranked; say so, and what their runs are."""
    if not unranked:
        return ""
    listed = ", ".join(f"`{method}` ({', '.join(states)})"
                       for method, states in unranked.items())
    return f"Not ranked, no complete run: {listed}.\n\n"


def _pair_comparison(matrix, methods: list[str]) -> str:
    """Average ranks, wins and the paired tests of two methods over the problems."""
    from ensembo.stats import average_ranks, sign_test, wilcoxon_signed_rank

    first, second = matrix[:, 0], matrix[:, 1]
    table = markdown_table(
        ["method", "average rank"],
        list(zip(methods, average_ranks(matrix), strict=True)),
    )
    signs = sign_test(first, second)
    wilcoxon = wilcoxon_signed_rank(first, second)
    return (
        f"{table}\n\n{methods[0]} has the lower loss on {signs.wins} problems, {methods[1]} "
        f"on {signs.losses}, {signs.ties} tied (sign test p = {signs.p_value:.3g}; Wilcoxon "
        f"signed-rank p = {wilcoxon.p_value:.3g}). With two methods there is no Friedman "
        "test or critical-difference diagram; those need three or more.\n"
    )
