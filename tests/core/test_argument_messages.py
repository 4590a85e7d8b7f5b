"""Arguments refused with messages that name them and say what is wanted: metadata
that is no mapping, and an infinite timeout (a positive number, but not finite)."""

from __future__ import annotations

import math

import pytest

from ensembo import Study
from ensembo.errors import ExperimentError


@pytest.mark.parametrize("metadata", [[1], "owner", 3])
def test_metadata_that_is_no_mapping_is_refused_naming_metadata(flat_space, metadata):
    with pytest.raises(ExperimentError, match="^metadata: must be a mapping"):
        Study(flat_space, surrogate=None, metadata=metadata)


def test_metadata_mapping_or_none_is_kept_as_a_dict(flat_space):
    assert Study(flat_space, surrogate=None, metadata={"owner": "me"}).metadata == {
        "owner": "me"
    }
    assert Study(flat_space, surrogate=None, metadata=None).metadata == {}


def test_an_infinite_timeout_is_refused_as_not_finite(flat_space):
    study = Study(flat_space, surrogate=None)
    with pytest.raises(ExperimentError, match="timeout: must be a finite positive number"):
        study.optimize(lambda config: 0.0, timeout=math.inf)
