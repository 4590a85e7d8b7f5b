"""A component option a study file cannot keep (a loss object as ``ensemble.loss``) is
refused, named, before the file is made: it failed in the JSON encoder as "cannot store
LogLoss in a trial record" and left a study file that ``Study.load`` called empty."""

from __future__ import annotations

import numpy as np
import pytest

import ensembo
from ensembo.errors import ExperimentError
from ensembo.plugins.losses.classification import LogLoss, ZeroOneLoss

SPACE = {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}
TARGETS = np.array([0, 1, 0, 1])


@pytest.mark.parametrize(("ensemble", "key", "loss"), [
    ({"name": "posthoc", "loss": LogLoss()}, "ensemble.loss", "LogLoss"),
    ({"name": "eo", "refill_loss": ZeroOneLoss()}, "ensemble.refill_loss", "ZeroOneLoss"),
])
def test_a_loss_object_among_the_ensembles_options_is_named_before_the_file_is_made(
    tmp_path, ensemble, key, loss
):
    path = tmp_path / "study.db"
    with pytest.raises(ExperimentError, match=rf"^{key}: a study file cannot keep its value "
                                              rf"\(a {loss}:"):
        ensembo.Study(SPACE, validation_targets=TARGETS, loss="log-loss", ensemble=ensemble,
                      storage=path)
    assert list(tmp_path.iterdir()) == []
    ensembo.Study(SPACE, validation_targets=TARGETS, loss="log-loss", ensemble=ensemble)
