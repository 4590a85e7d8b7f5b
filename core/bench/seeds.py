"""Which seeds a benchmark runs: ``--seeds N`` (0..N-1) or a list such as ``0,5-9``.

A list lets a run add the seeds that carry new information first (seeds 5–9 of a run
whose 0–4 are known) or fill a gap, into the same ``--out`` directory.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Iterator

import attrs


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


def parse_seeds(text: str) -> Seeds:
    """``"5"`` → 0..4; ``"0,5-9"`` → 0, 5, 6, 7, 8, 9 (sorted, without repeats)."""
    text = text.strip()
    try:
        if text.isdigit():
            values = set(range(int(text)))
        else:
            values = set()
            for item in text.split(","):
                first, _, last = item.strip().partition("-")
                low, high = int(first), int(last or first)
                if low < 0 or high < low:
                    raise ValueError(item)
                values.update(range(low, high + 1))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected a count N (seeds 0..N-1) or a list such as 0,5-9"
        ) from None
    if not values:
        raise argparse.ArgumentTypeError(f"{text!r}: no seeds")
    return Seeds(tuple(sorted(values)), text)


def seed_list(seeds: int | Iterable[int]) -> list[int]:
    """The seeds as a list; an int N means 0..N-1 (the Python API's form)."""
    return list(range(seeds)) if isinstance(seeds, int) else list(seeds)
