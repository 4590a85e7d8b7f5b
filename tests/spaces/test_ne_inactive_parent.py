"""``ne`` on a parent that can be inactive: the child is inactive with its parent.

ConfigSpace's ``NotEqualsCondition`` holds on an inactive (NaN) parent, so ``not_poly``
(``when: {kernel: {ne: poly}}``, ``kernel`` inside option ``svm``) was sampled, required
and filled in under ``model: lr``, where ``kernel`` does not exist; the documented rule
and the never-active check both say a child of an inactive parent is inactive.
"""

from __future__ import annotations

import numpy as np
import pytest
from ConfigSpace.util import deactivate_inactive_hyperparameters

from ensembo import spaces
from ensembo.errors import SpaceError
from ensembo.spaces.activity import deactivate

NOT_POLY = {
    "params": {
        "model": {
            "type": "choice",
            "options": {
                "svm": {"kernel": {"type": "categorical", "choices": ["rbf", "poly", "linear"]}},
                "lr": {},
            },
        },
        "not_poly": {
            "type": "int", "low": 1, "high": 9, "when": {"model:svm:kernel": {"ne": "poly"}},
        },
    }
}

NOT_TWO = {
    "params": {
        "model": {
            "type": "choice",
            "options": {"svm": {"n": {"type": "int", "low": 1, "high": 4}}, "lr": {}},
        },
        "y": {"type": "float", "low": 0, "high": 1, "when": {"model:svm:n": {"ne": 2}}},
        "z": {
            "type": "float", "low": 0, "high": 1,
            "when": {"any": [{"model:svm:n": {"ne": 2}}, {"model": "lr"}]},
        },
    }
}


def test_ne_on_an_inactive_categorical_leaves_the_child_inactive():
    space = spaces.load(NOT_POLY)
    for config in space.sample(500, seed=0):
        svm_not_poly = config["model"] == "svm" and config["model:svm:kernel"] != "poly"
        assert ("not_poly" in config) == svm_not_poly, config
    assert space.validate({"model": "lr"}) == {"model": "lr"}
    assert space.complete({"model": "lr"}) == {"model": "lr"}
    with pytest.raises(SpaceError, match="'not_poly' has a value"):
        space.validate({"model": "lr", "not_poly": 3})
    assert space.validate({"model": "svm", "model:svm:kernel": "linear", "not_poly": 3})


def test_ne_on_an_inactive_number_leaves_the_child_inactive():
    space = spaces.load(NOT_TWO)
    for config in space.sample(500, seed=0):
        svm_not_two = config["model"] == "svm" and config["model:svm:n"] != 2
        assert ("y" in config) == svm_not_two, config
        assert ("z" in config) == (svm_not_two or config["model"] == "lr"), config
    assert space.complete({"model": "lr"}) == {"model": "lr", "z": 0.5}
    with pytest.raises(SpaceError, match="'y' has a value"):
        space.validate({"model": "lr", "y": 0.5, "z": 0.5})


@pytest.mark.parametrize("document", [NOT_POLY, NOT_TWO])
def test_encoding_and_vectorised_activity_agree_with_the_samples(document):
    space = spaces.load(document)
    samples = space.sample(200, seed=1)
    assert space.decode(space.encode(samples).values) == samples
    configspace = space.to_configspace()
    vectors = np.array([c.get_array() for c in configspace.sample_configuration(200)])
    ours = np.isnan(deactivate(configspace, vectors))
    theirs = np.isnan(
        [deactivate_inactive_hyperparameters(None, configspace, v).get_array() for v in vectors]
    )
    assert np.array_equal(ours, theirs)


def test_ne_on_an_always_active_parent_samples_as_before():
    """Same draws as ``in`` the other values: the compiled form changes no sample."""
    def space(when):
        return spaces.load({"params": {
            "k": {"type": "categorical", "choices": ["a", "b", "c"]},
            "x": {"type": "float", "low": 0, "high": 1, "when": when},
        }})

    assert space({"k": {"ne": "b"}}).sample(100, seed=2) == space({"k": ["a", "c"]}).sample(
        100, seed=2
    )


def test_ne_on_the_only_value_of_a_constant_is_never_active():
    document = {"params": {
        "c": {"type": "constant", "value": "a"},
        "x": {"type": "float", "low": 0, "high": 1, "when": {"c": {"ne": "a"}}},
    }}
    with pytest.raises(SpaceError, match="params.x: can never be active: its 'when' admits no"):
        spaces.load(document)


def test_show_writes_ne_as_written_not_as_what_it_compiles_to():
    """``space show`` printed ``not_poly`` ``when model:svm:kernel in {'rbf', 'linear'}``
    and ``y`` ``when (model:svm:n < 2 || model:svm:n > 2)``: what ``ne`` compiles to."""
    document = {"params": {
        **NOT_TWO["params"],
        "kernel": {"type": "categorical", "choices": ["rbf", "poly", "linear"]},
        "not_poly": {"type": "int", "low": 1, "high": 9, "when": {"kernel": {"ne": "poly"}}},
    }}
    lines = spaces.load(document).show().splitlines()
    assert any(line.endswith("when model:svm:n != 2") for line in lines), lines
    assert any(line.endswith("when (model:svm:n != 2 || model == 'lr')") for line in lines)
    assert any(line.endswith("when kernel != 'poly'") for line in lines), lines


def test_show_keeps_an_in_that_equals_what_a_ne_compiles_to():
    """``kernel in [rbf, linear]`` is what ``kernel ne poly`` compiles to: the written
    ``in`` was shown as ``!=`` too when the text of the whole condition was rewritten."""
    document = {"params": {
        "kernel": {"type": "categorical", "choices": ["rbf", "poly", "linear"]},
        "a": {"type": "float", "low": 0, "high": 1, "when": {"all": [
            {"kernel": {"ne": "poly"}}, {"kernel": {"in": ["rbf", "linear"]}}]}},
        "b": {"type": "float", "low": 0, "high": 1, "when": {"any": [
            {"kernel": {"ne": "poly"}}, {"kernel": ["rbf", "linear"]}]}},
    }}
    lines = spaces.load(document).show().splitlines()
    assert any(
        line.endswith("when kernel != 'poly' and kernel in {'rbf', 'linear'}") for line in lines
    ), lines
    assert any(
        line.endswith("when (kernel != 'poly' || kernel in {'rbf', 'linear'})") for line in lines
    ), lines
