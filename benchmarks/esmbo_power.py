"""Would more datasets carry ESMBO over Lacoste's PB ≥ 0.9 bar? A simulation on the
archived `esmbo-large` records, before anyone spends ten seeds of runs finding out.

The bar is read as the report reads it since 7 Dec: the published PB test once per seed
(over that seed's datasets), the median over the ten seeds, with the median win
frequency within seeds ≥ 0.6, in each space. Each draw adds ``EXTRA`` datasets to the 23,
resampled with replacement from the same seed's 23 runs (their disagreement counts and
test losses): new sets that behave like the ones measured. It prints, per space and per
total number of datasets, the 10th / 50th / 90th percentile over draws of the median PB
and the fraction of draws meeting the bar in that space.

    mkdir -p DIR && for f in benchmarks/records/esmbo-large-*.tar.xz; do tar -xJf $f -C DIR; done
    cd DIR && python REPO/benchmarks/esmbo_power.py [EXTRA ...] [--draws N]
"""

from __future__ import annotations

import argparse
import glob
import json

import numpy as np

from ensembo.bench.ensembles_report import _counts
from ensembo.stats import pb_test_from_counts, win_frequency

SEEDS = range(10)
PAIR = ("ESMBO", "SMBO")


def seed_runs(space: str) -> dict[int, tuple[list[tuple[float, float]], np.ndarray]]:
    """Each seed's per-dataset disagreement counts and (ESMBO, SMBO) test losses, both
    averaged over the last 15 trials as the report averages them."""
    paths = glob.glob(f"ensembles/esmbo-large/{space}/*/seed-*.json")
    records = [json.load(open(path)) for path in paths]
    runs = {}
    for seed in SEEDS:
        chosen = [r for r in records if r["seed"] == seed and r["status"] == "complete"]
        counts = [tuple(_counts(r, *PAIR, True)) for r in chosen]
        losses = np.array([[np.mean([x["test_loss"] for x in r["methods"][m]["last"]])
                            for m in PAIR] for r in chosen])
        runs[seed] = (counts, losses)
    return runs


def bar_reading(runs, extra: int, rng: np.random.Generator) -> tuple[float, bool]:
    """One draw: the median per-seed PB, and whether the bar holds in it."""
    pbs, wins = [], []
    for counts, losses in runs.values():
        drawn = rng.integers(0, len(counts), extra)
        pbs.append(pb_test_from_counts(counts + [counts[i] for i in drawn]))
        wins.append(win_frequency(np.vstack([losses, losses[drawn]]))[0, 1])
    return float(np.median(pbs)), bool(np.median(pbs) >= 0.9 and np.median(wins) >= 0.6)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("extra", nargs="*", type=int, default=[43, 77, 127, 177])
    parser.add_argument("--draws", type=int, default=200)
    args = parser.parse_args()
    for space in ("svm", "random-forest"):
        runs = seed_runs(space)
        for extra in args.extra:
            rng = np.random.default_rng(0)
            readings = [bar_reading(runs, extra, rng) for _ in range(args.draws)]
            medians = np.percentile([m for m, _ in readings], [10, 50, 90])
            met = np.mean([ok for _, ok in readings])
            print(f"{space:13s} {23 + extra:3d} datasets: median PB {medians.round(2)}, "
                  f"bar met in {met:.2f} of {args.draws} draws")


if __name__ == "__main__":
    main()
