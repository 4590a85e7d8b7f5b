"""A loss of the wrong output shape, or non-finite on perfect predictions, is refused
before the search as the loss's own bug, named (plugin audit F4): it passed, and the
study then failed inside a built-in strategy, which was blamed for it."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo.attribution import CALL_NOTE
from ensembo.errors import PluginContractError
from ensembo.loss_fit import check_loss_fits_task, task_the_loss_fits

VALUES = np.linspace(-1.0, 1.0, 7)


class ScalarLoss:
    def __call__(self, y_true, predictions):
        return np.mean((np.asarray(y_true) - np.asarray(predictions)) ** 2)


class ColumnLoss:
    def __call__(self, y_true, predictions):
        return ((np.asarray(y_true) - np.asarray(predictions)) ** 2)[:, None]


class NanLoss:
    def __call__(self, y_true, predictions):
        losses = (np.asarray(y_true) - np.asarray(predictions)) ** 2
        losses[0] = np.nan
        return losses


class Broadcasting:
    """Squared error: fits regression; on class probabilities it broadcasts to (m, k)."""

    def __call__(self, y_true, predictions):
        predictions = np.asarray(predictions, dtype=float)
        if predictions.ndim == 2:
            return (predictions - 1.0) ** 2
        return (np.asarray(y_true) - predictions) ** 2


@pytest.mark.parametrize(
    ("loss", "said"),
    [(ScalarLoss(), r"values of shape \(\) for 5 examples"),
     (ColumnLoss(), r"values of shape \(5, 1\) for 5 examples"),
     (NanLoss(), r"NaN, infinite or non-numeric values for perfect predictions")],
)
def test_a_broken_loss_is_its_own_bug_named_by_its_registry_name(loss, said):
    with pytest.raises(PluginContractError, match=rf"loss 'my-loss' returned {said}") as caught:
        check_loss_fits_task(loss, {"name": "my-loss"}, "regression", VALUES, 0)
    assert caught.value.__notes__ == [f"{CALL_NOTE}__call__() of loss 'my-loss'"]


def test_a_loss_object_is_named_by_its_class():
    with pytest.raises(PluginContractError, match=r"loss ScalarLoss returned"):
        check_loss_fits_task(ScalarLoss(), ScalarLoss(), "regression", VALUES, 0)


def test_a_loss_broken_in_every_task_is_said_when_the_task_is_inferred():
    with pytest.raises(PluginContractError, match="loss 'scalar' returned values of shape"):
        task_the_loss_fits(ScalarLoss(), "scalar", VALUES)


def test_a_wrong_shape_in_the_other_tasks_format_only_means_it_does_not_fit_it():
    assert task_the_loss_fits(Broadcasting(), "sq", VALUES) == "regression"
