"""The ``execution:`` key of an experiment file.

```yaml
execution:
  backend: dask              # serial | processes | dask (default: processes if n_jobs > 1)
  n_jobs: 8                  # processes, or LocalCluster workers when no address is given
  address: tcp://10.0.0.5:8786   # dask: an existing scheduler (implies backend: dask)
  trial_timeout: 600         # seconds; the evaluation is killed, the trial fails "timeout"
  memory_limit: 4GB          # per evaluation (address space); bytes or with KB/MB/GB
  max_retries: 2             # re-runs of a trial whose worker crashed or was lost
  isolate: false             # dask: run in the worker's process, not a fork per trial
```
"""

from __future__ import annotations

import contextlib
import difflib
import numbers
import re
from collections.abc import Iterator, Mapping
from typing import Any

import attrs
import numpy as np

from ensembo import checks
from ensembo.errors import ExperimentError
from ensembo.execution.backend import Backend, InlineBackend, usable_cpus
from ensembo.execution.child import TrialLimits
from ensembo.execution.dask_cluster import DaskBackend, connect, start_local_cluster
from ensembo.execution.futures import ProcessBackend
from ensembo.execution.resolve import resolve_jobs

BACKENDS = ("serial", "processes", "dask")
_KEYS = (
    "backend", "n_jobs", "address", "trial_timeout", "memory_limit", "max_retries", "isolate"
)
_UNITS = {
    "": 1,
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KIB": 2**10,
    "MIB": 2**20,
    "GIB": 2**30,
    "TIB": 2**40,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")


def parse_bytes(value: int | str, where: str = "memory_limit") -> int:
    """``4096``, ``"512MB"``, ``"2 GiB"`` -> bytes. A NumPy integer (from a parameter
    grid) or a whole float (``2e9``) counts bytes as an ``int`` does."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_):
        if value > 0 and float(value).is_integer():
            return int(value)
    match = _SIZE.match(value) if isinstance(value, str) else None
    if match is None or match.group(2).upper() not in _UNITS or float(match.group(1)) <= 0:
        raise ExperimentError(
            where,
            f"expected a positive number of bytes or a size like '512MB' or '2GiB', got {value!r}",
        )
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


def trial_limits(
    trial_timeout: float | None = None, memory_limit: int | str | None = None
) -> TrialLimits:
    """The checked limits of one evaluation, from the names the APIs give them."""
    return TrialLimits(
        wall_time=None if trial_timeout is None
        else checks.positive_seconds("trial_timeout", trial_timeout),
        memory=None if memory_limit is None else parse_bytes(memory_limit),
    )


def _refuse_unknown_keys(document: Mapping[str, Any], path: str) -> None:
    """A misspelt key names its likely meaning, as every other key of an experiment does."""
    unknown = sorted(str(key) for key in set(document) - set(_KEYS))
    if not unknown:
        return
    close = difflib.get_close_matches(unknown[0], _KEYS, n=1)
    valid = ", ".join(_KEYS)
    hint = f"did you mean {close[0]!r}? Valid keys: {valid}" if close else f"valid keys: {valid}"
    raise ExperimentError(f"{path}.{unknown[0]}", f"unknown key; {hint}")


@attrs.frozen(kw_only=True)
class ExecutionSettings:
    """How and where an experiment evaluates its trials."""

    backend: str = "serial"
    n_jobs: int | None = None
    address: str | None = None
    trial_timeout: float | None = None
    memory_limit: int | None = None
    max_retries: int = 2
    isolate: bool | None = None
    """Dask: each evaluation in a process forked inside the worker. ``None``: on the
    cluster ensembo starts (no ``address``), not on one at an address."""

    @classmethod
    def from_document(cls, document: Any, path: str = "execution") -> ExecutionSettings:
        if document is None:
            return cls()
        if not isinstance(document, Mapping):
            raise ExperimentError(
                path, f"must be a mapping with keys {', '.join(_KEYS)}; got {document!r}"
            )
        _refuse_unknown_keys(document, path)
        n_jobs = document.get("n_jobs")
        if n_jobs is not None and (
            not isinstance(n_jobs, int) or isinstance(n_jobs, bool) or (n_jobs < 1 and n_jobs != -1)
        ):
            raise ExperimentError(
                f"{path}.n_jobs", f"must be a positive integer or -1 (one per CPU), got {n_jobs!r}"
            )
        address = document.get("address")
        if address is not None and not isinstance(address, str):
            raise ExperimentError(
                f"{path}.address",
                f"must be a scheduler address like 'tcp://host:8786', got {address!r}",
            )
        default_backend = (
            "dask" if address else "processes" if n_jobs not in (None, 1) else "serial"
        )
        backend = document.get("backend", default_backend)
        if backend not in BACKENDS:
            raise ExperimentError(
                f"{path}.backend", f"must be one of {', '.join(BACKENDS)}, got {backend!r}"
            )
        if address is not None and backend != "dask":
            raise ExperimentError(
                f"{path}.address", f"only the dask backend connects to an address, not {backend!r}"
            )
        trial_timeout = document.get("trial_timeout")
        if trial_timeout is not None:
            checks.positive_seconds(f"{path}.trial_timeout", trial_timeout)
        memory = document.get("memory_limit")
        max_retries = checks.whole_number(f"{path}.max_retries", document.get("max_retries", 2), 0)
        isolate = document.get("isolate")
        if isolate is not None and not isinstance(isolate, bool):
            raise ExperimentError(f"{path}.isolate", f"must be true or false, got {isolate!r}")
        if isolate is not None and backend != "dask":
            raise ExperimentError(
                f"{path}.isolate",
                f"only the dask backend takes it; {backend!r} "
                + ("forks every evaluation anyway" if backend == "processes"
                   else "runs the objective in the ensembo process, forked under limits"),
            )
        return cls(
            backend=backend,
            n_jobs=n_jobs,
            address=address,
            trial_timeout=None if trial_timeout is None else float(trial_timeout),
            memory_limit=None if memory is None else parse_bytes(memory, f"{path}.memory_limit"),
            max_retries=max_retries,
            isolate=isolate,
        )

    def limit_options(self) -> dict[str, Any]:
        """The per-trial keyword arguments of ``Study.optimize``."""
        return {
            "trial_timeout": self.trial_timeout,
            "memory_limit": self.memory_limit,
            "max_retries": self.max_retries,
        }

    @contextlib.contextmanager
    def open_backend(self) -> Iterator[Backend]:
        """The backend for a run, closed (cluster and all) when the run ends."""
        if self.backend == "dask":
            if self.address is not None:
                client, jobs = (
                    connect(self.address),
                    None if self.n_jobs in (None, -1) else self.n_jobs,
                )
            else:
                workers = usable_cpus() if self.n_jobs in (None, -1) else self.n_jobs
                client, jobs = start_local_cluster(workers), None
            # ensembo's own cluster: a crash fails its trial, never a worker (whose
            # restart may not come); a scheduler at an address keeps its own ways
            isolate = self.address is None if self.isolate is None else self.isolate
            backend: Backend = DaskBackend(
                client, max_slots=jobs, owns_client=True, isolate=isolate
            )
        elif self.backend == "serial":
            backend = InlineBackend()
        else:  # processes, even one: a crash then costs a trial, not the run
            backend = ProcessBackend(resolve_jobs(self.n_jobs or -1))
        try:
            yield backend
        finally:
            backend.close()
