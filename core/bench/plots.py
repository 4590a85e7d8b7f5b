"""Convergence plots: median best-so-far (regret, or loss) per optimizer and problem."""

from __future__ import annotations

import functools
import importlib.util
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ensembo.bench.report_file import write_files

logger = logging.getLogger(__name__)


def convergence_plots(
    records: Sequence[dict[str, Any]],
    optimizers: Sequence[str],
    problems: Sequence[str],
    directory: Path,
) -> dict[str, str]:
    """One PNG per problem; returns problem -> file name. Empty without matplotlib,
    with a warning, as ``ensembo report`` gives: the report is then missing a section.
    The figures are staged and moved in together, so a figure is never cut short
    (:func:`~ensembo.bench.report_file.write_files`, which writes them in place where
    the folder takes no new files)."""
    if importlib.util.find_spec("matplotlib") is None:
        logger.warning(
            "matplotlib is not installed, so the benchmark report has no convergence "
            "plots; install it with: pip install 'ensembo[plots]'"
        )
        return {}
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figures = {}
    try:
        for problem in problems:
            figure = _figure(plt, records, optimizers, problem)
            if figure is not None:
                figures[problem] = figure
        # moved in together when every figure is whole; in place where plots/ takes no
        # new files, as the report is
        write_files(directory, {
            f"{problem}.png": functools.partial(figure.savefig, dpi=80)
            for problem, figure in figures.items()})
    finally:
        for figure in figures.values():
            plt.close(figure)
    return {problem: f"plots/{problem}.png" for problem in figures}


def _figure(plt: Any, records: Sequence[dict[str, Any]], optimizers: Sequence[str],
            problem: str) -> Any:
    """The convergence figure of ``problem``; None when no optimizer completed a run."""
    figure, axes = plt.subplots(figsize=(6, 4))
    positive = True
    for optimizer in optimizers:
        curves = [
            np.asarray(r["best_so_far"]) - (r.get("optimum") or 0.0)
            for r in records
            if r["problem"] == problem
            and r["optimizer"] == optimizer
            and r.get("status") == "complete"
        ]
        if not curves:
            continue
        length = min(len(c) for c in curves)
        median = np.median([c[:length] for c in curves], axis=0)
        positive &= bool(np.all(median > 0))
        axes.plot(np.arange(1, length + 1), median, label=optimizer)
    if not axes.lines:
        plt.close(figure)
        return None
    has_optimum = any(r.get("optimum") is not None for r in records if r["problem"] == problem)
    if positive:
        axes.set_yscale("log")
    axes.set_xlabel("evaluations")
    axes.set_ylabel("simple regret" if has_optimum else "best validation loss")
    axes.set_title(problem)
    axes.legend(fontsize="small")
    figure.tight_layout()
    return figure
