"""Behavioural checks for plugin authors: does a component keep the contract?

The registry checks that a component has the protocol's methods; these checks call
them, the way a study will, on small synthetic problems: shapes, finiteness, the same
result from the same seed, inputs left untouched, conditional spaces, pending and
failed trials, replay after a resume. Every check runs; the error lists all failures::

    from ensembo.conformance import check_surrogate
    check_surrogate(lambda: KNNSurrogate(k=3))     # or a registered name: "knn"

A component is given as a registered name (``"rf"``), a spec (``{"name": "rf",
"n_trees": 20}``) or a zero-argument callable returning a fresh one (a class, a
lambda): checks need fresh instances to compare two runs. Names are looked up in
``registry`` (default: the installed plugins), as :class:`ensembo.Study` does.
"""

from ensembo.conformance.check_run import ConformanceError, ConformanceNote
from ensembo.conformance.ensembles import check_ensemble_strategy
from ensembo.conformance.losses import check_loss
from ensembo.conformance.search import (
    check_acquisition,
    check_acquisition_optimizer,
    check_initial_design,
)
from ensembo.conformance.surrogates import check_surrogate

__all__ = [
    "ConformanceError",
    "ConformanceNote",
    "check_acquisition",
    "check_acquisition_optimizer",
    "check_ensemble_strategy",
    "check_initial_design",
    "check_loss",
    "check_surrogate",
]
