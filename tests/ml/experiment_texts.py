"""Experiment-file text the data-run tests share.

Importable by name (conftest.py puts this folder on ``sys.path``).
"""

TREE_SPACE = """
space:
  name: tiny-tree
  estimator: sklearn.tree.DecisionTreeClassifier
  params:
    max_depth: {type: int, low: 1, high: 6}
"""
"""A one-hyperparameter decision-tree space: fast trials whose losses differ."""
