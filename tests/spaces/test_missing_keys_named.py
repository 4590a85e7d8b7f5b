"""A missing bound or sequence is named as missing: "'low' must be a number, got None"
read as if a null had been written (beside "unknown key 'lo'; did you mean 'low'?")."""

from __future__ import annotations

import pytest

from ensembo import spaces
from ensembo.spaces.problems import SpaceDefinitionError


def _messages(params) -> list[str]:
    with pytest.raises(SpaceDefinitionError) as refused:
        spaces.load({"params": params})
    return [str(problem) for problem in refused.value.problems]


def test_a_missing_bound_is_named_as_missing():
    messages = _messages({"y": {"type": "float", "lo": 0, "high": 10}})
    assert "params.y.low: 'low' is missing: give a number" in messages
    assert not any("got None" in message for message in messages)


def test_a_missing_sequence_is_named_as_missing():
    assert "params.k.sequence: 'sequence' is missing: give a non-empty list" in _messages(
        {"k": {"type": "ordinal", "choices": [1, 2]}})


def test_a_null_bound_is_still_named_as_written():
    assert "params.y.low: 'low' must be an integer, got None" in _messages(
        {"y": {"type": "int", "low": None, "high": 10}})
