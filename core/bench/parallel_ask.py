"""Driver time per ask with pending trials (issue 9), measured in-process.

```
python -m ensembo.bench.parallel_ask [--problems hartmann6,...] [--completed 40]
                                     [--workers 8] [--asks 12] [--seed 0]
```

With ``--workers`` evaluations in flight a worker idles while the driver proposes,
so the parallel speed-up is bounded by (sleep + serial ask) / (ask with pending
trials). This replays that situation without workers: a study of a synthetic
problem completes ``--completed`` trials serially (the serial asks are timed), hands
out ``--workers`` trials, then ``--asks`` times tells the oldest one and asks again
(``--workers - 1`` pending trials and one new result per ask, as in the asynchronous
loop). Printed: the median and maximum time of both kinds of ask.
"""

from __future__ import annotations

import argparse
import statistics
import time

from ensembo.bench.parallel import SleepyFunction, configspace
from ensembo.study import Study


def ask_times(
    name: str, completed: int, workers: int, asks: int, seed: int
) -> dict[str, list[float]]:
    value = SleepyFunction(name=name, sleep=0.0)

    def timed_ask(times: list[float]):
        started = time.perf_counter()
        trial = study.ask()
        times.append(time.perf_counter() - started)
        return trial

    study = Study(configspace(name), seed=seed)
    serial: list[float] = []
    for _ in range(completed):
        trial = timed_ask(serial)
        study.tell(trial, value(trial.config))
    running = [study.ask() for _ in range(workers)]
    pending: list[float] = []
    for _ in range(asks):
        trial = running.pop(0)
        study.tell(trial, value(trial.config))
        running.append(timed_ask(pending))
    return {"serial": serial[study.n_initial :], "pending": pending}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ensembo.bench.parallel_ask", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--problems", default="branin,hartmann6")
    parser.add_argument("--completed", type=int, default=40)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--asks", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for name in args.problems.split(","):
        times = ask_times(name, args.completed, args.workers, args.asks, args.seed)
        kinds = (
            ("model-based serial", times["serial"]),
            (f"{args.workers - 1}-pending", times["pending"]),
        )
        summary = ", ".join(
            f"{kind} ask median {statistics.median(values):.4f} s "
            f"(max {max(values):.4f} s, {len(values)} asks)"
            for kind, values in kinds
        )
        print(f"{name}: {summary}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
