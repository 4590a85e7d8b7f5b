"""``ensembo report STORAGE [--out DIR]``: tables and plots of a stored study.

Given benchmark results instead of a study — the output folder of ``ensembo bench`` or
a CSV with columns ``problem,method,loss`` — it writes the average ranks and a
critical-difference diagram.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ensembo.errors import ExperimentError
from ensembo.report.write import write_benchmark_report, write_study_report


def _level(text: str) -> float:
    """A significance level: 0 or 1 and beyond give a critical difference of inf, 0 or nan."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a number") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: must be between 0 and 1 (exclusive)")
    return value


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "report", help="write a report (markdown, CSV, PNG plots) of a study or benchmark results"
    )
    parser.add_argument(
        "storage", help="a study's SQLite file, an 'ensembo bench' output folder, or a results CSV"
    )
    parser.add_argument(
        "--out", help="output folder (default: next to STORAGE, named <stem>-report)"
    )
    parser.add_argument("--no-plots", action="store_true", help="tables only, no PNG figures")
    parser.add_argument(
        "--alpha", type=_level, default=0.05,
        help="significance level for benchmark ranks, between 0 and 1 (default 0.05)",
    )
    parser.add_argument(
        "--budget", type=int,
        help="rank only the runs of this budget (an 'ensembo bench' folder with several)",
    )
    parser.set_defaults(handler=run)


def run(args) -> int:
    source = Path(args.storage)
    if not source.exists():
        raise ExperimentError(
            str(source),
            "no such file; give a study's SQLite file, an 'ensembo bench' folder or a results CSV",
        )
    out = Path(args.out) if args.out else _default_out(source)
    if source.is_dir() or source.suffix.lower() == ".csv":
        written = write_benchmark_report(
            source, out, alpha=args.alpha, plots=not args.no_plots, budget=args.budget
        )
    elif args.budget is not None:
        raise ExperimentError(str(source), "--budget is for benchmark results, not a study")
    else:
        written = write_study_report(source, out, plots=not args.no_plots)
    for path in written:
        print(path)
    return 0


def _default_out(source: Path) -> Path:
    """``<stem>-report`` next to ``source``; resolved first, as ``.`` or ``..`` has no name."""
    base = source.resolve()
    return base.with_name(f"{base.stem}-report")
