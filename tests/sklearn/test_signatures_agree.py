"""The classifier and regressor repeat the search's signature (scikit-learn reads a
parameter list off each class's own ``__init__``); a parameter added to one and missed in
another, or not passed on, would silently drop out of ``get_params`` and ``clone``."""

from __future__ import annotations

import inspect

import pytest
from sklearn.base import clone

from ensembo.sklearn import EnsemboClassifier, EnsemboRegressor, _EnsemboSearch


def _without_space_default(cls) -> list[tuple[str, object, object]]:
    parameters = inspect.signature(cls.__init__).parameters.values()
    return [(p.name, p.kind, None if p.name == "space" else p.default) for p in parameters]


@pytest.mark.parametrize("cls", [EnsemboClassifier, EnsemboRegressor])
def test_same_parameters_as_the_search_but_the_default_space(cls):
    assert _without_space_default(cls) == _without_space_default(_EnsemboSearch)


@pytest.mark.parametrize("cls", [EnsemboClassifier, EnsemboRegressor])
def test_every_parameter_is_kept_and_cloned(cls):
    names = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    given = {name: object() for name in names}  # a distinct marker per parameter
    estimator = cls(**given)
    assert {name: estimator.get_params()[name] for name in names} == given
    assert clone(estimator, safe=False).get_params(deep=False).keys() == given.keys()
