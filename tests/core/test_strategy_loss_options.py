"""A strategy's own losses (``loss_options()``, ``check_loss``), checked before the first
trial: a bad loss spec is named by its key, ``ensemble.OPTION`` (docs/plugin-authoring.md
§4), and the strategy's own errors carry the note naming the method and the class."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo import Study
from ensembo.attribution import CALL_NOTE
from ensembo.errors import ComponentOptionError, PluginContractError, UnknownComponentError
from ensembo.plugins.ensembles.best import BestSingle

LINE = {"name": "line", "params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}
LABELS = np.array([0, 1] * 10)


def _study(ensemble):
    return Study(LINE, ensemble=ensemble, validation_targets=LABELS, task="classification")


@pytest.mark.parametrize(("ensemble", "error_type", "message"), [
    ({"name": "eo", "refill_loss": {"name": "zero-one", "tie": "halff"}},
     ComponentOptionError, r"^ensemble\.refill_loss: loss 'zero-one' .*'halff'"),
    ({"name": "posthoc", "loss": "zero-onee"},
     UnknownComponentError, r"^ensemble\.loss: Unknown loss 'zero-onee'"),
    ({"name": "posthoc", "loss": {"tie": "half"}},
     ValueError, r"^ensemble\.loss: a component mapping needs a 'name' key"),
])
def test_a_bad_loss_spec_of_a_strategy_names_its_key(ensemble, error_type, message):
    """It named the study's ``loss`` (an option error) or no key at all (an unknown name);
    the type stays the one the command line maps to exit 2."""
    with pytest.raises(error_type, match=message):
        _study(ensemble)


class LossOptions(BestSingle):
    def loss_options(self):
        return {"loss": None}


class RaisesInLossOptions(BestSingle):
    def loss_options(self):
        raise RuntimeError("boom")


class RaisesInCheckLoss(LossOptions):
    def check_loss(self, option, loss, context):
        raise TypeError("unexpected")


@pytest.mark.parametrize(("strategy", "error_type", "method"), [
    (RaisesInLossOptions(), RuntimeError, "loss_options"),
    (RaisesInCheckLoss(), TypeError, "check_loss"),
])
def test_an_error_of_loss_options_or_check_loss_names_the_method_and_class(
    strategy, error_type, method
):
    """Only update, ensemble and targets had the note the docs promise for any method."""
    with pytest.raises(error_type) as caught:
        _study(strategy)
    assert f"{CALL_NOTE}{method}() of ensemble strategy {__name__}." in "".join(
        getattr(caught.value, "__notes__", [])
    )


class ListsItsLosses(BestSingle):
    def loss_options(self):
        return ["loss"]


def test_loss_options_returning_no_mapping_is_a_contract_error_naming_the_strategy():
    """It failed as "'list' object has no attribute 'items'"."""
    with pytest.raises(PluginContractError, match=r"ListsItsLosses: loss_options\(\) must "
                                                  r"return a mapping .* got list") as caught:
        _study(ListsItsLosses())
    assert any("loss_options() of" in note for note in caught.value.__notes__)


def test_a_value_error_of_check_loss_still_refuses_the_loss_by_its_key():
    class Refuses(LossOptions):
        def check_loss(self, option, loss, context):
            raise ValueError("only 0/1 losses")

    with pytest.raises(ValueError, match=r"^loss: only 0/1 losses$"):
        _study(Refuses())
