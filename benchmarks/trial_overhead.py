"""CPU per trial of a study (the library's own work plus a cheap objective that fails on a
tenth of the space), and a digest of the trials it made, so that two installs (before
and after a change) can be compared on speed and on the sequence of configurations.

    OMP_NUM_THREADS=1 python benchmarks/trial_overhead.py [SURROGATE:TRIALS ...]

Default: random search (``none``) at 2,000 trials and ``tpe`` at 600; e.g. ``rf:600
gp:300`` for the model-based asks. The objective is a
5-D quadratic, NaN (a failed trial) where x0 > 4. CPU time, as the machine is shared.
"""

from __future__ import annotations

import hashlib
import logging
import math
import sys
import time

import ensembo

SPACE = {"params": {f"x{i}": {"type": "float", "low": -5.0, "high": 5.0} for i in range(5)}}


def failing_quadratic(config: dict) -> float:
    if config["x0"] > 4.0:
        return math.nan
    return float(sum((config[f"x{i}"] - 0.3 * i) ** 2 for i in range(5)))


def measure(surrogate: str | None, n_trials: int) -> str:
    study = ensembo.Study(SPACE, surrogate=surrogate, seed=0)
    clock: list[float] = []

    def timed(config: dict) -> float:
        clock.append(time.process_time())
        return failing_quadratic(config)

    study.optimize(timed, n_trials)
    tail = clock[-(n_trials // 10):]
    per_trial = 1000 * (clock[-1] - clock[0]) / (n_trials - 1)
    last_tenth = 1000 * (tail[-1] - tail[0]) / (len(tail) - 1)
    trials = repr([(t.number, t.state.value, sorted(t.config.items()), t.loss)
                   for t in study.trials])
    digest = hashlib.sha1(trials.encode()).hexdigest()[:12]
    return (f"{surrogate or 'none'} at {n_trials}: {per_trial:.2f} ms/trial, last tenth "
            f"{last_tenth:.2f} ms/trial, trials digest {digest}")


def main(argv: list[str]) -> None:
    logging.disable(logging.WARNING)  # one warning per failed trial otherwise
    for item in argv or ["none:2000", "tpe:600"]:
        name, trials = item.split(":")
        print(measure(None if name == "none" else name, int(trials)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
