"""``ensembo report STORAGE [--out DIR]``: tables and plots of a stored study.

Given benchmark results instead of a study — the output folder of ``ensembo bench`` or
a CSV with columns ``problem,method,loss`` — it writes the average ranks and a
critical-difference diagram.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator
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
    parser.set_defaults(handler=run, interrupt_note=report_cut_short)


def report_cut_short(args) -> str:
    """A report's files are written aside and moved in together once all are written
    (:mod:`ensembo.report.staged_folder`): stopped before then, the folder holds what it
    held, an earlier report or nothing of this one; stopped after, the report is whole."""
    out = _out_folder(args)
    if getattr(args, "report_written", False):
        return f"the report in {out} is complete"
    if not getattr(args, "report_folder_existed", False) or not out.is_dir():
        return "no report was written"
    return (f"the report in {out} was not updated (its files are moved in only once all "
            "are written); run the command again to write it")


def run(args) -> int:
    source = Path(args.storage)
    if not source.exists():
        raise ExperimentError(
            str(source),
            "no such file; give a study's SQLite file, an 'ensembo bench' folder or a results CSV",
        )
    out = _out_folder(args)
    option = f"--out {args.out}" if args.out else f"{out} (the default report folder)"
    if out.exists() and not out.is_dir():
        raise ExperimentError(option, "is a file; give a folder (the report is several files)")
    args.report_folder_existed = out.is_dir()
    with _writing_into(out, option):
        written = _write(source, out, args)
    args.report_written = True
    for path in written:
        print(path)
    return 0


def _write(source: Path, out: Path, args) -> list[Path]:
    if source.is_dir() or source.suffix.lower() == ".csv":
        return write_benchmark_report(
            source, out, alpha=args.alpha, plots=not args.no_plots, budget=args.budget
        )
    if args.budget is not None:
        raise ExperimentError(str(source), "--budget is for benchmark results, not a study")
    return write_study_report(source, out, plots=not args.no_plots)


@contextlib.contextmanager
def _writing_into(out: Path, option: str) -> Iterator[None]:
    """A report folder that cannot be made or written (a missing or read-only parent, a
    file in the way) is the user's to fix, named by ``option``; it failed as a bug."""
    try:
        yield
    except OSError as error:
        if error.filename is None or not _within(Path(os.fsdecode(error.filename)), out):
            raise
        raise ExperimentError(
            option, f"cannot write the report into {out} ({error.strerror}: {error.filename})"
        ) from error


def _within(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder``, inside it or a missing parent made for it (not
    an existing one: a benchmark folder read for the report may hold ``--out``)."""
    path, folder = path.absolute(), folder.absolute()
    made_for_it = path in folder.parents and not path.exists()
    return path == folder or folder in path.parents or made_for_it


def _out_folder(args) -> Path:
    return Path(args.out) if args.out else _default_out(Path(args.storage))


def _default_out(source: Path) -> Path:
    """``<stem>-report`` next to ``source``; resolved first, as ``.`` or ``..`` has no name."""
    base = source.resolve()
    return base.with_name(f"{base.stem}-report")
