"""A real third-party distribution, pip-installed, is found with no change to ensembo.

The test builds two tiny packages in a temporary folder — one good, one that raises
on import — installs them into the running environment and removes them afterwards.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ensembo.registry import Registry

PYPROJECT = """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "{dist}"
version = "0.0.1"

[project.entry-points.ensembo]
{dist} = "{module}"

[tool.setuptools]
py-modules = ["{module}"]
"""

GOOD_MODULE = '''
"""A plugin adding an initial design that spreads points along the diagonal."""
import numpy as np
import ensembo


class Diagonal:
    def configs(self, space, n, rng):
        rows = np.linspace(0.0, 1.0, n)[:, None] * np.ones((1, space.dimension))
        return space.decode(rows)


@ensembo.hookimpl
def ensembo_add_initial_designs():
    return {"diagonal": Diagonal}
'''

BROKEN_MODULE = 'raise ImportError("this plugin is broken on purpose")\n'


def _pip(*args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args],
        check=True,
        capture_output=True,
    )


def _write_package(root: Path, dist: str, module: str, source: str) -> Path:
    folder = root / dist
    folder.mkdir()
    (folder / "pyproject.toml").write_text(PYPROJECT.format(dist=dist, module=module))
    (folder / f"{module}.py").write_text(textwrap.dedent(source))
    return folder


@pytest.fixture(scope="module")
def installed_plugins(tmp_path_factory):
    root = tmp_path_factory.mktemp("plugins")
    good = _write_package(root, "ensembo-test-diagonal", "ensembo_test_diagonal", GOOD_MODULE)
    broken = _write_package(root, "ensembo-test-broken", "ensembo_test_broken", BROKEN_MODULE)
    _pip("install", "--no-deps", "--no-build-isolation", str(good), str(broken))
    try:
        yield
    finally:
        _pip("uninstall", "-y", "ensembo-test-diagonal", "ensembo-test-broken")


def test_installed_plugin_is_registered_and_broken_one_reported(installed_plugins):
    reg = Registry.from_entry_points()
    assert reg.entry("initial_design", "diagonal").distribution == "ensembo-test-diagonal"
    failure = next(f for f in reg.failures if f.distribution == "ensembo-test-broken")
    assert "broken on purpose" in failure.error
    assert "random" in reg.names("initial_design")  # built-ins unaffected


def test_cli_lists_installed_plugin(installed_plugins):
    out = subprocess.run(
        [sys.executable, "-m", "ensembo.cli", "plugins", "--json"],
        check=True, capture_output=True, text=True,
    ).stdout
    listing = json.loads(out)
    assert {
        "kind": "initial_design",
        "name": "diagonal",
        "distribution": "ensembo-test-diagonal",
    } in listing["plugins"]
    assert any(f["distribution"] == "ensembo-test-broken" for f in listing["failures"])


def test_plugin_usable_in_a_study(installed_plugins, flat_space):
    import ensembo

    reg = Registry.from_entry_points()
    study = ensembo.Study(
        flat_space, surrogate=None, initial_design="diagonal", n_initial=3, registry=reg
    )
    study.optimize(lambda c: c["x"] ** 2, n_trials=3)
    xs = [t.config["x"] for t in study.trials]
    assert xs == pytest.approx([-5.0, 2.5, 10.0])


def test_autoload_can_be_disabled(installed_plugins, monkeypatch):
    monkeypatch.setenv("ENSEMBO_DISABLE_PLUGIN_AUTOLOAD", "1")
    reg = Registry.from_entry_points()
    assert "diagonal" not in reg.names("initial_design")
    assert not reg.failures
