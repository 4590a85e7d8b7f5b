"""Which seeds a benchmark runs: ``--seeds N`` (0..N-1) or a list such as ``0,5-9``.

A list lets a run add the seeds that carry new information first (seeds 5–9 of a run
whose 0–4 are known) or fill a gap, into the same ``--out`` directory.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Iterator

import attrs

from ensembo.checks import MAX_LEARNER_SEED


@attrs.frozen
class Seeds:
    """The seeds to run, and the text they were given as (for the report's command)."""

    values: tuple[int, ...]
    text: str

    def __iter__(self) -> Iterator[int]:
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)

    def __str__(self) -> str:
        return self.text


MAX_SEEDS = 100_000
"""More seeds than any benchmark runs: a typo's count (``--seeds 50000000``) is refused
before the set of them is built."""


def parse_seeds(text: str) -> Seeds:
    """``"5"`` → 0..4; ``"0,5-9"`` → 0, 5, 6, 7, 8, 9 (sorted, without repeats). Seeds
    are below 2**32, which the anchors and scikit-learn take (a larger one was accepted,
    and the runs of four of six optimizers failed); an open range (``3-``) is refused
    (it was read as seed 3)."""
    text = text.strip()
    ranges: list[tuple[int, int]] = []
    try:
        if text.isdigit():
            ranges.append((0, int(text) - 1))
        else:
            for item in text.split(","):
                first, dash, last = item.strip().partition("-")
                if dash and not last.strip():
                    raise ValueError(item)
                low, high = int(first), int(last or first)
                if low < 0 or high < low:
                    raise ValueError(item)
                ranges.append((low, high))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected a count N (seeds 0..N-1) or a list such as 0,5-9"
        ) from None
    if any(high > MAX_LEARNER_SEED for _, high in ranges):
        raise argparse.ArgumentTypeError(
            f"{text!r}: seeds are at most {MAX_LEARNER_SEED} (2**32 - 1), which the anchors "
            "and scikit-learn's random_state take"
        )
    if sum(high - low + 1 for low, high in ranges) > MAX_SEEDS:
        raise argparse.ArgumentTypeError(f"{text!r}: more than {MAX_SEEDS} seeds")
    values = {seed for low, high in ranges for seed in range(low, high + 1)}
    if not values:
        raise argparse.ArgumentTypeError(f"{text!r}: no seeds")
    return Seeds(tuple(sorted(values)), text)


def seed_list(seeds: int | Iterable[int]) -> list[int]:
    """The seeds as a list; an int N means 0..N-1 (the Python API's form)."""
    return list(range(seeds)) if isinstance(seeds, int) else list(seeds)
