"""Final regret of an asynchronous run, replayed in-process without workers (issue 9).

```
python -m ensembo.bench.parallel_replay [--workers 8] [--seeds 5]
                                        [--problems branin,...] [--tolerance T]
```

The regret a parallel run loses comes from the order of information, not from
timing: each suggestion is made while ``--workers - 1`` others are still out. This
replays that order exactly and quickly: ``--workers`` trials are handed out, then the
oldest is told and one new trial asked, until the problem's budget has finished
(first in, first out, which is what equal evaluation times give on a cluster). The
same study runs serially for comparison. Printed per problem: the final regrets per
seed, how many parallel seeds end within the serial min–max and how many at or
below the serial maximum, and repeated configurations. ``--tolerance`` overrides
:data:`ensembo.execution.distinct.TOLERANCE` (nearness to a pending trial that
counts as a repeat) to compare settings.
"""

from __future__ import annotations

import argparse
import statistics

from ensembo.bench.functions import TEST_FUNCTIONS
from ensembo.bench.parallel import SleepyFunction, configspace, duplicates
from ensembo.bench.suites.synthetic import NAMES, budget_for
from ensembo.execution import distinct
from ensembo.study import Study


def replay(name: str, seed: int, workers: int) -> tuple[float, int]:
    """Final regret and repeated configurations of a FIFO replay with ``workers``."""
    function = TEST_FUNCTIONS[name]
    budget = budget_for(function.dimension)
    value = SleepyFunction(name=name, sleep=0.0)
    study = Study(configspace(name), seed=seed)
    running, finished = [], 0
    while finished < budget:
        while len(running) < workers and finished + len(running) < budget:
            running.append(study.ask())
        trial = running.pop(0)
        study.tell(trial, value(trial.config))
        finished += 1
    return study.best_trial.loss - function.minimum, duplicates(study)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ensembo.bench.parallel_replay", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--problems", default=",".join(NAMES))
    parser.add_argument("--tolerance", type=float, help="override distinct.TOLERANCE")
    args = parser.parse_args(argv)
    if args.tolerance is not None:
        distinct.TOLERANCE = args.tolerance
    for name in args.problems.split(","):
        serial = [replay(name, seed, 1)[0] for seed in range(args.seeds)]
        parallel = [replay(name, seed, args.workers) for seed in range(args.seeds)]
        regrets = [regret for regret, _ in parallel]
        low, high = min(serial), max(serial)
        print(
            f"{name}: serial {' '.join(f'{r:.2g}' for r in serial)} | "
            f"{args.workers} workers {' '.join(f'{r:.2g}' for r in regrets)} | "
            f"median {statistics.median(serial):.3g} vs {statistics.median(regrets):.3g}; "
            f"within serial min–max {sum(low <= r <= high for r in regrets)}/{len(regrets)}, "
            f"at or below serial max {sum(r <= high for r in regrets)}/{len(regrets)}; "
            f"repeated configurations {sum(d for _, d in parallel)}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
