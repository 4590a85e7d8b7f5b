"""The batched pieces of one-exchange neighbourhoods give what one hyperparameter (or one
condition node) at a time gives, bit for bit and in the same order: local search breaks
ties by position, so a reordered or re-rounded neighbour changes the suggestions."""

from __future__ import annotations

import numpy as np
import pytest
from ConfigSpace import (
    AndConjunction,
    Categorical,
    ConfigurationSpace,
    EqualsCondition,
    Float,
    Integer,
    OrdinalHyperparameter,
)
from ConfigSpace.hyperparameters import CategoricalHyperparameter, IntegerHyperparameter
from hypothesis import given, settings
from hypothesis import strategies as st

from ensembo.plugins.acquisition_optimizers.condition_stages import (
    condition_stages,
    evaluate_stages,
)
from ensembo.plugins.acquisition_optimizers.integer_scale import IntegerScale
from ensembo.plugins.acquisition_optimizers.neighbourhood import (
    MIN_MOVE,
    OneExchangeNeighbourhood,
)
from ensembo.spaces import Space

INTEGERS = [
    Integer("small", (1, 40)),
    Integer("negative", (-7, 12)),
    Integer("log", (1, 1000), log=True),
    Integer("wide_log", (3, 10**7), log=True),
    Integer("pair", (0, 1)),
]


