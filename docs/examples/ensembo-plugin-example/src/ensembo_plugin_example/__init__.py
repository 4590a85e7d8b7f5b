"""An example ensembo plugin: a k-NN surrogate and a stacking ensemble strategy."""

from ensembo_plugin_example.knn import KNNSurrogate
from ensembo_plugin_example.stacking import Stacking

__all__ = ["KNNSurrogate", "Stacking"]
