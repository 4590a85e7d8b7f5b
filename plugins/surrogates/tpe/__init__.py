"""Tree-structured Parzen Estimator: a surrogate plugin that proposes by itself."""

from ensembo.plugins.surrogates.tpe.proposer import TPESettings, TreeParzenProposer

__all__ = ["TPESettings", "TreeParzenProposer"]
