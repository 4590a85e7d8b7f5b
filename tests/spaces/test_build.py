"""Executable spaces: config -> unfitted scikit-learn estimator, with the plan rules."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline

from ensembo import spaces
from ensembo.errors import SpaceError
from ensembo.hookspecs import hookimpl
from ensembo.registry import Registry

CASH = {
    "name": "mini-cash",
    "steps": [
        {"imputer": {"estimator": "simple-imputer", "fixed": {"strategy": "median"}}},
        "scaling",
        "model",
    ],
    "params": {
        "scaling": {
            "type": "choice",
            "options": {
                "none": {},
                "standard": {"estimator": "sklearn.preprocessing.StandardScaler"},
            },
        },
        "model": {
            "type": "choice",
            "options": {
                "svm": {
                    "estimator": "sklearn.svm.SVC",
                    "fixed": {"kernel": "rbf"},
                    "rename": {"tau": "gamma"},
                    "C": {"type": "float", "low": 0.01, "high": 100, "log": True},
                    "tau": {"type": "float", "low": 0.001, "high": 10, "log": True},
                },
                "boost": {
                    "estimator": "sklearn.ensemble.AdaBoostClassifier",
                    "rename": {"base": "estimator"},
                    "n_estimators": {"type": "int", "low": 2, "high": 10},
                    "base": {
                        "type": "choice",
                        "options": {
                            "stump": {
                                "estimator": "sklearn.tree.DecisionTreeClassifier",
                                "fixed": {"max_depth": 1},
                            },
                            "tree": {
                                "estimator": "sklearn.tree.DecisionTreeClassifier",
                                "max_depth": {"type": "int", "low": 2, "high": 5},
                            },
                        },
                    },
                },
                "mlp": {
                    "estimator": "sklearn.neural_network.MLPClassifier",
                    "fixed": {"max_iter": 50},
                    "pack": {"hidden_layer_sizes": ["first", "second"]},
                    "rename": {"layers": None},
                    "first": {"type": "int", "low": 2, "high": 8},
                    "layers": {
                        "type": "choice",
                        "options": {
                            "one": {},
                            "two": {"second": {"type": "int", "low": 2, "high": 8}},
                        },
                    },
                },
            },
        },
    },
}


@pytest.fixture(scope="module")
def cash():
    return spaces.load(CASH)


def test_rename_fixed_and_step_skipping(cash):
    config = {"scaling": "none", "model": "svm", "model:svm:C": 2.0, "model:svm:tau": 0.5}
    pipeline = cash.build(config)
    assert [name for name, _ in pipeline.steps] == ["imputer", "model"]
    svc = pipeline.named_steps["model"]
    assert (svc.C, svc.gamma, svc.kernel) == (2.0, 0.5, "rbf")
    assert pipeline.named_steps["imputer"].strategy == "median"


def test_nested_choice_builds_a_nested_estimator(cash):
    config = {
        "scaling": "standard",
        "model": "boost",
        "model:boost:n_estimators": 4,
        "model:boost:base": "tree",
        "model:boost:base:tree:max_depth": 3,
    }
    boost = cash.build(config).named_steps["model"]
    assert boost.n_estimators == 4 and boost.estimator.max_depth == 3


def test_pack_gathers_only_active_layers(cash):
    one = {"scaling": "none", "model": "mlp", "model:mlp:first": 5, "model:mlp:layers": "one"}
    two = {**one, "model:mlp:layers": "two", "model:mlp:layers:two:second": 7}
    assert cash.build(one).named_steps["model"].hidden_layer_sizes == (5,)
    assert cash.build(two).named_steps["model"].hidden_layer_sizes == (5, 7)


def test_plan_is_plain_data_holding_only_active_values(cash):
    config = {"scaling": "none", "model": "svm", "model:svm:C": 2.0, "model:svm:tau": 0.5}
    plan = cash.plan(config)
    assert dict(plan.steps)["model"].argument_dict() == {"C": 2.0, "gamma": 0.5, "kernel": "rbf"}


def test_by_choice_switches_the_estimator_class():
    space = spaces.load("random-forest")
    config = {"algorithm": "extra-trees", "bootstrap": False, "max_features": 0.3}
    model = space.build(config).named_steps["model"]
    assert type(model).__name__ == "ExtraTreesClassifier" and model.n_estimators == 100
    assert model.max_features == 0.3 and model.bootstrap is False


def test_random_state_reaches_every_estimator_that_takes_one(cash):
    config = {
        "scaling": "none",
        "model": "boost",
        "model:boost:n_estimators": 3,
        "model:boost:base": "stump",
    }
    boost = cash.build(config, random_state=11).named_steps["model"]
    assert boost.random_state == 11 and boost.estimator.random_state == 11


def test_categorical_columns_are_one_hot_encoded_and_missing_values_handled(
    cash, tiny_classification
):
    X, y = tiny_classification
    X = X.copy()
    rng = np.random.default_rng(0)
    X[:, 4] = rng.integers(0, 3, size=len(X)).astype(float)
    X[::7, 4] = np.nan
    config = {"scaling": "standard", "model": "svm", "model:svm:C": 1.0, "model:svm:tau": 0.1}
    for mask in ([False, False, False, False, True], [4]):
        model = cash.build(config, categorical_features=mask)
        features = model.named_steps["features"]
        assert isinstance(features, ColumnTransformer)
        model.fit(X, y)
        assert model.predict(X).shape == y.shape
        assert features.transform(X).shape[1] == 4 + 3  # 4 numeric + one-hot of 3 codes



def test_a_categorical_column_missing_in_every_fit_row_is_kept(cash, tiny_classification):
    """The default encoding's imputer dropped a column with no value in the fit rows (a
    rarely filled field, in one fold), leaving the one-hot encoder no column: every
    trial failed "Found array with 0 feature(s)" (sklearn estimator audit)."""
    X, y = tiny_classification
    X = X.copy()
    X[:, 4] = np.nan
    config = {"scaling": "standard", "model": "svm", "model:svm:C": 1.0, "model:svm:tau": 0.1}
    model = cash.build(config, categorical_features=[4])
    model.fit(X, y)
    assert model.predict(X).shape == y.shape



def test_a_numeric_column_missing_in_every_fit_row_is_kept(cash):
    """The numeric imputer dropped the only numeric column, and the scaler after it got no
    column: 9 of 12 cash-classification trials failed (review of the categorical fix)."""
    rng = np.random.default_rng(0)
    X = np.c_[np.full(40, np.nan), rng.integers(0, 3, 40).astype(float)]
    y = rng.integers(0, 2, 40)
    model = cash.build(
        {"scaling": "standard", "model": "svm", "model:svm:C": 1.0, "model:svm:tau": 0.1},
        categorical_features=[1],
    )
    model.fit(X, y)
    assert model.predict(X).shape == y.shape


def test_a_space_may_still_drop_empty_columns():
    space = spaces.load({
        "estimator": "sklearn.impute.SimpleImputer", "fixed": {"keep_empty_features": False},
        "params": {"fill_value": {"type": "float", "low": 0.0, "high": 1.0}},
    })
    assert space.build({"fill_value": 0.5}).keep_empty_features is False


ENCODED_FOREST = {
    "name": "encoded-forest",
    "params": {
        "encoding": {
            "type": "choice",
            "options": {
                "onehot": {
                    "estimator": "sklearn.preprocessing.OneHotEncoder",
                    "fixed": {"handle_unknown": "ignore", "sparse_output": False},
                    "min_frequency": {"type": "int", "low": 1, "high": 5},
                },
                "ordinal": {
                    "estimator": "sklearn.preprocessing.OrdinalEncoder",
                    "fixed": {"handle_unknown": "use_encoded_value", "unknown_value": -1},
                },
            },
        },
        "n_estimators": {"type": "int", "low": 5, "high": 20},
    },
    "categorical_steps": [
        {"impute": {"estimator": "simple-imputer", "fixed": {"strategy": "most_frequent"}}},
        "encoding",
    ],
    "estimator": "sklearn.ensemble.RandomForestClassifier",
}


def test_declared_categorical_steps_replace_the_default_encoding(tiny_classification):
    X, y = tiny_classification
    X = X.copy()
    X[:, 4] = np.random.default_rng(0).integers(0, 3, size=len(X)).astype(float)
    X[::7, 4] = np.nan
    space = spaces.load(ENCODED_FOREST)
    ordinal = {"encoding": "ordinal", "n_estimators": 5}
    plan = space.plan(ordinal)
    assert [name for name, _ in plan.categorical_steps] == ["impute", "encoding"]
    assert dict(plan.steps)["model"].argument_dict() == {"n_estimators": 5}  # no 'encoding'
    model = space.build(ordinal, categorical_features=[4], random_state=0).fit(X, y)
    features = model.named_steps["features"]
    assert features.transform(X).shape[1] == 4 + 1  # ordinal: one column, not three
    encoder = features.named_transformers_["categorical"].named_steps["encoding"]
    assert type(encoder).__name__ == "OrdinalEncoder"
    onehot = {"encoding": "onehot", "encoding:onehot:min_frequency": 2, "n_estimators": 5}
    model = space.build(onehot, categorical_features=[4]).fit(X, y)
    assert model.named_steps["features"].transform(X).shape[1] == 4 + 3
    assert space.build(ordinal).__class__.__name__ == "RandomForestClassifier"
    assert "categorical columns: impute -> encoding" in space.show()


def test_categorical_steps_errors_name_their_entry():
    shared = dict(ENCODED_FOREST, steps=["encoding"])
    with pytest.raises(SpaceError, match=r"categorical_steps\[1\]: choice 'encoding' is already"):
        spaces.load(shared)
    unknown = dict(ENCODED_FOREST, categorical_steps=["n_estimators"])
    with pytest.raises(SpaceError, match=r"categorical_steps\[0\]: step 'n_estimators' must name"):
        spaces.load(unknown)
    with pytest.raises(SpaceError, match=r"categorical_steps: 'categorical_steps' is a list"):
        spaces.load(dict(ENCODED_FOREST, categorical_steps="encoding"))


def test_single_estimator_space_without_steps_returns_the_bare_estimator():
    space = spaces.load(
        {"estimator": "sklearn.svm.SVC", "params": {"C": {"type": "float", "low": 0.1, "high": 1}}}
    )
    model = space.build({"C": 0.5})
    assert type(model).__name__ == "SVC" and model.C == 0.5
    with_categorical = space.build({"C": 0.5}, categorical_features=[True, False])
    assert isinstance(with_categorical, Pipeline)


def test_non_executable_space_cannot_build():
    space = spaces.load({"params": {"x": {"type": "float", "low": 0, "high": 1}}})
    assert not space.is_executable
    with pytest.raises(SpaceError, match="builds no estimator"):
        space.build({"x": 0.5})


def test_invalid_config_is_rejected_before_building(cash):
    with pytest.raises(SpaceError, match="invalid configuration"):
        cash.build({"scaling": "none", "model": "svm"})


BAD_COMPONENTS = [
    (
        {
            "estimator": "sklearn.svm.SVC",
            "params": {"Cee": {"type": "float", "low": 0.1, "high": 1}},
        },
        r"estimator: sklearn\.svm\.SVC takes no argument 'Cee'",
    ),
    (
        {
            "estimator": "no.such.module.Thing",
            "params": {"C": {"type": "float", "low": 0.1, "high": 1}},
        },
        r"estimator: estimator 'no\.such\.module\.Thing' is not importable",
    ),
    (
        {"estimator": "svcc", "params": {"C": {"type": "float", "low": 0.1, "high": 1}}},
        r"Unknown estimator 'svcc'; did you mean 'svc'",
    ),
    (
        {
            "estimator": "sklearn.svm.SVC",
            "rename": {"D": "C"},
            "params": {"C": {"type": "float", "low": 0.1, "high": 1}},
        },
        r"rename\.D: no hyperparameter 'D' here",
    ),
    (
        {
            "estimator": "sklearn.svm.SVC",
            "fixed": {"C": 1.0},
            "params": {"C": {"type": "float", "low": 0.1, "high": 1}},
        },
        r"fixed\.C: 'C' is both fixed and a hyperparameter",
    ),
    (
        {
            "params": {"C": {"type": "float", "low": 0.1, "high": 1}},
            "steps": [{"s": {"estimator": "sklearn.preprocessing.StandardScaler"}}],
        },
        r"params\.C: no estimator uses this hyperparameter",
    ),
    (
        {
            "params": {
                "m": {
                    "type": "choice",
                    "options": {
                        "a": {
                            "estimator": "sklearn.svm.SVC",
                            "gama": {"type": "float", "low": 0.1, "high": 1},
                        }
                    },
                }
            },
            "steps": ["m"],
        },
        r"params\.m\.options\.a\.estimator: sklearn\.svm\.SVC takes no argument 'gama'",
    ),
    (
        {
            "params": {"x": {"type": "float", "low": 0, "high": 1}},
            "estimator": "sklearn.svm.SVC",
            "steps": ["x"],
        },
        r"steps\[0\]: step 'x' must name a top-level choice",
    ),
    (
        {
            "params": {
                "m": {
                    "type": "choice",
                    "options": {"a": {"x": {"type": "float", "low": 0, "high": 1}}},
                }
            },
            "steps": ["m"],
        },
        r"params\.m\.options\.a: an option without 'estimator' skips the step",
    ),
    (
        {"fixed": {"C": 1}, "params": {"x": {"type": "float", "low": 0, "high": 1}}},
        r"fixed: 'fixed' needs an 'estimator' next to it",
    ),
]


@pytest.mark.parametrize(("document", "message"), BAD_COMPONENTS)
def test_bad_components_are_errors_naming_the_path(document, message):
    with pytest.raises(SpaceError, match=message):
        spaces.load(document)


class ThirdPartyEstimators:
    """A plugin registering an estimator component under a short name."""

    @hookimpl
    def ensembo_add_estimators(self):
        from sklearn.linear_model import RidgeClassifier

        return {"my-ridge": RidgeClassifier}


def test_third_party_estimator_components_resolve_through_the_registry(monkeypatch):
    registry = Registry.from_plugins({"third-party": ThirdPartyEstimators()})
    monkeypatch.setattr(sys.modules["ensembo.registry"], "registry", lambda: registry)
    space = spaces.load(
        {"estimator": "my-ridge", "params": {"alpha": {"type": "float", "low": 0.1, "high": 10}}}
    )
    assert type(space.build({"alpha": 2.0})).__name__ == "RidgeClassifier"


def test_built_in_estimator_names_are_registered():
    space = spaces.load(
        {"estimator": "svc", "params": {"C": {"type": "float", "low": 0.1, "high": 1}}}
    )
    assert type(space.build({"C": 0.3})).__name__ == "SVC"
