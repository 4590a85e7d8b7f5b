"""The Python builder writes every documented key of a space document.

``description`` and ``categorical_steps`` given to ``document()``/``space()`` became
hyperparameters ("params.description: a hyperparameter is a mapping with 'type'");
``Categorical`` took no ``weights``, no constructor a ``description``, ``Constant`` no
``impute``.
"""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import numpy as np
import pytest

from ensembo import spaces
from ensembo.spaces import builder as b
from ensembo.spaces.parse import COMMON_KEYS, TOP_KEYS, TYPE_KEYS

DOC = Path(__file__).parents[2] / "docs" / "spaces.md"


def test_description_and_categorical_steps_are_document_keys():
    encoding = b.Choice(
        onehot={"estimator": "sklearn.preprocessing.OneHotEncoder",
                "fixed": {"handle_unknown": "ignore", "sparse_output": False}},
        ordinal={"estimator": "sklearn.preprocessing.OrdinalEncoder"},
    )
    space = b.space(
        "forest",
        description="a forest with its encoding",
        categorical_steps=["encoding"],
        estimator="sklearn.ensemble.RandomForestClassifier",
        encoding=encoding,
        n_estimators=b.Int(5, 20),
    )
    assert space.spec.description == "a forest with its encoding"
    assert set(space.document["params"]) == {"encoding", "n_estimators"}
    plan = space.plan({"encoding": "ordinal", "n_estimators": 5})
    assert [name for name, _ in plan.categorical_steps] == ["encoding"]


def test_categorical_weights_are_the_sampling_prior():
    space = b.space("w", k=b.Categorical(("a", "b"), weights=(1, 9)))
    assert space.document["params"]["k"]["weights"] == [1, 9]
    drawn = [config["k"] for config in space.sample(400, seed=0)]
    assert drawn.count("b") > 300


def test_numpy_arrays_and_scalars_become_plain_data(tmp_path):
    """The document is stored as JSON, which refused ``weights=np.array([3, 1])`` ('Object
    of type ndarray is not JSON serializable') and an ``np.int64`` choice."""
    from ensembo.study import Study

    document = b.document(
        "numpy",
        k=b.Categorical(np.array(["a", "b"]), weights=np.array([0.75, 0.25])),
        size=b.Ordinal(np.arange(1, 4), default=np.int64(2)),
        x=b.Float(np.float32(0.5), np.float64(2.0), when={"size": {"gt": np.int64(1)}}),
        forbidden=[{"k": "a", "size": np.int64(3)}],
    )
    assert json.loads(json.dumps(document)) == document
    assert document["params"]["k"]["weights"] == [0.75, 0.25]
    assert document["params"]["size"]["sequence"] == [1, 2, 3]
    assert type(document["params"]["size"]["default"]) is int
    space = spaces.load(document)
    study = Study(space, storage=tmp_path / "numpy.db", surrogate=None, seed=0)
    study.optimize(lambda config: 0.0, n_trials=1)
    assert len(Study.load(tmp_path / "numpy.db", surrogate=None).history) == 1


@pytest.mark.parametrize(
    ("constructor", "args"),
    [
        (b.Float, (0, 1)),
        (b.Int, (0, 3)),
        (b.Categorical, (["a"],)),
        (b.Bool, ()),
        (b.Ordinal, ([1, 2],)),
        (b.Constant, (1,)),
        (b.Choice, ()),
    ],
)
def test_every_constructor_takes_a_description(constructor, args):
    extra = {"a": {}} if constructor is b.Choice else {}
    body = constructor(*args, description="d", **extra)
    assert body["description"] == "d"
    assert b.space("x", p=body).spec.params[0].description == "d"


def test_a_constant_takes_an_imputed_value():
    space = b.space(
        "c", k=b.Categorical(["a", "b"]), c=b.Constant(3, when={"k": "a"}, impute=3)
    )
    assert space.imputation_rule("c") == {"value": 3}


def test_every_constructor_takes_the_keys_of_its_type():
    constructors = {"float": b.Float, "int": b.Int, "categorical": b.Categorical,
                    "bool": b.Bool, "ordinal": b.Ordinal, "constant": b.Constant,
                    "choice": b.Choice}
    for kind, constructor in constructors.items():
        taken = set(inspect.signature(constructor).parameters)  # Choice: **options
        assert set(COMMON_KEYS + TYPE_KEYS[kind]) - {"type"} <= taken, kind


def test_document_takes_every_top_level_key():
    taken = set(inspect.signature(b.document).parameters) - {"params"}
    assert taken == set(TOP_KEYS) - {"params"}


def test_a_keyword_that_is_no_mapping_is_refused_naming_the_document_keys():
    with pytest.raises(TypeError) as raised:
        b.document("x", C=b.Float(1, 2), descripton="my space")
    assert str(raised.value) == (
        "document() takes hyperparameters as mappings (Float(0, 1), ...), got "
        "descripton='my space' (did you mean 'description'?); its other keywords are the "
        "document keys name, description, impute, forbidden, steps, categorical_steps, "
        "estimator, fixed, rename, pack"
    )


def test_the_documented_builder_example_runs(capsys):
    section = DOC.read_text(encoding="utf-8").split("### Python builder", 1)[1]
    (example,) = re.findall(r"```python\n(.*?)```", section.split("\n## ", 1)[0], flags=re.S)
    namespace: dict = {}
    exec(example, namespace)  # noqa: S102 - the documentation's own example
    space = namespace["space"]
    assert space.spec.description == "SVM with a kernel choice"
    assert space.to_configspace()["shrinking"].weights == (3.0, 1.0)
    assert space.imputation_rule("coef0") == {"value": 1.0}
    assert capsys.readouterr().out.startswith("[{'C': ")
