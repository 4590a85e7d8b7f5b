"""Estimators declared only inside choice options, in a space without ``steps`` or a
top-level ``estimator`` (docs audit): they were never checked, and nothing built them."""

from __future__ import annotations

import pytest

from ensembo import spaces
from ensembo.errors import SpaceError
from ensembo.spaces.load import problems_in


def _classifier_choice(svm_extra=None, rf_fixed=None):
    return {
        "type": "choice",
        "options": {
            "svm": {"estimator": "sklearn.svm.SVC", **(svm_extra or {})},
            "rf": {
                "estimator": "sklearn.ensemble.RandomForestClassifier",
                "fixed": rf_fixed or {},
            },
        },
    }


def _messages(document):
    return [str(problem) for problem in problems_in(document)]


def test_bad_arguments_of_option_estimators_are_reported_without_steps():
    document = {
        "params": {
            "classifier": _classifier_choice(
                svm_extra={"tau": {"type": "float", "low": 0.1, "high": 1}},
                rf_fixed={"random_stat": 0},
            )
        }
    }
    messages = _messages(document)
    assert any(
        "params.classifier.options.svm.estimator: sklearn.svm.SVC takes no argument 'tau'" in m
        for m in messages
    )
    assert any(
        "params.classifier.options.rf.fixed.random_stat" in m and "'random_state'" in m
        for m in messages
    )


def test_a_space_whose_estimators_nothing_builds_says_what_to_add():
    document = {"name": "nosteps", "params": {"classifier": _classifier_choice()}}
    with pytest.raises(SpaceError) as caught:
        spaces.load(document)
    message = str(caught.value)
    assert "params.classifier: estimators are declared in its options" in message
    assert "no 'steps' and no top-level 'estimator'" in message
    assert "add steps: [classifier]" in message


def test_an_unimportable_estimator_in_a_nested_option_is_reported_without_steps():
    document = {
        "params": {
            "model": {
                "type": "choice",
                "options": {
                    "plain": {},
                    "boosted": {
                        "base": {
                            "type": "choice",
                            "options": {"tree": {"estimator": "no.such.module.Tree"}},
                        }
                    },
                },
            }
        }
    }
    messages = _messages(document)
    assert any("params.model.options.boosted.base.options.tree.estimator" in m for m in messages)
    assert any("params.model: estimators are declared in its options" in m for m in messages)


def test_the_same_choice_listed_as_a_step_builds():
    space = spaces.load({"steps": ["classifier"], "params": {"classifier": _classifier_choice()}})
    assert type(space.build({"classifier": "svm"})).__name__ == "SVC"


def test_categorical_steps_alone_build_nothing_and_say_so():
    document = {
        "params": {"n": {"type": "int", "low": 1, "high": 3}},
        "categorical_steps": [{"encode": {"estimator": "sklearn.preprocessing.OneHotEncoder"}}],
    }
    assert any("categorical_steps: categorical columns are prepared for a model" in m
               for m in _messages(document))


def test_a_space_without_estimators_still_loads_for_ask_and_tell():
    space = spaces.load({"params": {"kernel": {"type": "choice", "options": {"a": {}, "b": {}}}}})
    assert not space.is_executable
