"""DSL edge cases: names that collide, option names YAML rewrites, ambiguous references,
problems reported together, estimators that are not classes, dead hyperparameters."""

from __future__ import annotations

import attrs
import pytest

from ensembo import spaces
from ensembo.cli import main
from ensembo.spaces import SpaceDefinitionError
from ensembo.spaces.compile import compile_spec
from ensembo.spaces.problems import Problems
from ensembo.spaces.spec import Param, SpaceSpec


def write(tmp_path, text, name="space.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def messages(source) -> list[str]:
    return [str(problem) for problem in spaces.problems_in(source)]


# --- A: the flat-name separator in option names, duplicate flat names -------------------

COLLIDING = """\
params:
  algo:
    type: choice
    options:
      svm:
        kernel:
          type: choice
          options:
            rbf:
              gamma: {type: float, low: 0.0, high: 1.0}
      "svm:kernel:rbf":
        gamma: {type: float, low: 5.0, high: 6.0}
"""


def test_an_option_name_with_the_separator_is_refused_naming_its_path(tmp_path):
    found = messages(write(tmp_path, COLLIDING))
    assert found == [
        (
            "space.yaml: params.algo.options.svm:kernel:rbf: option names are non-empty and "
            "without ':', got 'svm:kernel:rbf'"
        )
    ]


def test_compile_refuses_a_duplicate_flat_name_instead_of_overwriting():
    first = Param(name="a:x:g", local="g", scope="a:x:", kind="float", path="p.one", low=0, high=1)
    second = attrs.evolve(first, path="p.two", low=5, high=6)
    problems = Problems("s.yaml")
    compile_spec(SpaceSpec(name="s", params=(first, second)), problems)
    assert [str(p) for p in problems.items] == [
        "s.yaml: p.two: flat name 'a:x:g' is already used by p.one; rename one of them"
    ]


# --- B: numeric and on/off option names ----------------------------------------------------

LAYERS = """\
params:
  layers:
    type: choice
    default: 1
    options:
      1: {}
      2:
        units_2: {type: int, low: 1, high: 100}
  dropout: {type: float, low: 0.0, high: 0.5, when: {layers: 2}}
  decay: {type: float, low: 0.0, high: 0.5, when: {layers: [1, 2]}}
forbidden:
  - {layers: 2, dropout: 0.0}
"""


def test_numeric_option_names_match_numeric_condition_values(tmp_path):
    space = spaces.load(write(tmp_path, LAYERS))
    assert space.configspace["layers"].choices == ("1", "2")
    assert space.configspace["layers"].default_value == "1"
    configs = space.sample(20, seed=0)
    assert all(("dropout" in c) == (c["layers"] == "2") for c in configs)
    assert all("decay" in c for c in configs)


ON_OFF = """\
params:
  early_stopping:
    type: choice
    options:
      on: {patience: {type: int, low: 1, high: 10}}
      off: {}
  tol: {type: float, low: 1.0e-5, high: 1.0e-2, log: true, when: {early_stopping: "on"}}
"""


def test_on_off_option_keys_keep_their_text(tmp_path):
    space = spaces.load(write(tmp_path, ON_OFF))
    assert space.configspace["early_stopping"].choices == ("on", "off")
    assert "early_stopping:on:patience" in space.names


def test_an_unquoted_on_in_a_condition_lists_legal_values_and_says_to_quote(tmp_path):
    path = write(tmp_path, ON_OFF.replace('{early_stopping: "on"}', "{early_stopping: on}"))
    assert messages(path) == [
        (
            "space.yaml: params.tol.when.early_stopping: 'true' is not a value of "
            "'early_stopping'; legal values: 'on', 'off' (YAML reads unquoted on/off/yes/no as "
            "true/false: quote the option name)"
        )
    ]


def test_an_illegal_condition_value_lists_the_legal_ones():
    params = {
        "k": {"type": "categorical", "choices": ["a", "b"]},
        "n": {"type": "int", "low": 1, "high": 5},
        "x": {"type": "bool", "when": {"k": ["a", "z"]}},
        "y": {"type": "bool", "when": {"n": 9}},
    }
    found = messages({"params": params})
    assert found == [
        "params.x.when.k: 'z' is not a value of 'k'; legal values: 'a', 'b'",
    ]
    del params["x"]
    (found,) = messages({"params": params})
    assert found.startswith("params.y.when.n: invalid condition on 'n'")
    assert found.endswith("legal values: [1, 5]")


# --- C: ambiguous local names ------------------------------------------------------------


def test_an_ambiguous_local_name_is_reported_as_ambiguous_with_its_candidates():
    params = {
        "classifier": {
            "type": "choice",
            "options": {
                "svm": {"C": {"type": "float", "low": 1.0, "high": 2.0}},
                "logreg": {"C": {"type": "float", "low": 1.0, "high": 2.0}},
            },
        },
        "shrink": {"type": "bool", "when": {"C": {"gt": 1.5}}},
    }
    assert messages({"params": params}) == [
        (
            "params.shrink.when.C.gt: 'C' is ambiguous: it may mean classifier:svm:C, "
            "classifier:logreg:C; write the full name"
        )
    ]
    params["shrink"]["when"] = {"classifier:svm:C": {"gt": 1.5}}
    assert messages({"params": params}) == []


# --- F: duplicate keys are reported with the other problems ---------------------------------

DUPLICATE_AND_MORE = """\
params:
  C: {type: float, low: 0.0, high: 1.0, log: true}
  k: {type: int, low: 5, high: 1}
  C: {type: float, low: 0.0, high: 1.0, log: true}
"""


def test_duplicate_keys_are_reported_with_every_other_problem(tmp_path):
    path = write(tmp_path, DUPLICATE_AND_MORE)
    expected = [
        "space.yaml: params.C.low: log scale needs low > 0, got 0.0",
        "space.yaml: params.k: empty range: low 5 must be below high 1",
        "space.yaml: params: duplicate key 'C' on line 4 (names must be unique)",
    ]
    assert messages(path) == expected
    with pytest.raises(SpaceDefinitionError) as caught:
        spaces.load(path)
    assert [str(p) for p in caught.value.problems] == expected


def test_a_yaml_merge_key_may_still_be_overridden(tmp_path):
    text = "params:\n  n: &b {type: int, low: 1, high: 5}\n  m:\n    <<: *b\n    high: 9\n"
    assert spaces.load(write(tmp_path, text)).configspace["m"].upper == 9


# --- D: `space show` draws a conditioned hyperparameter under its option ---------------------

FOREST_OR_BOOSTING = """\
params:
  classifier:
    type: choice
    options:
      forest:
        criterion: {type: categorical, choices: [gini, entropy]}
        max_depth: {type: int, low: 2, high: 30, when: {criterion: gini}}
      boosting:
        loss: {type: categorical, choices: [log_loss, exponential]}
        max_depth: {type: int, low: 1, high: 8, when: {loss: log_loss}}
"""


def test_show_draws_a_conditioned_hyperparameter_under_its_option(tmp_path):
    from ensembo.spaces.show import render

    lines = render(spaces.load(write(tmp_path, FOREST_OR_BOOSTING))).splitlines()[1:]
    assert [line.split(",")[0] for line in lines] == [
        "  classifier: choice {forest",
        "    = forest",
        "      criterion: categorical {gini",
        "      max_depth: int [2",
        "    = boosting",
        "      loss: categorical {log_loss",
        "      max_depth: int [1",
    ]
    assert lines[3].endswith("when classifier:forest:criterion == 'gini'")
    assert lines[6].endswith("when classifier:boosting:loss == 'log_loss'")


# --- G: an estimator that is a module ----------------------------------------------------------


def test_an_estimator_that_is_a_module_is_refused_at_load_time_naming_its_path():
    document = {
        "params": {
            "model": {
                "type": "choice",
                "options": {"svm": {"estimator": "sklearn.svm"}},
            }
        },
        "steps": ["model"],
    }
    assert messages(document) == [
        (
            "params.model.options.svm.estimator: estimator 'sklearn.svm' is a module, not a class "
            "or factory; name a class in it (e.g. sklearn.svm.ClassName)"
        )
    ]


# --- H: a hyperparameter that can never be active ------------------------------------------


def test_a_hyperparameter_conditioned_on_another_branch_is_reported_as_never_active():
    params = {
        "classifier": {
            "type": "choice",
            "options": {
                "svm": {"C": {"type": "float", "low": 1.0, "high": 2.0}},
                "tree": {"depth": {"type": "int", "low": 1, "high": 5, "when": {"C": {"gt": 1.5}}}},
            },
        },
        "boost": {"type": "bool", "when": {"classifier:tree:depth": {"gt": 2}}},
        "shrink": {"type": "bool", "when": {"any": [{"classifier": "tree"}, {"C": {"gt": 1}}]}},
    }
    assert messages({"params": params}) == [
        (
            "params.classifier.options.tree.depth: can never be active: its option needs "
            "'classifier' in ['tree'], parent 'classifier:svm:C' needs it in ['svm']"
        ),
        (
            "params.boost: can never be active: its parent 'classifier:tree:depth' can never be "
            "active"
        ),
    ]


def _classifier(**tree_params):
    """A choice of svm, knn and tree; ``tree_params`` go under the tree option."""
    return {
        "type": "choice",
        "options": {
            "svm": {"kernel": {"type": "categorical", "choices": ["rbf", "poly", "linear"]}},
            "knn": {"k": {"type": "int", "low": 1, "high": 9}},
            "tree": tree_params,
        },
    }


@pytest.mark.parametrize(
    ("when", "why"),
    [
        (
            {"classifier": {"ne": "tree"}},
            "its option needs 'classifier' in ['tree'], its 'when' needs it in ['knn', 'svm']",
        ),
        (
            {"any": [{"classifier": "svm"}, {"classifier": ["knn"]}]},
            "its option needs 'classifier' in ['tree'], its 'when' needs it in ['knn', 'svm']",
        ),
        (
            {"any": [{"classifier": "svm"}, {"classifier": "knn", "k": {"gt": 2}}]},
            "its option needs 'classifier' in ['tree'], its 'when' needs it in ['knn', 'svm']",
        ),
    ],
)
def test_ne_and_any_conditions_that_exclude_the_own_option_are_never_active(when, why):
    depth = {"type": "int", "low": 1, "high": 5, "when": when}
    assert messages({"params": {"classifier": _classifier(depth=depth)}}) == [
        f"params.classifier.options.tree.depth: can never be active: {why}"
    ]


def test_contradicting_values_of_a_categorical_are_never_active():
    gamma = {"type": "float", "low": 0.1, "high": 1.0,
             "when": {"all": [{"kernel": "rbf"}, {"kernel": {"ne": "rbf"}}]}}
    params = {"classifier": _classifier(), "gamma": gamma}
    assert messages({"params": params}) == [
        (
            "params.gamma: can never be active: its 'when' needs 'classifier:svm:kernel' in "
            "['rbf'], its 'when' needs it in ['linear', 'poly']"
        )
    ]


@pytest.mark.parametrize(
    "when",
    [
        {"classifier": {"ne": "svm"}},
        {"any": [{"classifier": "tree"}, {"k": {"gt": 2}}]},
        {"any": [{"kernel": "rbf"}, {"classifier": "tree"}]},
        {"kernel": {"ne": "rbf"}, "classifier": "svm"},
    ],
)
def test_satisfiable_ne_and_any_conditions_are_accepted(when):
    depth = {"type": "int", "low": 1, "high": 5, "when": when}
    assert messages({"params": {"classifier": _classifier(), "depth": depth}}) == []


def _numeric_child(when, kind="float", low=0.5, high=100.0):
    return {
        "params": {
            "C": {"type": kind, "low": low, "high": high},
            "gamma": {"type": "float", "low": 0.0, "high": 1.0, "when": when},
        }
    }


@pytest.mark.parametrize(
    ("when", "kind", "stated"),
    [
        ({"C": {"gt": 2, "lt": 1}}, "float", "gt 2 and lt 1"),
        ({"C": {"gt": 100}}, "float", "gt 100"),
        ({"C": {"lt": 0.5}}, "float", "lt 0.5"),
        ({"C": {"gt": 4, "le": 4}}, "float", "gt 4 and le 4"),
        ({"C": {"gt": 4, "lt": 5}}, "int", "gt 4 and lt 5"),
    ],
)
def test_numeric_ranges_no_value_satisfies_are_never_active(when, kind, stated):
    bounds = "[0.5, 100.0]" if kind == "float" else "[1, 10]"
    space = _numeric_child(when, kind, *((0.5, 100.0) if kind == "float" else (1, 10)))
    why = f"its 'when' needs 'C' {stated}, which no value in {bounds} satisfies"
    assert messages(space) == [f"params.gamma: can never be active: {why}"]


@pytest.mark.parametrize(
    ("when", "kind"),
    [
        ({"C": {"ge": 100}}, "float"),
        ({"C": {"ge": 4, "le": 4}}, "float"),
        ({"C": {"le": 0.5}}, "float"),
        ({"C": {"gt": 4, "lt": 6}}, "int"),
        ({"any": [{"C": {"gt": 90}}, {"C": {"lt": 1}}]}, "float"),
        ({"C": {"gt": 50}, "any": [{"C": {"lt": 10}}, {"C": {"gt": 60}}]}, "float"),
    ],
)
def test_numeric_ranges_some_value_satisfies_are_accepted(when, kind):
    space = _numeric_child(when, kind, *((0.5, 100.0) if kind == "float" else (1, 10)))
    assert messages(space) == []


# --- I: inputs that used to crash with a traceback ------------------------------------------


@pytest.mark.parametrize("text", ["", "# only a comment\n"])
def test_an_empty_file_is_a_space_error_naming_it_in_load_show_and_validate(tmp_path, capsys, text):
    path = write(tmp_path, text, "empty.yaml")
    expected = "empty.yaml: a space document is a mapping with 'params', got an empty document"
    assert messages(path) == [expected]
    with pytest.raises(SpaceDefinitionError) as raised:
        spaces.load(path)
    assert str(raised.value) == expected
    assert main(["space", "show", str(path)]) == 2
    assert capsys.readouterr().err == f"ensembo: error: {expected}\n"


@pytest.mark.parametrize("written", [["float"], {"kind": "float"}])
def test_a_type_that_is_not_a_name_is_an_unknown_type(written):
    document = {"params": {"C": {"type": written, "low": 1, "high": 2}}}
    expected = (
        f"params.C.type: unknown type {written!r}; use one of float, int, categorical, bool, "
        "ordinal, constant, choice"
    )
    assert messages(document) == [expected]
    with pytest.raises(SpaceDefinitionError, match="unknown type"):
        spaces.load(document)


def _svc_option(**component) -> dict:
    return {
        "params": {
            "clf": {
                "type": "choice",
                "options": {
                    "svm": {
                        "estimator": "sklearn.svm.SVC",
                        **component,
                        "C": {"type": "float", "low": 1, "high": 2},
                        "gama": {"type": "float", "low": 1, "high": 2},
                    }
                },
            }
        },
        "steps": ["clf"],
    }


def test_a_rename_to_a_number_says_the_new_name_must_be_a_string():
    found = messages(_svc_option(rename={"C": 5, "gama": "gamma"}))
    assert found == [
        (
            "params.clf.options.svm.rename.C: the new name of 'C' must be an argument name "
            "(a string), or null to keep it out of the estimator; got 5"
        )
    ]


# --- J: a mistyped imputation rule is one error where it is written --------------------------

RULES = "use one of default, midpoint, lower, upper, none or {value: X}"


def _imputed(space_rule, **declared) -> dict:
    def own(name):
        return {"impute": declared[name]} if name in declared else {}

    return {
        "impute": space_rule,
        "params": {
            "kernel": {"type": "categorical", "choices": ["rbf", "poly"], **own("kernel")},
            "C": {"type": "float", "low": 1.0, "high": 2.0, **own("C")},
            "degree": {
                "type": "int",
                "low": 1,
                "high": 5,
                "when": {"kernel": "poly"},
                **own("degree"),
            },
        },
    }


def test_a_mistyped_rule_is_reported_once_at_its_own_path():
    assert messages(_imputed("Midpoint", degree="mean")) == [
        f"impute: unknown rule 'Midpoint'; {RULES} (did you mean 'midpoint'?)",
        f"params.degree.impute: unknown rule 'mean'; {RULES}",
    ]


def test_a_bare_value_some_hyperparameter_takes_is_still_a_fixed_value():
    space = spaces.load(_imputed("midpoint", kernel="poly", C=1.5))
    assert space.imputation_rule("kernel") == {"value": "poly"}
    assert space.imputation_rule("C") == {"value": 1.5}


def test_an_illegal_fixed_value_is_reported_where_the_rule_is_written():
    found = messages(_imputed("rbf", degree={"value": 9}))
    assert found == [
        "impute: imputed value 'rbf' is not a legal value of 'C'",
        "params.degree.impute: imputed value 9 is not a legal value of 'degree'",
    ]


def test_a_fixed_value_that_is_a_list_is_refused_where_it_is_written():
    found = messages(_imputed({"value": [1]}))
    assert found == ["impute: a fixed value is a number or string, got [1]"]


# --- K: fix-advice for arguments an estimator does not take ----------------------------------


def test_a_rename_to_the_string_none_says_to_write_null():
    document = _svc_option(rename={"C": "None", "gama": "gamma"})
    (found,) = messages(document)
    assert found.startswith(
        "params.clf.options.svm.rename.C: sklearn.svm.SVC takes no argument 'None'; write "
        "null, unquoted, to drop it (YAML reads None as a string). Valid: C, "
    )


def test_a_misspelt_fixed_key_is_reported_at_its_key_with_a_close_match():
    document = {
        "params": {
            "model": {
                "type": "choice",
                "options": {
                    "rf": {
                        "estimator": "sklearn.ensemble.RandomForestClassifier",
                        "fixed": {"n_jobs": 1, "random_stat": 0},
                    }
                },
            }
        },
        "steps": ["model"],
    }
    (found,) = messages(document)
    assert found.startswith(
        "params.model.options.rf.fixed.random_stat: sklearn.ensemble.RandomForestClassifier "
        "takes no argument 'random_stat' (did you mean 'random_state'?). Valid: bootstrap, "
    )
    assert "rename" not in found


def test_a_misspelt_hyperparameter_gets_a_close_match_and_the_rename_advice():
    (found,) = messages(_svc_option())
    assert found.startswith(
        "params.clf.options.svm.estimator: sklearn.svm.SVC takes no argument 'gama' (did you "
        "mean 'gamma'?); map it with rename: {gama: NAME} (null drops it). Valid: C, "
    )


# --- L. option names that spell JSON scalars reach the estimator typed ---------------------

TYPED_OPTIONS = """\
name: typed-options
steps: [model]
params:
  model:
    type: choice
    options:
      rf:
        estimator: sklearn.ensemble.RandomForestClassifier
        bootstrap:
          type: choice
          options:
            true: {max_samples: {type: float, low: 0.1, high: 1.0}}
            false: {}
        class_weight: {type: choice, options: {null: {}, balanced: {}}}
        criterion: {type: choice, options: {gini: {}, "on": {}}}
      svm:
        estimator: sklearn.svm.SVC
        degree: {type: choice, options: {2: {}, 3: {}}}
"""


def test_options_named_true_false_null_or_a_number_pass_that_value(tmp_path):
    """They reached scikit-learn as 'true' and '3', which it refuses at every trial."""
    space = spaces.load(write(tmp_path, TYPED_OPTIONS))
    forest = space.build({"model": "rf", "model:rf:bootstrap": "false",
                          "model:rf:class_weight": "null", "model:rf:criterion": "gini"})
    assert forest.get_params()["bootstrap"] is False
    assert forest.get_params()["class_weight"] is None
    forest = space.build({"model": "rf", "model:rf:bootstrap": "true",
                          "model:rf:bootstrap:true:max_samples": 0.5,
                          "model:rf:class_weight": "balanced", "model:rf:criterion": "on"})
    assert forest.get_params()["bootstrap"] is True
    assert forest.get_params()["criterion"] == "on"  # not a JSON scalar: the name as written
    svm = space.build({"model": "svm", "model:svm:degree": "2"})
    assert svm.get_params()["degree"] == 2
    assert space.configspace["model:svm:degree"].choices == ("2", "3")  # names stay text


# --- M. validate accepts what load accepts, and load explains a misnamed params ----------


def test_validate_accepts_a_definition_and_a_serialized_configspace(tmp_path, capsys):
    """``space show --json`` output and ConfigSpace's JSON loaded fine but failed
    validation with five or six bogus 'unknown key' problems."""
    import json

    space = spaces.load("svm")
    (tmp_path / "definition.json").write_text(json.dumps(space.definition()))
    (tmp_path / "configspace.json").write_text(
        json.dumps(space.configspace.to_serialized_dict()))
    for name in ("definition.json", "configspace.json"):
        assert main(["space", "validate", str(tmp_path / name)]) == 0
        assert f"{name}: valid (" in capsys.readouterr().out
    (tmp_path / "broken.json").write_text('{"configspace": 5}')
    assert main(["space", "validate", str(tmp_path / "broken.json")]) == 2
    assert "broken.json: not a valid space definition: TypeError(" in capsys.readouterr().err


def test_hyperparameters_instead_of_params_is_explained_by_load_too(tmp_path):
    """load read it as a serialized ConfigSpace: "'str' object has no attribute 'pop'"."""
    path = write(tmp_path, "name: t\nhyperparameters:\n  x: {type: float, low: 0, high: 1}\n")
    with pytest.raises(SpaceDefinitionError, match="unknown key 'hyperparameters'"):
        spaces.load(path)


def test_a_default_off_its_grid_is_refused_with_the_nearest_point():
    """It was moved to the grid without a word (53 with q 7 became 50)."""
    found = messages({"name": "t", "params": {
        "n": {"type": "int", "low": 1, "high": 100, "q": 7, "default": 53},
        "f": {"type": "float", "low": 0.0, "high": 1.0, "q": 0.3, "default": 1.0},
        "g": {"type": "float", "low": 0.0, "high": 1.0, "q": 0.3, "default": 0.9}}})
    assert found == [
        ("t: params.n.default: 53 is not on the grid 1 + k * 7; the nearest grid values are 50 "
         "and 57"),
        ("t: params.f.default: 1.0 is not on the grid 0.0 + k * 0.3; the nearest grid value is "
         "0.9"),
    ]


def test_a_hyperparameter_called_description_in_an_option_is_refused():
    """It was taken for the option's description and dropped without a word."""
    found = messages({"name": "t", "params": {"model": {"type": "choice", "options": {
        "a": {"description": {"type": "float", "low": 0.0, "high": 1.0}},
        "b": {"description": "plain text is fine"}}}}})
    assert found == [("t: params.model.options.a.description: an option's description is "
                     "text; a hyperparameter cannot be called 'description'")]


NULL_CATEGORICAL = """\
name: null-categorical
estimator: sklearn.ensemble.RandomForestClassifier
params:
  class_weight: {type: categorical, choices: [null, balanced]}
  max_features: {type: categorical, choices: [sqrt, null], default: null}
  min_samples_leaf: {type: int, low: 1, high: 5, when: {max_features: "null"}}
"""


def test_a_null_categorical_choice_is_named_null_and_passes_none(tmp_path):
    """scikit-learn's class_weight/max_features take None; 'choices' refused null, and the
    quoted "None" reached the estimator as a string it refuses."""
    space = spaces.load(write(tmp_path, NULL_CATEGORICAL))
    assert space.configspace["class_weight"].choices == ("null", "balanced")
    assert space.default()["max_features"] == "null"
    config = {"class_weight": "null", "max_features": "null", "min_samples_leaf": 2}
    params = space.build(config).get_params()
    assert params["class_weight"] is None and params["max_features"] is None
    assert params["min_samples_leaf"] == 2
    params = space.build({"class_weight": "balanced", "max_features": "sqrt"}).get_params()
    assert (params["class_weight"], params["max_features"]) == ("balanced", "sqrt")
    assert spaces.load(space.definition()).build(config).get_params()["class_weight"] is None


# --- N. a quoted number compared with a numeric hyperparameter is a type error -------------


def _with_when(when, **param) -> dict:
    param = param or {"type": "int", "low": 1, "high": 10}
    return {"name": "t", "params": {"n": param, "x": {"type": "bool", "when": when}}}


def test_a_quoted_number_for_an_int_says_it_is_a_string_and_to_write_it_unquoted():
    """It said "illegal value '5' ... legal values: [1, 10]", although 5 is in range."""
    assert messages(_with_when({"n": "5"})) == [
        "t: params.x.when.n: 'n' is an integer in [1, 10], but '5' is a string: write 5 unquoted"
    ]


def test_strings_booleans_and_null_for_a_number_are_named_by_their_type():
    found = messages(_with_when({"n": ["0.5", "abc", True]}, type="float", low=0.0, high=1.0))
    assert found == [
        ("t: params.x.when.n: 'n' is a number in [0.0, 1.0], but '0.5' is a string, 'abc' is a "
         "string, true is a boolean")
    ]
    forbidden = {"name": "t", "params": {"n": {"type": "int", "low": 1, "high": 10}},
                 "forbidden": [{"n": "7"}]}
    assert messages(forbidden) == [
        "t: forbidden[0].n: 'n' is an integer in [1, 10], but '7' is a string: write 7 unquoted"
    ]


# --- O. forbidden comparisons and null values are explained in the user's terms ------------


def test_a_comparison_in_a_forbidden_clause_says_forbidden_takes_values():
    """It said "'eq' takes a single value, got {'gt': 5}": the user wrote no 'eq'."""
    document = {"name": "t", "params": {"depth": {"type": "int", "low": 1, "high": 10}},
                "forbidden": [{"depth": {"gt": 5}}]}
    assert messages(document) == [
        ("t: forbidden[0].depth: forbidden clauses take values, not comparisons: write "
         "{depth: VALUE} or {depth: [VALUES]} listing the values to forbid (got {'gt': 5}); a "
         'relation between two hyperparameters is {relation: "left OP right"}')
    ]


KERNEL = {"type": "categorical", "choices": ["rbf", "poly"]}


def test_a_null_condition_value_is_not_a_value_and_lists_the_legal_ones():
    """It said "'eq' takes a single value, got None"."""
    assert messages(_with_when({"n": None}, **KERNEL)) == [
        "t: params.x.when.n: null is not a value of 'n'; legal values: 'rbf', 'poly'"
    ]
    assert messages(_with_when({"n": ["rbf", None]}, **KERNEL)) == [
        "t: params.x.when.n: null is not a value of 'n'; legal values: 'rbf', 'poly'"
    ]
    nullable = {"type": "categorical", "choices": ["rbf", None]}
    assert messages(_with_when({"n": None}, **nullable)) == [
        ("t: params.x.when.n: null is not a value of 'n'; legal values: 'rbf', 'null' (the "
         'choice null is named "null": quote it)')
    ]
    assert messages(_with_when({"n": None})) == [
        "t: params.x.when.n: 'n' is an integer in [1, 10], but null is no number"
    ]


def test_a_null_in_a_forbidden_clause_lists_the_legal_values():
    document = {"name": "t", "params": {"kernel": KERNEL}, "forbidden": [{"kernel": None}]}
    assert messages(document) == [
        "t: forbidden[0].kernel: null is not a value of 'kernel'; legal values: 'rbf', 'poly'"
    ]


# --- P. an unknown name in forbidden or when: close matches, a short list ------------------


def _cash_classification() -> dict:
    from pathlib import Path

    from ensembo.spaces.document import read_document

    return read_document(Path(spaces.__file__).parent / "library" / "cash-classification.yaml")


def test_a_misspelt_forbidden_name_is_unknown_with_a_close_match_and_a_short_list():
    """It said "condition on missing parent 'classifer'; known hyperparameters: " and then
    every flat name of the space: a line of 1,221 characters."""
    document = {**_cash_classification(), "forbidden": [{"classifer": "svm"}]}
    (found,) = messages(document)
    assert found.startswith(
        "cash-classification: forbidden[0].classifer: unknown hyperparameter 'classifer' "
        "(did you mean 'classifier'?); known hyperparameters: imputation, scaling, classifier, "
    )
    assert found.endswith(" more)") and len(found) < 400


def test_a_misspelt_name_in_a_condition_gets_a_close_match_as_written_in_its_scope():
    document = _cash_classification()
    options = document["params"]["classifier"]["options"]
    options["svm"]["shrinking"] = {"type": "bool", "when": {"gama": {"gt": 0.1}}}
    (found,) = messages(document)
    assert found.startswith(
        "cash-classification: params.classifier.options.svm.shrinking.when.gama.gt: condition "
        "on missing parent 'gama' (did you mean 'gamma'?); known hyperparameters: imputation, "
    )
    assert len(found.split("; known hyperparameters: ")[1].split(", ")) == 10


# --- Q. an infinite or NaN number is reported at its path ---------------------------------


def test_an_infinite_bound_is_reported_at_its_path_as_not_finite(tmp_path):
    """It said "the document must hold plain data (JSON types): Out of range float values
    are not JSON compliant", naming no key."""
    text = (
        "params:\n  x: {type: float, low: -.inf, high: .inf}\n"
        "  y: {type: constant, value: .nan}\n"
    )
    assert messages(write(tmp_path, text)) == [
        ("space.yaml: params.x.low: -inf is not a finite number; bounds must be finite: write the "
         "smallest value worth searching"),
        ("space.yaml: params.x.high: inf is not a finite number; bounds must be finite: write the "
         "largest value worth searching"),
        ("space.yaml: params.y.value: nan is not a finite number; values must be finite (JSON has "
         "no infinity or NaN)"),
    ]
    with pytest.raises(SpaceDefinitionError, match=r"space\.yaml: params\.x\.low: -inf is not"):
        spaces.load(write(tmp_path, text))


# --- R. a misspelt component key is an unknown key with a close match ----------------------


def _scaling(**option) -> dict:
    return {"name": "t", "steps": ["scaling"],
            "params": {"scaling": {"type": "choice", "options": {"standard": option}}}}


def test_a_misspelt_option_key_is_an_unknown_key_not_a_hyperparameter():
    """It said "a hyperparameter is a mapping with 'type' ..., got
    'sklearn.preprocessing.StandardScaler'"."""
    assert messages(_scaling(estimater="sklearn.preprocessing.StandardScaler")) == [
        ("t: params.scaling.options.standard.estimater: unknown key 'estimater'; did you mean "
         "'estimator'?")
    ]
    fixed = _scaling(estimator="sklearn.preprocessing.StandardScaler", fixd={"copy": True})
    assert messages(fixed) == [
        "t: params.scaling.options.standard.fixd: unknown key 'fixd'; did you mean 'fixed'?"
    ]
    untyped = _scaling(estimators={"low": 1, "high": 5})  # a hyperparameter without 'type'
    (found,) = messages(untyped)
    assert found.startswith("t: params.scaling.options.standard.estimators: a hyperparameter is")


def test_misspelt_top_level_and_fixed_step_keys_get_a_close_match():
    document = {"name": "t", "params": {"x": {"type": "float", "low": 0.0, "high": 1.0}},
                "estimater": "sklearn.svm.SVC", "steps": [{"scale": {"estimater": "scaler"}}]}
    assert messages(document) == [
        ("t: estimater: unknown key 'estimater'; did you mean 'estimator'? Valid keys: name, "
         "description, impute, params, forbidden, steps, categorical_steps, estimator, fixed, "
         "rename, pack"),
        ("t: steps[0].scale.estimater: unknown key 'estimater'; did you mean 'estimator'? Valid "
         "keys: estimator, fixed, rename, pack"),
    ]


# --- S. an integral float for an integer says how to write it ------------------------------


def test_an_integral_float_for_an_integer_bound_says_to_write_the_integer(tmp_path):
    text = "params:\n  n: {type: int, low: 1, high: 1e3}\n  m: {type: int, low: 0.5, high: 2}\n"
    assert messages(write(tmp_path, text)) == [
        "space.yaml: params.n.high: 'high' must be an integer, got 1000.0 (write 1000)",
        "space.yaml: params.m.low: 'low' must be an integer, got 0.5",
    ]


# --- T. a duplicate key in a JSON file names its mapping and line ---------------------------

DUPLICATE_JSON = """\
{
  "description": "{\\"x\\": 1, \\"x\\": 2}",
  "params": {
    "x": {"type": "float", "low": 0, "low": 0, "high": 1},
    "c": {"type": "choice", "options": [{"a": {"b": {"type": "bool", "default": true,
                                                      "default": false}}}, {"z": {}}]},
    "x": {"type": "float", "low": 0, "high": 1}
  },
  "forbidden": [{"c": "z", "c": ["z"]}]
}
"""


def test_a_duplicate_json_key_names_the_mapping_that_holds_it_and_its_line(tmp_path):
    """It said only "b25.json: duplicate key 'x'"."""
    path = write(tmp_path, DUPLICATE_JSON, name="b25.json")
    expected = [
        "b25.json: params.x: duplicate key 'low' on line 4 (names must be unique)",
        ("b25.json: params.c.options[0].a.b: duplicate key 'default' on line 6 (names must be "
         "unique)"),
        "b25.json: params: duplicate key 'x' on line 7 (names must be unique)",
        "b25.json: forbidden[0]: duplicate key 'c' on line 9 (names must be unique)",
    ]
    assert messages(path) == expected
    with pytest.raises(SpaceDefinitionError) as caught:
        spaces.load(path)
    assert [str(p) for p in caught.value.problems] == expected


DUPLICATE_YAML = """\
base: &base {type: float, low: 0, high: 1}
params:
  x: {<<: *base, low: 0.5}
  c:
    type: choice
    options:
      - a: {b: {type: bool, default: true, default: false}}
      - z: {}
  x: {type: float, low: 0, low: 0, high: 1}
forbidden: [{c: z, c: [z]}]
"""


def test_a_duplicate_yaml_key_names_the_mapping_that_holds_it_and_its_line(tmp_path):
    """It said only "space.yaml: line 9: duplicate key 'x'". A key merged in with ``<<``
    and then written (``low``) is an override, not a duplicate."""
    expected = [
        ("space.yaml: params.c.options[0].a.b: duplicate key 'default' on line 7 (names must "
        "be unique)"),
        "space.yaml: params: duplicate key 'x' on line 9 (names must be unique)",
        "space.yaml: params.x: duplicate key 'low' on line 9 (names must be unique)",
        "space.yaml: forbidden[0]: duplicate key 'c' on line 10 (names must be unique)",
    ]
    assert [m for m in messages(write(tmp_path, DUPLICATE_YAML)) if "duplicate" in m] == expected


# --- U. forbidden clauses the tree makes impossible ------------------------------------


def test_a_forbidden_clause_that_can_never_match_is_refused_with_the_reason():
    """{classifier: svm, depth: 3} with depth under option rf forbade nothing, silently."""
    found = messages({"name": "t", "params": {"classifier": {"type": "choice", "options": {
        "rf": {"depth": {"type": "int", "low": 1, "high": 5}},
        "svm": {"C": {"type": "float", "low": 0.1, "high": 1.0}}}}},
        "forbidden": [{"classifier": "svm", "depth": 3}, {"classifier": "rf", "depth": 3},
                      {"depth": 2, "C": 0.5}]})
    assert found == [
        ("t: forbidden[0]: this combination can never occur: the clause asks classifier in "
         "['svm'], but classifier:rf:depth is active only when classifier is 'rf'"),
        ("t: forbidden[2]: this combination can never occur: classifier:rf:depth is active "
         "only when classifier is 'rf', but classifier:svm:C is active only when classifier "
         "is 'svm'"),
    ]
