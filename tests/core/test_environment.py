"""Studies and records keep the versions and BLAS kernels their numbers came from."""

import numpy as np

from ensembo import Study, environment
from ensembo.report.data import compute_report
from ensembo.report.tables import summary_markdown


def quadratic(config):
    return sum((float(v) - 0.3) ** 2 for v in config.values())


def test_description_names_the_installed_versions_and_each_blas_once():
    described = environment.describe()
    assert described["packages"]["numpy"] == np.__version__
    assert "not-a-package" not in environment.package_versions(["numpy", "not-a-package"])
    blas = described["blas"]
    assert blas and all({"internal_api", "version"} <= set(lib) for lib in blas)
    assert len(blas) == len({tuple(lib.items()) for lib in blas})


def test_summary_is_one_line_with_the_kernels():
    line = environment.summary(
        {
            "python": "3.11.7",
            "machine": "x86_64",
            "packages": {"numpy": "2.4.6", "ConfigSpace": "1.2.2"},
            "blas": [{"internal_api": "openblas", "version": "0.3.30", "architecture": "Haswell"}],
        }
    )
    assert line == (
        "Python 3.11.7 (x86_64); ConfigSpace 1.2.2, numpy 2.4.6; "
        "BLAS openblas 0.3.30 (Haswell kernels)"
    )


def test_a_study_resumed_elsewhere_keeps_both_environments(flat_space, tmp_path, monkeypatch):
    path = tmp_path / "s.db"
    Study(flat_space, surrogate=None, storage=path).optimize(quadratic, n_trials=3)
    here = environment.describe()
    Study.load(path).optimize(quadratic, n_trials=1)  # the same machine: nothing added
    elsewhere = {**here, "machine": "aarch64"}
    monkeypatch.setattr(environment, "describe", lambda: elsewhere)
    Study.load(path).optimize(quadratic, n_trials=1)

    data = compute_report(path)
    assert data.environments == (here, elsewhere)
    text = summary_markdown(data)
    assert "The study ran in 2 environments (resumed elsewhere), in order:" in text
    assert f"- {environment.summary(here)}\n- {environment.summary(elsewhere)}\n" in text
