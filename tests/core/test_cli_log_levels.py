"""``-q``/``-v`` hold for libraries that set their own loggers' levels: dask sets
``distributed`` to INFO, and ``ensembo -q run`` with ``backend: dask`` printed its
scheduler and nanny INFO lines."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# A fresh interpreter: the root logger has no handler yet, as in a real `ensembo` run.
CHATTY_LIBRARY = """
import logging
import sys
from ensembo.cli import build_parser, _configure_logging

args = build_parser().parse_args([*sys.argv[1:], "plugins"])
_configure_logging(args.verbose, args.quiet)
library = logging.getLogger("distributed")
library.setLevel(logging.INFO)  # what dask's logging config does on import
library.getChild("scheduler").info("State start")
library.getChild("scheduler").warning("a worker is slow")
library.getChild("scheduler").error("a worker died")
"""


def _stderr_lines(*flags: str) -> list[str]:
    process = subprocess.run([sys.executable, "-c", CHATTY_LIBRARY, *flags],
                             capture_output=True, text=True, check=True)
    return process.stderr.splitlines()


@pytest.mark.parametrize("flags, shown", [
    (["-q"], ["ERROR distributed.scheduler: a worker died"]),
    ([], ["WARNING distributed.scheduler: a worker is slow",
          "ERROR distributed.scheduler: a worker died"]),
    (["-v"], ["INFO distributed.scheduler: State start",
              "WARNING distributed.scheduler: a worker is slow",
              "ERROR distributed.scheduler: a worker died"]),
], ids=["quiet", "default", "verbose"])
def test_a_library_logger_set_to_info_obeys_the_cli_level(flags, shown):
    assert _stderr_lines(*flags) == shown


EXPERIMENT = """\
space:
  name: line
  params:
    x: {type: float, low: -5.0, high: 5.0}
objective: objective_module:loss
surrogate: null
budget: 2
seed: 0
execution:
  backend: dask
  n_jobs: 1
"""


@pytest.mark.slow
def test_quiet_dask_run_prints_no_distributed_info(tmp_path: Path):
    pytest.importorskip("distributed")
    (tmp_path / "objective_module.py").write_text(textwrap.dedent("""
        def loss(config):
            return (config["x"] - 1.0) ** 2
    """))
    (tmp_path / "experiment.yaml").write_text(EXPERIMENT)
    process = subprocess.run(
        [sys.executable, "-m", "ensembo.cli", "-q", "run", "experiment.yaml", "--no-progress"],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
    )
    assert process.returncode == 0, process.stderr
    assert "distributed" not in process.stderr
