"""The built-in plugins' shared option checks: what they take and what they refuse."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo.plugins.option_checks import flag, fraction, share, whole
from ensembo.plugins.surrogates.rf import RandomForestSurrogate


def test_numpy_booleans_and_integers_are_options_like_python_ones():
    """Values from NumPy (a parameter grid, an array) were accepted before the checks
    were shared; np.True_ was then refused as no switch."""
    assert flag("rf", "bootstrap", np.True_) is True
    assert whole("rf", "n_trees", np.int64(3), 1) == 3
    settings = RandomForestSurrogate(bootstrap=np.False_, n_trees=np.int64(3)).settings
    assert not settings.bootstrap and settings.n_trees == 3


@pytest.mark.parametrize(
    ("check", "args", "value"),
    [(flag, (), "false"), (flag, (), 1), (whole, (1,), 2.5), (whole, (1,), True),
     (share, (), 0.0), (share, (), float("nan")), (fraction, (), 1.0)],
)
def test_values_that_mean_something_else_are_refused_by_name(check, args, value):
    with pytest.raises(ValueError, match=r"^plugin: option must be"):
        check("plugin", "option", value, *args)
