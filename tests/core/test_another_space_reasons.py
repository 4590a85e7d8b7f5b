"""A study file continued with another space names what differs: an imputation rule or
the encoding was reported as "its conditions or forbidden clauses differ" in a space
without either; and a reworded ``description`` (a label, like the name) is the same
space."""

from __future__ import annotations

from pathlib import Path

import pytest

from ensembo import Study, spaces
from ensembo.errors import StorageError
from ensembo.space_comparison import _difference_text

SPACE = {"params": {"C": {"type": "float", "low": 0.1, "high": 10, "log": True}}}


@pytest.fixture
def stored(tmp_path):
    path = tmp_path / "study.db"
    Study(SPACE, surrogate=None, seed=0, storage=path).close()
    return path


def _refusal(path, space) -> str:
    with pytest.raises(StorageError) as refused:
        Study(space, surrogate=None, seed=0, storage=path)
    return str(refused.value)


def test_a_changed_imputation_rule_is_named(stored):
    message = _refusal(stored, spaces.load(SPACE).with_imputation("lower"))
    assert "another space (C: imputation 'midpoint' -> 'lower')" in message
    assert "conditions" not in message


def test_a_changed_encoding_is_named(stored):
    message = _refusal(stored, spaces.load(SPACE).with_encoding("onehot"))
    assert "another space (encoding 'index' -> 'onehot')" in message
    assert "conditions" not in message


def test_changed_conditions_are_named_as_such(stored):
    extended = {"params": {**SPACE["params"], "x": {"type": "int", "low": 1, "high": 5}}}
    path = stored.with_name("cond.db")
    Study(extended, surrogate=None, seed=0, storage=path).close()
    conditional = {"params": {**SPACE["params"], "x": {
        "type": "int", "low": 1, "high": 5, "when": {"C": {"gt": 1}}}}}
    message = _refusal(path, conditional)
    assert "another space (its conditions differ)" in message
    assert "forbidden" not in message


@pytest.mark.parametrize("described", [
    {**SPACE, "description": "cost sweep"},
    {"params": {"C": {**SPACE["params"]["C"], "description": "the cost"}}},
])
def test_a_description_is_a_label_not_another_space(stored, described):
    with Study(described, surrogate=None, seed=0, storage=stored) as study:
        assert study.space.names == ("C",)


def test_an_options_description_is_a_label_too(tmp_path):
    path = tmp_path / "choice.db"
    choice = {"params": {"k": {"type": "choice", "options": {"a": {}, "b": {}}}}}
    Study(choice, surrogate=None, seed=0, storage=path).close()
    described = {"params": {"k": {"type": "choice", "options": {
        "a": {"description": "the first"}, "b": {}}}}}
    Study(described, surrogate=None, seed=0, storage=path).close()


def test_a_changed_document_key_is_named_in_a_sentence(tmp_path):
    """'its estimator differ' read as broken English (and 'its rename differ')."""
    path = tmp_path / "svm.db"
    Study({**SPACE, "estimator": "sklearn.svm.SVC"}, surrogate=None, seed=0, storage=path).close()
    message = _refusal(path, {**SPACE, "estimator": "sklearn.svm.LinearSVC"})
    assert "another space (estimator 'sklearn.svm.SVC' -> 'sklearn.svm.LinearSVC')" in message


FOREST = {"estimator": {"by": "algorithm", "options": {
    "breiman": "sklearn.ensemble.RandomForestClassifier",
    "extra-trees": "sklearn.ensemble.ExtraTreesClassifier"}},
    "algorithm": {"type": "categorical", "choices": ["breiman", "extra-trees"]},
    "n_estimators": {"type": "int", "low": 10, "high": 100}}
CASH = {"steps": ["classifier"], "params": {"classifier": {"type": "choice", "options": {
    "svm": {"estimator": "sklearn.svm.SVC",
            "C": {"type": "float", "low": 0.001, "high": 1000.0, "log": True}},
    "forest": FOREST}}}}


def _cash(svm: dict | None = None, forest: dict | None = None) -> dict:
    options = CASH["params"]["classifier"]["options"]
    return {"steps": ["classifier"], "params": {"classifier": {"type": "choice", "options": {
        "svm": {**options["svm"], **(svm or {})}, "forest": {**FOREST, **(forest or {})}}}}}


@pytest.fixture
def stored_cash(tmp_path):
    path = tmp_path / "cash.db"
    Study(CASH, surrogate=None, seed=0, storage=path).close()
    return path


def test_an_options_estimator_is_named_by_its_path_with_both_classes(stored_cash):
    """It said 'its document differs in params', whichever option's estimator changed."""
    message = _refusal(stored_cash, _cash(svm={"estimator": "sklearn.svm.LinearSVC"}))
    assert ("another space (params.classifier.options.svm.estimator 'sklearn.svm.SVC' -> "
            "'sklearn.svm.LinearSVC')") in message


def test_a_by_estimators_option_is_named_by_its_path(stored_cash):
    by = {"by": "algorithm", "options": {
        "breiman": "sklearn.ensemble.RandomForestClassifier",
        "extra-trees": "sklearn.ensemble.RandomForestClassifier"}}
    message = _refusal(stored_cash, _cash(forest={"estimator": by}))
    assert ("another space (params.classifier.options.forest.estimator.options.extra-trees "
            "'sklearn.ensemble.ExtraTreesClassifier' -> "
            "'sklearn.ensemble.RandomForestClassifier')") in message


def test_an_added_fixed_argument_and_changed_steps_are_named(stored_cash):
    message = _refusal(stored_cash, _cash(forest={"fixed": {"max_depth": 3}}))
    assert "params.classifier.options.forest.fixed added ({'max_depth': 3})" in message
    message = _refusal(stored_cash, {**_cash(), "steps": []})
    assert "another space (steps ['classifier'] -> [])" in message


def test_an_estimator_changed_with_a_bound_is_named_beside_it(stored_cash):
    """The bound's note hid the estimator: the document's params were left out whole."""
    changed = _cash(svm={"estimator": "sklearn.svm.LinearSVC",
                         "C": {"type": "float", "low": 0.001, "high": 100.0, "log": True}})
    message = _refusal(stored_cash, changed)
    assert "upper 1000.0 -> 100.0" in message
    assert "params.classifier.options.svm.estimator 'sklearn.svm.SVC' ->" in message
    assert "params.classifier.options.svm.C" not in message  # the bound is named once


def test_a_change_inside_a_list_is_named_by_its_index(tmp_path):
    """Lists were compared whole and both sides cut to 60 characters, so a step's changed
    argument printed the same on both sides: 'steps [{'imputer': ... -> [{'imputer': ...'."""
    import copy

    import yaml

    library = Path(spaces.__file__).parent / "library" / "cash-levesque.yaml"
    document = yaml.safe_load(library.read_text())
    changed = copy.deepcopy(document)
    changed["steps"][0]["imputer"]["fixed"]["strategy"] = "mean"
    path = tmp_path / "steps.db"
    Study(document, surrogate=None, seed=0, storage=path).close()
    assert "another space (steps[0].imputer.fixed.strategy 'median' -> 'mean')" in _refusal(
        path, changed)


def test_long_values_are_shown_from_where_they_differ():
    old = "my_company.models.experimental.gradient_boosting.BoostedTreesClassifierV1"
    text = _difference_text(("estimator",), old, old[:-1] + "2")
    assert text == "estimator ...BoostedTreesClassifierV1' -> ...BoostedTreesClassifierV2'"
