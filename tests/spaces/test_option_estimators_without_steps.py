"""Estimators declared only inside choice options, in a space without ``steps`` or a
top-level ``estimator`` (docs audit): they were never checked, and the build error did
not say why nothing built them. Such a space still loads (it searches, and its stored
studies must load)."""

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


def test_a_space_whose_estimators_nothing_builds_loads_and_says_what_to_add_at_build():
    space = spaces.load({"name": "nosteps", "params": {"classifier": _classifier_choice()}})
    with pytest.raises(SpaceError) as caught:
        space.build({"classifier": "svm"})
    assert str(caught.value) == (
        "nosteps: this space builds no estimator; add 'estimator' or 'steps' to its document; "
        "the options of classifier declare estimators, but only 'steps' and a top-level "
        "'estimator' build: add steps: [classifier]"
    )


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


def test_the_same_choice_listed_as_a_step_builds():
    space = spaces.load({"steps": ["classifier"], "params": {"classifier": _classifier_choice()}})
    assert type(space.build({"classifier": "svm"})).__name__ == "SVC"


def test_a_space_without_estimators_still_loads_for_ask_and_tell():
    space = spaces.load({"params": {"kernel": {"type": "choice", "options": {"a": {}, "b": {}}}}})
    assert not space.is_executable
