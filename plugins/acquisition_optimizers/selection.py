"""Turning scored candidate vectors into the configurations an optimizer returns.

Both the random and the local-search optimizers end the same way: the ``n`` best
candidates that are distinct from each other and from every configuration the study
has already handed out, decoded into plain configurations. Candidates are compared as
ConfigSpace vectors of their decoded configurations rounded to 1e-9, so a float that
survived a value/vector round trip, or snapped onto a quantization grid, still matches
the trial it came from.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ensembo.errors import SpaceError
from ensembo.spaces import Space

_DECIMALS = 9


def vector_keys(vectors: np.ndarray) -> list[bytes]:
    """A hashable key per row; NaN (inactive) is its own value."""
    rounded = np.round(np.nan_to_num(np.asarray(vectors, dtype=float), nan=-1.0), _DECIMALS)
    rounded += 0.0  # folds -0.0 into 0.0 so that equal rows give equal bytes
    return [row.tobytes() for row in rounded]


def best_distinct(
    space: Space,
    vectors: np.ndarray,
    scores: np.ndarray,
    n: int,
    exclude: Iterable[bytes] = (),
    *,
    fill_with_excluded: bool = True,
) -> list[dict[str, Any]]:
    """The ``n`` highest-scoring distinct rows not in ``exclude``, best first.

    Candidates are compared after decoding (a quantized hyperparameter snaps onto its
    grid, so two raw vectors may be one configuration). When fewer than ``n`` such
    candidates exist (a small discrete space that is nearly exhausted), excluded ones
    fill the remaining places unless ``fill_with_excluded`` is false, in which case
    fewer than ``n`` are returned.
    """
    scores = np.nan_to_num(np.asarray(scores, dtype=float), nan=-np.inf)
    order = np.argsort(-scores, kind="stable")
    raw_keys = vector_keys(vectors)
    excluded = set(exclude)
    chosen: list[dict[str, Any]] = []
    taken: set[bytes] = set()
    for allow_seen in (False, True) if fill_with_excluded else (False,):
        tried: set[bytes] = set()
        for index in order:
            if len(chosen) == n:
                return chosen
            if raw_keys[index] in tried:
                continue
            tried.add(raw_keys[index])
            try:
                config = space.from_vectors(vectors[index])[0]
            except SpaceError:  # e.g. a forbidden combination after quantization
                continue
            key = vector_keys(space.vectors([config]))[0]
            if key in taken or (key in excluded and not allow_seen):
                continue
            taken.add(key)
            chosen.append(config)
    return chosen