def test_integer_scale_converts_as_configspace_does():
    scale = IntegerScale(INTEGERS)
    rng = np.random.default_rng(0)
    unit = np.concatenate([[0.0, 1.0, 0.5, 1e-12, 1 - 1e-12], rng.random(200)])
    unit = np.concatenate([unit, np.arange(1, 40) / 39 - 1e-16])  # next to cell edges
    values = scale.to_value(np.tile(unit, (len(INTEGERS), 1)))
    for index, hp in enumerate(INTEGERS):
        expected = np.asarray(hp.to_value(unit), dtype=float)
        assert values[index].tobytes() == expected.tobytes(), hp.name
        whole = np.arange(hp.lower, hp.upper + 1, max(1, (hp.upper - hp.lower) // 500), float)
        vectors = scale.to_vector(whole, np.full(len(whole), index))
        assert vectors.tobytes() == np.asarray(hp.to_vector(whole)).tobytes(), hp.name


def _node_by_node(nodes, defaults, block):
    """ConfigSpace's nodes one at a time, as the neighbourhood evaluated them before."""
    for node in nodes:
        satisfied = np.asarray(node.condition.satisfied_by_vector_array(block.T), dtype=bool)
        children = np.asarray(node.children_indices)
        sub = block[:, children]
        sub = np.where(satisfied[:, None] & np.isnan(sub), defaults[children][None, :], sub)
        sub[~satisfied] = np.nan
        block[:, children] = sub


def _conjunction_space() -> Space:
    configspace = ConfigurationSpace()
    clf, arch = Categorical("clf", ["mlp", "svm", "knn"]), Categorical("arch", ["a", "b"])
    dropout = Categorical("dropout", ["true", "false"])
    batch, k = Integer("batch", (8, 64), default=32), Integer("k", (1, 9))
    configspace.add([clf, arch, dropout, batch, k])
    configspace.add([EqualsCondition(arch, clf, "mlp"), EqualsCondition(k, clf, "knn"),
                     EqualsCondition(dropout, arch, "a")])
    configspace.add(
        AndConjunction(EqualsCondition(batch, clf, "mlp"), EqualsCondition(batch, dropout, "true"))
    )
    return Space(configspace)


def _stages_agree(space: Space, seed: int) -> None:
    dag = space.configspace._dag
    defaults = np.asarray(dag.normalized_defaults, dtype=float)
    rng = np.random.default_rng(seed)
    for column, name in enumerate(space.names):
        nodes = dag.change_hp_lookup.get(name, [])
        hp = space.configspace[name]
        if not nodes or not isinstance(hp, CategoricalHyperparameter):
            continue
        block = space.sample_vectors(30, rng)
        block[:, column] = rng.integers(0, len(hp.choices), len(block))
        expected = block.copy()
        _node_by_node(nodes, defaults, expected)
        evaluate_stages(condition_stages(nodes, defaults), block)
        assert block.tobytes() == expected.tobytes(), name


@settings(max_examples=30, deadline=None)
@given(data=st.data(), seed=st.integers(0, 2**16))
def test_stages_evaluate_as_node_by_node(conditional_spaces, data, seed):
    _stages_agree(data.draw(conditional_spaces), seed)


@pytest.mark.parametrize("seed", range(5))
def test_stages_evaluate_as_node_by_node_with_a_conjunction(seed):
    _stages_agree(_conjunction_space(), seed)


def test_a_node_reading_a_column_written_before_starts_a_stage():
    space = _conjunction_space()
    nodes = space.configspace._dag.change_hp_lookup["clf"]
    stages = condition_stages(nodes, np.zeros(space.dimension))
    # ConfigSpace lists arch, k, batch (clf and dropout, not yet written), then dropout,
    # which reads arch, written in the first stage
    assert [node.condition.child.name for node in nodes] == ["arch", "k", "batch", "dropout"]
    assert [stage.count for stage in stages] == [3, 1]


def _one_at_a_time(space: Space, vectors: np.ndarray, step: np.ndarray) -> list[tuple]:
    """(origin, column, new vector value) of every neighbour, written as loops over one
    hyperparameter and one row at a time, in the order the neighbourhood lists them."""
    found = []
    for column, name in enumerate(space.names):
        hp = space.configspace[name]
        current = vectors[:, column]
        if isinstance(hp, CategoricalHyperparameter):
            found += [(r, column, float(c)) for r in range(len(vectors))
                      for c in range(hp.size) if c != current[r]]
        elif isinstance(hp, OrdinalHyperparameter):
            found += [(r, column, current[r] + side) for side in (-1, 1)
                      for r in range(len(vectors)) if 0 <= current[r] + side <= hp.size - 1]
        elif isinstance(hp, IntegerHyperparameter):
            for r in range(len(vectors)):
                whole = int(hp.to_value(current[r]))
                stepped = [int(hp.to_value(min(max(current[r] + s * step[r], 0.0), 1.0)))
                           for s in (-1, 1)]
                around = [min(max(whole + s, hp.lower), hp.upper) for s in (-1, 1)]
                moved = sorted(set(stepped + around) - {whole})
                found += [(r, column, float(hp.to_vector(float(v)))) for v in moved]
        else:
            for side in (-1, 1):
                for r in range(len(vectors)):
                    value = min(max(current[r] + side * step[r], 0.0), 1.0)
                    if abs(value - current[r]) > MIN_MOVE:
                        found.append((r, column, value))
    return found


def _mixed_space() -> Space:
    configspace = ConfigurationSpace()
    configspace.add([
        Float("x", (-2.0, 3.0)), Categorical("c", ["u", "v", "w"]), Integer("n", (1, 40)),
        OrdinalHyperparameter("o", ["low", "mid", "high"]), Float("lx", (1e-4, 10.0), log=True),
        Integer("ln", (1, 1000), log=True), Categorical("d", ["p", "q"]),
    ])
    return Space(configspace)


def _categorical_space() -> Space:
    """One group of moves only: its own order must already be column by column."""
    return Space(ConfigurationSpace(space={"c": ["u", "v", "w"], "d": ["p", "q"]}))


@pytest.mark.parametrize("make_space", [_mixed_space, _categorical_space])
def test_neighbours_come_column_by_column_in_each_types_order(make_space):
    space = make_space()
    rng = np.random.default_rng(3)
    vectors = space.sample_vectors(6, rng)
    if space.dimension == 7:
        vectors[0] = [1.0, 0.0, 0.99, 2.0, 0.0, 1.0, 1.0]  # at the bounds
    step = rng.choice([0.1, 0.05, 0.0125], len(vectors))
    found = OneExchangeNeighbourhood(space).neighbours(vectors, step)
    changed = [int(np.flatnonzero(row != vectors[o])[0])
               for row, o in zip(found.vectors, found.origin, strict=True)]
    listed = [(int(o), c, float(row[c]))
              for row, o, c in zip(found.vectors, found.origin, changed, strict=True)]
    assert listed == _one_at_a_time(space, vectors, step)
