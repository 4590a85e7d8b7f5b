"""``estimator: {by: ..., options: ...}``: each option's class is checked against the
arguments that can be active when the selector takes that option, not against all."""

from __future__ import annotations

from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

from ensembo import spaces

RF = "sklearn.ensemble.RandomForestClassifier"
GB = "sklearn.ensemble.GradientBoostingClassifier"


def _space(**params) -> dict:
    return {
        "name": "forest",
        "estimator": {"by": "algorithm", "options": {"rf": RF, "gb": GB}},
        "params": {"algorithm": {"type": "categorical", "choices": ["rf", "gb"]}, **params},
    }


def _messages(document) -> list[str]:
    return [str(problem) for problem in spaces.problems_in(document)]


def test_an_argument_active_only_with_one_option_is_checked_against_its_class_only():
    """gb was refused: "GradientBoostingClassifier takes no argument 'bootstrap'", though
    bootstrap is never active when algorithm is gb."""
    document = _space(
        bootstrap={"type": "bool", "when": {"algorithm": "rf"}},
        max_samples={"type": "float", "low": 0.1, "high": 1, "when": {"bootstrap": True}},
        subsample={"type": "float", "low": 0.5, "high": 1, "when": {"algorithm": {"in": ["gb"]}}},
    )
    assert _messages(document) == []
    space = spaces.load(document)
    built = {type(space.build(config)) for config in space.sample(20, seed=0)}
    assert built == {RandomForestClassifier, GradientBoostingClassifier}


def test_an_argument_active_with_every_option_is_still_checked_against_each_class():
    document = _space(
        bootstrap={"type": "bool", "when": {"algorithm": "rf"}},
        subsample={"type": "float", "low": 0.5, "high": 1},
    )
    (found,) = _messages(document)
    assert found.startswith(f"forest: estimator.options.rf: {RF} takes no argument 'subsample'")


def test_an_argument_the_selector_does_not_decide_is_checked_against_each_class():
    """A condition on another hyperparameter says nothing of the selector: kept."""
    document = _space(
        n_estimators={"type": "int", "low": 10, "high": 100},
        bootstrap={"type": "bool", "when": {"n_estimators": {"gt": 50}}},
    )
    (found,) = _messages(document)
    assert found.startswith(f"forest: estimator.options.gb: {GB} takes no argument 'bootstrap'")
