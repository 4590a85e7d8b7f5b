"""``ensembo bench SUITE``: run a benchmark suite against the anchor libraries."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
from pathlib import Path

from ensembo.bench.seeds import parse_seeds
from ensembo.cli.exit_codes import INTERRUPTED, TERMINATED, USAGE_ERROR
from ensembo.errors import ExperimentError


def _positive(text: str) -> int:
    """A count of at least 1 (``--budget``, ``--workers``): 0 or less is a mistake,
    not a request for the default."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number >= 1") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: must be at least 1")
    return value


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "bench", help="benchmark optimizers on a suite (synthetic, conditional, hpo, ...)"
    )
    parser.add_argument("suite", help="suite name; 'list' shows the available suites")
    parser.add_argument(
        "--optimizers",
        help="comma-separated, e.g. ensembo:gp+ei+lbfgs,smac-hpo,random "
        "(default: the suite's list: ensembo:random and every anchor); for 'ensembles', "
        "its experiments (e.g. esmbo-large, eo-wide; an unknown name lists them); not "
        "used by 'estimators' and 'overfitting'",
    )
    parser.add_argument(
        "--problems",
        help="comma-separated subset of the suite's problems (for 'ensembles', "
        "'estimators' and 'overfitting': datasets)",
    )
    parser.add_argument(
        "--seeds", type=parse_seeds, default=parse_seeds("3"),
        help="N: seeds 0..N-1 per optimizer (default 3); or a list such as 0,5-9 "
        "(seed 7 alone: 7-7)",
    )
    parser.add_argument(
        "--budget", type=_positive,
        help="evaluations per run (default: each problem's own; each experiment's for "
        "'ensembles', 'estimators' and 'overfitting')",
    )
    parser.add_argument(
        "--workers", type=_positive, default=1, help="runs in parallel, one process each"
    )
    parser.add_argument("--out", type=Path, default=Path("bench-results"),
                        help="directory for run records and the report (default bench-results)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--report-only", action="store_true",
                        help="write the report from the records already there; run nothing")
    parser.set_defaults(handler=run)


def _command_line(args) -> str:
    """The invocation as given, rebuilt from the parsed options (for the report)."""
    parts = ["ensembo", "bench", args.suite]
    for option in ("optimizers", "problems", "seeds", "budget", "workers", "out"):
        value = getattr(args, option)
        if value is not None:
            parts += [f"--{option}", str(value)]
    if getattr(args, "report_only", False):
        parts.append("--report-only")
    return " ".join(shlex.quote(p) for p in parts)


# Benchmarks with their own protocol (not optimizer x problem): module with main(args, command).
STANDALONE = {
    "overfitting": (
        "ensembo.bench.overfitting",
        "reshuffling and posterior-mean selection (Lévesque ch. 3)",
    ),
    "estimators": ("ensembo.bench.estimators", "EnsemboClassifier/Regressor vs tuned forests"),
    "ensembles": (
        "ensembo.bench.ensembles",
        "ESMBO, EO, SEGOR vs single best, post-hoc and random search",
    ),
}


