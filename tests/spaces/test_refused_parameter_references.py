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


SVC = "sklearn.svm.SVC"
LR = "sklearn.linear_model.LogisticRegression"


def test_a_step_naming_a_refused_choice_is_not_reported_again():
    document = {
        "steps": ["model"],
        "params": {"model": {"type": "choise", "options": {
            "svm": {"estimator": SVC}, "lr": {"estimator": LR}}}},
    }
    found = messages(document)
    assert len(found) == 1
    assert found[0].startswith("params.model.type: unknown type 'choise'")


@pytest.mark.parametrize(
    ("option", "only"),
    [
        (
            {"estimator": {"by": "algo", "options": {"rf": SVC, "et": SVC}},
             "algo": {"type": "categorical", "choices": ["rf", "et", "rf"]}},
            ("params.model.options.tree.algo.choices: 'choices' must hold distinct scalars, "
             "got ['rf', 'et', 'rf']"),
        ),
        (
            {"estimator": SVC, "rename": {"cee": "C"},
             "cee": {"type": "float", "low": "0.1", "high": 10}},
            "params.model.options.tree.cee.low: 'low' must be a number, got '0.1'",
        ),
        (
            {"estimator": "sklearn.neural_network.MLPClassifier",
             "pack": {"hidden_layer_sizes": ["l1", "l2"]},
             "l1": {"type": "int", "low": 1, "high": 10},
             "l2": {"type": "integer", "low": 1, "high": 10}},
            ("params.model.options.tree.l2.type: unknown type 'integer' (did you mean 'int'?); "
             "use one of float, int, categorical, bool, ordinal, constant, choice"),
        ),
    ],
    ids=["estimator.by", "rename", "pack"],
)
def test_a_component_naming_a_refused_parameter_is_not_reported_again(option, only):
    document = {"steps": ["model"], "params": {"model": {"type": "choice", "options": {
        "tree": option}}}}
    assert messages(document) == [only]


def test_a_component_naming_an_unknown_parameter_is_still_reported():
    document = {"steps": ["model"], "params": {"model": {"type": "choice", "options": {
        "svm": {"estimator": SVC, "rename": {"cee": "C"},
                "cc": {"type": "float", "low": 0.1, "high": 10}}}}}}
    assert "params.model.options.svm.rename.cee: no hyperparameter 'cee' here; known: ['cc']" in (
        messages(document))


@pytest.mark.parametrize(
    ("options", "only"),
    [
        ({"svm": ["k"], "lr": {}},
         "params.model.options.svm: an option is a mapping of hyperparameters, got ['k']"),
        ({"s:v": {"k": {"type": "categorical", "choices": ["a"]}}, "lr": {}},
         "params.model.options.s:v: option names are non-empty and without ':', got 's:v'"),
    ],
    ids=["body", "name"],
)
def test_references_to_a_refused_option_are_not_reported_again(options, only):
    option = next(iter(options))
    document = {
        "params": {
            "model": {"type": "choice", "options": options, "default": option},
            "x": {"type": "float", "low": 0, "high": 1, "when": {"model": option}},
            "y": {"type": "float", "low": 0, "high": 1, "when": {"model:" + option + ":k": "a"}},
            "z": {"type": "float", "low": 0, "high": 1, "when": {"model": {"in": [option, "lr"]}}},
        },
        "forbidden": [{"model": option, "x": 0.5}],
    }
    assert messages(document) == [only]


def test_a_value_no_option_has_is_still_reported_beside_a_refused_option():
    document = {"params": {
        "model": {"type": "choice", "options": {"svm": ["k"], "lr": {}}, "default": "knn"},
        "x": {"type": "float", "low": 0, "high": 1, "when": {"model": {"in": ["svm", "knn"]}}},
    }}
    assert messages(document)[1:] == [
        "params.model.default: default 'knn' is not one of ['lr']",
        "params.x.when.model.in: 'knn' is not a value of 'model'; legal values: 'lr'",
    ]


def test_a_switched_estimator_may_name_a_refused_option():
    document = {"steps": ["model"], "params": {"model": {"type": "choice", "options": {
        "tree": {"estimator": {"by": "algo", "options": {"rf": SVC, "et": SVC}},
                 "algo": {"type": "choice", "options": {"rf": {}, "et": ["x"]}}}}}}}
    assert messages(document) == [
        ("params.model.options.tree.algo.options.et: an option is a mapping of "
         "hyperparameters, got ['x']")
    ]


def test_a_local_reference_is_checked_though_a_top_level_parameter_of_its_name_was_refused():
    """``kernel`` inside option ``svm`` means the option's own ``kernel``, which is fine:
    the refused top-level ``kernel`` must not silence the bad value it is compared with."""
    document = {"params": {
        "kernel": {"type": "categoric", "choices": ["a"]},
        "model": {"type": "choice", "options": {"lr": {}, "svm": {
            "kernel": {"type": "categorical", "choices": ["rbf", "poly"]},
            "gamma": {"type": "float", "low": 0, "high": 1, "when": {"kernel": "rbff"}},
        }}},
    }}
    found = messages(document)
    assert found[0].startswith("params.kernel.type: unknown type 'categoric'")
    assert found[1:] == [
        ("params.model.options.svm.gamma.when.kernel: 'rbff' is not a value of "
         "'model:svm:kernel'; legal values: 'rbf', 'poly'")
    ]


NESTED_CEE = {"sub": {"type": "choice", "options": {"x": {
    "estimator": LR, "cee": {"type": "flot", "low": 0.1, "high": 10}}}}}


@pytest.mark.parametrize(
    ("document", "path"),
    [
        ({"steps": ["model"], "params": {"model": {"type": "choice", "options": {"svm": {
            "estimator": SVC, "rename": {"cee": "C"}, "C": {"type": "float", "low": 0.1,
                                                            "high": 10}, **NESTED_CEE}}}}},
         "params.model.options.svm.rename.cee"),
        ({"estimator": SVC, "rename": {"cee": "C"},
          "params": {"C": {"type": "float", "low": 0.1, "high": 10}, **NESTED_CEE}},
         "rename.cee"),
    ],
    ids=["option", "top-level"],
)
def test_a_rename_is_reported_though_another_component_has_a_refused_parameter_of_its_name(
    document, path
):
    """The refused ``cee`` belongs to the nested option's own estimator: the outer
    component's ``rename: {cee: C}`` names nothing of its own arguments."""
    found = messages(document)
    assert found[0].startswith("params.")
    assert "cee.type: unknown type 'flot'" in found[0]
    assert any(message.startswith(f"{path}: no hyperparameter 'cee' here") for message in found)
