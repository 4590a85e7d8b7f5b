"""Imputation rules, index / one-hot encodings, activity masks and condition signatures."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ensembo import spaces
from ensembo.errors import SpaceError
from ensembo.spaces.encoding import activity_signature

TREE = {
    "name": "tree",
    "params": {
        "kernel": {
            "type": "choice",
            "default": "rbf",
            "options": {"linear": {}, "rbf": {}, "poly": {}},
        },
        "C": {"type": "float", "low": 1e-2, "high": 1e2, "log": True, "default": 1.0},
        "gamma": {
            "type": "float",
            "low": 1e-4,
            "high": 1.0,
            "log": True,
            "default": 1e-2,
            "when": {"kernel": ["rbf", "poly"]},
        },
        "degree": {"type": "int", "low": 2, "high": 6, "default": 3, "when": {"kernel": "poly"}},
        "shape": {
            "type": "categorical",
            "choices": ["a", "b", "c"],
            "default": "b",
            "when": {"kernel": "poly"},
        },
    },
}


def tree(impute="midpoint", **per_name):
    document = {**TREE, "impute": impute, "params": {k: dict(v) for k, v in TREE["params"].items()}}
    for name, rule in per_name.items():
        document["params"][name]["impute"] = rule
    return spaces.load(document)


LINEAR = {"kernel": "linear", "C": 1.0}


@pytest.mark.parametrize(
    ("rule", "gamma", "degree", "shape"),
    [
        ("midpoint", 0.5, 0.5, 0.5),
        ("lower", 0.0, 0.0, 0.0),
        ("upper", 1.0, 1.0, 1.0),
        (
            "default",
            0.5,
            0.25,
            0.5,
        ),  # gamma 1e-2 is the log-midpoint; degree 3 of 2..6; shape b of a,b,c
    ],
)
def test_space_wide_rules(rule, gamma, degree, shape):
    space = tree(rule)
    batch = space.encode([LINEAR])
    columns = {n: batch.values[0, space.names.index(n)] for n in ("gamma", "degree", "shape")}
    expected = {"gamma": gamma, "degree": degree, "shape": shape}
    for name, value in expected.items():
        assert math.isclose(columns[name], value, abs_tol=1e-9), (rule, name)


def test_none_leaves_inactive_values_missing():
    space = tree("none")
    batch = space.encode(
        [LINEAR, {"kernel": "poly", "C": 1.0, "gamma": 0.1, "degree": 4, "shape": "a"}]
    )
    inactive = ~batch.active
    assert np.isnan(batch.values[inactive]).all() and not np.isnan(batch.values[~inactive]).any()


def test_per_hyperparameter_rule_beats_space_wide_rule_and_fixed_values_encode_in_their_units():
    space = tree("midpoint", gamma={"value": 1e-4}, shape="c", degree="upper")
    batch = space.encode([LINEAR])
    assert batch.values[0, space.names.index("gamma")] == pytest.approx(0.0)
    assert batch.values[0, space.names.index("shape")] == pytest.approx(1.0)  # fixed value "c"
    assert batch.values[0, space.names.index("degree")] == pytest.approx(1.0)
    assert space.imputation_rule("shape") == {"value": "c"}


def test_with_imputation_and_load_options_override_rules():
    space = tree().with_imputation("lower", ["gamma"])
    assert (
        space.imputation_rule("gamma") == "lower" and space.imputation_rule("degree") == "midpoint"
    )
    assert spaces.load("svm-kernels", impute={"gamma": "none"}).imputation_rule("gamma") == "none"


def test_illegal_fixed_value_is_an_error():
    with pytest.raises(SpaceError, match=r"params\.gamma\.impute: imputed value 5"):
        tree(gamma={"value": 5})


def test_active_mask_and_signature_follow_the_branches():
    space = tree()
    configs = [
        LINEAR,
        {"kernel": "rbf", "C": 1.0, "gamma": 0.1},
        {"kernel": "poly", "C": 2.0, "gamma": 0.1, "degree": 3, "shape": "a"},
        {"kernel": "linear", "C": 5.0},
    ]
    batch = space.encode(configs)
    for row, config in enumerate(configs):
        assert {n for n, a in zip(space.names, batch.active[row], strict=False) if a} == set(config)
    assert batch.signature[0] == batch.signature[3]
    assert len(set(batch.signature[:3].tolist())) == 3


def test_onehot_encoding_expands_categoricals_and_imputes_blocks():
    index = tree(shape="default")
    onehot = index.with_encoding("onehot")
    assert (
        onehot.encoded_dimension == index.dimension + 2 + 2
    )  # kernel and shape have 3 choices each
    batch = onehot.encode(
        [LINEAR, {"kernel": "poly", "C": 1.0, "gamma": 0.1, "degree": 3, "shape": "c"}]
    )
    names = onehot.layout.column_names()
    shape_columns = [i for i, n in enumerate(names) if n.startswith("shape=")]
    np.testing.assert_array_equal(
        batch.values[0, shape_columns], [0, 1, 0]
    )  # default "b", inactive
    np.testing.assert_array_equal(batch.values[1, shape_columns], [0, 0, 1])
    assert not batch.active[0, shape_columns].any() and batch.active[1, shape_columns].all()
    assert onehot.decode(batch.values)[1]["shape"] == "c"


def test_unknown_encoding_is_rejected():
    with pytest.raises(SpaceError, match="unknown encoding 'binary'; valid: index, onehot"):
        tree().with_encoding("binary")


def test_definition_keeps_rules_and_encoding_for_resume():
    space = tree("lower", gamma="none").with_encoding("onehot")
    restored = spaces.load(space.definition())
    assert restored.encoding == "onehot" and restored.imputation_rule("gamma") == "none"
    assert restored.definition() == space.definition()


@pytest.mark.parametrize("source", ["svm", "svm-kernels"])
def test_a_rule_given_as_load_impute_is_named_with_the_way_to_apply_it_to_all(source):
    """It failed as "dictionary update sequence element #0 has length 1; 2 is required"."""
    with pytest.raises(SpaceError, match=r"impute.*with_imputation\(rule\)"):
        spaces.load(source, impute="none")


def test_an_unknown_load_option_is_named():
    with pytest.raises(SpaceError, match="unknown load option.*imput; valid: impute, encoding"):
        spaces.load("svm", imput={"gamma": "none"})


def test_wide_activity_masks_get_distinct_signatures():
    """Bytes folded in base 257 wrap mod 2**64: masks whose bytes differ by the
    coefficients of (x - 1)**8 shared a signature (257 - 1)**8 = 2**64 apart, so the
    conditional kernel would have merged two branches of a 72-hyperparameter space."""
    coefficients = np.array([1, -8, 28, -56, 70, -56, 28, -8, 1])
    masks = np.stack([np.maximum(coefficients, 0), np.maximum(-coefficients, 0)]).astype(np.uint8)
    active = np.unpackbits(masks, axis=1, bitorder="little").astype(bool)
    first, second = activity_signature(active)
    assert first != second
    assert activity_signature(active[::-1]).tolist() == [second, first]  # stable


def test_narrow_activity_masks_keep_their_exact_signatures():
    active = np.array([[True, False, True], [False, False, False]])
    assert activity_signature(active).tolist() == [5, 0]
