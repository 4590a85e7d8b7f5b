"""Parallel evaluation benchmark (issue 9): serial vs. a Dask LocalCluster.

```
python -m ensembo.bench.parallel [--workers 8] [--seeds 5] [--sleep 0.5] [--surrogate gp]
                                 [--problems branin,...] [--budget N] [--out DIR]
```

Every problem of the ``synthetic`` suite becomes an objective that sleeps ``--sleep``
seconds and returns the function value, so evaluation dominates and two cores suffice.
For each (problem, seed) the same study (surrogate, seed, budget = the problem's own)
runs once serially and once on a loopback ``LocalCluster`` with ``--workers`` worker
processes, interleaved so that both see the same machine load. Each run writes
``DIR/PROBLEM/MODE/seed-S.json`` (wall time, trials, final regret, duplicate
configurations), written whole (a Ctrl-C leaves no half of one), and is skipped when
that file can be read, so re-running resumes (an unreadable one is run again, saying so),
or when another invocation sharing ``--out`` holds the run's claim (it is running it);
``DIR/report.md`` is rewritten after every run (``--report-only`` rewrites it from the
records alone). Cluster start-up is not timed.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from ensembo.bench.functions import TEST_FUNCTIONS
from ensembo.bench.report_file import write_report
from ensembo.bench.run_claims import claim
from ensembo.bench.standalone_runs import write_record
from ensembo.bench.suites.synthetic import NAMES, budget_for
from ensembo.execution import config_key, start_local_cluster
from ensembo.study import Study
from ensembo.trials import TrialState

MODES = ("serial", "dask")

logger = logging.getLogger(__name__)


@attrs.frozen(kw_only=True)
class SleepyFunction:
    """A test function that takes ``sleep`` seconds per evaluation (picklable for Dask)."""

    name: str
    sleep: float

    def __call__(self, config: dict[str, Any]) -> float:
        function = TEST_FUNCTIONS[self.name]
        time.sleep(self.sleep)
        return float(function(np.array([config[f"x{i}"] for i in range(function.dimension)])))


def configspace(name: str):
    from ConfigSpace import ConfigurationSpace

    function = TEST_FUNCTIONS[name]
    return ConfigurationSpace(space={f"x{i}": bounds for i, bounds in enumerate(function.bounds)})


def duplicates(study: Study) -> int:
    """Trials whose configuration equals an earlier trial's."""
    seen, repeated = set(), 0
    for trial in study.trials:
        key = config_key(trial.config)
        repeated += key in seen
        seen.add(key)
    return repeated


def run_one(name: str, mode: str, seed: int, args, client) -> dict[str, Any]:
    budget = args.budget or budget_for(TEST_FUNCTIONS[name].dimension)
    study = Study(
        configspace(name),
        surrogate=None if args.surrogate == "random" else args.surrogate,
        seed=seed,
    )
    objective = SleepyFunction(name=name, sleep=args.sleep)
    started = time.perf_counter()
    study.optimize(
        objective, n_trials=budget, executor=client if mode == "dask" else None, catch=()
    )
    wall = time.perf_counter() - started
    finished = study.history.in_state(TrialState.COMPLETE, TrialState.FAILED)
    return {
        "problem": name,
        "mode": mode,
        "seed": seed,
        "workers": args.workers if mode == "dask" else 1,
        "surrogate": args.surrogate,
        "sleep": args.sleep,
        "trials": len(finished),
        "wall_seconds": wall,
        "trials_per_second": len(finished) / wall,
        "regret": study.best_trial.loss - TEST_FUNCTIONS[name].minimum,
        "duplicates": duplicates(study),
        "retried": sum(t.attempts > 1 for t in study.trials),
    }


