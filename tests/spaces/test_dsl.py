"""The DSL: every feature compiles to the intended ConfigSpace, bad input names its path."""

from __future__ import annotations

import json
import re

import pytest
from ConfigSpace import (
    AndConjunction,
    EqualsCondition,
    GreaterThanCondition,
    InCondition,
    OrConjunction,
)

from ensembo import spaces
from ensembo.errors import SpaceError
from ensembo.spaces import SpaceDefinitionError

SVM_KERNELS = """\
name: svm-kernels
impute: midpoint
params:
  C: {type: float, low: 1.0e-5, high: 1.0e5, log: true, default: 1.0}
  kernel:
    type: choice
    options:
      linear: {}
      rbf: {}
      poly:
        degree: {type: int, low: 1, high: 10}
      sigmoid: {}
  gamma: {type: float, low: 1.0e-5, high: 1.0e5, log: true, when: {kernel: [rbf, sigmoid]}}
  coef0: {type: float, low: 1.0e-2, high: 1.0e2, log: true, when: {kernel: [poly, sigmoid]},
          impute: 1.0}
"""


def write(tmp_path, text, name="space.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def space_of(params, **top):
    return spaces.load({"name": "t", "params": params, **top})


def test_canonical_issue_example_compiles_to_a_tree(tmp_path):
    space = spaces.load(write(tmp_path, SVM_KERNELS))
    cs = space.to_configspace()
    assert set(space.names) == {"C", "kernel", "kernel:poly:degree", "gamma", "coef0"}
    assert cs["C"].log and cs["C"].default_value == 1.0
    (degree,) = cs.parent_conditions_of["kernel:poly:degree"]
    assert isinstance(degree, EqualsCondition) and degree.value == "poly"
    (gamma,) = cs.parent_conditions_of["gamma"]
    assert isinstance(gamma, InCondition) and set(gamma.values) == {"rbf", "sigmoid"}
    assert space.imputation_rule("coef0") == {"value": 1.0}
    assert space.imputation_rule("gamma") == "midpoint"
    for config in space.sample(200, seed=0):
        assert ("gamma" in config) == (config["kernel"] in ("rbf", "sigmoid"))
        assert ("kernel:poly:degree" in config) == (config["kernel"] == "poly")


@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_json_and_toml_documents_load_the_same_space(tmp_path, suffix):
    from ensembo.spaces.document import read_document

    document = read_document(write(tmp_path, SVM_KERNELS))
    if suffix == ".json":
        text = json.dumps(document)
    else:
        text = (
            'name = "svm-kernels"\nimpute = "midpoint"\n[params.C]\n'
            'type = "float"\nlow = 1e-5\nhigh = 1e5\nlog = true\ndefault = 1.0\n'
        )
        document = {"name": "svm-kernels", "params": {"C": document["params"]["C"]}}
    loaded = spaces.load(write(tmp_path, text, "space" + suffix))
    assert loaded.to_configspace() == spaces.load(document).to_configspace()


def test_load_accepts_name_dict_configspace_space_and_definition():
    by_name = spaces.load("svm-kernels")
    assert spaces.load(by_name) is by_name
    assert spaces.load(by_name.to_configspace()).to_configspace() == by_name.to_configspace()
    assert spaces.load(by_name.definition()).definition() == by_name.definition()
    assert spaces.load(by_name.document).to_configspace() == by_name.to_configspace()


def test_nested_choices_make_deeper_trees():
    space = space_of(
        {
            "model": {
                "type": "choice",
                "options": {
                    "net": {
                        "depth": {
                            "type": "choice",
                            "options": {
                                "deep": {"width": {"type": "int", "low": 2, "high": 8}},
                                "shallow": {},
                            },
                        }
                    },
                    "tree": {},
                },
            }
        }
    )
    assert "model:net:depth:deep:width" in space.names
    for config in space.sample(100, seed=1):
        deep = config.get("model:net:depth") == "deep"
        assert ("model:net:depth:deep:width" in config) == deep


def test_range_conditions_and_or_combinations():
    space = space_of(
        {
            "n": {"type": "int", "low": 1, "high": 10},
            "mode": {"type": "categorical", "choices": ["a", "b", "c"]},
            "big": {"type": "float", "low": 0, "high": 1, "when": {"n": {"gt": 5}}},
            "from4": {"type": "float", "low": 0, "high": 1, "when": {"n": {"ge": 4, "le": 7}}},
            "both": {"type": "float", "low": 0, "high": 1, "when": {"n": {"gt": 2}, "mode": "a"}},
            "either": {
                "type": "float",
                "low": 0,
                "high": 1,
                "when": {"any": [{"n": {"lt": 3}}, {"mode": ["b", "c"]}]},
            },
        }
    )
    cs = space.to_configspace()
    assert isinstance(cs.parent_conditions_of["big"][0], GreaterThanCondition)
    assert isinstance(cs.parent_conditions_of["both"][0], AndConjunction)
    assert isinstance(cs.parent_conditions_of["either"][0], OrConjunction)
    for config in space.sample(300, seed=2):
        assert ("big" in config) == (config["n"] > 5)
        assert ("from4" in config) == (4 <= config["n"] <= 7)
        assert ("both" in config) == (config["n"] > 2 and config["mode"] == "a")
        assert ("either" in config) == (config["n"] < 3 or config["mode"] in ("b", "c"))


def test_shared_hyperparameter_inside_a_branch_combines_branch_and_when():
    space = space_of(
        {
            "learner": {
                "type": "choice",
                "options": {
                    "svm": {
                        "kernel": {"type": "categorical", "choices": ["rbf", "linear"]},
                        "gamma": {
                            "type": "float",
                            "low": 0.1,
                            "high": 1,
                            "when": {"kernel": "rbf"},
                        },
                    },
                    "tree": {},
                },
            }
        }
    )
    for config in space.sample(200, seed=3):
        assert ("learner:svm:gamma" in config) == (config.get("learner:svm:kernel") == "rbf")


def test_forbidden_combinations_are_never_sampled():
    space = space_of(
        {
            "a": {"type": "categorical", "choices": ["x", "y"]},
            "b": {"type": "categorical", "choices": [1, 2, 3]},
        },
        forbidden=[{"a": "y", "b": [2, 3]}],
    )
    assert space.to_configspace().forbidden_clauses
    samples = space.sample(300, seed=4)
    assert not any(c["a"] == "y" and c["b"] in (2, 3) for c in samples)
    assert not space.is_valid({"a": "y", "b": 2})


TREE_PARAMS = {
    "min_samples_leaf": {"type": "int", "low": 1, "high": 20, "default": 1},
    "min_samples_split": {"type": "int", "low": 2, "high": 20, "default": 2},
    "criterion": {"type": "categorical", "choices": ["gini", "entropy"]},
}


def test_forbidden_relations_between_two_hyperparameters_are_never_sampled():
    space = space_of(
        TREE_PARAMS,
        forbidden=[{"relation": "min_samples_leaf > min_samples_split"}],
    )
    samples = space.sample(500, seed=4)
    assert not any(c["min_samples_leaf"] > c["min_samples_split"] for c in samples)
    assert any(c["min_samples_leaf"] == c["min_samples_split"] for c in samples)
    assert not space.is_valid({"min_samples_leaf": 5, "min_samples_split": 4, "criterion": "gini"})
    restored = spaces.load(space.definition())  # stored studies resume with it
    assert restored.to_configspace() == space.to_configspace()
    imported = spaces.load(space.to_configspace().to_serialized_dict())
    assert imported.sample(50, seed=9) == space.sample(50, seed=9)


@pytest.mark.parametrize(
    ("relation", "message"),
    [
        ("min_samples_leaf >> min_samples_split", r"relation is 'left OP right' with OP one of <"),
        ("min_samples_leaf > max_depth", r"unknown hyperparameter 'max_depth'"),
        ("min_samples_leaf < min_samples_leaf", r"two different hyperparameters"),
        ("criterion < min_samples_leaf", r"'<' and '>' need two numeric hyperparameters"),
        ("min_samples_split > min_samples_leaf", r"default configuration must be allowed"),
    ],
)
def test_bad_forbidden_relations_name_their_entry(relation, message):
    with pytest.raises(SpaceError, match=r"forbidden\[0\][.a-z]*: .*" + message):
        spaces.load({"params": TREE_PARAMS, "forbidden": [{"relation": relation}]})


def test_a_relation_stands_alone_and_a_parameter_named_relation_is_still_a_name():
    with pytest.raises(
        SpaceError, match=r"relation stands alone in its entry; move \['criterion'\]"
    ):
        spaces.load(
            {
                "params": TREE_PARAMS,
                "forbidden": [
                    {"relation": "min_samples_leaf > min_samples_split", "criterion": "gini"}
                ],
            }
        )
    params = {
        "relation": {"type": "categorical", "choices": ["a", "b"]},
        "x": {"type": "int", "low": 0, "high": 3},
    }
    space = spaces.load({"params": params, "forbidden": [{"relation": "b", "x": 0}]})
    assert not space.is_valid({"relation": "b", "x": 0})


def test_ordinal_constant_bool_and_quantization():
    space = space_of(
        {
            "size": {"type": "ordinal", "sequence": ["s", "m", "l"], "default": "m"},
            "fixed": {"type": "constant", "value": "on"},
            "flag": {"type": "bool", "default": False},
            "rate": {"type": "float", "low": 0.0, "high": 1.0, "q": 0.25},
            "trees": {"type": "int", "low": 10, "high": 100, "q": 10, "log": True},
        }
    )
    assert space.default()["size"] == "m" and space.default()["flag"] is False
    for config in space.sample(200, seed=5):
        assert config["fixed"] == "on"
        assert config["rate"] in (0.0, 0.25, 0.5, 0.75, 1.0)
        assert config["trees"] % 10 == 0
    decoded = space.decode(
        space.encode([{"size": "l", "fixed": "on", "flag": True, "rate": 0.3, "trees": 47}]).values
    )
    assert decoded[0]["rate"] == 0.25 and decoded[0]["trees"] == 50
    assert (
        space.validate({"size": "s", "fixed": "on", "flag": True, "rate": 0.6, "trees": 33})["rate"]
        == 0.5
    )


def test_stepped_values_are_drawn_uniformly_from_their_grid():
    space = space_of(
        {
            "n": {"type": "int", "low": 0, "high": 12, "q": 4},
            "rate": {"type": "float", "low": 0.0, "high": 1.0, "q": 0.25},
        }
    )
    drawn = space.sample(4000, seed=0)
    for name, grid in (("n", [0, 4, 8, 12]), ("rate", [0.0, 0.25, 0.5, 0.75, 1.0])):
        counts = [sum(config[name] == point for config in drawn) for point in grid]
        expected = len(drawn) / len(grid)  # a count's sd is about 30 here
        assert all(abs(count - expected) < 150 for count in counts), (name, counts)


def test_categorical_weights_shape_the_sampling_prior():
    space = space_of({"c": {"type": "categorical", "choices": ["a", "b"], "weights": [9, 1]}})
    drawn = [config["c"] for config in space.sample(400, seed=0)]
    assert 0.8 < drawn.count("a") / len(drawn) < 0.97
    with pytest.raises(SpaceError, match=r"params\.c\.weights: weights are 2 non-negative"):
        space_of({"c": {"type": "categorical", "choices": ["a", "b"], "weights": [1]}})


def test_yaml_floats_without_exponent_sign_are_numbers(tmp_path):
    space = spaces.load(
        write(tmp_path, "params:\n  x: {type: float, low: 1e-5, high: 1.0e5, log: true}\n")
    )
    assert space.to_configspace()["x"].upper == 1e5


def test_conditions_resolve_from_inner_scope_outwards():
    space = space_of(
        {
            "units": {"type": "int", "low": 1, "high": 5},
            "net": {
                "type": "choice",
                "options": {
                    "a": {
                        "units": {"type": "int", "low": 1, "high": 5},
                        "extra": {
                            "type": "float",
                            "low": 0,
                            "high": 1,
                            "when": {"units": {"gt": 3}},
                        },
                    },
                    "b": {
                        "x": {"type": "float", "low": 0, "high": 1, "when": {"units": {"gt": 3}}}
                    },
                },
            },
        }
    )
    cs = space.to_configspace()
    assert {p.name for p in cs.parents_of["net:a:extra"]} == {"net", "net:a:units"}
    assert {p.name for p in cs.parents_of["net:b:x"]} == {"net", "units"}


# --- bad input -----------------------------------------------------------------------------


BAD = [
    (
        {"x": {"type": "float", "low": 0, "high": 1, "colour": "red"}},
        r"params\.x\.colour: unknown key 'colour'",
    ),
    ({"x": {"type": "float", "low": 2, "high": 1}}, r"params\.x: empty range"),
    ({"x": {"type": "int", "low": 3, "high": 3}}, r"params\.x: empty range"),
    (
        {"x": {"type": "float", "low": 0, "high": 1, "log": True}},
        r"params\.x\.low: log scale needs low > 0",
    ),
    (
        {"x": {"type": "float", "low": 0, "high": 1, "default": 2}},
        r"params\.x\.default: default 2 is outside",
    ),
    (
        {"x": {"type": "categorical", "choices": ["a"], "default": "b"}},
        r"params\.x\.default: default 'b' is not one of",
    ),
    ({"x": {"type": "categorical", "choices": ["a", "a"]}}, r"params\.x\.choices: .* distinct"),
    (
        {"x": {"type": "float", "low": 0, "high": 1, "when": {"y": 1}}},
        r"params\.x\.when\.y: condition on missing parent 'y'",
    ),
    ({"x": {"type": "banana"}}, r"params\.x\.type: unknown type 'banana'"),
    ({"x": {"type": "int", "low": 0.5, "high": 3}}, r"params\.x\.low: 'low' must be an integer"),
    ({"x": 3}, r"params\.x: a hyperparameter is a mapping with 'type'"),
    (
        {"x": {"type": "float", "low": 0, "high": 1, "impute": "sideways"}},
        r"params\.x\.impute: unknown rule 'sideways'; use one of",
    ),
    (
        {"x": {"type": "choice", "options": {}}},
        r"params\.x\.options: a choice needs non-empty .options.",
    ),
    (
        {
            "a": {"type": "float", "low": 0, "high": 1, "when": {"b": {"gt": 0.5}}},
            "b": {"type": "float", "low": 0, "high": 1, "when": {"a": {"gt": 0.5}}},
        },
        r"conditions form a cycle: a -> b -> a",
    ),
    (
        {"x": {"type": "float", "low": 0, "high": 1, "when": {"x": {"gt": 0.5}}}},
        r"cannot depend on itself",
    ),
    (
        {"x": {"type": "float", "low": 0, "high": 1, "when": {"y": {"above": 1}}}},
        r"unknown comparison",
    ),
]


@pytest.mark.parametrize(("params", "message"), BAD)
def test_bad_input_is_a_space_error_naming_the_path(params, message):
    with pytest.raises(SpaceError, match=message):
        spaces.load({"name": "bad", "params": params})


@pytest.mark.parametrize(("key", "value"), [("name", 5), ("description", ["a"])])
def test_name_and_description_must_be_strings(key, value):
    with pytest.raises(SpaceError, match=re.escape(f"{key}: must be a string, got {value!r}")):
        spaces.load({key: value, "params": {"x": {"type": "float", "low": 0, "high": 1}}})


def test_unknown_top_level_key_and_missing_params():
    with pytest.raises(SpaceError, match=r"paramz: unknown key 'paramz'") as caught:
        spaces.load({"paramz": {}})
    assert "params: a space needs a non-empty 'params'" in str(caught.value)


def test_duplicate_yaml_keys_are_errors_naming_the_line(tmp_path):
    text = "params:\n  x: {type: float, low: 0, high: 1}\n  x: {type: float, low: 0, high: 2}\n"
    with pytest.raises(SpaceError, match=r"space\.yaml: params: duplicate key 'x' on line 3"):
        spaces.load(write(tmp_path, text))


def test_every_problem_is_reported_with_the_file_name(tmp_path):
    text = (
        "estimator: sklearn.svm.NoSuchSVC\n"
        "params:\n"
        "  C: {type: float, low: 0, high: 10, log: true}\n"
        "  k: {type: int, low: 5, high: 1}\n"
    )
    path = write(tmp_path, text, "bad.yaml")
    problems = spaces.problems_in(path)
    assert [str(p) for p in problems] == [
        "bad.yaml: params.C.low: log scale needs low > 0, got 0",
        "bad.yaml: params.k: empty range: low 5 must be below high 1",
        (
            "bad.yaml: estimator: estimator 'sklearn.svm.NoSuchSVC' is not importable: "
            "module 'sklearn.svm' has no attribute 'NoSuchSVC'"
        ),
    ]
    with pytest.raises(SpaceDefinitionError) as caught:
        spaces.load(path)
    assert len(caught.value.problems) == 3 and isinstance(caught.value, ValueError)


def test_forbidden_on_unknown_name_and_illegal_value():
    params = {"a": {"type": "categorical", "choices": ["x", "y"]}}
    with pytest.raises(SpaceError, match=r"forbidden\[0\]\.zz: unknown hyperparameter 'zz'"):
        spaces.load({"params": params, "forbidden": [{"zz": 1}]})
    with pytest.raises(
        SpaceError, match=r"forbidden\[0\]\.a: 'w' is not a value of 'a'; legal values: 'x', 'y'"
    ):
        spaces.load({"params": params, "forbidden": [{"a": "w"}]})


def test_unknown_library_name_suggests_close_matches():
    with pytest.raises(SpaceError, match=r"Unknown space 'svm-kernel'; did you mean 'svm-kernels'"):
        spaces.load("svm-kernel")


def test_unsupported_source_type():
    with pytest.raises(SpaceError, match="cannot load a search space from int"):
        spaces.load(42)


def test_python_builder_makes_the_same_space_as_yaml(tmp_path):
    from ensembo.spaces import builder as b

    built = b.space(
        "svm-kernels",
        impute="midpoint",
        C=b.Float(1.0e-5, 1.0e5, log=True, default=1.0),
        kernel=b.Choice(linear={}, rbf={}, poly={"degree": b.Int(1, 10)}, sigmoid={}),
        gamma=b.Float(1.0e-5, 1.0e5, log=True, when={"kernel": ["rbf", "sigmoid"]}),
        coef0=b.Float(1.0e-2, 1.0e2, log=True, when={"kernel": ["poly", "sigmoid"]}, impute=1.0),
    )
    from_yaml = spaces.load(write(tmp_path, SVM_KERNELS))
    assert built.to_configspace() == from_yaml.to_configspace()
    assert built.imputation_rule("coef0") == from_yaml.imputation_rule("coef0")
    assert b.document("x", flag=b.Bool(default=False))["params"]["flag"] == {
        "type": "bool",
        "default": False,
    }


class ThirdPartySpaces:
    """A plugin registering a whole space (a document) under a name."""

    from ensembo.hookspecs import hookimpl

    @hookimpl
    def ensembo_add_spaces(self):
        return {
            "tiny": lambda: {
                "name": "tiny",
                "params": {"x": {"type": "float", "low": 0, "high": 1}},
            }
        }


def test_third_party_spaces_load_by_name(monkeypatch):
    import sys

    from ensembo.registry import Registry

    registry = Registry.from_plugins({"third-party": ThirdPartySpaces()})
    monkeypatch.setattr(sys.modules["ensembo.registry"], "registry", lambda: registry)
    space = spaces.load("tiny")
    assert space.name == "tiny" and space.names == ("x",)


def test_configspace_round_trip_preserves_conditions_forbiddens_and_samples(tmp_path):
    space = space_of(
        {
            "n": {"type": "int", "low": 1, "high": 10},
            "mode": {"type": "categorical", "choices": ["a", "b", "c"]},
            "either": {
                "type": "float",
                "low": 0,
                "high": 1,
                "when": {"any": [{"n": {"lt": 3}}, {"mode": ["b", "c"]}]},
                "impute": "upper",
            },
        },
        forbidden=[{"mode": "c", "n": [1, 2]}],
    )
    path = tmp_path / "cs.json"
    path.write_text(json.dumps(space.to_configspace().to_serialized_dict()))
    for imported in (spaces.load(path), spaces.load(space.to_configspace().to_serialized_dict())):
        assert imported.to_configspace() == space.to_configspace()
        assert imported.sample(50, seed=9) == space.sample(50, seed=9)
        assert imported.imputation_rule("either") == "upper"


def test_option_order_is_kept_and_stored_as_a_list():
    space = spaces.load("svm-kernels")
    assert space.to_configspace()["kernel"].choices == ("linear", "rbf", "poly", "sigmoid")
    (kernel_options,) = [p["options"] for n, p in space.document["params"].items() if n == "kernel"]
    assert [next(iter(o)) for o in kernel_options] == ["linear", "rbf", "poly", "sigmoid"]
    with pytest.raises(SpaceError, match="duplicate option names"):
        space_of({"k": {"type": "choice", "options": [{"a": {}}, {"a": {}}]}})
