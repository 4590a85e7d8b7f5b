"""The ``execution:`` experiment key and its validation."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo.errors import ExperimentError
from ensembo.execution import ExecutionSettings, InlineBackend, ProcessBackend, parse_bytes
from ensembo.experiment import parse_experiment

BASE = {"space": "svm", "objective": "mod:fn", "budget": 5}


def test_defaults_follow_what_is_given():
    assert ExecutionSettings.from_document(None).backend == "serial"
    assert ExecutionSettings.from_document({"n_jobs": 4}).backend == "processes"
    assert ExecutionSettings.from_document({"address": "tcp://127.0.0.1:8786"}).backend == "dask"
    settings = ExecutionSettings.from_document(
        {"trial_timeout": 30, "memory_limit": "2GiB", "max_retries": 0}
    )
    assert settings.limit_options() == {
        "trial_timeout": 30.0,
        "memory_limit": 2 * 1024**3,
        "max_retries": 0,
    }


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            {"backend": "ray"},
            r"execution\.backend: must be one of serial, processes, dask, got 'ray'",
        ),
        ({"n_jobs": 0}, r"execution\.n_jobs: must be a positive integer or -1"),
        (
            {"trial_timeout": -1},
            r"execution\.trial_timeout: must be a finite positive number of seconds",
        ),
        (
            {"memory_limit": "2 parsecs"},
            r"execution\.memory_limit: expected a positive number of bytes",
        ),
        ({"max_retries": "often"}, r"execution\.max_retries: must be an integer >= 0"),
        (
            {"backend": "processes", "address": "tcp://x:1"},
            r"execution\.address: only the dask backend",
        ),
        ({"workers": 3}, r"execution\.workers: unknown key; valid keys: backend, n_jobs"),
        ("fast", r"execution: must be a mapping"),
    ],
)
def test_invalid_settings_name_the_key(document, message):
    with pytest.raises(ExperimentError, match=message):
        parse_experiment({**BASE, "execution": document})


def test_experiment_exposes_its_settings():
    experiment = parse_experiment({**BASE, "execution": {"n_jobs": 2, "trial_timeout": 5}})
    assert experiment.execution == ExecutionSettings(
        backend="processes", n_jobs=2, trial_timeout=5.0
    )
    assert parse_experiment(BASE).execution == ExecutionSettings()


def test_parse_bytes_units():
    assert parse_bytes(1000) == 1000
    assert parse_bytes("512MB") == 512 * 10**6
    assert parse_bytes("1.5 GiB") == int(1.5 * 2**30)
    with pytest.raises(ValueError, match="memory_limit"):
        parse_bytes(0)


def test_parse_bytes_takes_numpy_integers_and_whole_floats():
    """Values from a parameter grid or NumPy arithmetic were refused, although every
    other integer parameter takes them."""
    assert parse_bytes(np.int64(2**31)) == 2**31
    assert parse_bytes(2e9) == 2 * 10**9
    for bad in (2.5, float("inf"), float("nan"), True, np.int64(-1)):
        with pytest.raises(ValueError, match="memory_limit"):
            parse_bytes(bad)


def test_local_backends_open_and_close():
    with ExecutionSettings().open_backend() as backend:
        assert isinstance(backend, InlineBackend)
    with ExecutionSettings(backend="processes", n_jobs=3).open_backend() as backend:
        assert isinstance(backend, ProcessBackend) and backend.slots == 3
