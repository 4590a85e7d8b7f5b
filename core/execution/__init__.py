"""Where and how trials are evaluated: serially, on local processes, on any
``concurrent.futures.Executor`` or on a Dask cluster, with per-trial limits, retries
of lost work, and clean interrupts.

``Study.optimize(objective, n_trials, n_jobs=..., executor=..., trial_timeout=...,
memory_limit=..., max_retries=...)`` is the front door; this package holds the loop
(:func:`run_trials`) and the backends it drives.
"""

from ensembo.execution.backend import Backend, InlineBackend
from ensembo.execution.child import NO_LIMITS, TrialLimits, evaluate, evaluate_in_child
from ensembo.execution.dask_cluster import DaskBackend, start_local_cluster
from ensembo.execution.distinct import DistinctConfigs, config_key
from ensembo.execution.futures import ExecutorBackend, ProcessBackend
from ensembo.execution.loop import record, run_trials
from ensembo.execution.outcome import (
    ObjectiveError,
    ObjectiveExit,
    Outcome,
    OutcomeKind,
    with_remote_traceback,
)
from ensembo.execution.resolve import resolve_backend
from ensembo.execution.settings import ExecutionSettings, parse_bytes, trial_limits

__all__ = [
    "NO_LIMITS",
    "Backend",
    "DaskBackend",
    "DistinctConfigs",
    "ExecutionSettings",
    "ExecutorBackend",
    "InlineBackend",
    "ObjectiveError",
    "ObjectiveExit",
    "Outcome",
    "OutcomeKind",
    "ProcessBackend",
    "TrialLimits",
    "config_key",
    "evaluate",
    "evaluate_in_child",
    "parse_bytes",
    "record",
    "resolve_backend",
    "run_trials",
    "start_local_cluster",
    "trial_limits",
    "with_remote_traceback",
]
