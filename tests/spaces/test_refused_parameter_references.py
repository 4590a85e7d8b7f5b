"""A hyperparameter refused for its own problems is reported once, not by every
``when`` and ``forbidden`` that names it.

``kernel: {type: categorical, choices: [rbf, poly, rbf]}`` was reported for its
duplicate choice, then again as "condition on missing parent 'kernel'" by each child and
"unknown hyperparameter 'kernel'" by each forbidden entry: the real error drowned.
"""

from __future__ import annotations

import pytest

from ensembo import spaces

CHILDREN = {
    "gamma": {"type": "float", "low": 0.1, "high": 1, "when": {"kernel": "rbf"}},
    "degree": {"type": "int", "low": 2, "high": 5, "when": {"kernel": "poly"}},
}
FORBIDDEN = [{"kernel": "poly", "degree": 5}, {"relation": "degree > kernel"}]


def messages(document) -> list[str]:
    return [str(problem) for problem in spaces.problems_in(document)]


@pytest.mark.parametrize(
    ("kernel", "only"),
    [
        (
            {"type": "categorical", "choices": ["rbf", "poly", "rbf"]},
            ("params.kernel.choices: 'choices' must hold distinct scalars, "
            "got ['rbf', 'poly', 'rbf']"),
        ),
        (
            {"type": "float", "low": "1e-3", "high": 1.0},
            "params.kernel.low: 'low' must be a number, got '1e-3'",
        ),
        (
            {"type": "categoric", "choices": ["rbf", "poly"]},
            ("params.kernel.type: unknown type 'categoric' (did you mean 'categorical'?); use "
            "one of float, int, categorical, bool, ordinal, constant, choice"),
        ),
        (
            {"tpye": "categorical", "choices": ["rbf", "poly"]},
            ("params.kernel: unknown key 'tpye'; did you mean 'type'? (a hyperparameter is a "
            "mapping with 'type' (one of float, int, categorical, bool, ordinal, constant, "
            "choice))"),
        ),
    ],
)
def test_references_to_a_refused_parameter_are_not_reported_again(kernel, only):
    document = {"params": {"kernel": kernel, **CHILDREN}, "forbidden": FORBIDDEN}
    assert messages(document) == [only]


def test_references_under_a_refused_choice_are_not_reported_again():
    document = {"params": {
        "model": {"type": "choice", "options": {}},
        "x": {"type": "float", "low": 0, "high": 1, "when": {"model:svm:C": {"gt": 1}}},
    }}
    assert messages(document) == [
        ("params.model.options: a choice needs non-empty 'options': a mapping, or a list of "
        "one-key mappings")
    ]


def test_a_refused_inner_parameter_shadows_an_outer_one_of_its_name():
    """``C`` inside option ``svm`` means the option's own ``C``, refused: not the top-level
    one, whose range the condition would otherwise be checked against."""
    document = {"params": {
        "C": {"type": "categorical", "choices": ["a", "b"]},
        "model": {"type": "choice", "options": {"svm": {
            "C": {"type": "float", "low": 2, "high": 1},
            "gamma": {"type": "float", "low": 0, "high": 1, "when": {"C": {"gt": 1.5}}},
        }}},
    }}
    assert messages(document) == [
        "params.model.options.svm.C: empty range: low 2 must be below high 1"
    ]


def test_an_unknown_name_is_still_reported_beside_a_refused_one():
    document = {
        "params": {"kernel": {"type": "categoric", "choices": ["a"]}, **CHILDREN},
        "forbidden": [{"kernel": "a", "degre": 3}],
    }
    found = messages(document)
    assert found[0].startswith("params.kernel.type: unknown type 'categoric'")
    assert found[1:] == [
        ("forbidden[0].degre: unknown hyperparameter 'degre' (did you mean 'degree'?); known "
        "hyperparameters: gamma, degree")
    ]


@pytest.mark.parametrize(("written", "meant"), [("integer", "int"), ("boolean", "bool")])
def test_an_unknown_type_names_the_close_one(written, meant):
    document = {"params": {"x": {"type": written}}}
    assert f"(did you mean {meant!r}?)" in messages(document)[0]