def read_record(path: Path) -> dict[str, Any] | None:
    """The run's record; None when there is none or it cannot be read (one cut short when
    records were written in place): the run is then missing, and run again."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def run_claimed(path: Path, run: Callable[[], dict[str, Any]]) -> dict[str, Any] | None:
    """``run()`` recorded in ``path``, unless the run's record can be read or another
    invocation sharing ``--out`` holds its claim (:mod:`ensembo.bench.run_claims`; it is
    running it): None then. Without the claim both ran it."""
    if read_record(path) is not None:
        return None
    with claim(path) as taken:
        if not taken.held:
            logger.info("%s: another invocation sharing --out is running it", path)
            return None
        if read_record(path) is not None:  # finished by another invocation meanwhile
            return None
        if path.exists():
            logger.warning("%s cannot be read (cut short?): running it again", path)
        record = run()
        write_record(path, record)
        return record


def load_records(out: Path, warn: bool = True) -> list[dict[str, Any]]:
    """Every readable record under ``out``; an unreadable one is left out (``warn``: and
    named), so that one broken file does not stop the report."""
    records = []
    for path in sorted(out.glob("*/*/seed-*.json")):
        record = read_record(path)
        if record is not None:
            records.append(record)
        elif warn:
            logger.warning("%s cannot be read (cut short?): left out of the report; a run "
                           "without --report-only runs it again", path)
    return records


def report(records: list[dict[str, Any]], command: str) -> str:
    """Markdown: throughput ratio and regret comparison per problem, duplicates."""
    lines = [
        f"Command: `{command}`",
        "",
        (
            "| problem | seeds (serial/dask) | serial trials/s | dask trials/s | speed-up | "
            "serial regret median [min–max] | dask regret median [min–max] | "
            "dask median within serial range | dask seeds within serial range | "
            "dask seeds at or below serial max | duplicates (serial/dask) |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    totals = {mode: [0, 0.0] for mode in MODES}
    for name in sorted({r["problem"] for r in records}, key=NAMES.index):
        by_mode = {
            mode: [r for r in records if r["problem"] == name and r["mode"] == mode]
            for mode in MODES
        }
        for mode in MODES:
            totals[mode][0] += sum(r["trials"] for r in by_mode[mode])
            totals[mode][1] += sum(r["wall_seconds"] for r in by_mode[mode])
        if not all(by_mode.values()):
            continue
        rate = {m: statistics.median(r["trials_per_second"] for r in by_mode[m]) for m in MODES}
        regrets = {m: [r["regret"] for r in by_mode[m]] for m in MODES}
        low, high = min(regrets["serial"]), max(regrets["serial"])
        median_dask = statistics.median(regrets["dask"])
        inside = sum(low <= value <= high for value in regrets["dask"])
        no_worse = sum(value <= high for value in regrets["dask"])
        lines.append(
            f"| {name} | {len(by_mode['serial'])}/{len(by_mode['dask'])} | {rate['serial']:.3f} | "
            f"{rate['dask']:.3f} | {rate['dask'] / rate['serial']:.2f}× | "
            f"{_spread(regrets['serial'])} | {_spread(regrets['dask'])} | "
            f"{'yes' if low <= median_dask <= high else 'no'} | {inside}/{len(regrets['dask'])} | "
            f"{no_worse}/{len(regrets['dask'])} | "
            f"{_total(by_mode['serial'], 'duplicates')}/{_total(by_mode['dask'], 'duplicates')} |"
        )
    if all(totals[m][1] for m in MODES):
        overall = {m: totals[m][0] / totals[m][1] for m in MODES}
        lines += [
            "",
            (
                f"Overall: serial {overall['serial']:.3f} trials/s, "
                f"dask {overall['dask']:.3f} trials/s, "
                f"speed-up {overall['dask'] / overall['serial']:.2f}× "
                f"({totals['serial'][0]} and {totals['dask'][0]} trials)."
            ),
        ]
    return "\n".join(lines) + "\n"


def _total(records: list[dict[str, Any]], key: str) -> int:
    return sum(record[key] for record in records)


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3g} [{min(values):.3g}–{max(values):.3g}]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ensembo.bench.parallel", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--sleep", type=float, default=0.5)
    parser.add_argument("--surrogate", default="gp", help="registry name, or 'random'")
    parser.add_argument("--problems", default=",".join(NAMES))
    parser.add_argument("--budget", type=int, help="trials per run (default: the suite's)")
    parser.add_argument("--out", type=Path, default=Path("bench-results/parallel"))
    parser.add_argument(
        "--report-only", action="store_true", help="rewrite DIR/report.md from the records"
    )
    args = parser.parse_args(argv)
    arguments = argv if argv is not None else __import__("sys").argv[1:]
    command = "python -m ensembo.bench.parallel " + " ".join(
        a for a in arguments if a != "--report-only"
    )
    if args.report_only:
        write_report(args.out / "report.md", report(load_records(args.out), command))
        return 0
    client = start_local_cluster(args.workers)
    client.wait_for_workers(args.workers)
    try:
        for name in args.problems.split(","):
            for seed in range(args.seeds):
                for mode in MODES:
                    path = args.out / name / mode / f"seed-{seed}.json"
                    record = run_claimed(
                        path, functools.partial(run_one, name, mode, seed, args, client))
                    if record is None:
                        continue
                    write_report(args.out / "report.md",
                                 report(load_records(args.out, warn=False), command))
                    print(json.dumps(record), flush=True)
    finally:
        cluster = client.cluster
        client.close()
        cluster.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
