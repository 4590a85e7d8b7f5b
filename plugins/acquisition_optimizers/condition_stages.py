"""One pass over a parent's condition nodes, a few numpy calls per stage, not per node.

When a neighbour changes a parent, ConfigSpace's nodes below it (``change_hp_lookup``,
in its order) each activate their children at their defaults where the condition
holds and deactivate them where it does not. Evaluated one node at a time, the cash
space's choice of classifier costs twelve rounds of numpy calls per neighbourhood.
Consecutive nodes that read no column an earlier node of the run writes, and write
disjoint columns, give the same result evaluated together: a :class:`ConditionStage`.
"""

from __future__ import annotations

import numpy as np
from ConfigSpace.conditions import EqualsCondition


def condition_stages(nodes: list, defaults: np.ndarray) -> list[ConditionStage]:
    """``nodes`` cut into the longest runs that can be evaluated together, in order."""
    stages, run, written = [], [], set()
    for node in nodes:
        reads, writes = set(_parent_indices(node.condition)), set(_children(node))
        if run and (reads & written or writes & written):
            stages.append(ConditionStage(run, defaults))
            run, written = [], set()
        run.append(node)
        written |= writes
    if run:
        stages.append(ConditionStage(run, defaults))
    return stages


def evaluate_stages(stages: list[ConditionStage], block: np.ndarray) -> None:
    """One pass of every stage over ``block`` (rows are vectors), in place."""
    for stage in stages:
        stage.evaluate(block)


class ConditionStage:
    """Nodes evaluated at once: each child's column takes its node's verdict."""

    def __init__(self, nodes: list, defaults: np.ndarray):
        equals = [i for i, node in enumerate(nodes) if type(node.condition) is EqualsCondition]
        self.equals_at = np.array(equals, dtype=np.intp)
        self.equals_parents = np.array(
            [nodes[i].condition.parent_vector_id for i in equals], dtype=np.intp
        )
        self.equals_values = np.array(
            [nodes[i].condition.vector_value for i in equals], dtype=float
        )
        self.others = [(i, nodes[i].condition) for i in range(len(nodes)) if i not in equals]
        self.count = len(nodes)
        self.children = np.concatenate([_children(node) for node in nodes]).astype(np.intp)
        self.node_of_child = np.repeat(
            np.arange(len(nodes)), [len(_children(node)) for node in nodes]
        )
        self.defaults = np.asarray(defaults, dtype=float)[self.children]

    def evaluate(self, block: np.ndarray) -> None:
        satisfied = np.empty((len(block), self.count), dtype=bool)
        satisfied[:, self.equals_at] = block[:, self.equals_parents] == self.equals_values
        for i, condition in self.others:
            satisfied[:, i] = np.asarray(condition.satisfied_by_vector_array(block.T), dtype=bool)
        satisfied = satisfied[:, self.node_of_child]
        sub = block[:, self.children]
        sub = np.where(satisfied & np.isnan(sub), self.defaults, sub)
        sub[~satisfied] = np.nan
        block[:, self.children] = sub


def _children(node) -> np.ndarray:
    return np.asarray(node.children_indices, dtype=np.intp)


def _parent_indices(condition) -> list[int]:
    """The columns a condition reads (a conjunction reads all its parents)."""
    if hasattr(condition, "parent_vector_ids"):
        return [int(i) for i in condition.parent_vector_ids]
    return [int(condition.parent_vector_id)]
