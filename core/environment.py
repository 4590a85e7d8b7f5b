"""What a seeded run's numbers depend on besides the seed: versions and BLAS kernels.

A seed fixes ensembo's own choices, but the losses a search sees come from numerical
libraries, and OpenBLAS picks its kernels per CPU. Kernels round differently, and a fit
that stops before converging (a lightly regularised logistic regression on unscaled
features, say) carries that rounding into its predictions. Measured on the quickstart:
forcing OpenBLAS's Sandybridge kernels instead of this machine's Haswell ones changed the
losses of 2 of the first 30 trials, and the model-based search went elsewhere after them.
So studies and benchmark records keep this description, which tells a changed result
from a changed machine.
"""

from __future__ import annotations

import contextlib
import functools
import json
import platform
from collections.abc import Sequence
from importlib import metadata
from typing import Any

from threadpoolctl import threadpool_info

PACKAGES = ("ensembo", "numpy", "scipy", "scikit-learn", "ConfigSpace")
BLAS_FIELDS = ("internal_api", "version", "architecture")


def package_versions(names: Sequence[str] = PACKAGES) -> dict[str, str]:
    """Installed version of each package in ``names``; packages not installed are left out."""
    found = {}
    for name in names:
        with contextlib.suppress(metadata.PackageNotFoundError):
            found[name] = metadata.version(name)
    return found


def blas_libraries() -> list[dict[str, str]]:
    """Each BLAS that NumPy and SciPy loaded, with the kernel set OpenBLAS chose for this CPU.

    SciPy's is loaded first, so the list does not depend on what the caller happened to
    import; sorted, so it does not depend on the order of loading either.
    """
    import scipy.linalg  # noqa: F401  (loads SciPy's BLAS)

    found = []
    for library in threadpool_info():
        entry = {key: str(library[key]) for key in BLAS_FIELDS if library.get(key) is not None}
        if library.get("user_api") == "blas" and entry not in found:
            found.append(entry)
    return sorted(found, key=lambda entry: tuple(entry.values()))


def describe(packages: Sequence[str] = PACKAGES) -> dict[str, Any]:
    """Python, CPU type, package versions and BLAS libraries, as JSON-ready values.

    A fresh copy each call of what is read once per process: reading the versions costs
    ~10 ms, and every new study asks.
    """
    return json.loads(_description(tuple(packages)))


@functools.cache
def _description(packages: tuple[str, ...]) -> str:
    return json.dumps(
        {
            "python": platform.python_version(),
            "machine": platform.machine(),
            "packages": package_versions(packages),
            "blas": blas_libraries(),
        }
    )


def summary(environment: dict[str, Any]) -> str:
    """One line for reports: ``Python 3.11.7 (x86_64); numpy 2.4.6, ...; BLAS openblas ...``."""
    packages = ", ".join(
        f"{name} {version}"
        for name, version in sorted(
            environment.get("packages", {}).items(), key=lambda item: item[0].lower()
        )
    )
    blas = ", ".join(
        " ".join(lib[key] for key in ("internal_api", "version") if key in lib)
        + (f" ({lib['architecture']} kernels)" if "architecture" in lib else "")
        for lib in environment.get("blas", [])
    )
    python = f"Python {environment.get('python', '?')} ({environment.get('machine', '?')})"
    return "; ".join(part for part in (python, packages, blas and f"BLAS {blas}") if part)
