"""Numeric views of configurations for surrogates.

Every hyperparameter maps to one column in [0, 1]: numeric ones through ConfigSpace's
normalized vector (log-scaled where declared), categorical and ordinal ones as their
index spread evenly over [0, 1]. Inactive columns are imputed, and each row carries its
activity mask and a *condition signature* — an id of the set of active hyperparameters —
which the conditional GP kernel uses to keep branches apart.
"""

from __future__ import annotations

import hashlib

import attrs
import numpy as np


@attrs.frozen(kw_only=True)
class EncodedBatch:
    """``n`` configurations as arrays: values (n, d) in [0, 1], active (n, d), signature (n,)."""

    values: np.ndarray = attrs.field(eq=False)
    active: np.ndarray = attrs.field(eq=False)
    signature: np.ndarray = attrs.field(eq=False)

    def __attrs_post_init__(self) -> None:
        n, d = self.values.shape
        if self.active.shape != (n, d) or self.signature.shape != (n,):
            raise ValueError(
                f"inconsistent batch shapes: values {self.values.shape}, "
                f"active {self.active.shape}, signature {self.signature.shape}"
            )

    def __len__(self) -> int:
        return self.values.shape[0]

    def take(self, rows: np.ndarray | slice) -> EncodedBatch:
        return EncodedBatch(
            values=self.values[rows], active=self.active[rows], signature=self.signature[rows]
        )

    def with_values(self, values: np.ndarray) -> EncodedBatch:
        """Same rows and branches with new (e.g. optimized) continuous values."""
        return attrs.evolve(self, values=np.asarray(values, dtype=float).reshape(self.values.shape))

    @staticmethod
    def concatenate(batches: list[EncodedBatch]) -> EncodedBatch:
        return EncodedBatch(
            values=np.concatenate([b.values for b in batches]),
            active=np.concatenate([b.active for b in batches]),
            signature=np.concatenate([b.signature for b in batches]),
        )


EXACT_BYTES = 7
"""Packed activity masks up to this many bytes (56 hyperparameters) fold into an int64
exactly: base 257 over bytes of at most 255 cannot wrap below 257**8 > 2**63."""


def activity_signature(active: np.ndarray) -> np.ndarray:
    """One integer per row identifying its set of active columns (stable across calls
    and processes)."""
    active = np.asarray(active, dtype=bool)
    if active.shape[1] == 0:
        return np.zeros(active.shape[0], dtype=np.int64)
    packed = np.packbits(active, axis=1, bitorder="little")
    if packed.shape[1] > EXACT_BYTES:
        return _digests(packed)
    signature = np.zeros(active.shape[0], dtype=np.uint64)
    for column in range(packed.shape[1]):
        signature = signature * np.uint64(257) + packed[:, column].astype(np.uint64)
    return signature.astype(np.int64)


def _digests(packed: np.ndarray) -> np.ndarray:
    """64-bit BLAKE2 digests of wider masks, one per distinct mask: folding their bytes
    into 64 bits wrapped, and two branches of a large space could share a key."""
    rows = np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1]))).ravel()
    masks, inverse = np.unique(rows, return_inverse=True)  # 20x faster than axis=0
    digests = [hashlib.blake2b(mask.tobytes(), digest_size=8).digest() for mask in masks]
    keys = [int.from_bytes(digest, "little", signed=True) for digest in digests]
    return np.asarray(keys, dtype=np.int64)[inverse.reshape(-1)]
