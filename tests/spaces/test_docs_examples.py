"""The YAML examples in docs/spaces.md load, and the worked CASH example builds and fits."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from ensembo import spaces

DOC = Path(__file__).parents[2] / "docs" / "spaces.md"


def yaml_blocks() -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def load_block(tmp_path, text: str):
    path = tmp_path / "example.yaml"
    path.write_text(text)
    return spaces.load(path)


def test_the_reference_example_loads(tmp_path):
    space = load_block(tmp_path, yaml_blocks()[0])
    assert space.name == "svm-kernels" and space.to_configspace().forbidden_clauses


def test_the_worked_cash_example_builds_and_fits(tmp_path, tiny_classification):
    (cash,) = [b for b in yaml_blocks() if b.startswith("name: my-cash")]
    space = load_block(tmp_path, cash)
    X, y = tiny_classification
    configs = space.sample(40, seed=0)
    assert {c["classifier"] for c in configs} == {"svm", "adaboost", "mlp"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for config in configs[:10]:
            space.build(config, random_state=0).fit(X, y)


@pytest.mark.parametrize("index", [0, 1, 2, 3])
def test_doc_examples_validate_cleanly(tmp_path, index):
    path = tmp_path / "example.yaml"
    path.write_text(yaml_blocks()[index])
    assert spaces.problems_in(path) == []


def test_the_documented_sample_and_pipeline(tmp_path):
    (cash,) = [b for b in yaml_blocks() if b.startswith("name: my-cash")]
    space = load_block(tmp_path, cash)
    config = space.sample(1, seed=2)[0]
    assert config == {
        "classifier": "mlp",
        "imputation": "median",
        "scaling": "standard",
        "classifier:mlp:layers": "two",
        "classifier:mlp:units_1": 69,
        "classifier:mlp:layers:two:units_2": 70,
    }
    model = space.build(config)
    assert [name for name, _ in model.steps] == ["imputation", "scaling", "classifier"]
    assert model.named_steps["classifier"].hidden_layer_sizes == (69, 70)
