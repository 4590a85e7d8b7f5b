"""Two ensembo entries of one `ensembo bench` directory, head to head over (problem,
seed) pairs: wins/losses/ties on the incumbent's validation and test error, with a
two-sided sign test. The harness report compares entries with anchors only; this is
how docs/benchmarks.md compares two kernels (or any two entries) of one run.

    python benchmarks/head_to_head.py DIR/SUITE [ENTRY_A ENTRY_B ...]

Entries are the record folder names (``ensembo_gp+ei+lbfgs``), given in pairs; without
them, the kernel pairs of the `laplace-l1` comparison. Test error is compared where the
records have one (the `hpo` suite), the final loss (the synthetic suites' regret) always.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from scipy.stats import binomtest

KERNEL_PAIRS = (
    ("ensembo_gp-cond_kernel=laplace-l1+ei+lbfgs", "ensembo_gp-cond+ei+lbfgs"),
    ("ensembo_gp_kernel=laplace-l1+ei+lbfgs", "ensembo_gp+ei+lbfgs"),
    ("ensembo_gp-cond+ei+lbfgs", "ensembo_gp+ei+lbfgs"),
)


def finals(root: Path, entry: str, key: str) -> dict[tuple[str, int], float]:
    """``key`` of every complete record of ``entry`` that has one, by (problem, seed)."""
    found = {}
    for path in root.glob(f"*/{entry}/seed-*.json"):
        record = json.loads(path.read_text())
        if record["status"] == "complete" and record.get(key) is not None:
            found[(record["problem"], record["seed"])] = record[key]
    return found


def head_to_head(root: Path, first: str, second: str, key: str) -> str | None:
    a, b = finals(root, first, key), finals(root, second, key)
    common = sorted(a.keys() & b.keys())
    if not common:
        return None
    wins = sum(a[k] < b[k] for k in common)
    losses = sum(a[k] > b[k] for k in common)
    ties = len(common) - wins - losses
    p = binomtest(wins, wins + losses).pvalue if wins + losses else 1.0
    return f"{wins}/{losses}/{ties} (p {p:.2g}) over {len(common)} pairs"


def main(argv: list[str]) -> None:
    if not argv or len(argv) % 2 == 0:
        raise SystemExit(__doc__)
    root, entries = Path(argv[0]), argv[1:]
    pairs = list(zip(entries[::2], entries[1::2], strict=True)) or KERNEL_PAIRS
    for first, second in pairs:
        for key, label in (("final_loss", "final"), ("incumbent_test_loss", "test")):
            found = head_to_head(root, first, second, key)
            if found is None and key == "final_loss":
                raise SystemExit(f"no (problem, seed) with records of both {first} and {second}")
            if found is not None:
                print(f"{first} vs {second}, {label}: {found}")


if __name__ == "__main__":
    main(sys.argv[1:])
