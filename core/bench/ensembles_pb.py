"""The per-dataset PB test of ``ensembo bench ensembles`` when there are several seeds.

Lacoste et al. ran one split per dataset and tested over the datasets. Our seeds split
the same tables again (those over 3,000 rows capped by a draw of each seed's own), so
their test rows overlap, and summing the seeds' disagreement counts counts the shared
rows again: on ``esmbo-large`` 166,840 counted test examples are 85,261 distinct rows.
The reading chosen is the conservative one: the published test once per seed, over the
seeds that hold every dataset, summarized by the median (not itself a posterior; it
gives up what the seeds' different models add). The summed reading is kept beside it.
When no seed holds every dataset only the summed reading is given, and the report
says that it overstates when a dataset has several seeds.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import numpy as np

from ensembo.stats import pb_test_from_counts

#: (space, dataset, seed) of a run -> its disagreement counts (k_row, k_column)
RunCounts = Mapping[tuple[str, str, int], tuple[float, float]]


@attrs.frozen
class PairReading:
    """Pr(row ≻ column) for one pair of methods, read per seed and on summed counts."""

    per_seed: tuple[float, ...]  # the test on each seed holding every dataset
    seeds: tuple[int, ...]  # those seeds
    summed: float  # the test on each dataset's counts summed over its seeds

    @property
    def value(self) -> float:
        """The median over the full seeds, or the summed reading without one."""
        return float(np.median(self.per_seed)) if self.per_seed else self.summed


def full_seeds(runs: RunCounts) -> tuple[int, ...]:
    """The seeds holding a run of every (space, dataset) that ``runs`` has."""
    problems = {(space, dataset) for space, dataset, _ in runs}
    held: dict[int, set[tuple[str, str]]] = {}
    for space, dataset, seed in runs:
        held.setdefault(seed, set()).add((space, dataset))
    return tuple(seed for seed in sorted(held) if held[seed] == problems)


def pair_reading(runs: RunCounts) -> PairReading:
    """Both readings of the PB test from every run's counts."""
    seeds = full_seeds(runs) if len({key[:2] for key in runs}) >= 2 else ()
    per_seed = tuple(
        pb_test_from_counts([counts for key, counts in runs.items() if key[2] == seed])
        for seed in seeds
    )
    summed: dict[tuple[str, str], np.ndarray] = {}
    for (space, dataset, _), counts in runs.items():
        summed[space, dataset] = summed.get((space, dataset), 0) + np.asarray(counts, float)
    return PairReading(per_seed=per_seed, seeds=seeds,
                       summed=pb_test_from_counts([tuple(c) for c in summed.values()]))


def reversed_counts(runs: RunCounts) -> dict[tuple[str, str, int], tuple[float, float]]:
    """The same runs counted for the column over the row."""
    return {key: (counts[1], counts[0]) for key, counts in runs.items()}
