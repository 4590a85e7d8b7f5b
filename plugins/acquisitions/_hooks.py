"""Registers the built-in acquisition functions."""

from ensembo.hookspecs import hookimpl
from ensembo.plugins.acquisitions.expected_improvement import ExpectedImprovement
from ensembo.plugins.acquisitions.log_expected_improvement import LogExpectedImprovement
from ensembo.plugins.acquisitions.lower_confidence_bound import LowerConfidenceBound
from ensembo.plugins.acquisitions.probability_of_improvement import ProbabilityOfImprovement


@hookimpl
def ensembo_add_acquisitions():
    return {
        "ei": ExpectedImprovement,
        "log-ei": LogExpectedImprovement,
        "pi": ProbabilityOfImprovement,
        "lcb": LowerConfidenceBound,
    }