def _names(text: str | None, option: str = "--optimizers") -> list[str] | None:
    """Comma-separated names, in order, each once (a repeated name would run twice).

    Given but naming nothing (``,``) is a mistake, not a request for the default list.
    """
    if text is None:
        return None
    names = list(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    if not names:
        raise ExperimentError(option, f"{text!r} names nothing; give comma-separated names")
    return names


def _check_suite(name: str) -> None:
    """An unknown suite names every suite ``ensembo bench list`` shows."""
    from ensembo.bench.suite import UnknownSuiteError, _suite_modules

    suites, broken = _suite_modules()
    if name in suites or name in STANDALONE:
        return
    failures = "".join(f"; {module} failed to import ({error})" for module, error in broken.items())
    raise UnknownSuiteError(
        f"unknown benchmark suite {name!r}; available: "
        f"{', '.join(sorted([*suites, *STANDALONE]))}{failures} (see 'ensembo bench list')"
    )


def _check_out(out: str) -> None:
    """An unwritable ``--out`` is the user's to fix: say so before any run, not as a
    crash when the first record is written."""
    try:
        Path(out).mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as error:
        raise ExperimentError("--out", f"cannot write run records to {out}: {error}") from error


def run(args) -> int:
    from ensembo.bench.benchmark import run_benchmark
    from ensembo.bench.report_only import report_kept
    from ensembo.bench.suite import available_suites

    if args.suite == "list":
        for name, suite in sorted(available_suites().items()):
            print(f"{name:<14} {suite.description}")
        for name, (_, description) in sorted(STANDALONE.items()):
            print(f"{name:<14} {description}")
        return 0
    _check_suite(args.suite)
    optimizers, problems = _names(args.optimizers), _names(args.problems, "--problems")
    _check_out(args.out)
    try:
        if args.suite in STANDALONE:
            import importlib

            module = importlib.import_module(STANDALONE[args.suite][0])
            return module.main(args, _command_line(args))
        result = run_benchmark(
            args.suite, optimizers=optimizers, problems=problems,
            seeds=args.seeds, budget=args.budget, workers=args.workers, out=args.out,
            command=_command_line(args), progress=not args.no_progress and not args.report_only,
            execute=not args.report_only,
        )
    except KeyboardInterrupt:
        terminated = args.terminated.is_set()
        print(
            f"ensembo bench: {'terminated (SIGTERM)' if terminated else 'interrupted'}; "
            f"finished run records are kept in {args.out}, and "
            "the same command resumes (runs in progress start again)",
            file=sys.stderr,
        )
        code = TERMINATED if terminated else INTERRUPTED
        _exit_if_a_pool_is_stuck(code)
        return code
    if not result.report_written:
        print(f"{result.counts()}{_not_run(result)}")
        print(report_kept(result.report_path), file=sys.stderr)
        return USAGE_ERROR
    print(f"{result.counts()}{_not_run(result)}; report: {result.report_path}")
    if result.lost:
        print(f"ensembo bench: {result.lost} runs were not finished: their worker process "
              "died before they started; rerun the same command to run them", file=sys.stderr)
    if result.failed:
        ran = result.executed - result.skipped  # as the summary line counts them
        print(f"ensembo bench: {result.failed} of {ran} runs failed; their errors "
              f"are listed in {result.report_path}", file=sys.stderr)
    if result.skipped:  # not a failure (exit 0): installing the library makes a rerun run them
        print(f"ensembo bench: {result.skipped} of {result.executed} runs skipped for a "
              f"missing library: {result.missing_libraries}; once "
              f"{'they are' if result.missing_library_count > 1 else 'it is'} installed, the "
              "same command runs them", file=sys.stderr)
    return 1 if result.lost or result.failed else 0


def _exit_if_a_pool_is_stuck(code: int) -> None:
    """A pool manager thread that outlived the interrupt would be joined forever at exit
    (the command printed 'interrupted' and hung); records are written atomically, so
    leave at once instead."""
    from ensembo.bench.runner import pool_stuck

    if pool_stuck():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _not_run(result) -> str:
    """The planned runs neither executed nor finished (--report-only): records made with
    another budget are not 'without a record', and that budget reports them."""
    other = sum(result.other_budgets.values())
    without = (result.planned - result.executed - result.skipped_as_finished - result.lost
               - other)
    parts = [f", {without} without a record (not run: --report-only)"] if without > 0 else []
    if other:
        budgets = sorted(result.other_budgets, key=str)
        how = (f"pass --budget {budgets[0]}" if len(budgets) == 1
               else f"budgets {', '.join(map(str, budgets))}; pass one as --budget")
        parts.append(f", {other} made with another budget ({how} to report them)")
    return "".join(parts)
