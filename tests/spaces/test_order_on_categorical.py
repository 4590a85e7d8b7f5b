"""A range condition on a categorical is named as such: the message was ConfigSpace's
"must be orderable ... is not.", then "legal values: 'x', 'y', 'z'" for a legal 'x'."""

from __future__ import annotations

import pytest

from ensembo import spaces
from ensembo.errors import SpaceError


@pytest.mark.parametrize("op", ["gt", "ge", "lt", "le"])
def test_a_range_condition_on_a_categorical_says_it_has_no_order(op):
    document = {"params": {
        "k": {"type": "categorical", "choices": ["x", "y", "z"]},
        "a": {"type": "float", "low": 0, "high": 1, "when": {"k": {op: "x"}}},
    }}
    with pytest.raises(SpaceError) as refused:
        spaces.load(document)
    message = str(refused.value)
    assert f"params.a.when.k.{op}: 'k' is a categorical, whose values have no order" in message
    assert "use 'in' with the values meant ('x', 'y', 'z')" in message
    assert "orderable" not in message


def test_a_range_condition_on_an_ordinal_is_taken():
    space = spaces.load({"params": {
        "k": {"type": "ordinal", "sequence": ["x", "y", "z"]},
        "a": {"type": "float", "low": 0, "high": 1, "when": {"k": {"gt": "x"}}},
    }})
    assert all(("a" in config) == (config["k"] != "x") for config in space.sample(30, seed=0))
