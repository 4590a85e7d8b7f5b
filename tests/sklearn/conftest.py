"""Fixtures for the estimator tests; makes ``tree_spaces`` importable by name."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import pytest


def _load_tree_spaces():
    if "tree_spaces" not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            "tree_spaces", pathlib.Path(__file__).with_name("tree_spaces.py")
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules["tree_spaces"] = module
        spec.loader.exec_module(module)
    return sys.modules["tree_spaces"]


tree_spaces = _load_tree_spaces()


@pytest.fixture
def tree_space():
    return tree_spaces.TreeDepthSpace()


@pytest.fixture
def tree_regression_space():
    return tree_spaces.TreeDepthSpace(regression=True)
