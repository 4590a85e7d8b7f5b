"""``ensembo.bench``: benchmark ensembo against SMAC3, Optuna, Hyperopt and scikit-optimize.

A suite is a list of :class:`Problem` s described neutrally (:mod:`.parameters`);
each optimizer adapter translates that into its library's native form. Runs are
independent processes writing one JSON record each; the report aggregates them.
"""

from ensembo.bench.parameters import (
    ActiveWhen,
    Parameter,
    choice_parameter,
    float_parameter,
    from_configspace,
    int_parameter,
)
from ensembo.bench.problem import Outcome, Problem
from ensembo.bench.suite import Suite, available_suites, get_suite

__all__ = [
    "ActiveWhen",
    "Outcome",
    "Parameter",
    "Problem",
    "Suite",
    "available_suites",
    "choice_parameter",
    "float_parameter",
    "from_configspace",
    "get_suite",
    "int_parameter",
]
